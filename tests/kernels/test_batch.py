"""Whole runs in the compiled step: the same runs as the per-step ask/tell loop, for any
batch size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cbai_cli import simulate
from cbai_cli.generators import family
from cbai_cli.instance import Instance
from cbai_cli.kernels.batch import run_compiled
from cbai_cli.noise import BinaryNoise, GaussianNoise
from cbai_cli.simulate import RunRequest, compilable, drive, prepare, run_many, run_once, run_streams

RANDOM_RULES = ("adaptive-uniform", "g-acol-uniform", "maxrew-f")  # they read the algorithm's stream
RULES = ("g-acol", "greedy-maxvar", "maxrew-u", "track-and-stop", *RANDOM_RULES)
COMPILED = [(name, regime) for name in RULES for regime in ("theory", "det", "tuned")]
#: The four instances of README "Guaranteed methods against the lower bound" (honest noise R = σ).
PAPER_INSTANCES = {"irrelevant-dims-sigma1": ("irrelevant-dims", {"d": 10, "eps": 0.05}, 1.0),
                   "unit-sphere": ("unit-sphere", {"d": 10, "n": 20, "seed": 0}, 1.0),
                   "regret-1d": ("regret-1d", {}, 1.0),
                   "irrelevant-dims-sigma0.05": ("irrelevant-dims", {"d": 10, "eps": 0.05}, 0.05)}


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
    rows = [design.inverse, design.gram, design.targets, design._estimate, design.norms2, design.predictions,
            design.logdet, design.n_samples, design._since_refresh, state.uncertain, state.feasible,
            state.best_feasible_reward, state.last_lower, state.last_upper, learner.recommendation(),
            getattr(learner, "forced_pulls", None)]
    intervals = learner.intervals
    if hasattr(intervals, "fit"):  # the ols regime's fit and mixture intervals
        fit = intervals.fit
        rows += [fit.pinv, fit._caches, fit._roundoff, fit._directions, fit._growths, fit._growth, fit.margin,
                 fit.inside, fit._counts, fit._sums, fit.n_samples, fit._since_refresh, fit.epoch, fit.log_dets,
                 fit.eigenvalues, fit.basis, intervals._epoch, intervals._intercepts, intervals._slopes,
                 intervals._inflations, intervals._mean_widths, intervals._mean_roots,
                 intervals._mean_thresholds]
    return rows


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


@pytest.mark.parametrize("regime", ["theory", "ols"])
@pytest.mark.parametrize("name", RANDOM_RULES)
@pytest.mark.parametrize("size", [1, 4])
def test_a_batch_of_random_rule_runs_equals_the_ask_tell_runs(size, name, regime):
    instance = family("unit-sphere").generate(GaussianNoise(0.3), d=4, n=12, seed=1)
    prepared = prepare(RunRequest.of(name, regime, budget=900), instance)  # past a chunk of 256 uniforms
    seeds = [6, 1, 4, 9][:size]
    together = [started(prepared, seed) for seed in seeds]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget)
    for seed, (used, solved), (learner, _) in zip(seeds, outcomes, together):
        stepped, environment = started(prepared, seed)
        slow = drive(stepped, environment, prepared.budget, Silent())
        assert (used, solved) == (slow.used, slow.solved)
        assert_same_state(learner, stepped)


def test_a_chunk_of_uniforms_is_the_doubles_drawn_one_by_one():
    chunked, one_by_one = run_streams(3)[1], run_streams(3)[1]
    np.testing.assert_array_equal(chunked.random(256), [one_by_one.random() for _ in range(256)])


@pytest.mark.parametrize("sigma", [1.0, 0.05])
def test_adaptive_uniform_pulls_the_arms_of_its_own_stream_whatever_the_noise(irrelevant_dims, sigma):
    from cbai_cli.kernels.select import uniform_index

    prepared = prepare(RunRequest.of("adaptive-uniform", "ols", budget=600), replace(irrelevant_dims,
                                                                                     noise=GaussianNoise(sigma)))
    learner, environment = started(prepared, 5)
    outcome = drive(learner, environment, prepared.budget)  # compiled; the ols fit counts the pulls
    k = irrelevant_dims.arms.shape[0]
    expected = [uniform_index(u, k) for u in run_streams(5)[1].random(outcome.used)]
    assert outcome.used > 10
    np.testing.assert_array_equal(learner.intervals.fit._counts, np.bincount(expected, minlength=k))


class Pulls(Silent):
    """Records the arm of every query and whether U was still every arm when it was asked."""

    def __init__(self) -> None:
        self.pulls = []

    def asked(self, query, learner) -> None:
        self.pulls.append((int(query.arms[0]), bool(learner.state.uncertain.all())))


def test_g_acol_uniform_choices_before_the_first_elimination_do_not_depend_on_the_noise(irrelevant_dims):
    from cbai_cli.kernels.select import uniform_index

    firsts = []
    for sigma in (1.0, 0.2):  # the same intervals (R = 1), observations of another scale
        prepared = prepare(RunRequest.of("g-acol-uniform", "det", budget=3000, subgaussian=1.0),
                           replace(irrelevant_dims, noise=GaussianNoise(sigma)))
        learner, environment = started(prepared, 2)
        observer = Pulls()
        drive(learner, environment, prepared.budget, observer)
        firsts.append([arm for arm, everything in observer.pulls if everything])
    shorter = min(firsts, key=len)
    assert len(shorter) > 20 and len(firsts[0]) != len(firsts[1])  # the noise moved the first elimination
    assert firsts[0][:len(shorter)] == firsts[1][:len(shorter)]
    k = irrelevant_dims.arms.shape[0]
    assert shorter == [uniform_index(u, k) for u in run_streams(2)[1].random(len(shorter))]
