"""Third-party algorithms: the example plugin in examples/plugin installs with pip and
runs from ``cbai solve`` and ``cbai compare`` through the ``cbai.algorithms`` entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cbai_cli.algorithms import registry
from cbai_cli.errors import OptionError

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "plugin"
INSTANCE = ROOT / "instances" / "regret-1d.yaml"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    """The plugin installed by pip into a folder of its own (not into the test environment)."""
    target = tmp_path_factory.mktemp("plugin")
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                                str(target), str(PLUGIN)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    return target


def cbai(plugin_path: Path, *args: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "cbai_cli", *args], capture_output=True, text=True, env=environment,
                          cwd=ROOT)


def test_the_plugin_is_listed_with_its_capabilities(plugin_path):
    result = cbai(plugin_path, "algorithms", "--json")
    assert result.returncode == 0, result.stderr
    (entry,) = [entry for entry in json.loads(result.stdout)["algorithms"] if entry["name"] == "round-robin"]
    assert entry["kinds"] == ["cbai"] and entry["style"] == "adaptive"
    assert entry["regimes"] == ["theory", "det", "tuned", "ols"]


def test_the_plugin_solves_through_cbai_solve(plugin_path):
    result = cbai(plugin_path, "solve", str(INSTANCE), "--algo", "round-robin", "--regime", "det", "--runs", "3", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["algorithm"] == "round-robin" and document["regime"] == "det"
    assert all(run["correct"] and run["stopped"] == "solved" for run in document["runs"])


def test_the_plugin_runs_in_compare_worker_processes(plugin_path):
    result = cbai(plugin_path, "compare", "regret-1d", "--algos", "round-robin:det,g-acol:det", "--seeds", "3",
                  "--jobs", "2", "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    records = json.loads(result.stdout)["records"]
    assert sorted({record["algorithm"] for record in records}) == ["g-acol", "round-robin"]
    assert all(record["correct"] for record in records)


def test_a_broken_plugin_is_a_one_line_error(monkeypatch):
    class Broken:
        name, value = "broken", "nowhere:ENTRY"

        def load(self):
            raise ImportError("No module named 'nowhere'")

    monkeypatch.setattr(registry, "_PLUGINS_LOADED", [])
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [Broken()])
    with pytest.raises(OptionError, match="algorithm plugin 'broken'"):
        registry.load_plugins()


def test_a_plugin_that_is_not_an_entry_is_rejected(monkeypatch):
    class Wrong:
        name, value = "wrong", "somewhere:THING"

        def load(self):
            return object()

    monkeypatch.setattr(registry, "_PLUGINS_LOADED", [])
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [Wrong()])
    with pytest.raises(OptionError, match="not an AlgorithmEntry"):
        registry.load_plugins()
