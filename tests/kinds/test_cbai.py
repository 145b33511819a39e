"""The ``cbai`` kind's pre-checks: the lower bound on a run's queries and the warning of a
run that will take very long (:func:`cbai_cli.kinds.cbai.kind.query_floor`,
:func:`cbai_cli.kinds.cbai.kind.long_run_text`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds import get, load
from cbai_cli.kinds.cbai.kind import long_run_text, query_floor
from cbai_cli.run.simulate import RunRequest, prepare, run_many

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
REGRET = INSTANCES / "regret-1d.yaml"
IRRELEVANT = INSTANCES / "irrelevant-dims-d10-eps0.05.yaml"


def warnings_of(path: Path, algorithm: str, **options) -> tuple[str, ...]:
    return prepare(RunRequest.of(algorithm, **options), load(path)).warnings


def test_a_round_based_run_past_the_threshold_is_warned_with_its_hardest_arm_and_queries():
    # R = 20000: round 1 radius R·√(2 log(K/δ²)) ≈ 8.15e4, arm 2 has ‖x‖/|g| = 0.3/0.05 = 6
    (warning,) = warnings_of(REGRET, "acol", subgaussian=20000.0)
    assert warning.startswith("deciding arm 2 will take at least about 2.4e+11 queries (the confidence radius is at "
                              "least 8.15e+04: R·√(2 log(K/δ²)) of round 1 with --subgaussian 20000 and --delta 0.05)")
    assert warning.endswith("; give --budget to bound the run")


def test_an_adaptive_run_past_the_threshold_is_warned():
    (warning,) = warnings_of(IRRELEVANT, "g-acol", subgaussian=300.0)
    assert warning.startswith("deciding arm ") and "--subgaussian 300" in warning


def test_a_budget_below_the_estimate_silences_the_warning():
    assert warnings_of(REGRET, "acol", subgaussian=20000.0, budget=10**11) == ()


def test_a_budget_above_the_estimate_keeps_the_warning_and_names_the_budget():
    (warning,) = warnings_of(REGRET, "acol", subgaussian=20000.0, budget=10**12)
    assert warning.endswith("; --budget 1000000000000 allows that many")


def test_usual_options_are_not_warned():
    assert warnings_of(IRRELEVANT, "g-acol") == () and warnings_of(IRRELEVANT, "acol") == ()


def test_a_round_based_run_no_run_can_count_is_left_to_its_round_check():
    # the round too long ends the run in one line of error; a warning before it would be a second line
    assert warnings_of(REGRET, "g-allocation", subgaussian=1e100) == ()


def test_a_floor_no_larger_than_the_threshold_is_not_warned(monkeypatch):
    prepared = prepare(RunRequest.of("acol", subgaussian=20000.0), load(REGRET))
    settings = prepared.config.confidence
    floor = query_floor(prepared.regime, settings, prepared.instance)
    monkeypatch.setattr("cbai_cli.kinds.cbai.kind.LONG_RUN_QUERIES", floor.queries)
    assert long_run_text(floor, None) is None


@pytest.mark.parametrize("path, algorithm, options", [
    (REGRET, "acol", {"subgaussian": 3.0}),
    (REGRET, "g-allocation", {"subgaussian": 3.0}),
    (IRRELEVANT, "acol", {"subgaussian": 3.0}),
    (IRRELEVANT, "oracle", {}),
    (IRRELEVANT, "g-acol", {}),
    (IRRELEVANT, "track-and-stop", {"subgaussian": 3.0}),
    (REGRET, "greedy-maxvar", {"subgaussian": 3.0}),
], ids=lambda value: value.stem if isinstance(value, Path) else None)
def test_the_floor_is_below_the_queries_of_every_run(path, algorithm, options):
    prepared = prepare(RunRequest.of(algorithm, **options), load(path))
    floor = query_floor(prepared.regime, prepared.config.confidence, prepared.instance).queries
    results = run_many(prepared, range(5))
    assert all(result.stopped == "solved" and result.iterations >= floor for result in results)


# ``bound``: the options checked as ``cbai bound`` checks them


def test_bound_refuses_a_delta_of_zero_instead_of_taking_the_default():
    with pytest.raises(OptionError, match=r"^--delta must lie in \(0, 1\), got 0.0$") as caught:
        get("cbai").bound(load(REGRET), delta=0)
    assert caught.value.parameter == "delta"


def test_bound_refuses_a_misspelled_option():
    with pytest.raises(OptionError, match=r"^unknown option\(s\) detla ") as caught:
        get("cbai").bound(load(REGRET), detla=0.2)
    assert caught.value.parameter == "detla"


def test_bound_refuses_a_negative_epsilon():
    with pytest.raises(OptionError, match="^--epsilon must be a finite number > 0") as caught:
        get("cbai").bound(load(REGRET), rounding_epsilon=-1)
    assert caught.value.parameter == "rounding_epsilon"


def test_bound_refuses_an_option_of_runs():
    with pytest.raises(OptionError, match="^--budget does not apply to cbai instances"):
        get("cbai").bound(load(REGRET), budget=10)
