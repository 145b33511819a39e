"""One contract, every registered algorithm (CBAI and safe) × every regime it accepts ×
a small instance of every kind it runs on."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cbai_cli.algorithms.registry import ALGORITHMS, ALIASES, AlgorithmEntry, entries, register, resolve
from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.contracts.errors import OptionError, UnknownNameError
from cbai_cli.kinds import get
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.kinds.cbai.noise import GaussianNoise
from cbai_cli.contracts.options import OPTIONS
from cbai_cli.run.simulate import RunRequest, prepare, run_once


def small(kind: str):
    """The kind's own small instance (:meth:`~cbai_cli.kinds.base.InstanceKind.example`)."""
    return get(kind).example()


CASES = [
    (name, regime, kind)
    for name, entry in entries().items()
    for regime in (entry.regimes or (None,))
    for kind in entry.kinds
    if get(kind).example() is not None
]
IDS = [f"{name}-{regime}-{kind}" for name, regime, kind in CASES]
# A valid value of every option that is not its default, to check that what is recorded
# is what ran.
NON_DEFAULT = {"delta": 0.1, "beta": 0.3, "subgaussian": 0.5, "ridge": 0.2, "norm_bound": 2.0,
               "rounding_epsilon": 0.02, "budget": 400, "rule": "ratio", "updates": "dynamic", "dw": "ellipsoid",
               "exploration": "7", "horizon": 60, "intersect": True, "confidence_set": "polytope",
               "safety_delta": 0.2, "safety_norm_bound": 3.0, "step": "rollout",
               "coordinates": "d-optimal"}
# Where a prepared run records an option under another key (solve --json's "options").
RECORDED_AS = {"horizon": "T"}


def request(name: str, regime: str | None, **extra) -> RunRequest:
    if regime == "tuned":
        extra.setdefault("beta", 0.25)
    if not ALGORITHMS[name].guaranteed_stop or ALGORITHMS[name].kinds == ("safe-bai",):
        extra.setdefault("budget", 3000)
    return RunRequest.of(name, regime, **extra)


def comparable(record: dict) -> dict:
    return {key: value for key, value in record.items() if key != "wall_s"}


@pytest.mark.parametrize("name, regime, kind", CASES, ids=IDS)
def test_finishes_with_a_valid_answer(name, regime, kind):
    instance = small(kind)
    prepared = prepare(request(name, regime), instance)
    record = run_once(prepared, seed=0).record()
    assert record["kind"] == kind
    assert record["stopped"] in ("solved", "budget", "horizon")
    assert record["iterations"] >= 1
    n_arms = getattr(instance, "n_arms", None) or getattr(instance.problem, "K", None)
    assert record["recommended"] is None or 0 <= record["recommended"] < n_arms
    if record["stopped"] == "solved" and record["correct"] is not None:
        assert record["correct"]


@pytest.mark.parametrize("name, regime, kind", CASES, ids=IDS)
def test_same_seed_gives_identical_results(name, regime, kind):
    instance = small(kind)
    prepared = prepare(request(name, regime), instance)
    assert comparable(run_once(prepared, seed=7).record()) == comparable(run_once(prepared, seed=7).record())


@pytest.mark.parametrize("name, regime, kind", CASES, ids=IDS)
def test_budget_is_never_exceeded(name, regime, kind):
    entry = ALGORITHMS[name]
    limit = {"horizon": 50} if "horizon" in entry.options else {"budget": 50}
    prepared = prepare(request(name, regime, **limit), small(kind))
    assert run_once(prepared, seed=1).record()["iterations"] <= 50


@pytest.mark.parametrize("name, regime, kind", CASES, ids=IDS)
def test_the_request_and_the_prepared_run_pickle(name, regime, kind):
    wanted = request(name, regime)
    assert pickle.loads(pickle.dumps(wanted)) == wanted
    prepared = prepare(wanted, small(kind))
    copy = pickle.loads(pickle.dumps(prepared))
    assert comparable(run_once(copy, seed=3).record()) == comparable(run_once(prepared, seed=3).record())


@pytest.mark.parametrize("name, regime, kind", CASES, ids=IDS)
def test_recorded_options_are_the_options_run(name, regime, kind):
    entry = ALGORITHMS[name]
    refused = {option for option, value, regimes in entry.value_regimes
               if NON_DEFAULT[option] == value and regime not in regimes}  # runs only in other regimes
    given = {option: NON_DEFAULT[option] for option in entry.reads(regime) if option not in refused}
    prepared = prepare(RunRequest.of(name, regime, **given), small(kind))
    for option, value in given.items():
        recorded = prepared.options[RECORDED_AS.get(option, option)]
        assert recorded == (int(value) if option == "exploration" else value)
    recorded = prepared.kind.record_options(prepared, RECORD_KEYS)
    for option in set(recorded) & set(OPTIONS) - set(entry.reads(regime)) - {"budget"}:
        assert recorded[option] is None


@pytest.mark.parametrize("name", [name for name, entry in ALGORITHMS.items() if entry.regimes])
def test_a_regime_the_algorithm_cannot_use_is_rejected(name):
    entry = ALGORITHMS[name]
    foreign = next(r for r in ("static", "theory", "det", "tuned") if r not in entry.regimes)
    with pytest.raises(OptionError, match="cannot use regime"):
        prepare(RunRequest.of(name, foreign, beta=0.25 if foreign == "tuned" else None), small("cbai"))


VALUE_REGIMES = [(name, option, value, regime) for name, entry in ALGORITHMS.items()
                 for option, value, regimes in entry.value_regimes for regime in entry.regimes if regime not in regimes]


@pytest.mark.parametrize("name, option, value, regime", VALUE_REGIMES)
def test_an_option_value_that_runs_only_in_other_regimes_is_rejected(name, option, value, regime):
    with pytest.raises(OptionError, match=f"{OPTIONS[option].flag} {value} needs --regime"):
        prepare(request(name, regime, **{option: value}), small("cbai"))


# Option values that choose another rule (Track-and-Stop's --step rollout), in the regimes that run them.
VALUE_CASES = [(name, regime, kind, option, value) for name, entry in entries().items()
               for option, value, regimes in entry.value_regimes for regime in regimes for kind in entry.kinds
               if get(kind).example() is not None]


@pytest.mark.parametrize("name, regime, kind, option, value", VALUE_CASES)
def test_an_option_value_that_chooses_another_rule_keeps_the_contract(name, regime, kind, option, value):
    prepared = prepare(request(name, regime, **{option: value}), small(kind))
    assert prepared.options[option] == value
    record = run_once(prepared, seed=0).record()
    assert record["stopped"] == "solved" and record["correct"]
    assert comparable(run_once(prepared, seed=7).record()) == comparable(run_once(prepared, seed=7).record())
    copy = pickle.loads(pickle.dumps(prepared))
    assert comparable(run_once(copy, seed=3).record()) == comparable(run_once(prepared, seed=3).record())
    limited = prepare(request(name, regime, budget=5, **{option: value}), small(kind))
    assert run_once(limited, seed=1).record()["iterations"] <= 5


def test_track_and_stop_rollout_is_refused_outside_ols():
    assert ("track-and-stop", "step", "rollout", "det") in VALUE_REGIMES
    assert not any(regime == "ols" for name, _, _, regime in VALUE_REGIMES if name == "track-and-stop")


@pytest.mark.parametrize("name", [name for name, entry in ALGORITHMS.items() if not entry.regimes])
def test_an_algorithm_without_regimes_rejects_one(name):
    with pytest.raises(OptionError, match="--regime does not apply"):
        prepare(RunRequest.of(name, "theory"), small(ALGORITHMS[name].kinds[0]))


def test_tuned_needs_beta_and_beta_needs_tuned(small_instance):
    with pytest.raises(OptionError, match="needs --beta"):
        prepare(RunRequest.of("g-acol", "tuned"), small_instance)
    with pytest.raises(OptionError, match="only applies to --regime tuned"):
        prepare(RunRequest.of("g-acol", "theory", beta=0.25), small_instance)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 2.0, float("nan")])
def test_delta_outside_the_unit_interval_is_rejected(small_instance, delta):
    with pytest.raises(OptionError, match="--delta") as caught:
        prepare(RunRequest.of("acol", delta=delta), small_instance)
    assert caught.value.parameter == "delta"


def test_options_foreign_to_the_algorithm_style_are_rejected(small_instance):
    with pytest.raises(OptionError, match="--lambda"):
        prepare(RunRequest.of("acol", ridge=1.0), small_instance)
    with pytest.raises(OptionError, match="--epsilon"):
        prepare(RunRequest.of("g-acol", rounding_epsilon=0.1), small_instance)


def test_an_algorithm_of_another_kind_names_those_that_fit(small_instance):
    with pytest.raises(OptionError, match="algorithms for cbai: acol"):
        prepare(RunRequest.of("lingape"), small_instance)


def test_default_regimes():
    assert resolve("acol")[0].default_regime == "static"
    assert resolve("g-acol")[0].default_regime == "theory"
    assert resolve("safe-lucb")[0].default_regime is None


def test_authors_method_strings_are_aliases(small_instance):
    prepared = prepare(RunRequest.of("adaptive_tuned"), small_instance)
    assert (prepared.algorithm, prepared.regime, prepared.config.confidence.beta) == ("g-acol", "tuned", 0.25)
    assert prepare(RunRequest.of("adaptive_static"), small_instance).algorithm == "acol"
    assert set(ALIASES) >= {"adaptive", "adaptive_maxvar_all_tuned", "adaptive_greedy_reward_feasible"}
    with pytest.raises(OptionError, match="conflicts"):
        prepare(RunRequest.of("adaptive_tuned", "theory"), small_instance)


def test_unknown_algorithm_suggests_the_closest():
    with pytest.raises(UnknownNameError, match="did you mean 'g-acol'"):
        resolve("g-acl")


def test_unknown_option_of_a_request_is_an_error():
    with pytest.raises(OptionError, match="unknown option"):
        RunRequest.of("acol", speed=3)


def test_registry_rejects_duplicate_names():
    with pytest.raises(ValueError, match="already registered"):
        register(AlgorithmEntry("acol", "x", "y", "dup", ("cbai",), "round"))
    with pytest.raises(ValueError, match="already registered"):
        register(AlgorithmEntry("adaptive", "x", "y", "dup", ("cbai",), "round"))


def test_registry_rejects_an_undeclared_option():
    with pytest.raises(ValueError, match="unknown option"):
        register(AlgorithmEntry("new-one", "x", "y", "new", ("cbai",), "round", ("speed",)))


def test_every_registered_class_loads():
    for entry in entries().values():
        assert entry.load().__name__ == entry.cls


def test_maxrew_f_gets_a_default_budget(small_instance):
    prepared = prepare(RunRequest.of("maxrew-f"), small_instance)
    assert prepared.budget is not None and any("budget" in note for note in prepared.notes)


def test_no_feasible_arm_is_found_when_there_is_none():
    instance = Instance(name="none", arms=np.eye(2), reward=np.ones(2), constraint=np.ones(2), threshold=0.5,
                        noise=GaussianNoise(0.05))
    for name in ("acol", "g-acol", "uniform"):
        result = run_once(prepare(RunRequest.of(name), instance), seed=0)
        assert result.recommended is None and result.correct
