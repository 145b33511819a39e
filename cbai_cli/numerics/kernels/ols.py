"""The per-pull work of the ``ols`` regime compiled (docs/ols.md, "Cost"):
:func:`rank_one_step`, the in-span update of :class:`cbai_cli.numerics.ols.LeastSquaresSpan`, and
:func:`mixture_bounds`, the intervals of :class:`cbai_cli.numerics.ols.MixtureIntervals` (with
:func:`joint_certificate`, the joint test of a side at τ), once per
epoch :func:`mark_points`, :func:`tangent_lines` and :func:`assign_lines`, the lines those
intervals take and each arm's, and
after each pull :func:`own_mean_sides`, the widths of the two sides of the pulled arm's own mean.

The d × d products are plain loops summed in index order; the pass over the arm matrix
computes each arm's two products in one read of each row (in index order, or on a matrix
that streams with :func:`cbai_cli.numerics.kernels.threads.pair_products`, whose sums are
reassociated into vector partial sums), block by block, split
across numba's threads on large arm sets like the ridge design's pass. numpy's BLAS sums
in other orders, so the caches differ from the numpy version's in the last bits; the
records do not (benchmarks/check_ols_kernel.py). :func:`rank_one_step` says whether a
recomputation or a new epoch is due; :mod:`cbai_cli.numerics.kernels.span` does them.
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.kernels.design import absorb_finish, absorb_start
from cbai_cli.numerics.kernels.jit import njit, njit_threaded, prange
from cbai_cli.numerics.kernels.threads import (absorb_rows, block_rows, combine_gains, ordered_pair_products, pair_products,
                                      streams)

#: What the fit asks of Python after a pull: nothing, an exact recomputation (a cache's
#: roundoff bound passed its tolerance, or the periodic one), a new epoch (both from
#: :func:`rank_one_step`), or the span extended by a pulled arm outside it
#: (:meth:`cbai_cli.numerics.ols.LeastSquaresSpan.extend`, asked by the compiled loop).
KEEP, REFRESH, EPOCH, EXTEND = 0, 1, 2, 3

#: log 2Φ(z) = log erfc(−z/√2) at z = k/Z_STEPS_PER_UNIT, k = 0 … 8·Z_STEPS_PER_UNIT: :func:`mean_width`
#: takes the entry at or below its z, a lower bound (Φ increases) that costs a table read instead
#: of erfc and log for each scale of each pull (beyond z = 8 the last entry, log 2 − 10⁻¹⁵).
Z_STEPS_PER_UNIT = 32
LOG_TWO_PHI = np.array([math.log(math.erfc(-k / Z_STEPS_PER_UNIT / math.sqrt(2.0)))
                        for k in range(8 * Z_STEPS_PER_UNIT + 1)])


@njit
def _span_rows(arms, start, stop, u, twice, shrink, quadratic, cross, residual, caches, roundoff, drift_ratio):
    """Rows ``start:stop`` of :func:`rank_one_step`'s pass; returns whether some arm's
    roundoff estimate passed its tolerance."""
    p_all = np.empty(stop - start)
    p_twice_all = np.empty(stop - start)
    if streams(arms.shape[0], arms.shape[1]):
        pair_products(arms, start, stop, u, twice, p_all, p_twice_all)
    else:
        ordered_pair_products(arms, start, stop, u, twice, p_all, p_twice_all)
    drift = False
    # slices indexed from 0: numba then knows no index is negative and can vectorise the loop
    norms, spreads, centres = caches[0, start:stop], caches[1, start:stop], caches[2, start:stop]
    errors = roundoff[start:stop]
    for i in range(stop - start):
        p, p_twice = p_all[i], p_twice_all[i]
        square = p * p
        change = quadratic * square + cross * (p * p_twice)
        norms[i] -= shrink * square
        spreads[i] += change
        centres[i] += residual * p
        # A spread falling or rising from b to b' gains roundoff of about STEP_ROUNDOFF·max(b, b')
        # ≤ STEP_ROUNDOFF·(|Δ| + b'), and keeps it however far it falls later.
        errors[i] += abs(change) + spreads[i]
        if errors[i] > spreads[i] * drift_ratio:
            drift = True
    return drift


@njit_threaded
def _span_blocks_threaded(arms, u, twice, shrink, quadratic, cross, residual, caches, roundoff, drift_ratio, block,
                          drifts):
    """:func:`_span_rows` of every block, split across numba's threads; block i's result in
    ``drifts[i]``."""
    k = arms.shape[0]
    for i in prange(drifts.shape[0]):
        start = i * block
        drifts[i] = _span_rows(arms, start, min(start + block, k), u, twice, shrink, quadratic, cross, residual,
                               caches, roundoff, drift_ratio)


@njit
def arm_growth(x, growth_basis):
    """log(1 + xᵀ(λ_0I + V_m)⁻¹x) = log(1 + Σ_k (c_kᵀx)²) for the columns c_k = v_k/√(λ_0 + μ_k)
    of ``growth_basis`` (d, d), V_m = Σ_k μ_k v_k v_kᵀ the design at the epoch's start and
    λ_0 the smallest scale (docs/ols.md, "Epochs"): a pull's growth bound, O(d²), sums in
    index order."""
    d = x.shape[0]
    total = 0.0
    for k in range(growth_basis.shape[1]):
        acc = 0.0
        for j in range(d):
            acc += growth_basis[j, k] * x[j]
        total += acc * acc
    return math.log1p(total)


@njit
def rank_one_step(arms, pinv, caches, roundoff, directions, growths, growth_basis, arm, count, total, growth, margin,
                  drift_ratio, threads_from):
    """Add ``count`` pulls of the in-span arm x = arms[arm] summing to ``total``; returns
    (what Python must do next, the epoch's growth sum).

    With u = V⁺x, q = xᵀu, s = c/(1 + c·q) and, for every arm a, p = aᵀu and p' = aᵀV⁺u
    (one pass over the arm matrix): aᵀV⁺a −= s·p², ‖V⁺a‖² += s²‖u‖²·p² − 2s·p·p',
    aᵀφ̂ += p·(y − c·xᵀφ̂)/(1 + c·q) (y = ``total``), then V⁺ −= s·uuᵀ (Sherman–Morrison on
    the span). Each arm's roundoff estimate for its spread grows by |Δ| + b' (in units of
    STEP_ROUNDOFF; REFRESH once it exceeds ``drift_ratio``·b' = DRIFT_TOLERANCE/STEP_ROUNDOFF·b'
    for some arm). Otherwise the growth sum gains c·``growths``[arm] (Lemma 2 of docs/ols.md),
    EPOCH once it exceeds ``margin``; an arm's growth is computed at its first pull of the
    epoch (NaN until then) by :func:`arm_growth` from ``growth_basis``. The pass over the
    arms goes block by block (:func:`cbai_cli.numerics.kernels.codes.block_rows`), split across
    threads when K·d ≥
    ``threads_from`` (:func:`cbai_cli.numerics.kernels.threads.threads_from`); every arm's numbers
    are the same either way.

    Roundoff: u, V⁺u, p and p' are dot products of length d, u and V⁺u summed in index
    order, p and p' too except on arm matrices that stream, in vector partial sums there
    (:func:`~cbai_cli.numerics.kernels.threads.pair_products`), where
    numpy's BLAS sums in blocks (with fused multiply-adds on some CPUs). The order moves the
    last bits, not the size of the error (every order of a length-d sum has the same bound,
    (d − 1) ulps of Σ|terms|), so the drift test keeps the numpy version's unit: one step adds
    STEP_ROUNDOFF·(|Δ| + b') to a spread's estimate. That is the typical error of one step
    (in either order), not a bound on it: benchmarks/ols_roundoff.py measures, against
    extended precision on 3,000 random designs, a median of 0.6 ulp·(|Δ| + b') and 99 % below
    81 with p and p' summed in index order (86 for BLAS's), and tails up to 5·10⁴ where two arms are nearly
    parallel in both; with the refresh rules the spreads stayed within 1.2·10⁻¹¹ relative
    of a fit from scratch (2.0·10⁻¹¹ for numpy's order) after every one of 300 pulls of 200
    designs.

    Shapes: arms (K, d); pinv (d, d); caches (3, K) rows xᵀV⁺x, ‖V⁺x‖², xᵀφ̂; roundoff,
    growths (K,); growth_basis (d, d); directions (2, d) scratch for u and V⁺u. Updated in
    place: pinv, caches, roundoff, directions, growths[arm]. ``threads_from``: None
    (:data:`cbai_cli.numerics.kernels.threads.NEVER`) never splits the pass.
    """
    k, d = arms.shape
    shrink, residual, quadratic, cross = rank_one_start(arms, pinv, caches, directions, arm, count, total)
    u, twice = directions[0], directions[1]
    block = block_rows(d)
    if threads_from is not None and k * d >= threads_from:
        drifts = np.zeros((k + block - 1) // block, dtype=np.bool_)
        _span_blocks_threaded(arms, u, twice, shrink, quadratic, cross, residual, caches, roundoff, drift_ratio,
                              block, drifts)
        drift = drifts.any()
    else:
        drift = False
        for start in range(0, k, block):
            if _span_rows(arms, start, min(start + block, k), u, twice, shrink, quadratic, cross, residual, caches,
                          roundoff, drift_ratio):
                drift = True
    return rank_one_finish(arms, pinv, directions, growths, growth_basis, arm, count, shrink, drift, growth, margin)


@njit
def rank_one_start(arms, pinv, caches, directions, arm, count, total):
    """What :func:`rank_one_step` does before its pass: u = V⁺x and V⁺u into ``directions``;
    returns (s = c/(1 + c·q), the residual (y − c·xᵀφ̂)/(1 + c·q), s²‖u‖², −2s)."""
    d = arms.shape[1]
    x = arms[arm]
    u = directions[0]
    twice = directions[1]
    for i in range(d):
        acc = 0.0
        for j in range(d):
            acc += pinv[i, j] * x[j]
        u[i] = acc
    squared = 0.0
    for i in range(d):
        acc = 0.0
        for j in range(d):
            acc += pinv[i, j] * u[j]
        twice[i] = acc
        squared += u[i] * u[i]
    q = 0.0
    for j in range(d):
        q += x[j] * u[j]
    shrink = count / (1.0 + count * q)
    residual = (total - count * caches[2, arm]) / (1.0 + count * q)
    return shrink, residual, shrink * shrink * squared, -2.0 * shrink


@njit
def rank_one_finish(arms, pinv, directions, growths, growth_basis, arm, count, shrink, drift, growth, margin):
    """What :func:`rank_one_step` does after its pass (``drift``: whether some arm's roundoff
    passed its tolerance): V⁺ −= s·uuᵀ, then (REFRESH, g) on a drift, else the growth sum
    with the arm's growth and (EPOCH or KEEP, g)."""
    d = arms.shape[1]
    u = directions[0]
    for i in range(d):
        scaled = shrink * u[i]
        for j in range(d):
            pinv[i, j] -= scaled * u[j]
    if drift:
        return REFRESH, growth
    if math.isnan(growths[arm]):
        growths[arm] = arm_growth(arms[arm], growth_basis)
    growth += count * growths[arm]
    if growth > margin:
        return EPOCH, growth
    return KEEP, growth


@njit
def _fused_rows(arms, start, stop, u, shrink, residual, norms2, predictions, direction, companion, both, paired,
                fit_u, fit_twice, fit_shrink, quadratic, cross, fit_residual, caches, roundoff, drift_ratio, no_values,
                no_flags):
    """Rows ``start:stop`` of :func:`absorb_and_rank_one`'s pass: the design update's
    (:func:`cbai_cli.numerics.kernels.threads.absorb_rows`, without elimination) and then the fit's
    (:func:`_span_rows`) while the block is in cache; returns (the block's greedy arm and
    gain, whether some arm's roundoff passed its tolerance)."""
    arm, gain, _, _ = absorb_rows(arms, start, stop, u, shrink, residual, norms2, predictions, direction, companion,
                                  both, paired, np.bool_(False), 0.0, no_values, 0.0, no_flags, no_flags, no_values,
                                  no_values, -math.inf)
    drift = _span_rows(arms, start, stop, fit_u, fit_twice, fit_shrink, quadratic, cross, fit_residual, caches,
                       roundoff, drift_ratio)
    return arm, gain, drift


@njit_threaded
def _fused_blocks_threaded(arms, u, shrink, residual, norms2, predictions, direction, companion, both, paired, fit_u,
                           fit_twice, fit_shrink, quadratic, cross, fit_residual, caches, roundoff, drift_ratio,
                           no_values, no_flags, block, winners, gains, drifts):
    """:func:`_fused_rows` of every block, split across numba's threads; block i's results
    into ``winners[i]``, ``gains[i]``, ``drifts[i]``."""
    k = arms.shape[0]
    for i in prange(winners.shape[0]):
        start = i * block
        winners[i], gains[i], drifts[i] = _fused_rows(
            arms, start, min(start + block, k), u, shrink, residual, norms2, predictions, direction, companion, both,
            paired, fit_u, fit_twice, fit_shrink, quadratic, cross, fit_residual, caches, roundoff, drift_ratio,
            no_values, no_flags)


@njit
def absorb_and_rank_one(arms, inverse, gram, target, estimate, norms2, predictions, logdet, contender, companion,
                        block, threads_from, pinv, caches, roundoff, directions, growths, growth_basis, arm, total,
                        count, growth, margin, drift_ratio):
    """``count`` pulls of x = arms[arm] summing to ``total``, taken in by the ridge design
    (:func:`cbai_cli.numerics.kernels.design.absorb`, with ``contender``'s products into ``companion``)
    and by the ``ols`` fit (:func:`rank_one_step`, x in the span) in one pass over the arm
    matrix: block by block, the design's rows and then the fit's while the block is in cache,
    so each row is read from memory once where the two steps read it twice. Every arm's
    numbers are those of the two steps in turn (the same row functions on the same blocks;
    the two touch disjoint state). Returns (log det A, the greedy arm as :func:`absorb`, what
    Python must do for the fit, the epoch's growth sum) as the two steps return them.

    Shapes: as :func:`cbai_cli.numerics.kernels.design.absorb` and :func:`rank_one_step`.
    """
    k, d = arms.shape
    fit_shrink, fit_residual, quadratic, cross = rank_one_start(arms, pinv, caches, directions, arm, count, total)
    logdet, u, shrink, residual, direction = absorb_start(arms, inverse, gram, target, estimate, logdet, arms[arm],
                                                          total, count, contender)
    both = contender >= 0
    paired = streams(k, d)
    blocks = (k + block - 1) // block
    winners = np.empty(blocks, dtype=np.int64)
    gains = np.empty(blocks)
    drifts = np.zeros(blocks, dtype=np.bool_)
    no_values, no_flags = np.empty(0), np.empty(0, dtype=np.bool_)
    fit_u, fit_twice = directions[0], directions[1]
    if threads_from is not None and k * d >= threads_from:
        _fused_blocks_threaded(arms, u, shrink, residual, norms2, predictions, direction, companion, both, paired,
                               fit_u, fit_twice, fit_shrink, quadratic, cross, fit_residual, caches, roundoff,
                               drift_ratio, no_values, no_flags, block, winners, gains, drifts)
    else:
        for i in range(blocks):
            start = i * block
            winners[i], gains[i], drifts[i] = _fused_rows(
                arms, start, min(start + block, k), u, shrink, residual, norms2, predictions, direction, companion,
                both, paired, fit_u, fit_twice, fit_shrink, quadratic, cross, fit_residual, caches, roundoff,
                drift_ratio, no_values, no_flags)
    contender_arm = combine_gains(winners, gains) if both else -1
    absorb_finish(estimate, u, residual)
    code, growth = rank_one_finish(arms, pinv, directions, growths, growth_basis, arm, count, fit_shrink,
                                   drifts.any(), growth, margin)
    return logdet, contender_arm, code, growth


@njit
def mixture_bounds(intercepts, slopes, inflations, growth, variances, spreads, inside, predictions, counts, sums,
                   mean_widths, threshold, mean_thresholds, scale, mean_scales, mean_log_weights, lower, upper):
    """l(x), u(x) of every arm into ``lower`` and ``upper``: the least-squares interval
    xᵀφ̂ ∓ sqrt((2R²I·xᵀV⁺x + 2R²S·‖V⁺x‖²)·(1 + g/(2β))) for arms in the span
    ((I, S) = β·(a, b) of its tangent line, ``inflations`` 1/(2β), g = ``growth`` the epoch's growth sum so far,
    docs/ols.md "Epochs"; ∓∞ outside it; negative roundoff under the root clipped at 0),
    intersected with the interval of the arm's own mean, sums/counts − ``mean_widths[0]`` to
    sums/counts + ``mean_widths[1]`` (each side at its own share of δ), for arms pulled at
    least once (docs/ols.md, "Each arm's own mean"); then, for a pulled arm in the span whose
    interval still holds τ = ``threshold`` and whose prediction lies on one side of it, the
    joint test of :func:`joint_certificate` on that side, which moves the side to τ when it
    passes (docs/ols.md, "One supermartingale for both"). τ = NaN: no joint test.

    Shapes: all (K,) but ``growth`` and ``scale`` (R) scalars, ``mean_widths`` and
    ``mean_thresholds`` (2, K) (row 0 the lower side; log(1/(κδ·share)), ∞ without the
    means); ``mean_scales``, ``mean_log_weights`` (M,) the means' prior; ``inside`` bool.
    """
    for a in range(predictions.shape[0]):
        width = math.inf
        squared = math.inf
        if inside[a]:
            squared = max((intercepts[a] * variances[a] + slopes[a] * spreads[a]) * (1.0 + growth * inflations[a]),
                          0.0)
            width = math.sqrt(squared)
        low, high = predictions[a] - width, predictions[a] + width
        if counts[a] > 0:
            mean = sums[a] / counts[a]
            low, high = max(low, mean - mean_widths[0, a]), min(high, mean + mean_widths[1, a])
            if inside[a] and low <= threshold < high:
                # the side the prediction lies on: the lower (row 0, sign +1) above τ, else the upper
                side, sign = (0, 1.0) if predictions[a] > threshold else (1, -1.0)
                if joint_certificate(sign * (predictions[a] - threshold), squared, 0.5 / inflations[a] + 0.5 * growth,
                                     sign * (sums[a] - counts[a] * threshold) / scale, counts[a],
                                     mean_thresholds[side, a], mean_scales, mean_log_weights):
                    if side == 0:
                        low = np.nextafter(threshold, math.inf)
                    else:
                        high = threshold
        lower[a] = low
        upper[a] = high


@njit
def joint_certificate(distance, squared, beta, deviation, count, own_threshold, scales, log_weights):
    """Whether one side of an arm is certified at τ by the sum of the two supermartingales
    that bound it, least squares (weight 1 − κ) and the arm's own mean on that side (weight
    κ·share), rather than by each alone (docs/ols.md, "One supermartingale for both"):

        exp(β'·(distance²/width² − 1)) + exp(log M(τ) − log(1/(κδ·share))) ≥ 1,

    where ``distance`` = |xᵀφ̂ − τ| > 0 on the side certified, width² = ``squared`` and β' =
    ``beta`` (β of the arm's tangent line plus g/2) of its least-squares interval, so that
    the first term is (1 − κ)δ·exp(E(τ)) for the lower bound E(τ) ≤ log M_LS the Theorem
    gives at any φ with xᵀφ = τ; and M(τ) the half-normal mixture of the arm's own noise sum
    at xᵀφ = τ, T = ``deviation`` (its sum's distance from count·τ over R, > 0 on the side
    certified), Σ_i π_i (λ_i/(n + λ_i))^{1/2} exp(T²/(2(n + λ_i)))·2Φ(T/sqrt(n + λ_i)), with
    log 2Φ read from :data:`LOG_TWO_PHI` at or below its argument (a lower bound).
    ``own_threshold`` = log(1/(κδ·share)) (∞: no own mean). Before the sum over the M scales,
    its largest possible value, log M ≤ u − ½ − ½·log(2u) + log 2 with u = T²/(2n) (each term
    at its best λ), decides whether it could reach the rest: the test's answer is the same.
    """
    if not squared > 0.0 or not math.isfinite(squared):
        return False
    least_squares = math.exp(min(beta * (distance * distance / squared - 1.0), 0.0))
    if not math.isfinite(own_threshold) or deviation <= 0.0:
        return least_squares >= 1.0
    missing = 1.0 - least_squares
    if missing <= 0.0:
        return True
    u = deviation * deviation / (2.0 * count)
    ceiling = (u - 0.5 - 0.5 * math.log(2.0 * u) if u > 0.5 else 0.0) + math.log(2.0)
    if ceiling - own_threshold < math.log(missing):
        return False
    # log Σ_i exp(t_i) with the largest t_i factored out: two passes, nothing allocated
    top = -math.inf
    for i in range(scales.shape[0]):
        top = max(top, _own_term(i, deviation, count, scales, log_weights))
    total = 0.0
    for i in range(scales.shape[0]):
        total += math.exp(_own_term(i, deviation, count, scales, log_weights) - top)
    return top + math.log(total) - own_threshold >= math.log(missing)


@njit
def _own_term(i, deviation, count, scales, log_weights):
    """log of the i-th term of :func:`joint_certificate`'s mixture M(τ), log 2Φ read from the table at or below z."""
    spread = count + scales[i]
    z = deviation / math.sqrt(spread)
    return (log_weights[i] - 0.5 * math.log1p(count / scales[i]) + deviation * deviation / (2.0 * spread)
            + LOG_TWO_PHI[min(int(z * Z_STEPS_PER_UNIT), LOG_TWO_PHI.shape[0] - 1)])


@njit
def _gibbs_root(base, scales, point, log_inverse_delta, weights, exponents, start):
    """For ρ_c(λ_i) ∝ exp(base_i + c·w_i), w_i = 1/(μ + λ_i), μ = ``point``: c at the root of
    f(c) = log Σ_i exp(base_i + c·w_i) − log(1/δ) by Newton's method from ``start`` if it
    is positive, else from c_0 = min_i (log(1/δ) − base_i)/w_i (f(c_0) ≥ 0). f is convex and
    increasing, so from the right of the root the iterates fall monotonically to it; a start
    on the left (f < 0) stops at once, and c − f/q is then the next iterate, on the right.
    Returns (c, f(c), q = Σρ_c w, Σρ_c w²) for the c reached, converged or not: the width
    c − f/q of ρ_c is valid for every c. ``weights`` and ``exponents`` are (M,) scratch."""
    m = scales.shape[0]
    c = start if start > 0.0 else math.inf
    for i in range(m):
        weights[i] = 1.0 / (point + scales[i])
        if start <= 0.0:
            c = min(c, (log_inverse_delta - base[i]) / weights[i])
    excess, mean, square = 0.0, 0.0, 0.0
    for _ in range(100):
        top = -math.inf
        for i in range(m):
            exponents[i] = base[i] + c * weights[i]
            top = max(top, exponents[i])
        total, first, second = 0.0, 0.0, 0.0
        for i in range(m):
            mass = math.exp(exponents[i] - top)
            total += mass
            first += mass * weights[i]
            second += mass * weights[i] * weights[i]
        excess = top + math.log(total) - log_inverse_delta
        mean, square = first / total, second / total
        if excess <= 1e-12 * log_inverse_delta:
            break
        c -= excess / mean
    return c, excess, mean, square


@njit
def _first_not_below(values, x):
    """np.searchsorted(values, x) (side "left") for sorted ``values`` (n,): the first i with
    values[i] ≥ x, n for NaN as numpy sorts it last."""
    if x != x:
        return values.shape[0]
    low, high = 0, values.shape[0]
    while low < high:
        middle = (low + high) // 2
        if values[middle] < x:
            low = middle + 1
        else:
            high = middle
    return low


@njit
def mark_points(points, variances, spreads, inside, used):
    """Into ``used`` (P,), the tangent points some arm of the span needs: for each arm with
    t = ‖V⁺x‖²/xᵀV⁺x (0 where xᵀV⁺x ≤ 0) the two of ``points`` (P,) around 1/t (for a fixed
    ρ an arm's best tangent is at one of them; :func:`cbai_cli.numerics.ols.mixture_envelope`).
    Shapes: variances, spreads, inside (K,). One pass, no (K,) temporaries."""
    last = points.shape[0] - 1
    for a in range(variances.shape[0]):
        if not inside[a]:
            continue
        ratio = spreads[a] / variances[a] if variances[a] > 0 else 0.0
        above = min(_first_not_below(points, 1.0 / ratio if ratio > 0 else math.inf), last)
        used[above] = True
        used[max(above - 1, 0)] = True


@njit
def assign_lines(variances, spreads, crossings, line_intercepts, line_slopes, line_thresholds, scale, intercepts,
                 slopes, inflations):
    """Each arm's line of an envelope (E lines, E − 1 ``crossings``, increasing): the line
    :meth:`cbai_cli.numerics.ols.Envelope.lines` gives for t = ‖V⁺x‖²/xᵀV⁺x (0 where xᵀV⁺x ≤ 0),
    written as ``scale``·I, ``scale``·S and 1/(2β) into ``intercepts``, ``slopes`` and
    ``inflations`` (K,). One pass, no (K,) temporaries."""
    for a in range(variances.shape[0]):
        ratio = spreads[a] / variances[a] if variances[a] > 0 else 0.0
        line = _first_not_below(crossings, ratio)
        intercepts[a] = scale * line_intercepts[line]
        slopes[a] = scale * line_slopes[line]
        inflations[a] = 0.5 / line_thresholds[line]


@njit
def tangent_lines(scales, log_weights, log_dets, log_inverse_delta, points, intercepts, slopes, thresholds):
    """The tangent line of every point μ_p (docs/ols.md, "Tangent lines"), as 2R²-free
    coefficients: squared half-width / 2R² ≤ β_p·a_p·xᵀV⁺x + β_p·b_p·‖V⁺x‖².

    For each μ_p: ρ_p(λ_i) ∝ π_i·exp(−ℓ_i/2 + c_p·w_i), w_i = 1/(μ_p + λ_i), with c_p the
    root of log Σ_i π_i exp(−ℓ_i/2 + c·w_i) = log(1/δ) (:func:`_gibbs_root`). Then
    β_p = log(1/δ) + KL(ρ_p‖π) + ½Σρ_p ℓ = c_p·q − f(c_p) with q = Σρ_p w (exact for the c_p
    reached), h = 1/q, a_p = h'(μ_p) = Σρ_p w² / q², b_p = h − a_p μ_p.

    Shapes: ``scales``, ``log_weights``, ``log_dets`` (M,); ``points``, ``intercepts``,
    ``slopes``, ``thresholds`` (P,) (β_p goes into ``thresholds``).
    """
    base = log_weights - 0.5 * log_dets
    weights, exponents = np.empty(scales.shape[0]), np.empty(scales.shape[0])
    for p in range(points.shape[0]):
        c, excess, mean, square = _gibbs_root(base, scales, points[p], log_inverse_delta, weights, exponents, 0.0)
        beta = c * mean - excess
        slope = square / (mean * mean)
        intercepts[p] = beta * slope
        slopes[p] = beta * (1.0 / mean - slope * points[p])
        thresholds[p] = beta


@njit
def mean_width(count, previous, root, scales, log_weights, log_inverse_delta, scratch):
    """The one-sided half-width over R of the mean of ``count`` observations of one arm
    (docs/ols.md, "Each arm's own mean"), and the value of c to start from next time:
    sqrt(2·c')/n with c' at (or just right of) the root of

        Σ_i π_i (λ_i/(n + λ_i))^{1/2} exp(c/(n + λ_i))·2Φ(z_i) = 1/δ,

    z_i = sqrt(2·c_lo/(n + λ_i)) rounded down to the grid of :data:`LOG_TWO_PHI`,
    c_lo = n·log(1/(2δ)) (0 for δ ≥ 1/2). The left side at c_lo ≤ c is at most the
    half-normal mixture's 2Σ_i π_i(λ_i/(n + λ_i))^{1/2} exp(c/(n + λ_i))Φ(sqrt(2c/(n + λ_i))),
    whose root c⁺ bounds one tail of the noise sum (|T| ≤ R·sqrt(2c⁺) on that side), and
    c⁺ ≥ c_lo, so c' ≥ c⁺: the width is valid. Φ is close to 1 for the scales that carry the
    sum, so one side costs about log(1/(2δ)) where the symmetric mixture costs log(1/δ).
    With the Φ factors fixed this is the rank-one case of :func:`tangent_lines` (the squared
    width 2R²·β·h(n)/n² is 2R²c/n² at the root), solved by :func:`_gibbs_root`.

    ``root`` > 0 is the c' of the arm's last width on this side, at ``previous`` pulls:
    Newton's method then starts from root·n/previous (c grows a little faster than n, so
    the start is usually just left of the root and one evaluation gives c' = c − f/q, the
    next iterate, right of it); otherwise from the cold start of :func:`_gibbs_root`. Every
    c' gives a valid width. ∞ (and c' = 0) before the first pull.

    Shapes: ``scales``, ``log_weights`` (M,); ``scratch`` (3, M), the caller's, so that a pull
    allocates nothing.
    """
    if count <= 0:
        return math.inf, 0.0
    base = scratch[0]
    floor = 2.0 * count * max(log_inverse_delta - math.log(2.0), 0.0)  # 2·c_lo
    last = LOG_TWO_PHI.shape[0] - 1
    for i in range(scales.shape[0]):
        z = math.sqrt(floor / (count + scales[i]))
        base[i] = (log_weights[i] - 0.5 * math.log1p(count / scales[i])
                   + LOG_TWO_PHI[min(int(z * Z_STEPS_PER_UNIT), last)])
    start = root * count / previous if root > 0.0 and previous > 0 else 0.0
    c, excess, mean, _ = _gibbs_root(base, scales, float(count), log_inverse_delta, scratch[1], scratch[2], start)
    reached = c - excess / mean
    return math.sqrt(2.0 * reached) / count, reached


@njit
def own_mean_sides(arm, count, previous, thresholds, roots, widths, scale, scales, log_weights, scratch):
    """Both sides of ``arm``'s own mean after its pulls went from ``previous`` to ``count``: for
    each side with a finite threshold log(1/(κδ·share)), :func:`mean_width` from the side's
    last root, R·width into ``widths`` and the new root into ``roots`` (in place). The one
    update of the ask/tell path (:class:`cbai_cli.numerics.ols.MixtureIntervals`) and the compiled loop.

    Shapes: ``thresholds``, ``roots``, ``widths`` (2, K), row 0 the lower side; ``scales``,
    ``log_weights`` (M,); ``scratch`` (3, M). ``scale`` is R.
    """
    for side in range(2):
        if math.isfinite(thresholds[side, arm]):
            width, roots[side, arm] = mean_width(count, previous, roots[side, arm], scales, log_weights,
                                                 thresholds[side, arm], scratch)
            widths[side, arm] = scale * width
