"""The ``ols`` regime's least-squares fit on the span and its mixture widths (docs/ols.md):
hand-computed widths on a tiny design, the rank-one caches against a fit from scratch, and
the Theorem checked by simulation over adaptive designs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import log_ndtr

from cbai_cli.numerics.kernels.ols import mean_width, tangent_lines
from cbai_cli.numerics.kernels.state import SINCE
from cbai_cli.numerics.ols import (Envelope, LeastSquaresSpan, MixtureIntervals, ScalePrior, lower_envelope, mean_shares,
                          mixture_envelope, mixture_widths, points_in_use)

# Two scales λ ∈ {1, 2} with weight ½ each, and tangent points e^{−4}, e^{−4+h}, 4, … (h chosen
# so that μ = 4 is one): the smallest prior whose lines can be written out by hand.
TWO_SCALES = {"scale": 1.0, "low": 0.0, "high": math.log(2.0), "step": math.log(2.0), "core": (0.0, 1.0),
              "core_weight": 0.0, "point_step": (4.0 + math.log(4.0)) / 2}
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


def lines_at(prior: ScalePrior, log_dets: np.ndarray, delta: float,
             points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    intercepts, slopes, thresholds = np.empty(points.size), np.empty(points.size), np.empty(points.size)
    tangent_lines(prior.scales, prior.log_weights, log_dets, -math.log(delta), points, intercepts, slopes, thresholds)
    return intercepts, slopes


def gibbs(prior: ScalePrior, log_dets: np.ndarray, delta: float, point: float) -> np.ndarray:
    """ρ ∝ π·exp(−ℓ/2 + c/(μ + λ)) with Σπ exp(…) = 1/δ, c found by bisection (not the
    kernel's Newton)."""
    def excess(c):
        return np.log(np.sum(np.exp(prior.log_weights - 0.5 * log_dets + c / (point + prior.scales)))) + math.log(delta)
    low, high = 0.0, 1.0
    while excess(high) < 0:
        high *= 2
    for _ in range(200):
        low, high = (low, (low + high) / 2) if excess((low + high) / 2) > 0 else ((low + high) / 2, high)
    rho = np.exp(prior.log_weights - 0.5 * log_dets + high / (point + prior.scales)) * delta
    return rho / rho.sum()


def jensen_free_factor(rho: np.ndarray, prior: ScalePrior, log_dets: np.ndarray, delta: float, point: float) -> float:
    """β_ρ·h_ρ(μ), with KL(ρ‖π) written out."""
    positive = rho > 0
    divergence = np.sum(rho[positive] * (np.log(rho[positive]) - prior.log_weights[positive]))
    beta = -math.log(delta) + divergence + 0.5 * rho @ log_dets
    return beta / np.sum(rho / (point + prior.scales))


def test_the_tangent_line_by_hand():
    """δ = 0.1, V = 4·e1e1ᵀ: ℓ = (log 5, log 3) at λ = (1, 2); at μ = 4 the root of
    ½·5^{−½}e^{c/5} + ½·3^{−½}e^{c/6} = 10 is c = 16.1973498, ρ = (0.5706488, 0.4293512),
    q = ρ₁/5 + ρ₂/6 = 0.1856883, β = log 10 + KL + ½Σρℓ = 3.0076583 = c·q,
    a = (ρ₁/25 + ρ₂/36)/q² = 1.0078953, b = 1/q − 4a = 1.3537878."""
    prior = ScalePrior(**TWO_SCALES)
    assert prior.points[2] == pytest.approx(4.0)
    intercepts, slopes = lines_at(prior, np.log([5.0, 3.0]), 0.1, np.array([4.0]))
    assert intercepts[0] == pytest.approx(3.0076583 * 1.0078953, abs=1e-6)
    assert slopes[0] == pytest.approx(3.0076583 * 1.3537878, abs=1e-6)


def test_the_width_on_a_tiny_design_by_hand():
    """e1 after four pulls: a = 1/4, b = 1/16, so 1/t = 4 is a tangent point and the squared
    half-width is 2·β·(a/4 + b/16) = 2·c/16 = 2.0246687 (R = 1): the exact boundary of the
    mixture for this rank-one design. The previous family's best member gave 2.0555159."""
    prior = ScalePrior(**TWO_SCALES)
    fit = four_pulls_of_e1()
    envelope = mixture_envelope(prior, prior.log_dets(np.array([4.0, 0.0])), 0.1)
    width = mixture_widths(fit.variances[:1], fit.spreads[:1], envelope, 1.0)[0]
    assert width**2 == pytest.approx(2.0246687, abs=1e-6)


@settings(max_examples=30, deadline=None)
@given(eigenvalues=st.lists(st.floats(1e-3, 1e7), min_size=1, max_size=5), point=st.floats(1e-3, 1e7),
       delta=st.sampled_from([0.01, 0.05, 0.3]))
def test_each_line_is_tangent_to_h_and_lies_above_it(eigenvalues, point, delta):
    """For the ρ of the point, a·μ + b ≥ h_ρ(μ) = 1/Σρ_i/(μ + λ_i) for every μ ≥ 0 (h is a
    weighted harmonic mean of μ + λ, concave), with equality at the point; β is
    log(1/δ) + KL + ½Σρℓ written out."""
    prior = ScalePrior(1.0)
    log_dets = prior.log_dets(np.array(eigenvalues))
    rho = gibbs(prior, log_dets, delta, point)
    factor = jensen_free_factor(rho, prior, log_dets, delta, point)
    beta = factor * np.sum(rho / (point + prior.scales))
    intercepts, slopes = lines_at(prior, log_dets, delta, np.array([point]))
    a, b = intercepts[0] / beta, slopes[0] / beta
    mus = np.concatenate(([0.0], np.geomspace(1e-6, 1e12, 400), [point]))
    h = 1.0 / np.sum(rho[None, :] / (mus[:, None] + prior.scales[None, :]), axis=1)
    assert np.all(a * mus + b >= h * (1 - 1e-9))
    assert a * point + b == pytest.approx(h[-1], rel=1e-7)


@settings(max_examples=30, deadline=None)
@given(eigenvalues=st.lists(st.floats(1e-3, 1e7), min_size=1, max_size=5), point=st.floats(1e-3, 1e7),
       seed=st.integers(0, 2**32 - 1))
def test_at_its_point_the_line_beats_every_rho(eigenvalues, point, seed):
    """β_p·h_p(μ_p), the squared width per xᵀV⁺x/μ_p of an arm at the point, is at most
    β_ρ·h_ρ(μ_p) for any ρ: random ones, point masses (one scale at log(1/π_i)) and π."""
    prior = ScalePrior(1.0)
    log_dets = prior.log_dets(np.array(eigenvalues))
    intercepts, slopes = lines_at(prior, log_dets, 0.05, np.array([point]))
    at_point = intercepts[0] * point + slopes[0]
    rng = np.random.default_rng(seed)
    candidates = [*rng.dirichlet(np.full(prior.scales.size, 0.3), size=20), *np.eye(prior.scales.size),
                  np.exp(prior.log_weights)]
    for rho in candidates:
        assert at_point <= jensen_free_factor(rho, prior, log_dets, 0.05, point) * (1 + 1e-9)


@settings(max_examples=20, deadline=None)
@given(pulls=st.floats(1.0, 1e6), norm=st.floats(0.1, 3.0))
def test_a_rank_one_width_is_the_exact_boundary_of_the_mixture(pulls, norm):
    """V = n·xxᵀ: the squared half-width of x is 2R²E/(n‖x‖²)·… with E the root of
    Σ_i π_i (λ_i/(μ + λ_i))^{1/2} exp(E·μ/(μ + λ_i)) = 1/δ (μ = n‖x‖²), the supermartingale's own
    boundary, when 1/t = μ is a tangent point; between points within 0.3 %."""
    prior = ScalePrior(norm**2)
    mu = pulls * norm**2
    log_dets = np.log1p(mu / prior.scales)
    rho = gibbs(prior, log_dets, 0.05, mu)
    exact = jensen_free_factor(rho, prior, log_dets, 0.05, mu)  # = c, the root in units of μ/(μ + λ)·μ
    assert np.log(np.sum(np.exp(prior.log_weights - 0.5 * log_dets + exact / (mu + prior.scales)))) == pytest.approx(
        -math.log(0.05), abs=1e-9)
    variance, spread = 1.0 / mu, 1.0 / mu**2
    width = mixture_widths(np.array([variance]), np.array([spread]), mixture_envelope(prior, log_dets, 0.05), 1.0)[0]
    assert width**2 / 2 * mu**2 >= exact * (1 - 1e-9)
    assert width**2 / 2 * mu**2 <= exact * 1.003


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 12))
def test_the_envelope_is_the_minimum_over_its_lines(seed, count):
    """For t ≥ 0 the line of :meth:`Envelope.coefficients` is the lowest of all lines, ties
    and parallel lines included."""
    rng = np.random.default_rng(seed)
    intercepts = rng.choice([0.5, 1.0, 2.0], size=count) * rng.integers(1, 4, size=count)
    slopes = rng.choice([0.0, 0.5, 1.0, 3.0], size=count) + rng.integers(0, 2, size=count)
    chosen, crossings = lower_envelope(intercepts, slopes)
    envelope = Envelope(intercepts[chosen], slopes[chosen], np.ones(chosen.size), crossings)
    assert np.all(np.diff(envelope.crossings) > 0) and np.all(envelope.crossings > 0)
    ratios = np.concatenate(([0.0], np.linspace(0.0, 10.0, 101)[1:], envelope.crossings))
    line = envelope.lines(ratios)
    line_i, line_s = envelope.intercepts[line], envelope.slopes[line]
    best = np.min(intercepts[None, :] + slopes[None, :] * ratios[:, None], axis=1)
    assert line_i + line_s * ratios == pytest.approx(best, rel=1e-12, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(variances=st.lists(st.floats(1e-4, 1e2), min_size=1, max_size=6), shape=st.floats(1e-6, 10.0),
       top=st.floats(1.0, 1e6))
def test_no_arm_is_wider_than_with_jensen_or_a_single_scale(variances, shape, top):
    """Each arm's squared width is at most 0.3 % above min over ρ of β_ρ·(a + λ̄_ρ·b) (the
    previous version's bound, which used Jensen's inequality where the tangent is used now),
    over the Gibbs family ρ_γ ∝ π·exp(−ℓ/2 − γλ), point masses at log(1/π_i) and π; the 0.3 %
    is the grid of tangent points (on it, the width is at most the minimum)."""
    prior = ScalePrior(1.0)
    eigenvalues = np.array([top, top * shape])
    log_dets = prior.log_dets(eigenvalues)
    variances = np.array(variances)
    spreads = variances * np.geomspace(1.0 / eigenvalues.max(), 1.0 / eigenvalues.min(), variances.size)
    envelope = mixture_envelope(prior, log_dets, 0.05, points_in_use(prior, variances, spreads))
    widths = mixture_widths(variances, spreads, envelope, 1.0)
    gammas = np.concatenate(([0.0], np.exp(np.arange(-18.0, 11.0))))
    rhos = [*np.exp(prior.log_weights[None, :] - 0.5 * log_dets[None, :] - gammas[:, None] * prior.scales[None, :]),
            *np.eye(prior.scales.size), np.exp(prior.log_weights)]
    for rho in rhos:
        rho = rho / rho.sum()
        positive = rho > 0
        beta = -math.log(0.05) + np.sum(rho[positive] * (np.log(rho[positive]) - prior.log_weights[positive])) + \
            0.5 * rho @ log_dets
        assert np.all(widths**2 <= 2 * beta * (variances + (rho @ prior.scales) * spreads) * 1.003)


def test_the_epoch_growths_are_those_of_its_starting_design_for_the_pulled_arms_only():
    """A pull's growth is log(1 + xᵀ(λ_0I + V_m)⁻¹x) with V_m the design when the epoch began,
    computed at the arm's first pull of the epoch; arms not pulled in it stay NaN."""
    arms = np.random.default_rng(3).standard_normal((6, 3))
    fit = LeastSquaresSpan(arms)
    fit.track(np.array([0.5, 2.0, 8.0]), margin=100.0)
    pulled = np.zeros(6, dtype=bool)
    growth = 0.0
    for arm, count in [(0, 1), (1, 1), (2, 1), (4, 2), (1, 1), (4, 1), (5, 3), (1, 1)]:
        epoch = fit.epoch
        fit.update(arm, 0.1 * arm, count)
        if fit.epoch != epoch:  # a recomputation or a new epoch: V_m is the design now
            start, pulled[:], growth = fit.gram, False, 0.0
        else:
            pulled[arm] = True
            inverse = np.linalg.inv(0.5 * np.eye(3) + start)
            growth += count * np.log1p(arms[arm] @ inverse @ arms[arm])
    assert pulled.sum() >= 2  # the last pulls stayed in one epoch
    inverse = np.linalg.inv(0.5 * np.eye(3) + start)
    expected = np.log1p(np.einsum("kd,de,ke->k", arms, inverse, arms))
    assert fit.growths[pulled] == pytest.approx(expected[pulled], rel=1e-12)
    assert np.isnan(fit.growths[~pulled]).all()
    assert fit.growth == pytest.approx(growth, rel=1e-12)


def test_within_an_epoch_the_width_carries_the_growth_so_far():
    """Between epochs the squared width is the line's times 1 + g/(2β): β of the same ρ with
    ℓ + g in place of ℓ (e1 pulled again, g > 0, no new epoch yet)."""
    prior = ScalePrior(**TWO_SCALES)
    intervals = MixtureIntervals(four_pulls_of_e1(), prior, 0.1, 1.0, mean_share=0.0)
    lower, upper = intervals.bounds()
    start = intervals.fit.epoch
    intervals.observe(0, 0.5, 1)
    fit = intervals.fit
    assert fit.epoch == start and fit.growth > 0
    lower, upper = intervals.bounds()
    envelope = mixture_envelope(prior, fit.log_dets, 0.1)
    line = envelope.lines(np.array([0.0625 / 0.25]))[0]
    beta = envelope.thresholds[line]
    squared = 2 * (envelope.intercepts[line] * fit.variances[0] + envelope.slopes[line] * fit.spreads[0])
    assert ((upper[0] - lower[0]) / 2) ** 2 == pytest.approx(squared * (1 + fit.growth / (2 * beta)), rel=1e-12)


def own_mean_root(count: float, threshold: float, prior: ScalePrior, floor: float | None = None) -> float:
    """c at the root of Σ_i π_i (λ_i/(n + λ_i))^{1/2} exp(c/(n + λ_i))·2Φ(z_i) = e^threshold (``brentq``),
    with z_i = sqrt(2c'/(n + λ_i)) and c' = ``floor`` (the regime's bound, z_i rounded down to a 32nd as
    its table does) or c' = c (the half-normal mixture itself)."""
    def excess(c: float) -> float:
        z = np.sqrt(2 * (c if floor is None else floor) / (count + prior.scales))
        if floor is not None:
            z = np.minimum(np.floor(z * 32), 256) / 32
        terms = prior.log_weights - 0.5 * np.log1p(count / prior.scales) + c / (count + prior.scales)
        return float(np.logaddexp.reduce(terms + np.log(2.0) + log_ndtr(z))) - threshold

    return brentq(excess, 0.0, 1e3 * (count + 1) * (threshold + 1), xtol=1e-13, rtol=1e-15)


def test_each_arm_keeps_the_tighter_side_of_its_own_mean():
    """δ = 0.1, κ = 0.1, K = 3, no rewards: the least-squares intervals at δ = 0.09; e1's own
    mean (0.5 after four pulls summing to 2) has each side at κδ/(2K) = 1/600, half-width
    sqrt(2c)/4 with c the root of Σ_i π_i (λ_i/(4 + λ_i))^{1/2} exp(c/(4 + λ_i))·2Φ(sqrt(2c_lo/(4 + λ_i)))
    = 600 over the means' prior, c_lo = 4·log(300); the interval is the intersection of the two."""
    prior = ScalePrior(1.0)
    fit = four_pulls_of_e1()
    intervals = MixtureIntervals(LeastSquaresSpan(ARMS), prior, 0.1, 1.0, mean_share=0.1)
    intervals.observe(0, 2.0, 4)
    alone = MixtureIntervals(fit, prior, 0.09, 1.0, mean_share=0.0)
    ls_lower, ls_upper = alone.bounds()
    width = math.sqrt(2 * own_mean_root(4.0, math.log(600.0), intervals.mean_prior, floor=4 * math.log(300.0))) / 4
    lower, upper = intervals.bounds()
    assert lower[0] == pytest.approx(max(ls_lower[0], 0.5 - width), rel=1e-9)
    assert upper[0] == pytest.approx(min(ls_upper[0], 0.5 + width), rel=1e-9)
    assert np.isneginf(lower[1:]).all() and np.isposinf(upper[1:]).all()


def test_least_squares_bounds_leave_out_the_own_means_and_the_joint_test():
    """δ = 0.1, κ = 0.9 (least squares at 0.01, so e1's own mean binds), τ = 0.4, e1 pulled 60
    times averaging 0.45: least squares alone is the interval of a run without own means at
    0.01, narrower than neither side of the run's, which the call leaves untouched."""
    prior = ScalePrior(1.0)
    intervals = MixtureIntervals(LeastSquaresSpan(ARMS), prior, 0.1, 1.0, mean_share=0.9, threshold=0.4)
    intervals.observe(0, 27.0, 60)
    lower, upper = intervals.bounds()
    alone_fit = LeastSquaresSpan(ARMS)
    alone_fit.update(0, total=27.0, count=60)
    alone_lower, alone_upper = MixtureIntervals(alone_fit, prior, 0.01, 1.0, mean_share=0.0).bounds()
    ls_lower, ls_upper = intervals.least_squares_bounds()
    np.testing.assert_allclose(ls_lower, alone_lower, rtol=1e-12)  # 0.1·(1 − 0.9) is 0.01 up to rounding
    np.testing.assert_allclose(ls_upper, alone_upper, rtol=1e-12)
    assert lower[0] > ls_lower[0] and upper[0] < ls_upper[0]  # the own mean narrows both sides of e1
    np.testing.assert_array_equal(intervals.bounds(), (lower, upper))


def test_each_side_of_an_own_mean_has_the_width_of_its_own_share():
    """Rewards (2, 1), κ = 0.99, δ = 0.1 (least squares at 0.001, so the own mean binds): the most
    rewarding arm's lower side spends κδ·1, its upper side κδ/(2·1·2) = κδ/4. After 50 pulls of e1
    summing to 0 its bounds are −w(κδ) and +w(κδ/4), w(δ') = sqrt(2c)/50 with c the root at
    log(1/δ') (c_lo = 50·log(1/(2δ')))."""
    prior = ScalePrior(1.0)
    intervals = MixtureIntervals(LeastSquaresSpan(np.eye(2)), prior, 0.1, 1.0, mean_share=0.99,
                                 rewards=np.array([2.0, 1.0]))
    intervals.observe(0, 0.0, 50)
    lower, upper = intervals.bounds()

    def width(share: float) -> float:
        level = 0.99 * 0.1 * share
        return math.sqrt(2 * own_mean_root(50.0, math.log(1 / level), intervals.mean_prior,
                                           floor=50 * math.log(1 / (2 * level)))) / 50

    assert lower[0] == pytest.approx(-width(1.0), rel=1e-9)
    assert upper[0] == pytest.approx(width(1 / 4), rel=1e-9)
    assert upper[0] > -lower[0]


@settings(max_examples=40, deadline=None)
@given(count=st.integers(1, 10**6), threshold=st.floats(0.1, 20.0))
def test_an_own_mean_width_bounds_the_half_normal_mixtures_root(count, threshold):
    """The width is never below the one-sided mixture's (so it is valid) and, from the
    thresholds of the regime up (log(1/(κδ)) ≥ 3), within 1 % of it."""
    prior = ScalePrior(1.0)
    width, _ = mean_width(float(count), 0.0, 0.0, prior.scales, prior.log_weights, threshold,
                          np.empty((3, prior.scales.size)))
    exact = math.sqrt(2 * own_mean_root(float(count), threshold, prior)) / count
    assert width >= exact * (1 - 1e-9)
    if threshold >= 3.0:
        assert width <= exact * 1.01


def test_one_side_of_an_own_mean_costs_about_log_two_nats_less_than_both():
    """At n = 100, threshold log(1/δ') = 6: the one-sided root is within 0.01 of the symmetric
    mixture's root at log(1/(2δ')) = 6 − log 2, and more than log 2·n below its root at 6 (c grows
    by about n + λ per nat of threshold)."""
    prior = ScalePrior(1.0)
    width, _ = mean_width(100.0, 0.0, 0.0, prior.scales, prior.log_weights, 6.0, np.empty((3, prior.scales.size)))
    base = prior.log_weights - 0.5 * np.log1p(100.0 / prior.scales)

    def symmetric(threshold: float) -> float:
        return brentq(lambda c: np.logaddexp.reduce(base + c / (100.0 + prior.scales)) - threshold, 0.0, 1e6)

    one_sided = (100.0 * width) ** 2 / 2
    assert symmetric(6.0 - math.log(2.0)) <= one_sided <= symmetric(6.0 - math.log(2.0)) * 1.01
    assert symmetric(6.0) - one_sided > math.log(2.0) * 100.0


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


def fit_from_scratch(arms: np.ndarray, fit: LeastSquaresSpan) -> tuple[np.ndarray, ...]:
    """(xᵀV⁺x, ‖V⁺x‖², xᵀV⁺b) of every arm and the in-span mask, V⁺ by numpy's pseudo-inverse."""
    pinv = np.linalg.pinv(fit.gram, rcond=1e-9, hermitian=True)
    in_span = np.abs(arms - arms @ pinv @ fit.gram).max(axis=1) < 1e-6
    return (np.einsum("kd,de,ke->k", arms, pinv, arms), np.sum((arms @ pinv) ** 2, axis=1),
            arms @ pinv @ fit.targets, in_span)


class Spy:
    """Counts the fit's extensions and recomputations (after its construction), read from its
    state row around each update: both restart the count of updates since the last one at 0;
    a recomputation restarts the roundoff estimates at 0 too, an extension grows the rank and
    keeps them. ``extended``: for each pull of an arm outside the span, whether it extended."""

    def __init__(self, monkeypatch, entries: int = 0):
        from cbai_cli.numerics import ols

        self.reset()
        update = ols.LeastSquaresSpan.update

        def spied_update(fit, arm, total, count=1):
            outside, rank = not fit.inside[arm], fit.rank
            update(fit, arm, total, count)
            state, b = fit.state
            if state.counters[b, SINCE] == 0:
                extended = fit.rank > rank and bool(state.roundoff[b].any())
                if outside:
                    self.extended.append(extended)
                self.refreshed += not extended

        monkeypatch.setattr(ols, "EXTEND_ENTRIES", entries)
        monkeypatch.setattr(ols.LeastSquaresSpan, "update", spied_update)

    def reset(self) -> None:
        self.extended, self.refreshed = [], 0


@pytest.mark.parametrize("seed", range(12))
def test_extending_the_span_gives_the_caches_of_a_fit_from_scratch(monkeypatch, seed):
    """Pulls of new arms (extensions) between pulls in the span (rank-one steps): after each,
    the caches equal V⁺ computed anew to 1e-9 relative, and no pull of a new arm recomputed."""
    spy = Spy(monkeypatch)
    rng = np.random.default_rng(seed)
    dim = 2 + seed % 5
    arms = rng.normal(size=(dim + 4, dim))
    fit = LeastSquaresSpan(arms, refresh_every=10**6)
    spy.reset()
    order = list(rng.permutation(dim))
    for arm in order:
        for again in rng.choice(np.flatnonzero(fit.inside), size=min(2, int(fit.inside.sum())), replace=False):
            fit.update(int(again), float(rng.normal()), 1)
        fit.update(int(arm), float(rng.normal()), int(rng.integers(1, 4)))
        variances, spreads, predictions, in_span = fit_from_scratch(arms, fit)
        assert fit.inside.tolist() == in_span.tolist()
        assert np.allclose(fit.variances, variances, rtol=1e-9, atol=1e-12)
        assert np.allclose(fit.spreads, spreads, rtol=1e-9, atol=1e-12)
        assert np.allclose(fit.predictions[in_span], predictions[in_span], rtol=1e-9, atol=1e-12)
    assert spy.extended == [True] * dim and spy.refreshed == 0 and fit.rank == dim


@pytest.mark.parametrize("seed", range(4))
def test_extending_and_recomputing_keep_the_same_span_on_awkward_arms(monkeypatch, seed):
    """Nearly parallel pairs and arms a thousand times shorter (designs of condition up to
    10⁹): pull by pull, extending the span and recomputing it give the same span, the same
    epochs, and caches within 10⁻⁹ relative of each other."""
    from cbai_cli.numerics import ols

    def run(entries: float) -> list:
        monkeypatch.setattr(ols, "EXTEND_ENTRIES", entries)
        rng = np.random.default_rng(seed)
        arms = rng.standard_normal((60, 12))
        arms[1::5] = arms[::5] + 1e-4 * rng.standard_normal((12, 12))
        arms[3::7] *= 1e-3
        fit = LeastSquaresSpan(arms)
        states = []
        for _ in range(80):
            fit.update(int(rng.integers(60)), float(rng.normal()), int(rng.integers(1, 3)))
            states.append((fit.inside.copy(), fit.rank, fit.epoch, fit.variances.copy(), fit.spreads.copy()))
        return states

    for extended, recomputed in zip(run(0), run(math.inf)):
        assert extended[0].tolist() == recomputed[0].tolist() and extended[1:3] == recomputed[1:3]
        inside = extended[0]
        for mine, theirs in zip(extended[3:], recomputed[3:]):
            assert np.allclose(mine[inside], theirs[inside], rtol=1e-9, atol=0.0)


def test_extending_the_span_by_hand(monkeypatch):
    """V = diag(4, 0) from four pulls of e1; one pull of (1, 1) adds u = e2 with β = 1,
    w = V⁺x = (¼, 0), q = ¼, γ = ¼ + 1: V'⁺ = [[¼, −¼], [−¼, 5/4]] = inverse of [[5, 1], [1, 1]]."""
    Spy(monkeypatch)
    fit = four_pulls_of_e1()
    fit.update(2, total=1.0, count=1)
    assert np.allclose(fit.pinv, [[0.25, -0.25], [-0.25, 1.25]])
    # e1: ¼; e2: 5/4; (1, 1): ¼ − ½ + 5/4 = 1; spreads: ‖(¼, −¼)‖² = ⅛, ‖(−¼, 5/4)‖² = 13/8, ‖(0, 1)‖² = 1
    assert np.allclose(fit.variances, [0.25, 1.25, 1.0]) and np.allclose(fit.spreads, [0.125, 1.625, 1.0])
    # b = (3, 1): φ̂ = V'⁺b = (½, ½)
    assert np.allclose(fit.predictions, [0.5, 0.5, 1.0]) and fit.inside.all()


def test_a_new_direction_near_the_span_cut_is_recomputed(monkeypatch):
    """(0, 10⁻⁴) after e1: trace(V'⁺)·trace(V') ≈ 10⁸ ≥ EXTEND_CONDITION, so the fit is
    recomputed, which keeps the direction (10⁻⁸ > 10⁻⁹ of the largest eigenvalue)."""
    spy = Spy(monkeypatch)
    fit = LeastSquaresSpan(np.array([[1.0, 0.0], [0.0, 1e-4]]))
    fit.update(0, 0.5)
    spy.reset()
    fit.update(1, 1e-4)
    assert spy.refreshed == 1 and fit.rank == 2


def test_an_arm_pulled_before_outside_the_span_is_recomputed(monkeypatch):
    spy = Spy(monkeypatch)
    fit = LeastSquaresSpan(ARMS)
    fit.update(0, 0.5)
    fit.counts[1] = 1.0  # pulled before, yet outside the span (what the span cut can leave)
    spy.reset()
    fit.update(1, 0.2)
    assert spy.refreshed == 1


def test_small_arm_matrices_recompute_instead_of_extending(monkeypatch):
    from cbai_cli.numerics.ols import EXTEND_ENTRIES

    spy = Spy(monkeypatch, entries=EXTEND_ENTRIES)
    fit = four_pulls_of_e1()
    spy.reset()
    fit.update(1, 0.2)
    assert spy.refreshed == 1 and spy.extended == [False]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(1, 4), margin=st.sampled_from([0.05, 0.5, 3.0]))
def test_the_epoch_bound_covers_the_log_determinants_at_every_pull(seed, dim, margin):
    """Within an epoch, log det(I + V/λ_i) ≤ ℓ_i + g ≤ ℓ_i + margin at every scale after every
    pull, g the fit's growth sum."""
    rng = np.random.default_rng(seed)
    arms = rng.normal(size=(6, dim)) * rng.uniform(0.1, 3.0, size=(6, 1))
    prior = ScalePrior(float(np.max(np.sum(arms**2, axis=1))))
    fit = LeastSquaresSpan(arms)
    fit.track(prior.scales, margin)
    for _ in range(60):
        fit.update(int(rng.integers(6)), 0.0, int(rng.integers(1, 3)))
        exact = prior.log_dets(np.maximum(np.linalg.eigvalsh(fit.gram), 0.0))
        assert fit.growth <= margin
        assert np.all(exact <= fit.log_dets + fit.growth + 1e-9)


# --------------------------------------------------------------------------- #
# The Theorem, by simulation: simultaneous over all times and arms, adaptive designs
# --------------------------------------------------------------------------- #

DELTA = 0.25
RUNS = 150
STEPS = 120


def chase_the_widest(seed: int, shrink: float = 1.0) -> bool:
    """One run whose design pulls the arm with the widest interval (arms outside the span
    first): True when some arm's interval (least squares ∩ its own mean), shrunk by
    ``shrink`` about its centre, misses xᵀφ at some step."""
    rng = np.random.default_rng(seed)
    arms = rng.normal(size=(6, 3))
    arms[5] = arms[0] + 1e-3 * arms[1]  # a nearly parallel pair: a small eigenvalue
    phi = rng.normal(size=3)
    means = arms @ phi
    fit = LeastSquaresSpan(arms)
    intervals = MixtureIntervals(fit, ScalePrior(float(np.max(np.sum(arms**2, axis=1)))), DELTA, 1.0)
    for _ in range(STEPS):
        lower, upper = intervals.bounds()
        bounded = np.isfinite(lower) & np.isfinite(upper)
        low, high = np.where(bounded, lower, 0.0), np.where(bounded, upper, 0.0)
        centre, half = (low + high) / 2, np.where(bounded, (high - low) / 2, np.inf)
        if np.any(bounded & (np.abs(centre - means) > shrink * half)):
            return True
        arm = int(np.argmax(half + 1e-9 * rng.random(6)))
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


def mean_rises_above_its_bound(seed: int, threshold: float, shrink: float = 1.0, pulls: int = 2000) -> bool:
    """One arm's running mean of N(0, 1) noise over ``pulls`` pulls: True when it rises above ``shrink``·(the
    one-sided width of its own mean at the threshold log(1/δ')) after some pull. The widths depend on the
    pull count only, so a sampling rule that pulls the arm at data-dependent times leaves this sequence as
    it is; the noise is symmetric, so the lower side is the same check."""
    rng = np.random.default_rng(seed)
    means = np.cumsum(rng.standard_normal(pulls)) / np.arange(1, pulls + 1)
    prior = ScalePrior(1.0)
    root, widths, scratch = 0.0, np.empty(pulls), np.empty((3, prior.scales.size))
    for n in range(1, pulls + 1):
        widths[n - 1], root = mean_width(float(n), float(n - 1), root, prior.scales, prior.log_weights, threshold,
                                         scratch)
    return bool(np.any(means > shrink * widths))


def test_an_arms_own_mean_stays_below_its_upper_bound_at_all_times_with_probability_one_minus_delta():
    """δ' = 0.3 for one side of one arm: the running mean rises above it at some pull in at
    most δ' of 300 runs of 2,000 pulls, plus three binomial standard deviations."""
    failures = sum(mean_rises_above_its_bound(seed, math.log(1 / 0.3)) for seed in range(300))
    assert failures / 300 <= failure_limit(300, 0.3)


def test_the_own_mean_check_detects_bounds_that_are_too_narrow():
    """The same runs with the bound at 40 % of its width fail in more than the limit."""
    failures = sum(mean_rises_above_its_bound(seed, math.log(1 / 0.3), shrink=0.4) for seed in range(100))
    assert failures / 100 > failure_limit(100, 0.3)


def test_the_own_mean_shares_by_reward_rank_by_hand():
    """Rewards (3, 1, 3, 2, 0.5): the upper shares of the first c positions are ½·c/(c + 1):
    1/3 through the tie group {0, 2}, 3/8 through arm 3, 2/5 through arm 1, 5/12 through arm 4.
    Upper shares: 1/6 each for arms 0 and 2, then 1/24, 1/40 and 1/60 (20, 5, 3, 2 /120); lower
    shares 1 − (the upper shares through the group) + the arm's own upper share."""
    shares = mean_shares(np.array([3.0, 1.0, 3.0, 2.0, 0.5]), 5)
    assert shares[1] * 120 == pytest.approx([20.0, 3.0, 20.0, 5.0, 2.0])
    assert shares[0] * 120 == pytest.approx([100.0, 75.0, 100.0, 80.0, 72.0])
    assert mean_shares(None, 4) == pytest.approx(np.full((2, 4), 1 / 8))


def test_without_ties_the_arm_of_rank_r_has_upper_share_one_over_2r_r_plus_one():
    """K = 4: upper 1/(2r(r + 1)) = 1/4, 1/12, 1/24, 1/40; lower ½ + 1/(2r) = 1, 3/4, 2/3, 5/8."""
    shares = mean_shares(np.array([0.1, 0.4, 0.3, 0.2]), 4)  # ranks 4, 1, 2, 3
    assert shares[1] == pytest.approx([1 / 40, 1 / 4, 1 / 12, 1 / 24])
    assert shares[0] == pytest.approx([5 / 8, 1.0, 3 / 4, 2 / 3])


@settings(max_examples=200, deadline=None)
@given(data=st.data(), k=st.integers(1, 30))
def test_the_sides_an_answer_depends_on_never_spend_more_than_the_budget(data, k):
    """For every truth: the upper sides of the infeasible arms at least as rewarding as the best
    feasible reward r*, and the lower side of one feasible arm of reward r* (the one the proof
    follows; the shares of a tie group are equal, so any of them), sum to at most 1; all upper
    sides when no arm is feasible. A more rewarding arm never gets a smaller share."""
    rewards = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=k, max_size=k)))
    feasible = np.array(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    lower, upper = mean_shares(rewards, k)
    if feasible.any():
        best = rewards[feasible].max()
        answers = np.flatnonzero(feasible & (rewards == best))
        spent = upper[~feasible & (rewards >= best)].sum() + lower[answers].max()
    else:
        spent = upper.sum()
    assert spent <= 1 + 1e-12
    order = np.argsort(-rewards, kind="stable")
    assert np.all(np.diff(lower[order]) <= 1e-15) and np.all(np.diff(upper[order]) <= 1e-15)


def test_the_regime_shares_the_own_mean_budget_by_the_instances_rewards():
    from cbai_cli.compare.sources import parse_source
    from cbai_cli.run.simulate import RunRequest, prepare, start_run

    instance = parse_source("random:d=3,n=6,seed=1,sigma=1", 0)[0].instance_for(0)
    learner, _, _ = start_run(prepare(RunRequest.of("track-and-stop", "ols", delta=0.05), instance), 0)
    shares = mean_shares(learner.problem.rewards, 6)
    assert learner.intervals.mean_thresholds == pytest.approx(-np.log(0.3 * 0.05 * shares))


def test_in_one_dimension_least_squares_takes_the_whole_delta():
    """d = 1: no own means by default (least squares uses every pull for every arm), κ = 0.3 from d = 2."""
    line = MixtureIntervals(LeastSquaresSpan(np.array([[1.0], [0.5]])), ScalePrior(1.0), 0.1, 1.0)
    plane = MixtureIntervals(LeastSquaresSpan(ARMS), ScalePrior(1.0), 0.1, 1.0)
    assert line.mean_share == 0.0 and np.isposinf(line.mean_thresholds).all()
    assert line.least_squares_delta == 0.1
    assert plane.mean_share == 0.3 and plane.least_squares_delta == pytest.approx(0.07)


def certified_infeasible_on_the_boundary(seed: int, delta: float, overweight: float = 1.0, pulls: int = 500) -> bool:
    """An arm whose mean is exactly τ = 0 (feasible, on the boundary), pulled ``pulls`` times
    beside one pull of an orthogonal arm: True when at some pull its lower bound rises above
    τ, a wrong certificate, by least squares, by its own mean or by their joint test.
    ``overweight`` multiplies the own mean's weight κδ·share in every test (1: as shipped)."""
    rng = np.random.default_rng(seed)
    arms = np.eye(2)
    intervals = MixtureIntervals(LeastSquaresSpan(arms), ScalePrior(1.0), delta, 1.0, rewards=np.array([1.0, 0.0]),
                                 threshold=0.0)
    intervals.mean_thresholds[...] -= math.log(overweight)  # log(1/(κδ·share)): a larger weight lowers it
    intervals.observe(1, float(rng.normal()), 1)
    for _ in range(pulls):
        intervals.observe(0, float(rng.normal()), 1)
        if intervals.bounds()[0][0] > 0.0:
            return True
    return False


def test_a_joint_certificate_is_wrong_with_probability_at_most_delta():
    """δ = 0.3: in at most δ of 300 runs, plus three binomial standard deviations, does the
    boundary arm's lower side pass τ (docs/ols.md, "One supermartingale for both")."""
    failures = sum(certified_infeasible_on_the_boundary(seed, 0.3) for seed in range(300))
    assert failures / 300 <= failure_limit(300, 0.3)


def test_the_joint_check_detects_an_own_mean_weighted_twenty_times_too_much():
    """The same runs with the own mean's term 20 times too heavy fail in more than the limit."""
    failures = sum(certified_infeasible_on_the_boundary(seed, 0.3, overweight=20.0) for seed in range(300))
    assert failures / 300 > failure_limit(300, 0.3)


def test_a_side_certified_jointly_moves_to_the_threshold():
    """The arm's own mean and least squares each leave τ = 0 inside its interval after 60
    pulls averaging 0.45; their joint test passes, so the lower side moves to just above τ
    and the upper side stays where the two bounds put it."""
    arms = np.eye(2)
    joint, alone = (MixtureIntervals(LeastSquaresSpan(arms), ScalePrior(1.0), 0.05, 1.0, rewards=np.array([1.0, 0.0]),
                                     threshold=threshold) for threshold in (0.0, None))
    for intervals in (joint, alone):
        intervals.observe(1, 0.0, 1)
        intervals.observe(0, 0.45 * 60, 60)
    (low, high), (low_alone, high_alone) = joint.bounds(), alone.bounds()
    assert low_alone[0] < 0.0 < low[0] == np.nextafter(0.0, 1.0)
    assert high[0] == high_alone[0]


def test_the_smallest_delta_gives_finite_own_mean_thresholds_without_warnings():
    """κ·δ·share underflows to 0 at δ = 5e-324; the thresholds are a sum of logs instead."""
    import warnings

    fit = LeastSquaresSpan(ARMS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        intervals = MixtureIntervals(fit, ScalePrior(1.0), 5e-324, 1.0)
    assert np.all(np.isfinite(intervals.mean_thresholds)) and np.all(intervals.mean_thresholds > 744.0)
