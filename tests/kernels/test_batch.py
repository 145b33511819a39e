"""Whole runs in the compiled step: the same runs as the per-step ask/tell loop, for any
batch size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cbai_cli import simulate
from cbai_cli.instance import Instance
from cbai_cli.kernels.batch import run_compiled
from cbai_cli.noise import BinaryNoise, GaussianNoise
from cbai_cli.simulate import RunRequest, compilable, drive, prepare, run_many, run_once, run_streams

COMPILED = [(name, regime) for name in ("g-acol", "greedy-maxvar", "maxrew-u") for regime in ("theory", "det", "tuned")]


class Silent:
    """An observer that watches nothing: it keeps drive on its per-step loop."""

    def asked(self, query, learner) -> None:
        pass

    def told(self, query, answer, learner, used) -> None:
        pass


def prepared_run(instance, name, regime, budget=400):
    options = {"beta": 0.25} if regime == "tuned" else {}
    return prepare(RunRequest.of(name, regime, budget=budget, **options), instance)


def started(prepared, seed):
    noise_rng, algorithm_rng, _ = run_streams(seed)
    return prepared.make_algorithm(algorithm_rng), prepared.kind.environment(prepared.instance, noise_rng)


def final_state(learner) -> list:
    design, state = learner.design, learner.state
    return [design.inverse, design.gram, design.targets, design._estimate, design.norms2, design.predictions,
            design.logdet, design.n_samples, design._since_refresh, state.uncertain, state.feasible,
            state.best_feasible_reward, state.last_lower, state.last_upper, learner.recommendation()]


def assert_same_state(first, second) -> None:
    for a, b in zip(final_state(first), final_state(second)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, regime", COMPILED)
def test_compiled_drive_equals_the_ask_tell_loop(irrelevant_dims, name, regime):
    prepared = prepared_run(irrelevant_dims, name, regime)
    for seed in range(3):
        compiled, environment = started(prepared, seed)
        assert compilable(compiled, environment)
        fast = drive(compiled, environment, prepared.budget)
        stepped, environment = started(prepared, seed)
        slow = drive(stepped, environment, prepared.budget, Silent())
        assert (fast.used, fast.rounds, fast.solved) == (slow.used, slow.rounds, slow.solved)
        assert_same_state(compiled, stepped)


def test_a_run_long_enough_to_refresh_equals_the_ask_tell_loop(irrelevant_dims):
    prepared = prepared_run(irrelevant_dims, "greedy-maxvar", "theory", budget=700)  # a refresh every 200 pulls
    compiled, environment = started(prepared, 1)
    fast = drive(compiled, environment, prepared.budget)
    stepped, environment = started(prepared, 1)
    slow = drive(stepped, environment, prepared.budget, Silent())
    assert fast.used == slow.used == 700
    assert_same_state(compiled, stepped)


@pytest.mark.parametrize("size", [2, 5])
def test_a_batch_of_runs_equals_the_runs_one_by_one(irrelevant_dims, size):
    prepared = prepared_run(irrelevant_dims, "g-acol", "det", budget=500)
    together = [started(prepared, seed) for seed in range(size)]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget)
    for seed, (learner, _) in enumerate(together):
        alone, environment = started(prepared, seed)
        assert run_compiled([alone], [environment], prepared.budget) == [outcomes[seed]]
        assert_same_state(learner, alone)


@pytest.mark.parametrize("name, regime", [("adaptive-uniform", "theory"), ("g-acol-uniform", "det"),
                                          ("maxrew-f", "theory"), ("g-acol", "ols"), ("track-and-stop", "det")])
def test_rules_and_regimes_without_a_kernel_stay_on_the_python_loop(irrelevant_dims, name, regime):
    learner, environment = started(prepared_run(irrelevant_dims, name, regime), 0)
    assert not compilable(learner, environment)


def test_binary_noise_stays_on_the_python_loop(small_instance):
    binary = replace(small_instance, constraint=small_instance.constraint / 2, threshold=small_instance.threshold / 2,
                     noise=BinaryNoise())
    learner, environment = started(prepared_run(binary, "g-acol", "theory"), 0)
    assert not compilable(learner, environment)


@pytest.mark.parametrize("name", ["g-acol", "greedy-maxvar"])
def test_the_fused_pass_of_large_arm_sets_equals_the_ask_tell_loop(name):
    rng = np.random.default_rng(7)
    arms = rng.standard_normal((600, 6))
    instance = Instance(name="wide", arms=arms, reward=rng.standard_normal(6), constraint=0.01 * rng.standard_normal(6),
                        threshold=0.0, noise=GaussianNoise(1.0))
    prepared = prepare(RunRequest.of(name, "tuned", beta=100.0, budget=80), instance)  # nothing decided
    runs = []
    for observer in (None, Silent()):
        learner, environment = started(prepared, 2)
        # the path of arm matrices too large for the cache, on a small one: blocks of 64 rows
        learner.design._streaming, learner.design.block = True, 64
        runs.append((learner, drive(learner, environment, prepared.budget, observer)))
    (fast_learner, fast), (slow_learner, slow) = runs
    assert fast.used == slow.used == 80
    assert_same_state(fast_learner, slow_learner)


@pytest.mark.parametrize("name, regime", [("g-acol", "theory"), ("maxrew-u", "det"), ("adaptive-uniform", "theory"),
                                          ("acol", "static")])
def test_run_many_gives_the_results_of_run_once(irrelevant_dims, name, regime, monkeypatch):
    monkeypatch.setattr(simulate, "BATCH_RUNS", 3)  # four seeds: a batch of three and one of one
    prepared = prepare(RunRequest.of(name, regime, budget=600), irrelevant_dims)
    seeds = [3, 0, 8, 5]
    together = run_many(prepared, seeds, key=(4,))
    alone = [run_once(prepared, seed, key=(4,)) for seed in seeds]
    assert [replace(result, wall_s=0.0) for result in together] == [replace(result, wall_s=0.0) for result in alone]
