"""Track-and-Stop's sampling rule as one compiled call
(:class:`cbai_cli.algorithms.track_and_stop.TrackAndStop`, whose docstring gives the rule
and its choices; this is the same rule, step for step, on the run's arrays).

A step of the rule in numpy is a dozen calls on arrays of K numbers; at the sizes of the
paper's instances that is call overhead, not arithmetic. The products with the arm matrix
are the same BLAS calls as numpy's (``arms @ (A⁻¹ y)``) and every argmax takes the first
index among ties, so the pulls are those of the numpy rule.
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.kernels.jit import njit


@njit
def _first_max(values, candidates):
    """argmax of ``values`` over the indices with ``candidates`` set, first among ties; −1
    when there is none. Shapes: values, candidates (K,)."""
    chosen = -1
    for a in range(values.shape[0]):
        if candidates[a] and (chosen < 0 or values[a] > values[chosen]):
            chosen = a
    return chosen


@njit
def track_and_stop_arm(arms, rewards, threshold, uncertain, feasible, last_upper, inverse, norms2, predictions,
                       n_samples, optimism):
    """(arm, forced) of Track-and-Stop's next pull: the answer x̂*, the relevant arms R, then
    forced exploration (G-ACOL's greedy step towards the least known arm of R) or the
    Frank–Wolfe vertex for the active target; (−1, False) when R is empty (the caller then
    takes the numpy rule, which decides that case).

    Shapes: arms (K, d); rewards, uncertain, feasible, last_upper, norms2, predictions (K,);
    inverse (d, d) A⁻¹.
    """
    k, d = arms.shape
    predicted = np.zeros(k, dtype=np.bool_)
    for a in range(k):
        if uncertain[a] or feasible[a]:
            half_width = last_upper[a] - predictions[a]
            optimistic = predictions[a] - optimism * half_width if math.isfinite(half_width) else -math.inf
            predicted[a] = optimistic <= threshold or feasible[a]
    answer = _first_max(rewards, predicted)
    relevant = uncertain.copy()
    if answer >= 0:
        for a in range(k):
            relevant[a] = uncertain[a] and rewards[a] >= rewards[answer]
    least_known = _first_max(norms2, relevant)
    if least_known < 0:
        return -1, False
    if norms2[least_known] > d / math.sqrt(max(n_samples, 1)):
        projected = np.dot(arms, np.dot(inverse, arms[least_known]))
        gains = projected**2 / (1.0 + norms2)
        return _first_max(gains, np.ones(k, dtype=np.bool_)), True
    top = 0.0
    for a in range(k):
        if relevant[a]:
            top = max(top, abs(predictions[a] - threshold))
    floor = 1e-6 * (top if top != 0.0 else 1.0)
    scores = np.empty(k)
    for a in range(k):
        gap = max(abs(predictions[a] - threshold), floor)
        scores[a] = norms2[a] / gap**2
    target = _first_max(scores, relevant)
    products = np.dot(arms, np.dot(inverse, arms[target]))
    return _first_max(products * products, np.ones(k, dtype=np.bool_)), False
