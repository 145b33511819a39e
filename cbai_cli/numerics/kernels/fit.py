"""One pull into an ``ols`` run's state (docs/ols.md): the ridge design that the sampling
rules read, the least-squares fit and its mixture intervals (:mod:`cbai_cli.numerics.ols`),
and the elimination update, in place on a run's
:class:`~cbai_cli.numerics.kernels.state.RunState` and
:class:`~cbai_cli.numerics.kernels.state.SpanState` rows.

:func:`observe_fit` is the one update of a pull under ``ols``, for the ask/tell path
(:meth:`cbai_cli.algorithms.base.Adaptive.observe`) and the compiled loop
(:func:`cbai_cli.numerics.kernels.advance.advance_fit`), as
:func:`cbai_cli.numerics.kernels.design.observe` is for the radius regimes. :func:`update_fit`
is its fit alone (:meth:`cbai_cli.numerics.ols.LeastSquaresSpan.update`, a fit without a
run); both count the pull (:func:`count_pull`) and settle the fit (:func:`settle_fit`) alike.
The pieces that take a state's tuple of arrays on every pull are written into their callers
(``inline="always"``, :func:`cbai_cli.numerics.kernels.jit.njit_inlined`): passing the tuple to a
called function costs the compiled loop time on every pull.
"""

from __future__ import annotations

import numpy as np

from cbai_cli.numerics.kernels.design import absorb_and_eliminate
from cbai_cli.numerics.kernels.elimination import apply_bounds
from cbai_cli.numerics.kernels.jit import njit, njit_inlined
from cbai_cli.numerics.kernels.ols import (EPOCH, REFRESH, absorb_and_rank_one, mixture_bounds, own_mean_sides,
                                           rank_one_step)
from cbai_cli.numerics.kernels.span import extend_span, follow_epoch, new_epoch_span, refresh_span
from cbai_cli.numerics.kernels.state import BEST, GROWTH, LOGDET, MARGIN, PULLS, SINCE, STEPS, SUBGAUSSIAN, UPDATES


@njit
def settle_outside(arms, arm_norms2, scales, span, b, arm, count, extend_entries):
    """Run b's fit after ``count`` pulls of ``arm`` outside its span: the one pulled arm
    outside it extends the span (:func:`~cbai_cli.numerics.kernels.span.extend_span`, which
    recomputes if that arm was pulled before); with more than one such arm (a pulled arm the
    span cut left out) the fit is recomputed (:func:`~cbai_cli.numerics.kernels.span.refresh_span`)."""
    inside, counts = span[6], span[7]
    outside = 0
    for a in range(inside.shape[1]):
        if not inside[b, a] and counts[b, a] > 0:
            outside += 1
    if outside != 1 or not extend_span(arms, arm_norms2, scales, span, b, arm, count, extend_entries):
        refresh_span(arms, arm_norms2, scales, span, b)


@njit_inlined
def fit_bounds(threshold, span, b, mean_scales, mean_log_weights, lower, upper):
    """Run b's mixture intervals (:func:`~cbai_cli.numerics.kernels.ols.mixture_bounds`, with the
    joint test at τ = ``threshold``) into ``lower`` and ``upper`` (K,), from the lines its
    fit's epoch last followed (:func:`~cbai_cli.numerics.kernels.span.follow_epoch`)."""
    (pinv, caches, roundoff, directions, growths, growth_basis, inside, counts, sums, outside, basis, eigenvalues,
     log_dets, intercepts, slopes, inflations, mean_widths, mean_roots, mean_thresholds, reals, counters) = span
    mixture_bounds(intercepts[b], slopes[b], inflations[b], reals[b, GROWTH], caches[b, 0], caches[b, 1], inside[b],
                   caches[b, 2], counts[b], sums[b], mean_widths[b], threshold, mean_thresholds[b],
                   reals[b, SUBGAUSSIAN], mean_scales, mean_log_weights, lower, upper)


@njit_inlined
def count_pull(span, b, arm, total, count, fit_refresh_every):
    """``count`` pulls of ``arm`` summing to ``total`` into run b's counts, sums and fit
    counters; returns whether the fit takes them by its rank-one step (the arm lies in the
    span and the periodic recomputation is not due)."""
    inside, counts, sums, counters = span[6], span[7], span[8], span[20]
    counts[b, arm] += count
    sums[b, arm] += total
    counters[b, STEPS] += count
    counters[b, SINCE] += 1
    return inside[b, arm] and counters[b, SINCE] < fit_refresh_every


@njit_inlined
def settle_fit(arms, arm_norms2, scales, span, b, arm, count, fit_refresh_every, extend_entries, stepped, due,
               grown):
    """Run b's fit after its pull's update: without the rank-one step (``stepped`` False)
    the periodic recomputation when due (every ``fit_refresh_every`` updates), else the arm
    outside the span (:func:`settle_outside`); after it, what it said (``due``, the growth
    sum ``grown``): the recomputation, or the new growth sum and, at EPOCH, a new epoch
    (:mod:`cbai_cli.numerics.kernels.span`)."""
    if not stepped:
        if span[20][b, SINCE] >= fit_refresh_every:
            refresh_span(arms, arm_norms2, scales, span, b)
        else:
            settle_outside(arms, arm_norms2, scales, span, b, arm, count, extend_entries)
    elif due == REFRESH:
        refresh_span(arms, arm_norms2, scales, span, b)
    else:
        span[19][b, GROWTH] = grown
        if due == EPOCH:
            new_epoch_span(arms, scales, span, b)


@njit
def update_fit(arms, arm_norms2, scales, span, b, arm, total, count, fit_refresh_every, drift_ratio, extend_entries,
               threads_from):
    """``count`` pulls of ``arm`` summing to ``total`` into run b's fit alone
    (:func:`count_pull`, the rank-one step
    :func:`~cbai_cli.numerics.kernels.ols.rank_one_step` in the span, :func:`settle_fit`): the
    fit's part of :func:`observe_fit`, without the ridge design and the intervals."""
    (pinv, caches, roundoff, directions, growths, growth_basis, inside, counts, sums, outside, basis, eigenvalues,
     log_dets, intercepts, slopes, inflations, mean_widths, mean_roots, mean_thresholds, reals, counters) = span
    stepped = count_pull(span, b, arm, total, count, fit_refresh_every)
    due, grown = np.int64(0), 0.0
    if stepped:
        due, grown = rank_one_step(arms, pinv[b], caches[b], roundoff[b], directions[b], growths[b],
                                   growth_basis[b], arm, count, total, reals[b, GROWTH], reals[b, MARGIN],
                                   drift_ratio, threads_from)
    settle_fit(arms, arm_norms2, scales, span, b, arm, count, fit_refresh_every, extend_entries, stepped, due,
               grown)


@njit_inlined
def observe_fit(arms, rewards, threshold, run, b, arm, total, count, contender, companion, block, threads_from, fit,
                span, mean_scratch, eliminating):
    """``count`` pulls of ``arm`` summing to ``total`` into run b under ``ols``: its ridge design
    (``run``, the arrays of a :class:`~cbai_cli.numerics.kernels.state.RunState`), its fit and
    intervals (``span``, a :class:`~cbai_cli.numerics.kernels.state.SpanState`'s) and, when
    ``eliminating``, its elimination state, in place. Returns (the greedy arm towards
    ``contender``'s direction as :func:`~cbai_cli.numerics.kernels.design.absorb` gives it,
    whether U is empty, whether the design's exact refresh is due).

    The pull's count and sum, the pulled arm's own mean widths
    (:func:`~cbai_cli.numerics.kernels.ols.own_mean_sides`); for an arm inside the span, unless the
    fit's periodic recomputation is due, the design's update and the fit's rank-one step in
    one pass over the arms (:func:`~cbai_cli.numerics.kernels.ols.absorb_and_rank_one`), otherwise
    the design's update alone; the recomputation, extension or new epoch the fit then needs
    (:mod:`cbai_cli.numerics.kernels.span`: the periodic recomputation, the roundoff or growth
    test of the rank-one step, an arm outside the span, :func:`settle_outside`) and the
    tangent lines of a new epoch (:func:`~cbai_cli.numerics.kernels.span.follow_epoch`); then
    the mixture intervals (:func:`fit_bounds`) and the elimination update. These wait when
    the design's exact refresh is due (its ``refresh_every``-th update since the last one),
    as :func:`~cbai_cli.numerics.kernels.design.observe`'s do, so that a run stops after the
    refresh; the intervals do not read the design.

    ``fit``: (the ridge design's ``refresh_every``, the fit's updates between
    recomputations, the rank-one step's drift ratio DRIFT_TOLERANCE/STEP_ROUNDOFF, the fewest
    arm-matrix entries that extend rather than recompute, the arms' squared norms (K,), the
    least-squares intervals' scales (M,), log weights (M,) and tangent points (P,), the own
    means' scales and log weights (M',)); ``mean_scratch``: (3, M') scratch. Shapes: arms
    (K, d); rewards, companion (K,); ``contender``, ``block``, ``threads_from`` as
    :func:`~cbai_cli.numerics.kernels.design.absorb`.
    """
    (refresh_every, fit_refresh_every, drift_ratio, extend_entries, arm_norms2, scales, log_weights, points,
     mean_scales, mean_log_weights) = fit
    (inverse, gram, targets, estimate, norms2, predictions, uncertain, feasible, last_lower, last_upper, reals,
     counters) = run
    (pinv, caches, roundoff, directions, growths, growth_basis, inside, counts, sums, outside, basis, eigenvalues,
     log_dets, intercepts, slopes, inflations, mean_widths, mean_roots, mean_thresholds, fit_reals,
     fit_counters) = span
    stepped = count_pull(span, b, arm, total, count, fit_refresh_every)
    own_mean_sides(arm, counts[b, arm], counts[b, arm] - count, mean_thresholds[b], mean_roots[b], mean_widths[b],
                   fit_reals[b, SUBGAUSSIAN], mean_scales, mean_log_weights, mean_scratch)
    if stepped:
        reals[b, LOGDET], contender_arm, due, grown = absorb_and_rank_one(
            arms, inverse[b], gram[b], targets[b], estimate[b], norms2[b], predictions[b], reals[b, LOGDET],
            contender, companion, block, threads_from, pinv[b], caches[b], roundoff[b], directions[b], growths[b],
            growth_basis[b], arm, total, count, fit_reals[b, GROWTH], fit_reals[b, MARGIN], drift_ratio)
    else:
        # the fit is recomputed or extended: the design's update alone (numpy values, not
        # literals, for its elimination arguments, so that numba compiles it once)
        reals[b, LOGDET], contender_arm, reals[b, BEST], _ = absorb_and_eliminate(
            arms, inverse[b], gram[b], targets[b], estimate[b], norms2[b], predictions[b], reals[b, LOGDET],
            arms[arm], total, count, contender, companion, block, threads_from, np.bool_(False), np.int64(0),
            np.empty(0), counters[b, PULLS], rewards, threshold, uncertain[b], feasible[b], last_lower[b],
            last_upper[b], reals[b, BEST])
        due, grown = np.int64(0), 0.0
    settle_fit(arms, arm_norms2, scales, span, b, arm, count, fit_refresh_every, extend_entries, stepped, due,
               grown)
    follow_epoch(points, scales, log_weights, span, b)
    counters[b, PULLS] += count
    counters[b, UPDATES] += 1
    refreshing = counters[b, UPDATES] >= refresh_every
    empty = False
    if eliminating and not refreshing:
        fit_bounds(threshold, span, b, mean_scales, mean_log_weights, last_lower[b], last_upper[b])
        reals[b, BEST], empty = apply_bounds(last_lower[b], last_upper[b], rewards, threshold, uncertain[b],
                                             feasible[b], reals[b, BEST])
    return contender_arm, empty, refreshing
