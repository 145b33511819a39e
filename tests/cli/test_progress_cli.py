"""Progress of solve, bound and compare through real processes whose stderr is a pipe: a
plain line at every update when CBAI_PROGRESS_INTERVAL is 0, nothing with --quiet, and the
same results on stdout either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cbai_cli.run.progress import INTERVAL_VARIABLE

REGRET = Path(__file__).resolve().parents[2] / "instances" / "regret-1d.yaml"


def cbai(*args: object, interval: str = "0") -> subprocess.CompletedProcess:
    """``python -m cbai_cli ARGS`` with progress lines every ``interval`` seconds."""
    return subprocess.run([sys.executable, "-m", "cbai_cli", *map(str, args)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, INTERVAL_VARIABLE: interval})


def without_clock(document: dict) -> dict:
    """A solve document without the seconds each run took (the one part that varies)."""
    return {**document, "runs": [{**run, "wall_s": None} for run in document["runs"]]}


def test_solve_prints_runs_and_queries_and_the_last_line_sums_them():
    shown = cbai("solve", REGRET, "--algo", "g-acol", "--runs", "3", "--seed", "4", "--json")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    lines = shown.stderr.splitlines()
    assert lines and all(line.startswith("cbai: solve: ") for line in lines)
    queries = sum(run["iterations"] for run in document["runs"])
    assert any(line.startswith(f"cbai: solve: 3/3 runs done, {queries:,} queries, ") for line in lines), lines
    quiet = cbai("solve", REGRET, "--algo", "g-acol", "--runs", "3", "--seed", "4", "--json", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert without_clock(json.loads(quiet.stdout)) == without_clock(document)


def test_a_traced_solve_shows_its_progress_too(tmp_path):
    shown = cbai("solve", REGRET, "--algo", "acol", "--trace", tmp_path / "trace.csv", "--json")
    assert shown.returncode == 0, shown.stderr
    queries = json.loads(shown.stdout)["runs"][0]["iterations"]
    assert f"cbai: solve: 1/1 runs done, {queries:,} queries, " in shown.stderr


def test_bound_shows_the_rounds_of_its_design_solves_unless_quiet():
    shown = cbai("bound", REGRET, "--json")
    assert shown.returncode == 0, shown.stderr
    assert "cbai: bound: H_CLB design, round 1, relative gap " in shown.stderr
    quiet = cbai("bound", REGRET, "--json", "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert json.loads(quiet.stdout) == json.loads(shown.stdout)


def test_compare_prints_runs_done_unless_quiet():
    grid = ("regret-1d", "--algos", "g-acol", "--seeds", "2", "--jobs", "1", "--no-bounds", "--csv")
    shown = cbai("compare", *grid)
    assert shown.returncode == 0, shown.stderr
    assert "cbai: compare: 2/2 runs done, " in shown.stderr
    quiet = cbai("compare", *grid, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_long_interval_prints_no_line_on_a_short_command():
    shown = cbai("solve", REGRET, "--json", interval="3600")
    assert shown.returncode == 0 and shown.stderr == ""


@pytest.mark.parametrize("interval", ["often", "-2"])
def test_an_interval_that_is_no_number_of_seconds_is_one_line(interval):
    shown = cbai("solve", REGRET, interval=interval)
    assert shown.returncode == 2 and shown.stdout == ""
    assert shown.stderr == f"cbai: error: {INTERVAL_VARIABLE} must be a number of seconds ≥ 0, got {interval!r}\n"
