"""The ridge design of one run under one more observation (Lindner et al. 2022,
Algorithm 2; Abbasi-Yadkori et al. 2011, §2), with its per-arm caches.

Every d × d product is a BLAS call through ``np.dot`` (gemv, dot), bitwise the product
that numpy's ``@`` computes on the same arrays. Products with the arm matrix run block by
block (``DesignState.block`` rows, about 512 kB, so that a block stays in cache while
the per-arm work and a second product read it again): BLAS gemv on small arm matrices,
whose rows are the same dot products whatever block they are in, and on matrices that
stream :func:`cbai_cli.numerics.kernels.threads.pair_products`, likewise independent of the block;
so results do not depend on the block size (tests/kernels guard both). On large arm sets
the blocks are split across threads (:mod:`cbai_cli.numerics.kernels.threads`).
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.kernels.blas import dot
from cbai_cli.numerics.kernels.jit import njit, njit_inlined
from cbai_cli.numerics.kernels.radius import radius
from cbai_cli.numerics.kernels.state import BEST, LOGDET, PULLS, UPDATES
from cbai_cli.numerics.kernels.threads import absorb_pass, greedy_pass


@njit
def absorb(arms, inverse, gram, target, estimate, norms2, predictions, logdet, x, total, count, contender,
           companion, block, threads_from):
    """Add ``count`` observations of ``x`` summing to ``total``; returns (the new log det A,
    the arm of largest greedy gain towards y = arms[contender] when ``contender`` ≥ 0, else −1).

    With u = A⁻¹x, q = xᵀu (old A) and c = ``count``: A⁻¹ −= c·uuᵀ/(1 + c q)
    (Sherman–Morrison), A += c·xxᵀ, b += total·x, log det A += log(1 + c q) (matrix
    determinant lemma), and for every arm a, ‖a‖²_{A⁻¹} −= c (aᵀu)²/(1 + c q) and
    aᵀφ̂ += aᵀu (total − c xᵀφ̂)/(1 + c q), φ̂ += u (total − c xᵀφ̂)/(1 + c q).
    When ``contender`` ≥ 0, the same pass also writes aᵀA⁻¹y for y = arms[contender]
    (new A) into ``companion`` and takes the next greedy gain's argmax from it
    (:func:`greedy_arm` for y, while each block is in cache). ``block``: rows per block of
    the pass; ``threads_from``: the K·d from which the pass is split across threads
    (:func:`cbai_cli.numerics.kernels.threads.absorb_pass`).

    Shapes: arms (K, d); inverse, gram (d, d); target, estimate, x (d,); norms2,
    predictions, companion (K,), all updated in place.
    """
    # no elimination: empty arrays, and numpy scalars rather than literals, so that numba
    # compiles absorb_and_eliminate once for both callers
    nothing, none = np.empty(0), np.empty(0, dtype=np.bool_)
    logdet, contender_arm, _, _ = absorb_and_eliminate(
        arms, inverse, gram, target, estimate, norms2, predictions, logdet, x, total, count, contender, companion,
        block, threads_from, np.bool_(False), np.int64(0), nothing, np.int64(0), nothing, 0.0, none, none, nothing,
        nothing, -math.inf)
    return logdet, contender_arm


@njit
def absorb_and_eliminate(arms, inverse, gram, target, estimate, norms2, predictions, logdet, x, total, count,
                         contender, companion, block, threads_from, eliminating, radius_code, params, n_samples,
                         rewards, threshold, uncertain, feasible, lower, upper, best):
    """:func:`absorb`, and when ``eliminating``, in the same pass over the arms, the
    intervals of the regime's radius after the update (``radius_code``, ``params``: see
    :func:`cbai_cli.numerics.kernels.radius.radius`, with ``n_samples`` pulls and the new log det A)
    into ``lower``, ``upper`` and the elimination update of ``feasible``, ``uncertain``
    from r̄ = ``best`` (:func:`cbai_cli.numerics.kernels.elimination.apply_bounds`). Returns (log
    det A, the greedy arm as :func:`absorb`, the new r̄, whether U is empty); r̄ and U are
    left alone without ``eliminating``.

    Shapes: as :func:`absorb`; rewards, uncertain, feasible, lower, upper (K,).
    """
    logdet, u, shrink, residual, direction = absorb_start(arms, inverse, gram, target, estimate, logdet, x, total,
                                                          count, contender)
    r = radius(radius_code, n_samples, logdet, params) if eliminating else 0.0
    contender_arm, best, empty = absorb_pass(arms, u, shrink, residual, norms2, predictions, direction, companion,
                                             contender >= 0, block, threads_from, eliminating, r, rewards,
                                             threshold, uncertain, feasible, lower, upper, best)
    absorb_finish(estimate, u, residual)
    return logdet, contender_arm, best, empty


@njit_inlined
def observe(arms, rewards, threshold, run, b, arm, total, count, contender, companion, block, threads_from,
            refresh_every, radius_code, params):
    """``count`` pulls of ``arm`` summing to ``total`` into run b of ``run`` (the arrays of a
    :class:`~cbai_cli.numerics.kernels.state.RunState`): :func:`absorb_and_eliminate` into its
    design, its intervals of the regime's radius (``radius_code``, ``params``) and its
    elimination state, its pulls and updates counted, in place; the intervals and the
    elimination wait when the design's exact refresh is due (its ``refresh_every``-th update
    since the last one: they follow the refresh). Returns (the greedy arm towards
    ``contender``'s direction as :func:`absorb` gives it, whether U is empty, whether the
    refresh is due). The one update of a pull, for the ask/tell path
    (:meth:`cbai_cli.algorithms.base.Adaptive.observe`) and the compiled loop
    (:func:`cbai_cli.numerics.kernels.advance.step`).

    Shapes: arms (K, d); rewards, companion (K,); params (7,); ``contender``, ``block``,
    ``threads_from`` as :func:`absorb`.
    """
    (inverse, gram, targets, estimate, norms2, predictions, uncertain, feasible, last_lower, last_upper, reals,
     counters) = run
    pulls = counters[b, PULLS] + count
    eliminating = counters[b, UPDATES] + 1 < refresh_every
    reals[b, LOGDET], contender_arm, reals[b, BEST], empty = absorb_and_eliminate(
        arms, inverse[b], gram[b], targets[b], estimate[b], norms2[b], predictions[b], reals[b, LOGDET], arms[arm],
        total, count, contender, companion, block, threads_from, eliminating, radius_code, params, pulls, rewards,
        threshold, uncertain[b], feasible[b], last_lower[b], last_upper[b], reals[b, BEST])
    counters[b, PULLS] = pulls
    counters[b, UPDATES] += 1
    return contender_arm, empty, not eliminating


@njit
def absorb_start(arms, inverse, gram, target, estimate, logdet, x, total, count, contender):
    """What :func:`absorb` does before its pass over the arms: A⁻¹, A, b and log det A
    updated in place; returns (log det A, u = A⁻¹x of the old A, the shrink c/(1 + c q), the
    residual (total − c xᵀφ̂)/(1 + c q), the direction A⁻¹y of ``contender`` for the new A,
    or u when it is −1). Shapes: as :func:`absorb`."""
    d = arms.shape[1]
    residual_before = total - count * dot(x, estimate)
    u = dot(inverse, x)
    q = dot(x, u)
    logdet = logdet + math.log1p(count * q)
    shrink = count / (1.0 + count * q)
    for i in range(d):
        for j in range(d):
            inverse[i, j] -= shrink * (u[i] * u[j])
    for i in range(d):
        for j in range(d):
            gram[i, j] += count * (x[i] * x[j])
    for i in range(d):
        target[i] += total * x[i]
    residual = residual_before / (1.0 + count * q)
    direction = dot(inverse, arms[contender]) if contender >= 0 else u
    return logdet, u, shrink, residual, direction


@njit
def absorb_finish(estimate, u, residual):
    """What :func:`absorb` does after its pass: φ̂ += residual·u. Shapes: (d,)."""
    for i in range(estimate.shape[0]):
        estimate[i] += residual * u[i]


@njit
def greedy_arm(arms, inverse, norms2, direction_arm, contender, contender_arm, block, threads_from):
    """argmax_a (aᵀA⁻¹y)²/(1 + ‖a‖²_{A⁻¹}) for y = arms[direction_arm] (first among ties):
    the arm whose observation most reduces ‖y‖²_{A⁻¹} (Sherman–Morrison; Lindner et al.
    2022, Algorithm 2). ``contender_arm`` is that arm already when ``contender`` is
    ``direction_arm`` (:func:`absorb`'s pass took it); ``block``, ``threads_from``: see
    :func:`absorb` (:func:`cbai_cli.numerics.kernels.threads.greedy_pass`).

    Shapes: arms (K, d); inverse (d, d); norms2 (K,).
    """
    if contender == direction_arm:
        return contender_arm
    return greedy_pass(arms, dot(inverse, arms[direction_arm]), norms2, block, threads_from)


@njit
def _sift_down(values, indices, position, size):
    """Restore the min-heap order of ``values[:size]`` (with ``indices``) below ``position``."""
    while True:
        smallest = position
        for child in (2 * position + 1, 2 * position + 2):
            if child < size and values[child] < values[smallest]:
                smallest = child
        if smallest == position:
            return
        values[position], values[smallest] = values[smallest], values[position]
        indices[position], indices[smallest] = indices[smallest], indices[position]
        position = smallest


@njit
def watch_largest(norms2, candidates, everywhere, watch, bound):
    """Fill ``watch`` with the arms of largest ‖x‖²_{A⁻¹} among ``candidates`` (all arms when
    ``everywhere``), −1 after the last, and ``bound[0]`` with the largest variance among the
    other candidates (−∞ when every candidate fits). One pass over ``norms2`` keeps them in
    a min-heap.

    Shapes: norms2, candidates (K,); watch (M,); bound (1,).
    """
    most = watch.shape[0]
    # the most + 1 largest variances: the heap's minimum bounds every arm outside the top
    values = np.empty(most + 1)
    indices = np.empty(most + 1, dtype=np.int64)
    size = np.int64(0)
    for a in range(norms2.shape[0]):
        if not (everywhere or candidates[a]):
            continue
        if size <= most:
            values[size], indices[size] = norms2[a], a
            size += 1
            if size == most + 1:
                for position in range(size // 2, -1, -1):
                    _sift_down(values, indices, position, size)
        elif norms2[a] > values[0]:
            values[0], indices[0] = norms2[a], a
            _sift_down(values, indices, np.int64(0), size)
    watch[:] = -1
    bound[0] = -math.inf
    first = 0
    if size == most + 1:
        bound[0], first = values[0], 1  # the heap's minimum is not among the top
    watch[:size - first] = indices[first:size]


@njit
def _watched_largest(arms, norms2, candidates, everywhere, u, shrink, watch):
    """(arm, variance) of the largest ‖y‖²_{A⁻¹} − shrink·(yᵀu)² among the candidates in
    ``watch``, first among ties; (−1, −∞) when none is a candidate."""
    chosen = -1
    top = -math.inf
    for i in range(watch.shape[0]):
        a = watch[i]
        if a < 0:
            break
        if not (everywhere or candidates[a]):
            continue
        projected = dot(arms[a], u)
        after = norms2[a] - shrink * (projected * projected)
        if chosen < 0 or after > top or (after == top and a < chosen):
            chosen, top = a, after
    return chosen, top


@njit
def predict_contender(arms, inverse, norms2, candidates, everywhere, x, count, watch, bound):
    """The arm of largest ‖y‖²_{A⁻¹} among ``candidates`` (all arms when ``everywhere``)
    after adding ``count`` pulls of ``x``, first among ties, predicted before the update's
    pass over the arms; −1 when it cannot be told from the arms of largest variance.

    Variances only decrease, and candidates only leave: if the largest new variance among
    the arms of ``watch`` (recomputed, O(d) each) exceeds ``bound[0]``, the largest variance
    of every other candidate when ``watch`` was filled (:func:`watch_largest`), it is the
    largest of all. ``watch`` and ``bound`` persist from step to step and are filled again,
    with one pass over ``norms2``, only when that test fails (about one step in twenty of
    G-ACOL at K = 10⁵, d = 100). Round-off (an exact refresh of the caches) may still make
    the prediction miss; :func:`greedy_arm` then computes its own product, so the
    prediction never changes a pull.

    Shapes: arms (K, d); inverse (d, d); norms2, candidates (K,); x (d,); watch (M,)
    int64, −1 after its last arm (all −1: not filled yet); bound (1,).
    """
    u = dot(inverse, x)
    shrink = count / (1.0 + count * dot(x, u))
    if watch[0] >= 0:
        chosen, top = _watched_largest(arms, norms2, candidates, everywhere, u, shrink, watch)
        if chosen >= 0 and top > bound[0]:
            return chosen
    watch_largest(norms2, candidates, everywhere, watch, bound)
    chosen, top = _watched_largest(arms, norms2, candidates, everywhere, u, shrink, watch)
    return chosen if chosen >= 0 and top > bound[0] else -1
