"""The ``ols`` regime's least-squares fit on the span and its mixture widths (docs/ols.md):
hand-computed widths on a tiny design, the rank-one caches against a fit from scratch, and
the Theorem checked by simulation over adaptive designs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.ols import LeastSquaresSpan, ScalePrior, mixture_thresholds, mixture_widths, ols_intervals

# Two scales λ ∈ {1, 2}: the smallest prior whose windows can be written out by hand.
TWO_SCALES = {"scale": 1.0, "low": 0.0, "high": math.log(2.0), "step": math.log(2.0)}
# d = 2, arms e1, e2, (1, 1); four pulls of e1 summing to 2: V = diag(4, 0), b = (2, 0).
ARMS = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])


def four_pulls_of_e1() -> LeastSquaresSpan:
    fit = LeastSquaresSpan(ARMS)
    fit.update(0, total=2.0, count=4)
    return fit


def test_the_fit_on_a_tiny_design_by_hand():
    fit = four_pulls_of_e1()
    # φ̂ = V⁺b = (0.5, 0); xᵀV⁺x = 1/4 and ‖V⁺x‖² = 1/16 for e1; e2 and (1, 1) leave the span.
    assert fit.rank == 1
    assert fit.predictions[0] == pytest.approx(0.5)
    assert (fit.variances[0], fit.spreads[0]) == (pytest.approx(0.25), pytest.approx(0.0625))
    assert fit.inside.tolist() == [True, False, False]


def test_point_windows_by_hand():
    """Windows of one scale each: KL = log 2, and the arm takes the better scale.

    δ = 0.1, μ = 4: β(λ=1) = log 10 + log 2 + ½ log 5 = 2.302585 + 0.693147 + 0.804719 = 3.800451,
    β(λ=2) = 2.302585 + 0.693147 + ½ log 3 = 3.545038. Half-width² / 2 = min(3.800451 × (1/4 + 1/16),
    3.545038 × (1/4 + 2/16)) = min(1.187641, 1.329389); half-width = sqrt(2.375282) = 1.541195.
    """
    prior = ScalePrior(**TWO_SCALES, windows=(1,))
    fit = four_pulls_of_e1()
    thresholds = mixture_thresholds(prior, fit.current_eigenvalues(), 0.1)
    assert thresholds == pytest.approx([3.800451, 3.545038], abs=1e-6)
    assert mixture_widths(fit.variances[:1], fit.spreads[:1], thresholds, prior, 1.0)[0] == pytest.approx(1.541195, abs=1e-6)


def test_one_window_over_both_scales_by_hand():
    """A window over both scales: KL = 0, λ̄ = 1.5, mean log det = ½(log 5 + log 3) = 1.354025;
    β = 2.302585 + 0.677013 = 2.979598; half-width = R·sqrt(2 × 2.979598 × (1/4 + 1.5/16)) = R × 1.431249."""
    prior = ScalePrior(**TWO_SCALES, windows=(2,))
    assert prior.window_divergences.tolist() == [0.0] and prior.window_means.tolist() == [1.5]
    lower, upper = ols_intervals(four_pulls_of_e1(), prior, delta=0.1, subgaussian=2.0)
    assert (lower[0], upper[0]) == (pytest.approx(0.5 - 2 * 1.431249, abs=1e-6), pytest.approx(0.5 + 2 * 1.431249, abs=1e-6))


def test_arms_outside_the_span_stay_unbounded():
    lower, upper = ols_intervals(four_pulls_of_e1(), ScalePrior(1.0), delta=0.1, subgaussian=1.0)
    assert np.isneginf(lower[1:]).all() and np.isposinf(upper[1:]).all()


def test_nothing_pulled_bounds_nothing():
    lower, upper = ols_intervals(LeastSquaresSpan(ARMS), ScalePrior(1.0), delta=0.1, subgaussian=1.0)
    assert np.isneginf(lower).all() and np.isposinf(upper).all()


def test_a_zero_arm_is_known_exactly():
    fit = LeastSquaresSpan(np.array([[0.0, 0.0], [1.0, 0.0]]))
    fit.update(1, 0.3)
    lower, upper = ols_intervals(fit, ScalePrior(1.0), delta=0.1, subgaussian=1.0)
    assert (lower[0], upper[0]) == (0.0, 0.0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(1, 5), refresh=st.sampled_from([3, None]))
def test_rank_one_caches_equal_a_fit_from_scratch(seed, dim, refresh):
    """After pulls that grow the span and pulls inside it, the caches equal V⁺ computed anew."""
    rng = np.random.default_rng(seed)
    arms = rng.normal(size=(7, dim))
    arms[:2] = arms[2] * np.array([[1.0], [-2.0]])  # parallel arms: the span grows slower than the pulls
    fit = LeastSquaresSpan(arms, refresh_every=refresh)
    for _ in range(25):
        arm = int(rng.integers(7))
        fit.update(arm, float(rng.normal()), int(rng.integers(1, 4)))
    pinv = np.linalg.pinv(fit.gram, rcond=1e-9, hermitian=True)
    in_span = np.abs(arms - arms @ pinv @ fit.gram).max(axis=1) < 1e-6
    assert fit.inside.tolist() == in_span.tolist()
    scale = 1.0 + np.abs(np.einsum("kd,de,ke->k", arms, pinv, arms))
    assert np.allclose(fit.variances, np.einsum("kd,de,ke->k", arms, pinv, arms), atol=1e-8 * scale.max())
    assert np.allclose(fit.spreads, np.sum((arms @ pinv) ** 2, axis=1), rtol=1e-6, atol=1e-8 * scale.max() ** 2)
    assert np.allclose(fit.predictions[in_span], (arms @ pinv @ fit.targets)[in_span], atol=1e-8 * scale.max())


@settings(max_examples=30, deadline=None)
@given(variances=st.lists(st.floats(1e-4, 1e2), min_size=1, max_size=6), shape=st.floats(1e-6, 10.0),
       top=st.floats(1.0, 1e6))
def test_each_arm_gets_a_width_of_some_window_and_nearly_the_best(variances, shape, top):
    """The width is one window's (so it is valid) and within 2 % of the best window's."""
    prior = ScalePrior(1.0)
    thresholds = mixture_thresholds(prior, np.array([top, top * shape]), 0.05)
    variances = np.array(variances)
    spreads = variances * np.geomspace(1e-7, 10.0, variances.size)
    widths = mixture_widths(variances, spreads, thresholds, prior, 1.0)
    every = np.sqrt(2 * thresholds[None, :] * (variances[:, None] + prior.window_means[None, :] * spreads[:, None]))
    assert np.all(widths >= every.min(axis=1) * (1 - 1e-12))
    assert np.all(widths <= every.min(axis=1) * 1.02)


# --------------------------------------------------------------------------- #
# The Theorem, by simulation: simultaneous over all times and arms, adaptive designs
# --------------------------------------------------------------------------- #

DELTA = 0.25
RUNS = 150
STEPS = 120


def chase_the_widest(seed: int, shrink: float = 1.0) -> bool:
    """One run whose design pulls the arm with the widest interval (arms outside the span
    first): True when some arm's interval, shrunk by ``shrink``, misses xᵀφ at some step."""
    rng = np.random.default_rng(seed)
    arms = rng.normal(size=(6, 3))
    arms[5] = arms[0] + 1e-3 * arms[1]  # a nearly parallel pair: a small eigenvalue
    phi = rng.normal(size=3)
    means = arms @ phi
    fit, prior = LeastSquaresSpan(arms), ScalePrior(float(np.max(np.sum(arms**2, axis=1))))
    for _ in range(STEPS):
        lower, upper = ols_intervals(fit, prior, DELTA, 1.0)
        half = upper - fit.predictions
        if np.any(fit.inside & (np.abs(fit.predictions - means) > shrink * half)):
            return True
        arm = int(np.argmax(np.where(fit.inside, half, np.inf) + 1e-9 * rng.random(6)))
        fit.update(arm, float(means[arm] + rng.normal()))
    return False


def failure_limit(runs: int, delta: float) -> float:
    """δ plus three binomial standard deviations."""
    return delta + 3.0 * math.sqrt(delta * (1.0 - delta) / runs)


def test_the_intervals_hold_at_all_times_for_all_arms_with_probability_at_least_one_minus_delta():
    failures = sum(chase_the_widest(seed) for seed in range(RUNS))
    assert failures / RUNS <= failure_limit(RUNS, DELTA)


def test_the_simulation_detects_intervals_that_are_too_narrow():
    """The check has power: intervals at a fifth of the width fail in more than δ of the runs."""
    failures = sum(chase_the_widest(seed, shrink=0.2) for seed in range(RUNS // 3))
    assert failures / (RUNS // 3) > failure_limit(RUNS // 3, DELTA)
