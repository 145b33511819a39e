"""Whole adaptive runs inside compiled code: the loop of :func:`cbai_cli.simulate.drive`
(ask, answer, tell) for every run of a batch, with one pull per step and Gaussian noise
read from the run's own standard normals."""

from __future__ import annotations

from cbai_cli.kernels.codes import BUDGET, GREEDY_MAXVAR, MAXREW_U, NEED_NOISE, NEED_REFRESH, RUNNING, SOLVED
from cbai_cli.kernels.design import absorb, predict_contender
from cbai_cli.kernels.elimination import apply_bounds, interval_bounds
from cbai_cli.kernels.jit import njit
from cbai_cli.kernels.radius import radius
from cbai_cli.kernels.select import select


@njit
def advance(arms, rewards, threshold, means, sigma, select_code, radius_code, params, refresh_every,
            inverse, gram, targets, estimate, norms2, predictions, logdet, uncertain, feasible, best,
            last_lower, last_upper, steps, since, limit, pending, status, normals, used_normals, companion, block,
            contenders, threads_from):
    """Advance every run b with ``status[b] == RUNNING`` until it stops or needs Python.

    One step is :func:`~cbai_cli.kernels.select.select`, the observation
    ``means[arm] + sigma·z`` (bitwise numpy's ``rng.normal(means[arm], sigma)`` for the
    stream's next standard normal z), :func:`~cbai_cli.kernels.design.absorb`, and, unless
    an exact refresh is due first, the intervals of the regime's radius and the
    elimination update. ``pending[b]``: the last step's elimination waits for a refresh.
    A run stops when U is empty (SOLVED) or before a pull would make ``steps`` exceed
    ``limit`` (BUDGET; ``limit < 0``: no budget).

    Shapes: arms (K, d); rewards, means (K,); params (7,); inverse, gram (B, d, d);
    targets, estimate (B, d); norms2, predictions, uncertain, feasible, last_lower,
    last_upper (B, K); logdet, best, steps, since, limit, pending, status,
    used_normals (B,); normals (B, C); companion (K,) scratch; ``block``: rows per block
    of a pass over the arms (``DesignState.block``); ``threads_from``: the K·d from which a
    pass is split across threads (:mod:`cbai_cli.kernels.threads`). ``contenders`` > 0: on
    large arm sets, predict the next greedy direction before each update
    (:func:`~cbai_cli.kernels.design.predict_contender`, from at most that many arms) so
    that one pass over the arms computes both products.
    """
    predicting = contenders > 0 and select_code != MAXREW_U
    for b in range(inverse.shape[0]):
        contender = -1  # companion holds no product of this run yet
        while status[b] == RUNNING:
            if pending[b]:
                r = radius(radius_code, steps[b], logdet[b], params)
                interval_bounds(r, norms2[b], predictions[b], last_lower[b], last_upper[b])
                best[b], empty = apply_bounds(last_lower[b], last_upper[b], rewards, threshold, uncertain[b],
                                              feasible[b], best[b])
                pending[b] = 0
                if empty:
                    status[b] = SOLVED
                    break
            if limit[b] >= 0 and steps[b] + 1 > limit[b]:
                status[b] = BUDGET
                break
            if used_normals[b] == normals.shape[1]:
                status[b] = NEED_NOISE
                break
            arm = select(select_code, arms, inverse[b], norms2[b], rewards, uncertain[b], contender, companion, block,
                         threads_from)
            observed = means[arm] + sigma * normals[b, used_normals[b]]
            used_normals[b] += 1
            contender = -1
            if predicting:
                contender = predict_contender(arms, inverse[b], norms2[b], uncertain[b], select_code == GREEDY_MAXVAR,
                                              arms[arm], 1, contenders)
            logdet[b] = absorb(arms, inverse[b], gram[b], targets[b], estimate[b], norms2[b], predictions[b],
                               logdet[b], arms[arm], observed, 1, contender, companion, block, threads_from)
            steps[b] += 1
            since[b] += 1
            pending[b] = 1
            if since[b] >= refresh_every:
                status[b] = NEED_REFRESH
                break
