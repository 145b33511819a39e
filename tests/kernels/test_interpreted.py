"""The kernels' interpreted views compute the compiled views' bits: whole runs of every rule
and regime give the same records and the same final state whichever view runs them, or
whichever runs first (:mod:`cbai_cli.numerics.kernels.jit`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.kinds.cbai.families import family
from cbai_cli.numerics.kernels import advance as advance_module
from cbai_cli.numerics.kernels import jit
from cbai_cli.numerics.kernels.batch import run_compiled
from cbai_cli.numerics.kernels.blas import dot
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise
from cbai_cli.run.simulate import drive

from .test_batch import RULES, Silent, assert_same_state, prepared_run, started

REGIMES = ("theory", "det", "tuned", "ols")
NOISES = {"gaussian": GaussianNoise(0.3), "binary": BinaryNoise()}
SEEDS = (6, 1)


def instance_with(noise: str):
    # arms inside the unit ball, so binary answers have a probability (x·φ + 1)/2
    return family("unit-sphere").generate(NOISES[noise], d=4, n=12, seed=1)


def batch_runs(prepared, interpret):
    """The runs of SEEDS in one batch with ``interpret``: (outcomes, learners)."""
    together = [started(prepared, seed) for seed in SEEDS]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget,
                            interpret=interpret)
    return outcomes, [learner for learner, _ in together]


@pytest.mark.parametrize("noise", sorted(NOISES))
@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize("name", RULES)
def test_interpreted_runs_equal_compiled_runs(name, regime, noise):
    prepared = prepared_run(instance_with(noise), name, regime, budget=300)  # past a chunk of 256 normals
    interpreted, interpreted_learners = batch_runs(prepared, True)
    compiled, compiled_learners = batch_runs(prepared, False)
    assert interpreted == compiled
    for first, second in zip(interpreted_learners, compiled_learners):
        assert_same_state(first, second)


@pytest.mark.parametrize("name, regime", [("track-and-stop", "ols"), ("g-acol", "theory")])
def test_a_run_that_turns_to_compiled_code_midway_is_the_same_run(monkeypatch, name, regime):
    prepared = prepared_run(instance_with("gaussian"), name, regime, budget=300)
    compiled, compiled_learners = batch_runs(prepared, False)
    loads = []
    together = [started(prepared, seed) for seed in SEEDS]
    monkeypatch.setattr(jit._Process, "loaded", False)
    monkeypatch.setattr(jit, "INTERPRETED_SECONDS", 0.0)  # every interpreted piece uses up the budget
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget,
                            load=lambda: (loads.append(True), jit.load()))
    assert loads == [True] and outcomes == compiled
    for (learner, _), other in zip(together, compiled_learners):
        assert_same_state(learner, other)


def test_a_piece_that_raises_is_undone_and_run_compiled(monkeypatch):
    prepared = prepared_run(instance_with("binary"), "g-acol", "theory", budget=300)
    compiled, compiled_learners = batch_runs(prepared, False)
    real = advance_module.advance.interpreted

    def raising(*arguments):
        real(*arguments)  # every array moved on, and the binary answers' generator
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setitem(advance_module.advance._views, "interpreted", raising)
    loads = []
    together = [started(prepared, seed) for seed in SEEDS]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget,
                            interpret=True, load=lambda: loads.append(True))
    assert outcomes == compiled and loads == [True] * len(SEEDS)  # binary runs go one at a time
    for (learner, _), other in zip(together, compiled_learners):
        assert_same_state(learner, other)


@pytest.mark.parametrize("regime", ["det", "ols"])
def test_the_ask_tell_loop_interpreted_equals_it_compiled(monkeypatch, regime):
    prepared = prepared_run(instance_with("gaussian"), "track-and-stop", regime, budget=120)
    jit.load()
    loop, environment = started(prepared, 3)
    compiled = drive(loop, environment, prepared.budget, Silent())
    monkeypatch.setattr(jit._Process, "loaded", False)
    monkeypatch.setattr(jit, "INTERPRETED_SECONDS", float("inf"))
    interpreted_loop, environment = started(prepared, 3)
    interpreted = drive(interpreted_loop, environment, prepared.budget, Silent())
    assert (interpreted.used, interpreted.solved) == (compiled.used, compiled.solved)
    assert_same_state(interpreted_loop, loop)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 70), st.integers(1, 70), st.integers(0, 2**32 - 1))
def test_dot_products_interpreted_are_the_compiled_ones(rows, columns, seed):
    rng = np.random.default_rng(seed)
    matrix, vector = rng.normal(size=(rows, columns)), rng.normal(size=columns)
    np.testing.assert_array_equal(dot.interpreted(matrix, vector), dot.compiled(matrix, vector))
    assert dot.interpreted(matrix[0], vector) == dot.compiled(matrix[0], vector)
    assert dot.interpreted(matrix[:0], vector).shape == dot.compiled(matrix[:0], vector).shape == (0,)


def test_no_arm_matrix_small_enough_to_interpret_streams():
    # the passes over matrices that stream reassociate their sums, which Python cannot copy
    from cbai_cli.numerics.kernels.codes import STREAM_ENTRIES

    assert jit.INTERPRETED_ENTRIES < STREAM_ENTRIES


def test_a_call_from_python_that_raises_interpreted_is_undone_and_run_compiled(monkeypatch):
    from cbai_cli.numerics.kernels import elimination

    kernel = elimination.interval_bounds
    norms2, predictions = np.array([0.5, 2.0, 0.0]), np.array([0.1, -0.3, 0.7])
    expected_lower, expected_upper = np.full(3, 9.0), np.full(3, 9.0)
    kernel.compiled(1.5, norms2, predictions, expected_lower, expected_upper)

    def raising(radius, norms2, predictions, lower, upper):
        norms2[:], predictions[:] = 100.0, -5.0  # inputs moved on, then Python's arithmetic raises
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setitem(kernel._views, "interpreted", raising)
    monkeypatch.setattr(jit._Process, "loaded", False)
    monkeypatch.setattr(jit, "INTERPRETED_SECONDS", float("inf"))
    lower, upper = np.full(3, 9.0), np.full(3, 9.0)
    kernel(1.5, norms2, predictions, lower, upper)
    np.testing.assert_array_equal(norms2, [0.5, 2.0, 0.0])
    np.testing.assert_array_equal(lower, expected_lower)
    np.testing.assert_array_equal(upper, expected_upper)
    assert jit.loaded()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(0, 40), st.integers(0, 2**32 - 1))
def test_eigendecompositions_interpreted_are_the_compiled_ones(dim, rank, seed):
    from cbai_cli.numerics.kernels.span import symmetric_eigen

    rows = np.random.default_rng(seed).normal(size=(min(rank, dim) + 1, dim))
    matrix = rows.T @ rows  # rank-deficient for most draws, as a design before d pulls
    for interpreted, compiled in zip(symmetric_eigen.interpreted(matrix), symmetric_eigen.compiled(matrix)):
        np.testing.assert_array_equal(interpreted, compiled)


def span_states(seed: int, pulls: int):
    """A fit of its own on 30 random arms in R⁶ after ``pulls`` pulls of random arms (a
    nearly parallel pair among them), with the ``ols`` regime's prior, and a copy of its
    state: (fit, intervals, copy)."""
    from cbai_cli.numerics.kernels.state import SpanState
    from cbai_cli.numerics.ols import LeastSquaresSpan, MixtureIntervals, ScalePrior

    rng = np.random.default_rng(seed)
    arms = rng.normal(size=(30, 6))
    arms[1] = arms[0] + 1e-6 * rng.normal(size=6)
    fit = LeastSquaresSpan(arms, refresh_every=10**6)
    intervals = MixtureIntervals(fit, ScalePrior(float(np.max(np.einsum("kd,kd->k", arms, arms)))), 0.05, 1.0)
    for arm in rng.integers(0, 30, size=pulls):
        fit.update(int(arm), float(rng.normal()))
    return fit, intervals, SpanState.stack([fit.state])


@pytest.mark.parametrize("pulls", [0, 3, 40])
@pytest.mark.parametrize("seed", range(3))
def test_recomputations_epochs_and_lines_interpreted_are_the_compiled_ones(seed, pulls):
    from cbai_cli.numerics.kernels import span
    from cbai_cli.numerics.kernels.state import LINES

    fit, intervals, _ = span_states(seed, pulls)
    outside = np.flatnonzero(~fit.inside)
    prior = intervals.prior
    calls = [(span.refresh_span, lambda state: (fit.arms, fit.arm_norms2, fit.scales, state.arrays(), 0)),
             (span.new_epoch_span, lambda state: (fit.arms, fit.scales, state.arrays(), 0)),
             (span.follow_epoch, lambda state: (prior.points, prior.scales, prior.log_weights, state.arrays(), 0))]
    if outside.size:  # the state's counts take the pull first, as an update's
        def extension(state, arm=int(outside[0])):
            state.counts[0, arm] += 1
            return fit.arms, fit.arm_norms2, fit.scales, state.arrays(), 0, arm, 1, 0
        calls.append((span.extend_span, extension))
    for kernel, arguments in calls:
        _, _, interpreted = span_states(seed, pulls)
        _, _, compiled = span_states(seed, pulls)
        interpreted.counters[0, LINES] = compiled.counters[0, LINES] = -1  # lines due
        assert kernel.interpreted(*arguments(interpreted)) == kernel.compiled(*arguments(compiled))
        for first, second in zip(interpreted.arrays(), compiled.arrays()):
            np.testing.assert_array_equal(first, second)
