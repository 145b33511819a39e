"""The ``ols`` regime's least-squares fit on the span and its mixture widths (docs/ols.md):
hand-computed widths on a tiny design, the rank-one caches against a fit from scratch, and
the Theorem checked by simulation over adaptive designs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cbai_cli.ols import LeastSquaresSpan, MixtureIntervals, ScalePrior, mixture_thresholds, mixture_widths

# Two scales λ ∈ {1, 2} with weight ½ each and γ ∈ {0, e^{−2−log 2}, 1, …}: the smallest prior
# whose family can be written out by hand.
TWO_SCALES = {"scale": 1.0, "low": 0.0, "high": math.log(2.0), "step": math.log(2.0), "core": (0.0, 1.0),
              "core_weight": 0.0, "gamma_step": 2.0 + math.log(2.0)}
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


def test_the_family_by_hand():
    """δ = 0.1, μ = 4: ℓ = (log 5, log 3) at λ = (1, 2).

    γ = 0: ρ ∝ ½(5^{−½}, 3^{−½}) = (0.2236068, 0.2886751), Z = 0.5122819, λ̄ = 1.5635083,
    β = log 10 − log Z = 2.3025851 + 0.6688802 = 2.9714652.
    γ = 1: ρ ∝ ½(5^{−½}e^{−1}, 3^{−½}e^{−2}) = (0.0822603, 0.0390679), Z = 0.1213283,
    λ̄ = 1.3220019, β = log 10 − log Z − λ̄ = 2.3025851 + 2.1092554 − 1.3220019 = 3.0898386.
    """
    prior = ScalePrior(**TWO_SCALES)
    assert prior.gammas[:3] == pytest.approx([0.0, math.exp(-2.0 - math.log(2.0)), 1.0])
    thresholds, means = mixture_thresholds(prior, np.log([5.0, 3.0]), 0.1)
    assert (thresholds[0], means[0]) == (pytest.approx(2.9714652, abs=1e-6), pytest.approx(1.5635083, abs=1e-6))
    assert (thresholds[2], means[2]) == (pytest.approx(3.0898386, abs=1e-6), pytest.approx(1.3220019, abs=1e-6))


def test_the_thresholds_are_the_divergence_plus_the_mean_log_determinant():
    """β_γ = log(1/δ) + KL(ρ_γ‖π) + ½Σρ_γℓ, written out for every member: each width is a
    valid instance of the Theorem."""
    prior = ScalePrior(2.0)
    log_dets = np.log1p(np.array([500.0, 40.0, 3.0])[:, None] / prior.scales).sum(axis=0)
    thresholds, means = mixture_thresholds(prior, log_dets, 0.05)
    for gamma, beta, mean in zip(prior.gammas, thresholds, means):
        rho = np.exp(prior.log_weights - 0.5 * log_dets - gamma * prior.scales)
        rho /= rho.sum()
        positive = rho > 0
        divergence = np.sum(rho[positive] * (np.log(rho[positive]) - prior.log_weights[positive]))
        assert beta == pytest.approx(-math.log(0.05) + divergence + 0.5 * rho @ log_dets, rel=1e-9)
        assert mean == pytest.approx(rho @ prior.scales, rel=1e-9)


def test_the_width_on_a_tiny_design_by_hand():
    """e1 after four pulls: a = 1/4, b = 1/16. γ = 1 gives 2·3.0898386·(1/4 + 1.3220019/16) =
    2.0555159, γ = 0 gives 2·2.9714652·(1/4 + 1.5635083/16) = 2.0664715; the arm takes the
    best member, so its squared half-width is at most 2.0555159 (R = 1)."""
    prior = ScalePrior(**TWO_SCALES)
    fit = four_pulls_of_e1()
    thresholds, means = mixture_thresholds(prior, prior.log_dets(np.array([4.0, 0.0])), 0.1)
    every = 2 * thresholds * (0.25 + means / 16)
    width = mixture_widths(fit.variances[:1], fit.spreads[:1], thresholds, means, 1.0)[0]
    assert every[[0, 2]] == pytest.approx([2.0664715, 2.0555159], abs=1e-6)
    assert width**2 == pytest.approx(every.min(), rel=1e-12)


def test_arms_outside_the_span_stay_unbounded():
    lower, upper = MixtureIntervals(four_pulls_of_e1(), ScalePrior(1.0), 0.1, 1.0).bounds()
    assert np.isfinite(lower[0]) and np.isneginf(lower[1:]).all() and np.isposinf(upper[1:]).all()


def test_nothing_pulled_bounds_nothing():
    lower, upper = MixtureIntervals(LeastSquaresSpan(ARMS), ScalePrior(1.0), 0.1, 1.0).bounds()
    assert np.isneginf(lower).all() and np.isposinf(upper).all()


def test_a_zero_arm_is_known_exactly():
    intervals = MixtureIntervals(LeastSquaresSpan(np.array([[0.0, 0.0], [1.0, 0.0]])), ScalePrior(1.0), 0.1, 1.0)
    intervals.observe(1, 0.3, 1)
    lower, upper = intervals.bounds()
    assert (lower[0], upper[0]) == (0.0, 0.0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(1, 5), refresh=st.sampled_from([3, None]))
@example(seed=6961858, dim=4, refresh=None)  # V went from condition 5e6 to 900 in one pull: ‖V⁺x‖² lost 6 digits
def test_rank_one_caches_equal_a_fit_from_scratch(seed, dim, refresh):
    """After pulls that grow the span and pulls inside it, the caches equal V⁺ computed anew:
    to 1e-9 relative, plus the from-scratch V⁺'s own roundoff of about 1e-14·κ(V)."""
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
    eigenvalues = np.linalg.eigvalsh(fit.gram)
    condition = eigenvalues[-1] / np.min(eigenvalues[eigenvalues > 1e-9 * eigenvalues[-1]], initial=np.inf)
    rtol = min(1e-9 + 1e-14 * condition, 1e-6)
    assert np.allclose(fit.spreads, np.sum((arms @ pinv) ** 2, axis=1), rtol=rtol, atol=1e-8 * scale.max() ** 2)
    assert np.allclose(fit.predictions[in_span], (arms @ pinv @ fit.targets)[in_span], atol=1e-8 * scale.max())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(1, 4), margin=st.sampled_from([0.05, 0.5, 3.0]))
def test_the_epoch_bound_covers_the_log_determinants_at_every_pull(seed, dim, margin):
    """Within an epoch, log det(I + V/λ_i) ≤ ℓ_i + margin at every scale after every pull."""
    rng = np.random.default_rng(seed)
    arms = rng.normal(size=(6, dim)) * rng.uniform(0.1, 3.0, size=(6, 1))
    prior = ScalePrior(float(np.max(np.sum(arms**2, axis=1))))
    fit = LeastSquaresSpan(arms)
    fit.track(prior.scales, margin)
    for _ in range(60):
        fit.update(int(rng.integers(6)), 0.0, int(rng.integers(1, 3)))
        exact = prior.log_dets(np.maximum(np.linalg.eigvalsh(fit.gram), 0.0))
        assert np.all(exact <= fit.log_dets + margin + 1e-9)


@settings(max_examples=30, deadline=None)
@given(variances=st.lists(st.floats(1e-4, 1e2), min_size=1, max_size=6), shape=st.floats(1e-6, 10.0),
       top=st.floats(1.0, 1e6))
def test_each_arm_gets_the_best_member_and_beats_every_single_scale(variances, shape, top):
    """The width is one member's and within 0.1 % of the smallest over the members (the search
    among crossing points is exact where they increase), and at most 1 % above the best
    single scale paying log(1/π_i) (a union bound with the prior's weights)."""
    prior = ScalePrior(1.0)
    log_dets = prior.log_dets(np.array([top, top * shape]))
    thresholds, means = mixture_thresholds(prior, log_dets, 0.05)
    variances = np.array(variances)
    spreads = variances * np.geomspace(1e-7, 10.0, variances.size)
    widths = mixture_widths(variances, spreads, thresholds, means, 1.0)
    every = 2 * thresholds[None, :] * (variances[:, None] + means[None, :] * spreads[:, None])
    assert np.all(np.min(np.abs(every - widths[:, None] ** 2), axis=1) <= 1e-9 * widths**2)
    assert np.all(widths**2 <= every.min(axis=1) * 1.001)
    single = 2 * (-math.log(0.05) - prior.log_weights + 0.5 * log_dets)[None, :] * (
        variances[:, None] + prior.scales[None, :] * spreads[:, None])
    assert np.all(widths**2 <= single.min(axis=1) * 1.01)


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
    fit = LeastSquaresSpan(arms)
    intervals = MixtureIntervals(fit, ScalePrior(float(np.max(np.sum(arms**2, axis=1)))), DELTA, 1.0)
    for _ in range(STEPS):
        lower, upper = intervals.bounds()
        half = upper - fit.predictions
        if np.any(fit.inside & (np.abs(fit.predictions - means) > shrink * half)):
            return True
        arm = int(np.argmax(np.where(fit.inside, half, np.inf) + 1e-9 * rng.random(6)))
        intervals.observe(arm, float(means[arm] + rng.normal()), 1)
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
