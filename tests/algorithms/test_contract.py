"""One contract, every registered algorithm × every regime it accepts."""

from __future__ import annotations

import numpy as np
import pytest

from cbai_cli.algorithms.registry import ALGORITHMS, ALIASES, AlgorithmSpec, register, resolve
from cbai_cli.errors import OptionError, UnknownNameError
from cbai_cli.simulate import RunSpec, prepare, run_once

CASES = [
    (name, regime)
    for name, spec in ALGORITHMS.items()
    for regime in spec.regimes
]


def request(name: str, regime: str, **extra) -> RunSpec:
    beta = 0.25 if regime == "tuned" else None
    extra.setdefault("budget", None if ALGORITHMS[name].guaranteed_stop else 3000)
    return RunSpec(algorithm=name, regime=regime, beta=beta, **extra)


@pytest.mark.parametrize("name, regime", CASES)
def test_finishes_with_a_valid_answer(small_instance, name, regime):
    prepared = prepare(request(name, regime, subgaussian=1.0), small_instance)
    result = run_once(prepared, small_instance, seed=0)
    assert result.stopped in ("solved", "budget")
    assert result.recommended is None or 0 <= result.recommended < small_instance.n_arms
    assert result.iterations >= 1
    if result.stopped == "solved":
        assert result.correct


@pytest.mark.parametrize("name, regime", CASES)
def test_same_seed_gives_identical_results(small_instance, name, regime):
    prepared = prepare(request(name, regime), small_instance)
    first = run_once(prepared, small_instance, seed=7)
    second = run_once(prepared, small_instance, seed=7)
    assert (first.iterations, first.recommended, first.stopped) == (second.iterations, second.recommended, second.stopped)


@pytest.mark.parametrize("name, regime", CASES)
def test_budget_is_never_exceeded(small_instance, name, regime):
    prepared = prepare(request(name, regime, subgaussian=1.0, budget=50), small_instance)
    assert run_once(prepared, small_instance, seed=1).iterations <= 50


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_a_regime_the_algorithm_cannot_use_is_rejected(small_instance, name):
    spec = ALGORITHMS[name]
    foreign = next(r for r in ("static", "theory", "det", "tuned") if r not in spec.regimes)
    with pytest.raises(OptionError, match="cannot use regime"):
        prepare(RunSpec(algorithm=name, regime=foreign, beta=0.25 if foreign == "tuned" else None), small_instance)


def test_tuned_needs_beta_and_beta_needs_tuned(small_instance):
    with pytest.raises(OptionError, match="needs --beta"):
        prepare(RunSpec(algorithm="g-acol", regime="tuned"), small_instance)
    with pytest.raises(OptionError, match="only applies to --regime tuned"):
        prepare(RunSpec(algorithm="g-acol", regime="theory", beta=0.25), small_instance)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 2.0])
def test_delta_outside_the_unit_interval_is_rejected(small_instance, delta):
    with pytest.raises(OptionError, match="--delta"):
        prepare(RunSpec(algorithm="acol", delta=delta), small_instance)


def test_options_foreign_to_the_algorithm_style_are_rejected(small_instance):
    with pytest.raises(OptionError, match="--lambda"):
        prepare(RunSpec(algorithm="acol", ridge=1.0), small_instance)
    with pytest.raises(OptionError, match="--epsilon"):
        prepare(RunSpec(algorithm="g-acol", rounding_epsilon=0.1), small_instance)


def test_default_regimes():
    assert resolve("acol")[0].default_regime == "static"
    assert resolve("g-acol")[0].default_regime == "theory"


def test_authors_method_strings_are_aliases(small_instance):
    prepared = prepare(RunSpec(algorithm="adaptive_tuned"), small_instance)
    assert (prepared.algorithm, prepared.regime, prepared.config.confidence.beta) == ("g-acol", "tuned", 0.25)
    assert prepare(RunSpec(algorithm="adaptive_static"), small_instance).algorithm == "acol"
    assert set(ALIASES) >= {"adaptive", "adaptive_maxvar_all_tuned", "adaptive_greedy_reward_feasible"}
    with pytest.raises(OptionError, match="conflicts"):
        prepare(RunSpec(algorithm="adaptive_tuned", regime="theory"), small_instance)


def test_unknown_algorithm_suggests_the_closest():
    with pytest.raises(UnknownNameError, match="did you mean 'g-acol'"):
        resolve("g-acl")


def test_registry_rejects_duplicate_names():
    with pytest.raises(ValueError, match="already registered"):
        register(AlgorithmSpec("acol", "x", "y", "dup", "round"))
    with pytest.raises(ValueError, match="already registered"):
        register(AlgorithmSpec("adaptive", "x", "y", "dup", "round"))


def test_every_registered_class_loads():
    for spec in ALGORITHMS.values():
        assert spec.load().__name__ == spec.cls


def test_maxrew_f_gets_a_default_budget(small_instance):
    prepared = prepare(RunSpec(algorithm="maxrew-f"), small_instance)
    assert prepared.budget is not None and any("budget" in note for note in prepared.notes)


def test_no_feasible_arm_is_found_when_there_is_none():
    from cbai_cli.instance import Instance
    from cbai_cli.noise import GaussianNoise

    instance = Instance(name="none", arms=np.eye(2), reward=np.ones(2), constraint=np.ones(2), threshold=0.5,
                        noise=GaussianNoise(0.05))
    for name in ("acol", "g-acol", "uniform"):
        result = run_once(prepare(RunSpec(algorithm=name), instance), instance, seed=0)
        assert result.recommended is None and result.correct
