"""Track-and-Stop's ``--step`` on the command line: ``solve``, ``compare`` specs and
``session start`` run the rollout step with ``ols`` and refuse it in another regime in one line."""

from __future__ import annotations

import json

import pytest

from cbai_cli.kinds import load
from cbai_cli.run.simulate import RunRequest, prepare, run_many


def refused(result, text: str) -> None:
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"cbai: error: {text}"]


def test_solve_runs_the_rollout_step_as_the_library_does(cli, instance_file):
    result = cli("solve", instance_file, "--step", "rollout", "--runs", "3", "--json")
    assert result.exit_code == 0, result.stderr
    prepared = prepare(RunRequest.of("track-and-stop", "ols", step="rollout"), load(instance_file))
    assert [run["iterations"] for run in json.loads(result.stdout)["runs"]] == [
        run.iterations for run in run_many(prepared, range(3))]


@pytest.mark.parametrize("regime", ["det", "theory"])
def test_solve_refuses_the_rollout_step_outside_ols(cli, instance_file, regime):
    refused(cli("solve", instance_file, "--regime", regime, "--step", "rollout"),
            f"--step rollout needs --regime ols (this run uses {regime!r})")


def test_a_step_outside_its_choices_is_one_line(cli, instance_file):
    result = cli("solve", instance_file, "--step", "burst")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "--step must be vertex-or-target or rollout" in result.stderr


def test_compare_specs_carry_the_step(cli):
    result = cli("compare", "irrelevant-dims:d=4,eps=0.2", "--algos", "track-and-stop:ols:step=rollout,track-and-stop",
                 "--seeds", "2", "--jobs", "1", "--json", "--quiet")
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)["records"]
    assert sorted((record["spec"], record["algorithm_options"]["step"]) for record in records) == [
        ("track-and-stop", "vertex-or-target")] * 2 + [("track-and-stop:ols:step=rollout", "rollout")] * 2
    assert len({record["run_key"] for record in records}) == 4
    refused(cli("compare", "irrelevant-dims:d=4,eps=0.2", "--algos", "track-and-stop:det:step=rollout", "--seeds", "1"),
            "algorithm spec 'track-and-stop:det:step=rollout': --step rollout needs --regime ols (this run uses 'det')")


def test_a_session_takes_the_step(cli, instance_file, tmp_path):
    study = tmp_path / "s.db"
    result = cli("session", "start", instance_file, "-o", study, "--step", "rollout")
    assert result.exit_code == 0, result.stderr
    assert json.loads(cli("session", "next", study, "--json").stdout)["queries"]
    refused(cli("session", "start", instance_file, "-o", tmp_path / "t.db", "--regime", "det", "--step", "rollout"),
            "--step rollout needs --regime ols (this run uses 'det')")
