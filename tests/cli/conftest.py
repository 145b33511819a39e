"""Helpers for end-to-end runs: Typer's CliRunner and a real subprocess."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cbai_cli.cli.app import app


@pytest.fixture
def cli():
    """Invoke ``cbai ARGS`` in-process; returns the Result (stdout and stderr apart)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(app, [str(a) for a in args], input=input)

    return invoke


@pytest.fixture
def cbai_process():
    """Run ``python -m cbai_cli ARGS`` as a real process."""

    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "cbai_cli", *map(str, args)], input=input,
                              capture_output=True, text=True, timeout=600)

    return run


@pytest.fixture
def instance_file(tmp_path, cli):
    path = tmp_path / "irr.yaml"
    assert cli("generate", "irrelevant-dims", "--d", "4", "--eps", "0.2", "-o", path).exit_code == 0
    return path
