"""Track-and-Stop's ``rollout`` step compiled (docs/track-and-stop.md, "The rollout step").

Steps 1–2 of :class:`cbai_cli.algorithms.track_and_stop.TrackAndStop` (x̂*, R), no forced
exploration, the active target y* and its Frank–Wolfe vertex a
(:func:`cbai_cli.numerics.kernels.track_and_stop.target_and_vertex`); a is pulled when it is y*.
Otherwise a mode of the run, kept in its state (the MODE_TARGET, MODE_VERTEX and DECIDED_AT
slots of :attr:`cbai_cli.numerics.kernels.state.RunState.counters`), says which of a and y* to
pull. It is decided again (:func:`burst_pays`) when y* is not the target it was decided for,
or when the pulls have grown by :data:`DECISION_GROWTH` since: O(log n) decisions per target.

A decision is one step of policy improvement over "pull y* until it is certified", on a
model of y*'s ``ols`` certificate that reads the design only (:func:`pulls_to_certify`):
pull the vertex while some burst of m Frank–Wolfe steps for y*, then y* only, is modelled to
certify y* in fewer pulls than y* only, m = 8, 32, 128, … (:data:`BURSTS`) below the pulls
y* only is modelled to take and, past 128, at most four times the pulls n so far
(:data:`HORIZON`). The first three bursts and :data:`DECISION_GROWTH` were set before the first
run of the rule; the longer bursts answer the diagnosis of random d=5 seed 193 (docs/binary.md),
where the vertex path was longer than any of them, and the horizon bounds what a decision costs
(docs/track-and-stop.md, "The rollout step", says how it was chosen).

The two views compute the same bits: V from the fit's counts and its eigendecomposition by
:func:`cbai_cli.numerics.kernels.span.span_gram` and
:func:`cbai_cli.numerics.kernels.span.symmetric_eigen`, the products with the arm matrix by
:func:`cbai_cli.numerics.kernels.blas.dot`, every other sum a loop in index order and every
logarithm ``math.log1p`` of one number.
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.kernels.blas import dot
from cbai_cli.numerics.kernels.jit import njit
from cbai_cli.numerics.kernels.span import SPAN_TOLERANCE, span_gram, symmetric_eigen
from cbai_cli.numerics.kernels.state import DECIDED_AT, MODE_TARGET, MODE_VERTEX
from cbai_cli.numerics.kernels.track_and_stop import companion_vertex, target_and_vertex

#: The burst lengths m of the deviation (m Frank–Wolfe steps for y*, then y* only) as
#: (first, growth, longest): m = first, then growth times the last m, while m is below the
#: pulls y* only is modelled to take (a longer burst cannot be shorter) and at most longest.
BURSTS = (8, 4, 8192)
#: (always, times): bursts of at most ``always`` steps are always tried, a longer one only
#: while it is at most ``times`` the pulls n so far: the first burst longer than the
#: run so far is the longest a decision models, so it simulates at most max(128, 4n) steps.
HORIZON = (128, 4)
#: The factor by which the pulls grow before a target's mode is decided again.
DECISION_GROWTH = 1.1
#: The mixture's cost over log(1/(κδ·share)) assumed for an own mean not yet pulled (nats).
MEAN_EXTRA = 1.0
#: The most pulls :func:`pulls_to_certify` looks at (∞ beyond), and the points of its
#: geometric grid from 1 to there, searched first (with k = 0) before an integer bisection.
CERTIFY_LIMIT = 1e7
CERTIFY_POINTS = 200
CERTIFY_GRID = np.concatenate((np.zeros(1), np.geomspace(1.0, CERTIFY_LIMIT, CERTIFY_POINTS)))


@njit
def own_mean_pulls(target, prediction, threshold, gap, pulls, mean_widths, mean_thresholds):
    """The pulls of y* = arm ``target`` from now after which its own mean certifies it (≥ 1):
    on the side that must pass τ (the lower side when the ridge ``prediction`` exceeds τ),
    with half-width w after N = ``pulls`` pulls, N·((w/ĝ)² − 1) (the squared width falls like
    1/N); before the first pull 2·(log(1/(κδ·share)) + :data:`MEAN_EXTRA`)/ĝ². ĝ = ``gap`` > 0.
    Shapes: mean_widths, mean_thresholds (2, K) (:class:`cbai_cli.numerics.kernels.state.SpanState`)."""
    side = 0 if prediction > threshold else 1
    width = mean_widths[side, target]
    if pulls > 0 and math.isfinite(width):
        return max(1.0, pulls * ((width / gap) ** 2 - 1.0))
    return max(1.0, 2.0 * (mean_thresholds[side, target] + MEAN_EXTRA) / gap ** 2)


@njit
def certified_at(k, variance, spread, scales, base, ridge, limit):
    """Whether y's modelled half-width after k more pulls of y is at most the gap: with
    v = yᵀW⁺y, s = ‖W⁺y‖² and W_k = W + k·yyᵀ (y in the span of W), yᵀW_k⁺y = v/(1 + kv) and
    ‖W_k⁺y‖² = s/(1 + kv)², and log det(I + W_k/λ_i) = log det(I + W/λ_i) + log(1 + k·yᵀ(W + λ_i)⁻¹y),
    so the squared half-width over 2R² at scale λ_i is β_i·(v/(1 + kv) + λ_i·s/(1 + kv)²),
    β_i = ``base[i]`` + ½ log(1 + k·``ridge[i]``); certified when the least over i is at most
    ``limit`` = ĝ²/(2R²). Shapes: scales, base, ridge (M,)."""
    grown = 1.0 + k * variance
    least = math.inf
    for i in range(scales.shape[0]):
        beta = base[i] + 0.5 * math.log1p(k * ridge[i])
        least = min(least, beta * (variance / grown + scales[i] * spread / grown ** 2))
    return least <= limit


@njit
def pulls_to_certify(gram, y, gap, scales, log_weights, log_inverse_delta, subgaussian):
    """The least k ≥ 0 with y's modelled least-squares half-width under W + k·yyᵀ at most
    ``gap`` (∞ past :data:`CERTIFY_LIMIT`), y in the span of W = ``gram`` (d, d).

    The half-width is the ``ols`` bound at the best single scale λ_i of its prior (a point
    mass is one of the mixture's ρ, so this bounds the mixture's width from above),
    R·sqrt(2(log(1/((1 − κ)δ)) − log π_i + ½ log det(I + W_k/λ_i))·(yᵀW_k⁺y + λ_i‖W_k⁺y‖²)),
    in closed form in k (:func:`certified_at`); ``log_inverse_delta`` = log(1/((1 − κ)δ)),
    ``subgaussian`` = R, ``scales``, ``log_weights`` (M,) the λ_i and log π_i. The eigenvalues
    of W below :data:`cbai_cli.numerics.kernels.span.SPAN_TOLERANCE` of the largest count as zero
    in W⁺ (the fit's span cut). k: the first point of :data:`CERTIFY_GRID` that certifies,
    then an integer bisection between the point before it and it."""
    values, vectors = symmetric_eigen(gram)
    d, m = values.shape[0], scales.shape[0]
    values = np.maximum(values, 0.0)
    largest = values.max()
    coords2 = np.empty(d)
    for j in range(d):
        coordinate = 0.0
        for i in range(d):
            coordinate += vectors[i, j] * y[i]
        coords2[j] = coordinate * coordinate
    variance = spread = 0.0
    for j in range(d):
        if values[j] > SPAN_TOLERANCE * largest:
            variance += coords2[j] / values[j]
            spread += coords2[j] / values[j] ** 2
    base, ridge = np.empty(m), np.empty(m)
    for i in range(m):
        log_det = towards = 0.0
        for j in range(d):
            log_det += math.log1p(values[j] / scales[i])
            towards += coords2[j] / (values[j] + scales[i])
        base[i] = log_inverse_delta - log_weights[i] + 0.5 * log_det
        ridge[i] = towards
    limit = gap * gap / (2.0 * subgaussian * subgaussian)
    grid = CERTIFY_GRID
    high = -1
    for index in range(grid.shape[0]):
        if certified_at(grid[index], variance, spread, scales, base, ridge, limit):
            high = index
            break
    if high < 0:
        return math.inf
    if high == 0:
        return 0.0
    low_k, high_k = math.floor(grid[high - 1]), math.ceil(grid[high])
    while high_k - low_k > 1:
        middle = (low_k + high_k) // 2
        if certified_at(float(middle), variance, spread, scales, base, ridge, limit):
            high_k = middle
        else:
            low_k = middle
    return float(high_k)


@njit
def burst_pays(arms, inverse, predictions, threshold, target, counts, mean_widths, mean_thresholds, scales,
               log_weights, log_inverse_delta, subgaussian, pulls):
    """Whether some burst of m Frank–Wolfe steps for y* = arm ``target``, then y* only, is
    modelled to certify y* in fewer pulls than y* only; m runs over :data:`BURSTS` (8, 32,
    128, … up to 8,192) while it is below y* only's pulls, since a burst takes more than m,
    and, past 128, at most 4n (:data:`HORIZON`), n = ``pulls`` the run's pulls so far.

    With ĝ = |φ̂ᵀy* − τ| (ridge ``predictions``; False when 0), T_m the pulls after which y*'s
    own mean certifies it (:func:`own_mean_pulls`) and V = Σ_a N_a aaᵀ the fit's Gram matrix
    from its ``counts``: y* only takes 1 + min(k(V + y*y*ᵀ), T_m − 1) pulls, the burst
    m + 1 + min(k(V + B_m + y*y*ᵀ), T_m − 1), k from :func:`pulls_to_certify` and B_m the
    burst's Σ aaᵀ. Each step of the burst pulls argmax_a (aᵀA⁻¹y*)² of the ridge inverse A⁻¹
    (``inverse``, (d, d)) grown by the burst so far (Sherman–Morrison on a copy). The
    burst's own pulls of y* are not counted towards its own mean, which leans the comparison
    a little towards y* only. Shapes: arms (K, d); predictions, counts (K,);
    mean_widths, mean_thresholds (2, K)."""
    gap = abs(predictions[target] - threshold)
    if gap == 0.0:
        return False
    own = own_mean_pulls(target, predictions[target], threshold, gap, counts[target], mean_widths, mean_thresholds)
    y = arms[target]
    d = y.shape[0]
    gram = span_gram(arms, counts)
    itself = np.outer(y, y)
    by_target = 1.0 + min(pulls_to_certify(gram + itself, y, gap, scales, log_weights, log_inverse_delta,
                                           subgaussian), own - 1.0)
    grown = inverse.copy()
    added = np.zeros((d, d))
    done = 0
    first, growth, longest = BURSTS
    always, times = HORIZON
    burst = first
    while burst <= min(longest, max(always, times * pulls)) and burst < by_target:
        for _ in range(burst - done):
            pull = arms[companion_vertex(dot(arms, dot(grown, y)))]
            shift = dot(grown, pull)
            denominator = 1.0 + dot(pull, shift)
            for i in range(d):
                for j in range(d):
                    grown[i, j] -= shift[i] * shift[j] / denominator
                    added[i, j] += pull[i] * pull[j]
        done = burst
        by_burst = burst + 1.0 + min(pulls_to_certify(gram + added + itself, y, gap, scales, log_weights,
                                                      log_inverse_delta, subgaussian), own - 1.0)
        if by_burst < by_target:
            return True
        burst *= growth
    return False


@njit
def rollout_arm(arms, rewards, threshold, uncertain, feasible, last_upper, inverse, norms2, predictions, n_samples,
                optimism, block, threads_from, predicted, companion, mode, counts, mean_widths, mean_thresholds,
                scales, log_weights, log_inverse_delta, subgaussian):
    """(arm, y*) of the ``rollout`` step's next pull (the module docstring): the Frank–Wolfe
    vertex a of y* without forced exploration
    (:func:`cbai_cli.numerics.kernels.track_and_stop.target_and_vertex`), a itself when it is y*;
    else, after deciding the run's ``mode`` again when due (:func:`burst_pays`), a when the
    mode is the vertex, else y*.

    ``mode``: the run's row of :attr:`~cbai_cli.numerics.kernels.state.RunState.counters`
    (updated in place); ``counts`` (K,), ``mean_widths``, ``mean_thresholds`` (2, K): the fit's
    row (:class:`~cbai_cli.numerics.kernels.state.SpanState`); ``scales``, ``log_weights`` (M,):
    the least-squares prior's λ_i and log π_i; ``log_inverse_delta``: log(1/((1 − κ)δ));
    ``subgaussian``: R. The other arguments: as
    :func:`~cbai_cli.numerics.kernels.track_and_stop.target_and_vertex`.
    """
    vertex, _, target = target_and_vertex(arms, rewards, threshold, uncertain, feasible, last_upper, inverse,
                                          norms2, predictions, n_samples, optimism, block, threads_from, predicted,
                                          companion, np.bool_(False))
    if vertex == target:
        return vertex, target
    if target != mode[MODE_TARGET] or n_samples >= DECISION_GROWTH * mode[DECIDED_AT]:
        mode[MODE_TARGET] = target
        mode[MODE_VERTEX] = burst_pays(arms, inverse, predictions, threshold, target, counts, mean_widths,
                                       mean_thresholds, scales, log_weights, log_inverse_delta, subgaussian,
                                       n_samples)
        mode[DECIDED_AT] = max(n_samples, 1)
    return (vertex if mode[MODE_VERTEX] else target), target
