"""Track-and-Stop's ``--step``: ``rollout`` by default under ``ols`` and ``vertex-or-target`` under
the other regimes; ``solve``, ``compare`` specs and ``session start`` run the rollout step with
``ols`` and refuse it in another regime in one line; compare stores and studies whose runs
carry no step stay those of ``vertex-or-target``, and those that carry no coordinates those of
the features'."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cbai_cli.algorithms.base import AlgorithmConfig
from cbai_cli.algorithms.registry import cbai_entry, register
from cbai_cli.algorithms.track_and_stop import TrackAndStop
from cbai_cli.compare.store import read_store
from cbai_cli.compare.study import CompareSettings, compare
from cbai_cli.kinds import get, load
from cbai_cli.numerics.confidence import ConfidenceSettings
from cbai_cli.run import simulate
from cbai_cli.run.simulate import RunRequest, prepare, run_many
from cbai_cli.session import session as session_module
from cbai_cli.session.session import Session


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


@pytest.mark.parametrize(("regime", "step"), [(None, "rollout"), ("ols", "rollout"), ("det", "vertex-or-target"),
                                              ("theory", "vertex-or-target"), ("tuned", "vertex-or-target")])
def test_the_step_is_rollout_by_default_under_ols_only(instance_file, regime, step):
    options = {"beta": 0.25} if regime == "tuned" else {}
    prepared = prepare(RunRequest.of("track-and-stop", regime, **options), load(instance_file))
    assert prepared.options["step"] == step
    assert prepared.make_algorithm(np.random.default_rng(0)).step == step


@pytest.mark.parametrize(("regime", "step"), [("ols", "rollout"), ("det", "vertex-or-target")])
def test_a_learner_built_without_the_option_takes_its_regimes_default(instance_file, regime, step):
    config = AlgorithmConfig(regime=regime, confidence=ConfidenceSettings(delta=0.05, subgaussian=1.0))
    assert TrackAndStop(load(instance_file).problem, config, np.random.default_rng(0)).step == step


def test_solve_without_the_step_runs_rollout_under_ols(cli, instance_file):
    given, default = (cli("solve", instance_file, *flags, "--runs", "3", "--json") for flags in (("--step", "rollout"), ()))
    assert default.exit_code == given.exit_code == 0, default.stderr
    assert [run["iterations"] for run in json.loads(default.stdout)["runs"]] == [
        run["iterations"] for run in json.loads(given.stdout)["runs"]]


def test_a_default_that_its_regime_cannot_run_is_refused_at_registration():
    with pytest.raises(ValueError, match="its default step='rollout' in regime 'det' is a value that regime cannot run"):
        register(cbai_entry("tas-det-rollout", "track_and_stop", "TrackAndStop", "a mistake", "adaptive", ("step",),
                            value_regimes=(("step", "rollout", ("ols",)),),
                            regime_defaults=(("step", "rollout", ("ols", "det")),)))


def test_compare_specs_carry_the_step(cli):
    result = cli("compare", "irrelevant-dims:d=4,eps=0.2", "--algos",
                 "track-and-stop:ols:step=vertex-or-target,track-and-stop,track-and-stop:det",
                 "--seeds", "2", "--jobs", "1", "--json", "--quiet")
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)["records"]
    assert sorted((record["spec"], record["algorithm_options"]["step"]) for record in records) == [
        ("track-and-stop", "rollout")] * 2 + [("track-and-stop:det", "vertex-or-target")] * 2 + [
        ("track-and-stop:ols:step=vertex-or-target", "vertex-or-target")] * 2
    assert len({record["run_key"] for record in records}) == 6
    refused(cli("compare", "irrelevant-dims:d=4,eps=0.2", "--algos", "track-and-stop:det:step=rollout", "--seeds", "1"),
            "algorithm spec 'track-and-stop:det:step=rollout': --step rollout needs --regime ols (this run uses 'det')")


def test_a_session_takes_the_step(cli, instance_file, tmp_path):
    study = tmp_path / "s.db"
    result = cli("session", "start", instance_file, "-o", study, "--step", "rollout")
    assert result.exit_code == 0, result.stderr
    assert json.loads(cli("session", "next", study, "--json").stdout)["queries"]
    refused(cli("session", "start", instance_file, "-o", tmp_path / "t.db", "--regime", "det", "--step", "rollout"),
            "--step rollout needs --regime ols (this run uses 'det')")


@pytest.mark.parametrize(("regime", "given", "step"), [
    (None, None, "rollout"), ("ols", None, "rollout"), ("ols", "rollout", "rollout"),
    (None, "vertex-or-target", "vertex-or-target"), ("det", None, None), ("det", "vertex-or-target", "vertex-or-target")])
def test_a_run_key_names_the_step_given_or_taken_by_the_regimes_default(regime, given, step):
    # a key without step names a vertex-or-target run (the step's declared default)
    assert get("cbai").run_identity(RunRequest.of("track-and-stop", regime, step=given)).get("step") == step


def stepless_store(monkeypatch, path, algorithm: str) -> CompareSettings:
    """A JSON Lines store of ``algorithm`` on a small instance whose run keys carry no step
    unless given, as stores hold runs of ``vertex-or-target`` by default; the settings that made it."""
    settings = CompareSettings(sources=("irrelevant-dims:d=3,eps=0.2",), algorithms=(algorithm,), seeds=3,
                               bounds=False, jobs=1, out=path)
    with monkeypatch.context() as patched:
        patched.setattr(simulate, "regime_defaults", lambda request, kind: {})
        compare(settings)
    return settings


def test_a_store_of_stepless_ols_runs_is_not_resumed_by_the_rollout_default(monkeypatch, tmp_path):
    settings = stepless_store(monkeypatch, tmp_path / "old.jsonl", "track-and-stop")
    result = compare(settings)
    assert (result.reused, result.ran) == (0, 3)
    assert {record["algorithm_options"]["step"] for record in result.records} == {"rollout"}
    assert len(read_store(tmp_path / "old.jsonl").records) == 6


def test_a_store_of_ols_runs_in_the_features_is_not_resumed_by_the_d_optimal_default(monkeypatch, tmp_path):
    # maxrew-u has no step: only the coordinates tell its old ols runs from the default's
    settings = stepless_store(monkeypatch, tmp_path / "old.jsonl", "maxrew-u:ols")
    result = compare(settings)
    assert (result.reused, result.ran) == (0, 3)
    assert {record["algorithm_options"]["coordinates"] for record in result.records} == {"d-optimal"}


@pytest.mark.parametrize("algorithm", ["track-and-stop:det",
                                       "track-and-stop:ols:step=vertex-or-target,coordinates=features",
                                       "maxrew-u:ols:coordinates=features"])
def test_a_store_of_stepless_runs_of_other_regimes_or_given_steps_still_resumes(monkeypatch, tmp_path, algorithm):
    settings = stepless_store(monkeypatch, tmp_path / "old.jsonl", algorithm)
    result = compare(settings)
    assert (result.reused, result.ran) == (3, 0)


def test_a_study_stores_the_step_it_resolved(instance_file, tmp_path):
    with Session.start(tmp_path / "ols.db", instance_file) as session:
        assert session.options == {"coordinates": "d-optimal", "step": "rollout"}
    with Session.start(tmp_path / "det.db", instance_file, regime="det") as session:
        assert session.options == {"coordinates": "features", "step": "vertex-or-target"}
    with Session.start(tmp_path / "maxrew.db", instance_file, "maxrew-u") as session:
        assert session.options == {"coordinates": "features"}  # its default regime is theory


def test_a_study_without_a_stored_step_replays_vertex_or_target_in_the_features(monkeypatch, cli, tmp_path):
    # A study that stores neither step nor coordinates was asked with vertex-or-target in the
    # features, under ols too: its queries, after the same answers, are those of a study with
    # both given.
    instance_file = tmp_path / "sphere.yaml"
    assert cli("generate", "unit-sphere", "--d", "3", "--n", "8", "--seed", "1", "--sigma", "0.3",
               "-o", instance_file).exit_code == 0
    instance = load(instance_file)
    means = instance.truth.means(instance.problem.arms)
    studies = {name: tmp_path / f"{name}.db" for name in ("stepless", "given", "rollout")}
    with monkeypatch.context() as patched:
        patched.setattr(session_module, "regime_dependent", lambda spec: ())  # stores the options given only
        Session.start(studies["stepless"], instance_file).close()
    Session.start(studies["given"], instance_file, step="vertex-or-target", coordinates="features").close()
    Session.start(studies["rollout"], instance_file).close()
    asked = {}
    for name, path in studies.items():
        with Session.open(path) as session:
            resolved = {name: session.prepared.options[name] for name in ("coordinates", "step")}
            assert session.options == ({} if name == "stepless" else resolved)
            for _ in range(150):  # runs of about 1,600 queries: the steps part well before
                (query,) = session.ask(1)
                noise = 0.3 * np.random.default_rng(query.id).standard_normal()  # the same for the same query
                session.record([(query.id, float(means[query.arm] + noise))])
            asked[name] = [query.arm for query in session.queries()]
            assert dict(session.status().options) == ({"coordinates": "d-optimal", "step": "rollout"} if name == "rollout"
                                                      else {"coordinates": "features", "step": "vertex-or-target"})
    assert asked["stepless"] == asked["given"] != asked["rollout"]
