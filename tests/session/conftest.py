"""Studies on small instances, the CLI in-process and as real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbai_cli.cli.app import app
from cbai_cli.kinds.cbai.families import generate_instance
from cbai_cli.kinds import save

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli():
    """Invoke ``cbai ARGS`` in-process; returns the Result (stdout and stderr apart)."""
    runner = CliRunner()

    def invoke(*args, input: str | None = None):
        return runner.invoke(app, [str(a) for a in args], input=input)

    return invoke


@pytest.fixture
def cbai_process():
    """Run ``python -m cbai_cli ARGS`` as a real process of this checkout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def run(*args, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "cbai_cli", *map(str, args)], input=input, capture_output=True,
                              text=True, timeout=600, env=env)

    return run


@pytest.fixture
def instance_file(tmp_path) -> Path:
    """An easy Gaussian instance: 5 arms in d = 4, arm 3 is the answer."""
    path = tmp_path / "irr.yaml"
    save(generate_instance("irrelevant-dims", d=4, eps=0.2), path)
    return path


@pytest.fixture
def binary_file(tmp_path) -> Path:
    """Two arms with binary feedback (yes/no answers)."""
    path = tmp_path / "binary.yaml"
    path.write_text("kind: cbai\nname: two\narms: [[1.0, 0.0], [0.0, 1.0]]\nreward: [1.0, 0.5]\n"
                    "constraint: [0.5, -0.5]\nthreshold: 0.0\nnoise: {kind: binary}\n")
    return path
