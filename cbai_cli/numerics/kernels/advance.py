"""Whole adaptive runs inside compiled code: the loop of :func:`cbai_cli.run.simulate.drive`
(ask, answer, tell) for every run of a batch, with one pull per step and Gaussian noise
read from the run's own standard normals.

:func:`advance` runs the radius regimes (``theory``, ``det``, ``tuned``) on the ridge
design alone; :func:`advance_fit` the ``ols`` regime, whose least-squares fit and mixture
intervals (:mod:`cbai_cli.numerics.ols`) take each pull by
:func:`cbai_cli.numerics.kernels.fit.observe_fit`. Both pull through :func:`step`.
"""

from __future__ import annotations

import numpy as np

from cbai_cli.numerics.kernels.codes import (BUDGET, GREEDY_MAXVAR, NEED_NOISE, NEED_REFRESH, RUNNING, SOLVED,
                                    STREAM_ENTRIES, TRACK_AND_STOP, TRACK_AND_STOP_ROLLOUT)
from cbai_cli.numerics.kernels.design import observe, predict_contender
from cbai_cli.numerics.kernels.elimination import apply_bounds, interval_bounds
from cbai_cli.numerics.kernels.fit import fit_bounds, observe_fit
from cbai_cli.numerics.kernels.jit import njit
from cbai_cli.numerics.kernels.radius import radius
from cbai_cli.numerics.kernels.rollout import rollout_arm
from cbai_cli.numerics.kernels.select import select
from cbai_cli.numerics.kernels.state import BEST, FORCED, LOGDET, LOG_INVERSE_DELTA, PULLS, SUBGAUSSIAN, UPDATES
from cbai_cli.numerics.kernels.track_and_stop import track_and_stop_arm


@njit
def waiting(steps, limit, used_normals, chunk):
    """What stops a run before its next pull: BUDGET when the pull would make ``steps``
    exceed ``limit`` (≥ 0), NEED_NOISE when its ``chunk`` normals are used, else RUNNING."""
    if limit >= 0 and steps + 1 > limit:
        return BUDGET
    if used_normals == chunk:
        return NEED_NOISE
    return RUNNING


@njit
def eliminate(rewards, threshold, run, control, b):
    """The elimination update of run b from its last intervals
    (:func:`~cbai_cli.numerics.kernels.elimination.apply_bounds`); returns whether U is empty (the
    run is then SOLVED). Shapes: as :func:`advance`."""
    uncertain, feasible, last_lower, last_upper, reals = run[6], run[7], run[8], run[9], run[10]
    limit, pending, status = control
    reals[b, BEST], empty = apply_bounds(last_lower[b], last_upper[b], rewards, threshold, uncertain[b], feasible[b],
                                         reals[b, BEST])
    pending[b] = 0
    if empty:
        status[b] = SOLVED
    return empty


@njit
def watch_size(contenders):
    """The length of the prediction's watch: ``contenders``, 1 (unused) when it is None. The
    branch on ``is None`` is one that numba prunes, so that runs without a prediction do
    not compile it."""
    if contenders is None:
        return 1
    return contenders


@njit
def rollout_step(b, problem, rule, run, contender, companion, threads_from, fitted):
    """(arm, y*) of run b's ``rollout`` step
    (:func:`cbai_cli.numerics.kernels.rollout.rollout_arm`), from ``fitted``: (counts (B, K),
    mean_widths (B, 2, K), mean_thresholds (B, 2, K), reals (B, 4) of the runs' fits, the
    least-squares prior's scales and log weights (M,)); (−1, −1) when ``fitted`` is None (a
    radius regime, which the rule does not run with: the branch on ``is None`` is one that
    numba prunes). Arguments: as :func:`step`."""
    if fitted is None:
        return np.int64(-1), np.int64(-1)
    arms, rewards, threshold = problem
    optimism, block = rule[1], rule[2]
    counts, mean_widths, mean_thresholds, fit_reals, scales, log_weights = fitted
    return rollout_arm(arms, rewards, threshold, run[6][b], run[7][b], run[9][b], run[0][b], run[4][b], run[5][b],
                       run[11][b, PULLS], optimism, block, threads_from, contender, companion, run[11][b],
                       counts[b], mean_widths[b], mean_thresholds[b], scales, log_weights,
                       fit_reals[b, LOG_INVERSE_DELTA], fit_reals[b, SUBGAUSSIAN])


@njit
def step(b, problem, rule, regime, run, control, noise, contender, contender_arm, companion, contenders, watch,
         watch_bound, threads_from, absorbing, stream, fitted):
    """Run b's next pull, unless its budget or its chunk of noise stops it first
    (``status[b]``, :func:`waiting`): select → noise → observe. Returns (arm, −1 when
    stopped; observation; contender of the next pull and its greedy arm).

    The pull: the rule's arm — Track-and-Stop's
    (:func:`cbai_cli.numerics.kernels.track_and_stop.track_and_stop_arm`, κ from ``rule``, counted
    in the run's FORCED slot when it is a forced-exploration pull; with its ``rollout`` step
    :func:`rollout_step`, which reads the ``ols`` fit's ``fitted`` arrays) or
    :func:`cbai_cli.numerics.kernels.select.select`'s (with the pull's uniform from the noise's
    uniforms) —, its observation — ``means[arm] + sigma·z`` (bitwise numpy's
    ``rng.normal(means[arm], sigma)`` for the stream's standard normal z) when ``stream`` is
    None, else a binary answer ``2·stream.binomial(1, p) − 1`` with p = (means[arm] + 1)/2
    clipped to [0, 1] (bitwise :meth:`cbai_cli.kinds.cbai.noise.BinaryNoise.sample_sums`, drawn
    from run b's own generator) — and :func:`~cbai_cli.numerics.kernels.design.observe` (the
    design, the radius's intervals and the elimination update, which waits (``pending``)
    when the exact refresh is due; the run is SOLVED when U is empty), unless ``absorbing``
    is False: the caller then takes the pull in and counts it (:func:`advance_fit`).
    ``contenders`` not None: predict the next greedy direction before the update
    (:func:`~cbai_cli.numerics.kernels.design.predict_contender`, from the arms in ``watch``
    (contenders,) and ``watch_bound`` (1,), kept from pull to pull) so that one pass over
    the arms computes both products. Track-and-Stop's contender is its active target: the
    update's pass computes that target's products for the next pull's Frank–Wolfe vertex
    (:func:`cbai_cli.numerics.kernels.track_and_stop.track_and_stop_arm`). Arguments: as
    :func:`advance`.
    """
    arms, rewards, threshold = problem
    select_code, optimism, block = rule
    radius_code, params, refresh_every = regime
    inverse, norms2, predictions, uncertain, feasible, last_upper, counters = (run[0], run[4], run[5], run[6],
                                                                              run[7], run[9], run[11])
    limit, pending, status = control
    means, sigma, normals, uniforms, used_normals = noise
    status[b] = waiting(counters[b, PULLS], limit[b], used_normals[b], normals.shape[1])
    if status[b] != RUNNING:
        return -1, 0.0, contender, contender_arm
    following = -1
    if select_code == TRACK_AND_STOP or select_code == TRACK_AND_STOP_ROLLOUT:
        # contender: the target whose products the last update's pass left in companion
        if select_code == TRACK_AND_STOP:
            arm, was_forced, target = track_and_stop_arm(arms, rewards, threshold, uncertain[b], feasible[b],
                                                         last_upper[b], inverse[b], norms2[b], predictions[b],
                                                         counters[b, PULLS], optimism, block, threads_from,
                                                         contender, companion)
        else:
            arm, target = rollout_step(b, problem, rule, run, contender, companion, threads_from, fitted)
            was_forced = False
        # the target's products ride on the update's pass only where that saves a read of a matrix
        # out of cache; on a smaller one the vertex's own pass costs less than the update's extra work
        following = target if arms.shape[0] * arms.shape[1] >= STREAM_ENTRIES else -1
    else:
        arm = select(select_code, arms, inverse[b], norms2[b], rewards, uncertain[b], feasible[b],
                     uniforms[b, used_normals[b]], contender, contender_arm, block, threads_from)
        was_forced = False
    if stream is None:
        observed = means[arm] + sigma * normals[b, used_normals[b]]
    else:
        observed = 2.0 * stream.binomial(1, min(max((means[arm] + 1.0) / 2.0, 0.0), 1.0)) - 1.0
    if contenders is not None:
        following = predict_contender(arms, inverse[b], norms2[b], uncertain[b], select_code == GREEDY_MAXVAR,
                                      arms[arm], 1, watch, watch_bound)
    used_normals[b] += 1
    if was_forced:
        counters[b, FORCED] += 1
    if absorbing:
        contender_arm, empty, refreshing = observe(arms, rewards, threshold, run, b, arm, observed, 1, following,
                                                   companion, block, threads_from, refresh_every, radius_code, params)
        pending[b] = refreshing
        if empty:
            status[b] = SOLVED
    return arm, observed, following, contender_arm


@njit
def advance(problem, rule, regime, run, control, noise, companion, contenders, threads_from, stream):
    """Advance every run b with ``status[b] == RUNNING`` until it stops or needs Python.

    One step is :func:`step` (a pull by the rule, its observation and its update), and,
    when the last step's elimination waited for the exact refresh (``pending[b]``), first
    the intervals of the regime's radius and the elimination update. A run stops when U is
    empty (SOLVED), before a pull would make its pulls exceed ``limit`` (BUDGET; ``limit <
    0``: no budget), when its noise chunk is used (NEED_NOISE) or when the exact refresh of
    its design is due (NEED_REFRESH: ``refresh_every`` updates since the last).

    Arguments (K arms, d dimensions, B runs, C draws per noise chunk):

    - ``problem``: (arms (K, d), rewards (K,), τ).
    - ``rule``: (the rule's code, Track-and-Stop's κ, ``block`` the rows per block of a pass
      over the arms, ``DesignState.block``).
    - ``regime``: (radius code, params (7,), ``refresh_every``), see
      :func:`cbai_cli.numerics.kernels.radius.radius`.
    - ``run``: the runs' ridge designs and elimination states, the arrays of a
      :class:`~cbai_cli.numerics.kernels.state.RunState` of B rows, updated in place.
    - ``control``: (limit, pending, status), (B,) int each.
    - ``noise``: (means (K,), σ, normals (B, C), uniforms (B, C) the random rules' uniforms,
      read beside the normals (one per pull), used_normals (B,) the draws used of each row).
    - ``companion``: (K,) scratch; ``contenders``: None, or on large arm sets with G-ACOL
      or Greedy MaxVar the number of arms that the prediction of the next greedy direction
      watches (:func:`step`; None compiles no prediction); ``threads_from``: the K·d from
      which a pass is split across threads (:mod:`cbai_cli.numerics.kernels.threads`); ``stream``:
      None for Gaussian noise (the normals), or for binary answers the noise generator of
      the batch's one run (B = 1; :func:`step`).
    """
    rewards, threshold = problem[1], problem[2]
    radius_code, params, refresh_every = regime
    norms2, predictions, last_lower, last_upper, reals, counters = run[4], run[5], run[8], run[9], run[10], run[11]
    pending, status = control[1], control[2]
    watched = watch_size(contenders)
    absorbing = np.bool_(True)
    for b in range(status.shape[0]):
        # companion holds no product of this run yet; an int64, not the literal −1, so that
        # numba compiles the functions it is passed to once (a literal compiles them twice)
        contender = contender_arm = np.int64(-1)
        watch, watch_bound = np.full(watched, -1, dtype=np.int64), np.full(1, -np.inf)
        while status[b] == RUNNING:
            if pending[b]:
                r = radius(radius_code, counters[b, PULLS], reals[b, LOGDET], params)
                interval_bounds(r, norms2[b], predictions[b], last_lower[b], last_upper[b])
                if eliminate(rewards, threshold, run, control, b):
                    break
            arm, observed, contender, contender_arm = step(
                b, problem, rule, regime, run, control, noise, contender, contender_arm, companion, contenders, watch,
                watch_bound, threads_from, absorbing, stream, None)
            if arm < 0:
                break
            if counters[b, UPDATES] >= refresh_every:
                status[b] = NEED_REFRESH
                break


@njit
def advance_fit(problem, rule, fit, run, control, noise, companion, contenders, threads_from, span, stream):
    """:func:`advance` for the ``ols`` regime: every run b with ``status[b] == RUNNING``
    until it stops or needs Python (noise, or the ridge design's exact refresh).

    One step is :func:`step`'s pull (the rule reads the ridge design), then its update,
    :func:`cbai_cli.numerics.kernels.fit.observe_fit` (the design, the fit, the mixture intervals
    and the elimination update); when that update's intervals and elimination waited for the
    design's exact refresh (``pending[b]``), they come first
    (:func:`~cbai_cli.numerics.kernels.fit.fit_bounds`, :func:`eliminate`). Python acts (status
    NEED_REFRESH) when the ridge design's exact refresh is due.

    Arguments: ``problem``, ``rule``, ``run``, ``control``, ``noise``, ``companion``,
    ``contenders``, ``threads_from``, ``stream`` as :func:`advance`; ``span``: the runs'
    fits and intervals (:meth:`cbai_cli.numerics.kernels.state.SpanState.arrays`, B rows); ``fit``:
    the constants of :func:`~cbai_cli.numerics.kernels.fit.observe_fit`.
    """
    arms, rewards, threshold = problem
    block = rule[2]
    refresh_every, scales, log_weights, mean_scales, mean_log_weights = fit[0], fit[5], fit[6], fit[8], fit[9]
    last_lower, last_upper = run[8], run[9]
    pending, status = control[1], control[2]
    # numpy values, not literals (see advance); step does not absorb: its regime is unused
    absorbing, eliminating, one = np.bool_(False), np.bool_(True), np.int64(1)
    no_regime = (np.int64(0), np.empty(0), np.int64(refresh_every))
    mean_scratch = np.empty((3, mean_scales.shape[0]))  # own_mean_sides's, shared by every pull
    watched = watch_size(contenders)
    fitted = (span[7], span[16], span[18], span[19], scales, log_weights)  # rollout_step's
    for b in range(status.shape[0]):
        contender = contender_arm = np.int64(-1)  # see advance
        watch, watch_bound = np.full(watched, -1, dtype=np.int64), np.full(1, -np.inf)
        while status[b] == RUNNING:
            if pending[b]:
                fit_bounds(threshold, span, b, mean_scales, mean_log_weights, last_lower[b], last_upper[b])
                if eliminate(rewards, threshold, run, control, b):
                    break
            arm, observed, contender, contender_arm = step(
                b, problem, rule, no_regime, run, control, noise, contender, contender_arm, companion, contenders,
                watch, watch_bound, threads_from, absorbing, stream, fitted)
            if arm < 0:
                break
            contender_arm, empty, refreshing = observe_fit(arms, rewards, threshold, run, b, arm, observed, one,
                                                           contender, companion, block, threads_from, fit, span,
                                                           mean_scratch, eliminating)
            pending[b] = refreshing
            if empty:
                status[b] = SOLVED
                break
            if refreshing:
                status[b] = NEED_REFRESH
                break
