"""The compiled per-pull work of the ``ols`` regime (cbai_cli/numerics/kernels/ols.py): the rank-one
step against the same update written out in numpy and against a fit from scratch, the
drift test and the epoch test, and the interval bounds against numpy's elementwise formula
(how much roundoff a step adds is measured, not tested: benchmarks/ols_roundoff.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import erfc, log_ndtr

from cbai_cli.numerics.kernels.ols import (EPOCH, KEEP, LOG_TWO_PHI, REFRESH, Z_STEPS_PER_UNIT, arm_growth, assign_lines,
                                  joint_certificate, mark_points,
                                  mean_width,
                                  mixture_bounds, rank_one_step)
from cbai_cli.numerics.kernels.threads import NEVER
from cbai_cli.numerics.ols import DRIFT_TOLERANCE, STEP_ROUNDOFF, ScalePrior

RATIO = DRIFT_TOLERANCE / STEP_ROUNDOFF


def fit_from_scratch(arms: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """V⁺ (d, d) and the caches (3, K) xᵀV⁺x, ‖V⁺x‖², xᵀV⁺b of V = Σ c_a·a aᵀ, b = Σ y_a·a (full rank)."""
    gram = arms.T @ (counts[:, None] * arms)
    pinv = np.linalg.inv(gram)
    pinv = 0.5 * (pinv + pinv.T)
    projected = arms @ pinv
    caches = np.stack((np.einsum("kd,kd->k", projected, arms), np.einsum("kd,kd->k", projected, projected),
                       projected @ (sums @ arms)))
    return np.ascontiguousarray(pinv), caches


def random_fit(seed: int, k: int, d: int):
    """Arms (K, d), V⁺ and the caches after a few pulls of every arm (V well conditioned)."""
    rng = np.random.default_rng(seed)
    arms = rng.standard_normal((k, d))
    counts = rng.integers(1, 4, size=k).astype(float)
    sums = rng.standard_normal(k)
    return rng, arms, counts, sums, *fit_from_scratch(arms, counts, sums)


def step_in_numpy(arms, pinv, caches, arm, count, total):
    """The rank-one step of docs/ols.md ("Cost") written out: (V⁺, caches) afterwards."""
    u = pinv @ arms[arm]
    q = arms[arm] @ u
    shrink = count / (1.0 + count * q)
    residual = (total - count * caches[2, arm]) / (1.0 + count * q)
    p, p_twice = arms @ u, arms @ (pinv @ u)
    changes = np.stack((-shrink * p**2, shrink**2 * (u @ u) * p**2 - 2.0 * shrink * p * p_twice, residual * p))
    return pinv - shrink * np.outer(u, u), caches + changes


def call(arms, pinv, caches, arm, count, total, roundoff=None, growths=None, growth=0.0, margin=math.inf,
         ratio=RATIO, threads_from=NEVER, growth_basis=None):
    k, d = arms.shape
    roundoff = np.zeros(k) if roundoff is None else roundoff
    growths = np.zeros(k) if growths is None else growths
    growth_basis = np.zeros((d, d)) if growth_basis is None else growth_basis
    return rank_one_step(arms, pinv, caches, roundoff, np.empty((2, d)), growths, growth_basis, arm, count, total,
                         growth, margin, ratio, threads_from)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 9), d=st.integers(1, 6), count=st.integers(1, 3))
def test_the_step_is_the_rank_one_update_written_in_numpy(seed, k, d, count):
    rng, arms, counts, sums, pinv, caches = random_fit(seed, k + d, d)
    arm, total = int(rng.integers(k + d)), float(rng.standard_normal())
    expected_pinv, expected_caches = step_in_numpy(arms, pinv, caches, arm, count, total)
    call(arms, pinv, caches, arm, count, total)
    scale = np.abs(expected_caches).max(axis=1, keepdims=True)
    assert np.allclose(pinv, expected_pinv, rtol=0.0, atol=1e-12 * np.abs(expected_pinv).max())
    assert np.allclose(caches, expected_caches, rtol=1e-12, atol=1e-12 * scale)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 9), d=st.integers(1, 6), count=st.integers(1, 3))
def test_the_step_equals_a_fit_from_scratch_of_the_new_design(seed, k, d, count):
    rng, arms, counts, sums, pinv, caches = random_fit(seed, k + d, d)
    arm, total = int(rng.integers(k + d)), float(rng.standard_normal())
    call(arms, pinv, caches, arm, count, total)
    counts[arm] += count
    sums[arm] += total
    expected_pinv, expected_caches = fit_from_scratch(arms, counts, sums)
    condition = np.linalg.cond(arms.T @ (counts[:, None] * arms))
    tolerance = 1e-13 * condition
    assert np.allclose(pinv, expected_pinv, rtol=tolerance, atol=tolerance * np.abs(expected_pinv).max())
    # each row's error is relative to the size of its terms: xᵀφ̂ may cancel to far below |x|·|φ̂|
    terms = np.abs(expected_caches).max(axis=1)
    terms[2] = max(terms[2], float((np.abs(arms) @ np.abs(expected_pinv @ (sums @ arms))).max()))
    assert np.allclose(caches, expected_caches, rtol=tolerance, atol=tolerance * terms[:, None])


def ill_conditioned_fit():
    """Arms e1, (0, 10⁻³), e2 after pulls of the first two: V = diag(1, 10⁻⁶), so the
    second arm has ‖V⁺x‖² = 10⁶, and a pull of e2 shrinks it by about 10¹²."""
    arms = np.array([[1.0, 0.0], [0.0, 1e-3], [0.0, 1.0]])
    return (arms, *fit_from_scratch(arms, np.array([1.0, 1.0, 0.0]), np.array([0.5, 1e-3, 0.0])))


def test_a_step_that_shrinks_a_spread_by_1e12_asks_for_a_recomputation():
    arms, pinv, caches = ill_conditioned_fit()
    assert call(arms, pinv, caches, 2, 1, 0.3)[0] == REFRESH


def test_a_step_that_leaves_the_spreads_alone_keeps_the_caches():
    arms, pinv, caches = ill_conditioned_fit()
    assert call(arms, pinv, caches, 0, 1, 0.3)[0] == KEEP


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), slack=st.sampled_from([0.5, 2.0]))
def test_the_drift_test_fires_exactly_when_some_bound_passes_its_tolerance(seed, slack):
    """With a fresh bound, the step adds |Δb| + b' to each arm's bound; REFRESH iff for some
    arm that exceeds ratio·b' (here the ratio is set around the largest (|Δb| + b')/b')."""
    rng, arms, counts, sums, pinv, caches = random_fit(seed, 6, 3)
    arm, total = int(rng.integers(6)), float(rng.standard_normal())
    after = step_in_numpy(arms, pinv, caches, arm, 1, total)[1][1]
    largest = np.max((np.abs(after - caches[1]) + after) / after)
    code, _ = call(arms, pinv, caches, arm, 1, total, ratio=largest * slack)
    assert code == (REFRESH if slack < 1.0 else KEEP)


def test_the_growth_sum_starts_an_epoch_once_it_passes_the_margin():
    arms, pinv, caches = ill_conditioned_fit()
    growths = np.array([0.25, 0.0, 0.0])
    code, growth = call(arms, pinv.copy(), caches.copy(), 0, 2, 0.3, growths=growths, growth=0.125, margin=0.625)
    assert (code, growth) == (KEEP, 0.625)
    code, growth = call(arms, pinv.copy(), caches.copy(), 0, 2, 0.3, growths=growths, growth=0.25, margin=0.625)
    assert (code, growth) == (EPOCH, 0.75)


def test_arm_growth_by_hand():
    # V_m = diag(3, 1), λ_0 = 1: columns e1/√4 and e2/√2; x = (2, 2): 1 + 2 = 3, log(1 + 3) = log 4
    basis = np.array([[0.5, 0.0], [0.0, 1.0 / math.sqrt(2.0)]])
    assert arm_growth(np.array([2.0, 2.0]), basis) == pytest.approx(math.log(4.0), rel=1e-15)


def test_a_pull_computes_its_arms_growth_at_its_first_pull_of_the_epoch():
    arms, pinv, caches = ill_conditioned_fit()
    basis = np.array([[0.5, 0.0], [0.0, 0.25]])
    growths = np.array([math.nan, 5.0, math.nan])
    code, growth = call(arms, pinv, caches, 0, 2, 0.3, growths=growths, growth_basis=basis)
    expected = arm_growth(arms[0], basis)
    assert growths[0] == expected and growths[1] == 5.0 and math.isnan(growths[2])
    assert (code, growth) == (KEEP, 2 * expected)


def test_a_recomputation_takes_precedence_over_an_epoch():
    arms, pinv, caches = ill_conditioned_fit()
    assert call(arms, pinv, caches, 2, 1, 0.3, growths=np.ones(3), margin=0.0)[0] == REFRESH


@pytest.mark.parametrize("drifting", [None, 0, 1999])
def test_the_pass_split_across_threads_equals_the_serial_pass_bitwise(drifting):
    # d = 100: blocks of 640 rows, four of them; the drift of one arm in the first or the
    # last block alone must reach the result
    rng, arms, counts, sums, pinv, caches = random_fit(5, 2000, 100)
    roundoff = np.zeros(2000)
    if drifting is not None:
        roundoff[drifting] = 2.0 * RATIO * caches[1, drifting]
    results = []
    for limit in (NEVER, 0):
        state = (pinv.copy(), caches.copy(), roundoff.copy())
        code, growth = call(arms, *state[:2], 7, 2, 0.4, roundoff=state[2], threads_from=limit)
        results.append((code, growth, state))
    (serial_code, serial_growth, serial), (split_code, split_growth, split) = results
    assert (split_code, split_growth) == (serial_code, serial_growth)
    assert serial_code == (KEEP if drifting is None else REFRESH)
    for a, b in zip(serial, split):
        np.testing.assert_array_equal(b, a)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 30))
def test_the_bounds_are_numpys_elementwise_formula_bitwise(seed, k):
    rng = np.random.default_rng(seed)
    intercepts, slopes, inflations = rng.uniform(0.1, 10.0, size=(3, k))
    growth = rng.uniform(0.0, 0.2)
    variances, spreads = rng.uniform(-1e-17, 1.0, size=(2, k))  # a tiny negative: roundoff below zero
    inside = rng.random(k) < 0.7
    predictions = rng.standard_normal(k)
    counts = rng.integers(0, 3, size=k).astype(float)
    sums = rng.standard_normal(k) * counts
    mean_widths = np.where(counts > 0, rng.uniform(0.0, 3.0, size=(2, k)), np.inf)
    lower, upper = np.empty(k), np.empty(k)
    no_means, prior = np.full((2, k), np.inf), ScalePrior(1.0)
    mixture_bounds(intercepts, slopes, inflations, growth, variances, spreads, inside, predictions, counts, sums,
                   mean_widths, math.nan, no_means, 1.0, prior.scales, prior.log_weights, lower, upper)  # no joint test
    squared = (intercepts * variances + slopes * spreads) * (1.0 + growth * inflations)
    widths = np.where(inside, np.sqrt(np.maximum(squared, 0.0)), np.inf)
    means = np.divide(sums, counts, out=np.zeros(k), where=counts > 0)
    pulled = counts > 0
    np.testing.assert_array_equal(lower, np.where(pulled, np.maximum(predictions - widths, means - mean_widths[0]),
                                                  predictions - widths))
    np.testing.assert_array_equal(upper, np.where(pulled, np.minimum(predictions + widths, means + mean_widths[1]),
                                                  predictions + widths))


def epoch_inputs(seed: int, k: int) -> tuple[np.ndarray, ...]:
    """Variances, spreads and the span's mask of k arms: zero variances, zero spreads,
    ratios on and between the prior's points, arms outside the span."""
    rng = np.random.default_rng(seed)
    variances = rng.choice([0.0, 1e-3, 0.5, 2.0], size=k) * rng.uniform(0.5, 2.0, size=k)
    spreads = variances * rng.choice([0.0, 1e-4, 1.0, 30.0, 1e4], size=k) * rng.uniform(0.5, 2.0, size=k)
    return variances, spreads, rng.random(k) < 0.8


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(0, 30))
def test_the_points_in_use_are_the_two_around_each_arms_reach(seed, k):
    """mark_points against numpy: the point at or above 1/t (the last one beyond) and the
    one before it, for the arms of the span."""
    points = ScalePrior(1.0).points
    variances, spreads, inside = epoch_inputs(seed, k)
    used = np.zeros(points.size, dtype=bool)
    mark_points(points, variances, spreads, inside, used)
    ratios = np.divide(spreads, variances, out=np.zeros(k), where=variances > 0)[inside]
    reach = np.divide(1.0, ratios, out=np.full(ratios.size, np.inf), where=ratios > 0)
    above = np.minimum(np.searchsorted(points, reach), points.size - 1)
    expected = np.zeros(points.size, dtype=bool)
    expected[above] = True
    expected[np.maximum(above - 1, 0)] = True
    assert used.tolist() == expected.tolist()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 30))
def test_each_arm_takes_the_line_of_envelope_lines_bitwise(seed, k):
    from cbai_cli.numerics.ols import mixture_envelope, points_in_use, spread_ratios

    prior = ScalePrior(1.0)
    variances, spreads, inside = epoch_inputs(seed, k)
    envelope = mixture_envelope(prior, prior.log_dets(np.array([300.0, 2.0, 0.0])), 0.05,
                                points_in_use(prior, variances, spreads, inside))
    intercepts, slopes, inflations = np.empty(k), np.empty(k), np.empty(k)
    assign_lines(variances, spreads, envelope.crossings, envelope.intercepts, envelope.slopes, envelope.thresholds,
                 2.0, intercepts, slopes, inflations)
    line = envelope.lines(spread_ratios(variances, spreads))
    assert intercepts.tolist() == (2.0 * envelope.intercepts[line]).tolist()
    assert slopes.tolist() == (2.0 * envelope.slopes[line]).tolist()
    assert inflations.tolist() == (0.5 / envelope.thresholds[line]).tolist()


def test_the_fit_recomputes_after_a_step_that_would_lose_its_spreads_digits(monkeypatch):
    """Through LeastSquaresSpan: after the pull of e2 the spreads equal V⁺ from scratch
    (the step alone leaves the second arm's off by 5·10⁻⁴ relative, checked with the
    drift test switched off)."""
    from cbai_cli.numerics import ols

    arms = np.array([[1.0, 0.0], [0.0, 1e-3], [0.0, 1.0]])

    def spread_error() -> float:
        fit = ols.LeastSquaresSpan(arms, refresh_every=10**6)
        fit.update(0, 0.5)
        fit.update(1, 1e-3)
        fit.update(2, 0.3)
        exact = np.sum((arms @ np.linalg.inv(fit.gram)) ** 2, axis=1)
        return float(np.max(np.abs(fit.spreads - exact) / exact))

    assert spread_error() < 1e-12
    monkeypatch.setattr(ols, "DRIFT_TOLERANCE", math.inf)
    assert spread_error() > 1e-6


@settings(max_examples=20, deadline=None)
@given(steps=st.lists(st.integers(1, 4), min_size=1, max_size=400), threshold=st.floats(1.0, 15.0))
def test_a_warm_started_mean_width_is_the_root_or_just_above_it(steps, threshold):
    """Pull after pull (1–4 at a time), the width started from the last root is at least the
    width of the exact root (found cold, by bisection) and within 10⁻⁶ of it."""
    from cbai_cli.numerics.ols import ScalePrior

    prior = ScalePrior(1.0)
    count, root, scratch = 0.0, 0.0, np.empty((3, prior.scales.size))
    for step in steps:
        width, root = mean_width(count + step, count, root, prior.scales, prior.log_weights, threshold, scratch)
        count += step
        # the same function as mean_width's: Φ at c_lo = n·log(1/(2δ)), z rounded down to a 32nd,
        # 2Φ(z) = erfc(−z/√2)
        floor = 2 * count * max(threshold - math.log(2.0), 0.0)
        z = np.minimum(np.floor(np.sqrt(floor / (count + prior.scales)) * 32), 256) / 32
        base = prior.log_weights - 0.5 * np.log1p(count / prior.scales) + np.log(erfc(-z / math.sqrt(2)))
        low, high = 0.0, 1.0
        while np.log(np.sum(np.exp(base + high / (count + prior.scales)))) < threshold:
            high *= 2
        for _ in range(200):
            middle = (low + high) / 2
            low, high = (middle, high) if np.log(np.sum(np.exp(base + middle / (count + prior.scales)))) < threshold \
                else (low, middle)
        exact = math.sqrt(2 * high) / count
        assert exact * (1 - 1e-12) <= width <= exact * (1 + 1e-6)


def own_log_mixture(deviation: float, count: float, prior: ScalePrior, table: bool) -> float:
    """log Σ_i π_i (λ_i/(n + λ_i))^{1/2} exp(T²/(2(n + λ_i)))·2Φ(T/sqrt(n + λ_i)) written out,
    log 2Φ from the kernel's table (at or below z) or exactly."""
    spread = count + prior.scales
    z = deviation / np.sqrt(spread)
    log_two_phi = (LOG_TWO_PHI[np.minimum((z * Z_STEPS_PER_UNIT).astype(int), LOG_TWO_PHI.size - 1)] if table
                   else math.log(2.0) + log_ndtr(z))
    terms = prior.log_weights - 0.5 * np.log1p(count / prior.scales) + deviation**2 / (2 * spread) + log_two_phi
    return float(np.logaddexp.reduce(terms))


def test_a_side_that_neither_bound_certifies_is_certified_by_their_sum():
    """Least squares' term exp(β'(d²/W² − 1)) = e^{−0.5} ≈ 0.61 and the own mean's term
    M(τ)·κδ·share = 0.5 (the threshold set so) each fall short of 1; their sum passes, and
    with the own term at 0.35 it does not."""
    prior = ScalePrior(1.0)
    deviation, count = 9.0, 40.0
    log_m = own_log_mixture(deviation, count, prior, table=True)
    beta, squared = 5.0, 1.0
    distance = math.sqrt(0.9)  # β'(d²/W² − 1) = 5·(0.9 − 1) = −0.5
    assert joint_certificate(distance, squared, beta, deviation, count, log_m - math.log(0.5), prior.scales,
                             prior.log_weights)
    assert not joint_certificate(distance, squared, beta, deviation, count, log_m - math.log(0.35), prior.scales,
                                 prior.log_weights)
    assert not joint_certificate(distance, squared, beta, deviation, count, math.inf, prior.scales, prior.log_weights)


@settings(max_examples=300, deadline=None)
@given(distance=st.floats(0.01, 3.0), squared=st.floats(0.01, 4.0), beta=st.floats(1.0, 20.0),
       deviation=st.floats(0.01, 60.0), count=st.integers(1, 5000), own_threshold=st.floats(1.0, 15.0))
def test_the_joint_test_is_the_sum_written_out(distance, squared, beta, deviation, count, own_threshold):
    """The kernel's answer, with its shortcut through the largest possible M(τ), equals the
    test written out over every scale."""
    prior = ScalePrior(1.0)
    # the sum of the two terms in logs: the own term alone can exceed what a float holds
    log_total = np.logaddexp(min(beta * (distance**2 / squared - 1.0), 0.0),
                             own_log_mixture(deviation, count, prior, table=True) - own_threshold)
    if abs(log_total) > 1e-9:  # not on the edge, where the two orders of summation may disagree
        assert joint_certificate(distance, squared, beta, deviation, float(count), own_threshold, prior.scales,
                                 prior.log_weights) == (log_total >= 0.0)


@settings(max_examples=300, deadline=None)
@given(deviation=st.floats(0.0, 200.0), count=st.integers(1, 10**6))
def test_the_shortcut_bounds_the_own_mixture_from_above(deviation, count):
    """log M(τ) ≤ u − ½ − ½·log(2u) + log 2 (u = T²/(2n) > ½; log 2 below), with 2Φ taken exactly."""
    u = deviation**2 / (2 * count)
    ceiling = (u - 0.5 - 0.5 * math.log(2 * u) if u > 0.5 else 0.0) + math.log(2.0)
    assert own_log_mixture(deviation, count, ScalePrior(1.0), table=False) <= ceiling + 1e-12
