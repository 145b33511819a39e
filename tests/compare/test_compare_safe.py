"""`cbai compare` on the safe kinds: Safe-LUCB on safe-regret, LinGapE and Safe-LinGapE on
safe-bai, run over seeds like any other algorithm (Amani et al. 2019; "Price of Safety in Linear BAI")."""

from __future__ import annotations

import pytest

from cbai_cli.compare.plan import build_grid, build_plan
from cbai_cli.compare.specs import parse_algorithm
from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.compare.study import compare
from cbai_cli.compare.summary import summarize
from cbai_cli.contracts.errors import OptionError, UnknownNameError
from cbai_cli.run.simulate import RunRequest

from tests.compare.common import settings, stable

REGRET = "amani-a:T=1500"
BAI = "soare-safe"
SAFE_ALGORITHMS = ("safe-lucb", "safe-lucb:exploration=0", "lingape:budget=3000", "safe-lingape:budget=3000")
SAFE = settings(sources=(REGRET, BAI), algorithms=SAFE_ALGORITHMS, seeds=3)


@pytest.fixture(scope="module")
def raw_records():
    return compare(SAFE).records


@pytest.fixture(scope="module")
def safe_records(raw_records):
    return stable(raw_records)


def test_a_safe_spec_takes_solve_options_without_dashes():
    choice = parse_algorithm("safe-lingape:updates=dynamic,rule=ratio", dict())
    assert choice.request == RunRequest.of("safe-lingape", updates="dynamic", rule="ratio")
    assert choice.kinds == ("safe-bai",)
    switch = parse_algorithm("safe-lucb:intersect=true,exploration=0", dict())
    assert switch.request == RunRequest.of("safe-lucb", intersect=True, exploration="0")


def test_a_safe_spec_takes_the_run_constants_and_shared_ones_apply_to_every_safe_algorithm():
    choice = parse_algorithm("safe-lucb:delta=0.1,lambda=2,S=1.5", dict())
    assert choice.request == RunRequest.of("safe-lucb", delta=0.1, ridge=2.0, norm_bound=1.5)
    safety = parse_algorithm("safe-lingape:delta-s=0.01,S-mu=2", dict())
    assert safety.request == RunRequest.of("safe-lingape", safety_delta=0.01, safety_norm_bound=2.0)
    assert parse_algorithm("lingape", dict(delta=0.2)).request == RunRequest.of("lingape", delta=0.2)
    with pytest.raises(OptionError, match="has no option 'delta-s'"):
        parse_algorithm("lingape:delta-s=0.01", dict())


def test_the_shared_budget_applies_to_bai_algorithms_only():
    shared = dict(budget=500)
    assert parse_algorithm("lingape", shared).request.get("budget") == 500
    assert parse_algorithm("safe-lucb", shared).request == RunRequest.of("safe-lucb")


@pytest.mark.parametrize("spec, message", [
    ("safe-lucb:theory", "has no confidence regime"),
    ("safe-lucb:rule=greedy", "has no option 'rule'"),
    ("lingape:budget=many", "budget must be an integer"),
    ("safe-lucb:intersect=maybe", "intersect must be true or false"),
])
def test_bad_safe_specs_name_the_problem(spec, message):
    with pytest.raises(OptionError, match=message):
        parse_algorithm(spec, dict())


def test_an_unknown_name_lists_safe_algorithms_too():
    with pytest.raises(UnknownNameError, match="safe-lingape"):
        parse_algorithm("safe-lingap", dict())


def test_each_algorithm_runs_only_on_groups_of_its_kind():
    plan = build_plan(build_grid([REGRET, BAI], SAFE_ALGORITHMS, seeds=2))
    pairs = {(plan.grid.groups[run.group].label, plan.grid.algorithms[run.algorithm].label) for run in plan.runs}
    assert pairs == {(REGRET, "safe-lucb"), (REGRET, "safe-lucb:exploration=0"),
                     (BAI, "lingape:budget=3000"), (BAI, "safe-lingape:budget=3000")}
    assert len(plan.runs) == 4 * 2


def test_an_algorithm_without_a_group_of_its_kind_is_an_error():
    with pytest.raises(OptionError, match="runs on safe-bai instances, and no source is one"):
        build_grid([REGRET], ["lingape"], seeds=1)


def test_a_bad_option_value_fails_before_any_run():
    with pytest.raises(OptionError, match="--updates must be static or dynamic"):
        build_grid([BAI], ["safe-lingape:updates=often"], seeds=1)


def test_cbai_groups_without_a_cbai_algorithm_are_idle():
    grid = build_grid([REGRET, "regret-1d"], ["safe-lucb"], seeds=1)
    assert [group.label for group in grid.idle_groups()] == ["regret-1d"]


def test_safe_records_have_every_key_and_score_what_applies(safe_records):
    assert len(safe_records) == 4 * 3
    for record in safe_records:
        assert set(record) | {"wall_s", "cbai_version", "numpy_version", "scipy_version", "cvxpy_version"} == set(RECORD_KEYS)
        assert record["regime"] is None and record["lower_bound"] is None
    regret = [record for record in safe_records if record["kind"] == "safe-regret"]
    bai = [record for record in safe_records if record["kind"] == "safe-bai"]
    assert all(record["iterations"] == 1500 and record["correct"] is None for record in regret)
    assert all(record["regret_curve"][-1] == [1500, record["regret"]] for record in regret)
    assert {record["exploration_rounds"] for record in regret if record["spec"] == "safe-lucb:exploration=0"} == {0}
    assert all(record["regret"] is None and record["scale"] is not None for record in bai)


def test_safe_algorithms_never_act_unsafely_and_lingape_does(safe_records):
    unsafe = {}
    for record in safe_records:
        unsafe[record["spec"]] = unsafe.get(record["spec"], 0) + record["violations"]
    assert unsafe["safe-lucb"] == unsafe["safe-lucb:exploration=0"] == unsafe["safe-lingape:budget=3000"] == 0
    assert unsafe["lingape:budget=3000"] > 0


def test_safe_records_are_the_same_on_two_processes(safe_records):
    assert stable(compare(settings(sources=SAFE.sources, algorithms=SAFE.algorithms, seeds=3, jobs=2)).records) == safe_records


def test_safe_runs_match_cbai_solve_for_the_same_seed(safe_records):
    """A compare run of seed s is the solve run of seed s with the instance's stream key."""
    from cbai_cli.compare.plan import stream_key
    from cbai_cli.kinds.cbai.families import family
    from cbai_cli.run.simulate import prepare, run_once

    instance = family("soare-safe").generate()
    direct = run_once(prepare(RunRequest.of("safe-lingape", budget=3000), instance), 1, (stream_key(instance),))
    record = next(record for record in safe_records if record["spec"] == "safe-lingape:budget=3000" and record["seed"] == 1)
    assert (record["iterations"], record["recommended"], record["scale"]) == (direct.iterations, direct.recommended, direct.scale)


def test_summary_measures_regret_for_safe_regret_and_pulls_for_safe_bai(raw_records, safe_records):
    rows = {row.algorithm: row for row in summarize(raw_records)}
    assert rows["safe-lucb"].metric == "regret" and rows["safe-lucb"].fraction_correct is None
    assert rows["safe-lucb"].median == pytest.approx(sorted(
        record["regret"] for record in safe_records if record["spec"] == "safe-lucb")[1])
    assert rows["safe-lingape:budget=3000"].metric == "pulls"
    assert rows["safe-lingape:budget=3000"].unsafe_actions == 0
    assert rows["lingape:budget=3000"].unsafe_actions == sum(
        record["violations"] for record in safe_records if record["spec"] == "lingape:budget=3000")
