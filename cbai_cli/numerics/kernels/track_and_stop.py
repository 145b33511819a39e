"""Track-and-Stop's sampling rule, compiled (:class:`cbai_cli.algorithms.track_and_stop.TrackAndStop`,
whose docstring gives the rule and its choices; its methods call the pieces here).

A step of the rule in numpy is a dozen calls on arrays of K numbers; at the sizes of the
paper's instances that is call overhead, not arithmetic. The products with the arm matrix
are the design passes' (:mod:`cbai_cli.numerics.kernels.threads`: numpy's BLAS gemv on small arm
matrices, ``pair_products`` on those that stream) and every argmax takes the first index
among ties.
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.kernels.design import greedy_arm
from cbai_cli.numerics.kernels.jit import njit
from cbai_cli.numerics.kernels.threads import greedy_pass


@njit
def empirical_answer(rewards, threshold, uncertain, feasible, last_upper, predictions, optimism):
    """x̂*: the most rewarding arm that is still possible (uncertain or certainly feasible)
    and predicted feasible, φ̂ᵀx − κ·w(x) ≤ τ with w(x) = ``last_upper`` − φ̂ᵀx (∞ before
    the first interval); −1 when there is none. One scan, first index among ties; an arm
    that cannot displace the answer so far is passed over before its prediction is read.
    Shapes: all (K,)."""
    chosen = -1
    for a in range(rewards.shape[0]):
        if not (uncertain[a] or feasible[a]) or (chosen >= 0 and not rewards[a] > rewards[chosen]):
            continue
        half_width = last_upper[a] - predictions[a]
        optimistic = predictions[a] - optimism * half_width if math.isfinite(half_width) else -math.inf
        if optimistic <= threshold or feasible[a]:
            chosen = a
    return chosen


@njit
def reward_cutoff(rewards, answer):
    """θᵀx̂*, the least reward of R = U ∩ X≥(x̂*); −∞ when ``answer`` is −1 (R is then U)."""
    return rewards[answer] if answer >= 0 else -math.inf


@njit
def relevant_arms(rewards, uncertain, answer):
    """(K,) bool: R = U ∩ X≥(x̂*), or U when ``answer`` is −1."""
    return uncertain & (rewards >= reward_cutoff(rewards, answer))


@njit
def relevant_extremes(norms2, predictions, threshold, candidates, rewards, cutoff):
    """(argmax ‖x‖²_{A⁻¹}, max |φ̂ᵀx − τ|) over R = {x : ``candidates``[x], θᵀx ≥ ``cutoff``}
    in one scan, first index among ties; (−1, 0) when R is empty. The rule passes U and
    θᵀx̂* (no mask of R is built), a caller holding R passes it and −∞. Shapes: all (K,)."""
    least_known, top = -1, 0.0
    for a in range(norms2.shape[0]):
        if candidates[a] and rewards[a] >= cutoff:
            if least_known < 0 or norms2[a] > norms2[least_known]:
                least_known = a
            top = max(top, abs(predictions[a] - threshold))
    return least_known, top


@njit
def exploration_due(norms2, least_known, dim, n_samples):
    """Whether max_{x∈R} ‖x‖²_{A⁻¹}, the variance of R's ``least_known`` arm, exceeds d/√n
    (n at least 1)."""
    return norms2[least_known] > dim / math.sqrt(max(n_samples, 1))


@njit
def active_target(norms2, predictions, threshold, candidates, rewards, cutoff, top):
    """y* = argmax_{x∈R} ‖x‖²_{A⁻¹}/ĝ(x)², ĝ(x) = φ̂ᵀx − τ floored at a millionth of
    ``top``, the largest |ĝ| over R (of 1 when it is zero); R as :func:`relevant_extremes`,
    first index among ties. Shapes: all (K,)."""
    floor = 1e-6 * (top if top != 0.0 else 1.0)
    chosen, best = -1, 0.0
    for a in range(norms2.shape[0]):
        if candidates[a] and rewards[a] >= cutoff:
            score = norms2[a] / max(abs(predictions[a] - threshold), floor) ** 2
            if chosen < 0 or score > best:
                chosen, best = a, score
    return chosen


@njit
def frank_wolfe_arm(arms, inverse, target, block, threads_from):
    """argmax_a (aᵀA⁻¹y)² for y = ``arms[target]``, first among ties: the greedy pass's
    argmax of (aᵀt)²/(1 + v_a) with every v_a = 0, so that large arm sets get its blocked,
    threaded pass (:func:`cbai_cli.numerics.kernels.threads.greedy_pass`; dividing by 1 is exact).
    Shapes: arms (K, d), inverse (d, d)."""
    return greedy_pass(arms, np.dot(inverse, arms[target]), np.zeros(arms.shape[0]), block, threads_from)


@njit
def companion_vertex(companion):
    """argmax_a (aᵀA⁻¹y)² from the products aᵀA⁻¹y in ``companion`` (K,), first among ties;
    0 when no square exceeds −∞: :func:`frank_wolfe_arm`'s answer when ``companion`` holds
    the products its pass would compute (its gain p²/(1 + 0) is p² exactly, and blocks
    combined in order with a strict comparison are one scan in index order)."""
    chosen, best = 0, -math.inf
    for a in range(companion.shape[0]):
        gain = companion[a] * companion[a]
        if gain > best:
            chosen, best = a, gain
    return chosen


@njit
def vertex_or_target(arms, inverse, norms2, target, vertex):
    """The pull of a Frank–Wolfe step: the vertex a, unless one pull of it lowers the target's
    variance yᵀA⁻¹y by no more than one pull of the target y itself. One pull of b lowers it by
    (bᵀA⁻¹y)²/(1 + bᵀA⁻¹b) (Sherman–Morrison); the vertex maximises the numerator alone, the
    derivative, which does not see that one pull of an arm off y's direction also adds a
    direction that the few pulls so far leave unknown (a large bᵀA⁻¹b). The products are
    computed here from A⁻¹y, whatever pass found the vertex, so that every path compares the
    same numbers. Shapes: arms (K, d), inverse (d, d), norms2 (K,) the bᵀA⁻¹b."""
    if vertex == target:
        return vertex
    towards = np.dot(inverse, arms[target])
    by_vertex, by_target = np.dot(arms[vertex], towards), np.dot(arms[target], towards)
    if by_vertex * by_vertex / (1.0 + norms2[vertex]) > by_target * by_target / (1.0 + norms2[target]):
        return vertex
    return target


@njit
def target_and_vertex(arms, rewards, threshold, uncertain, feasible, last_upper, inverse, norms2, predictions,
                      n_samples, optimism, block, threads_from, predicted, companion, forcing):
    """(arm, forced, y*) of Track-and-Stop's steps up to its last choice: x̂*, R, then, when
    ``forcing`` and exploration is due, forced exploration (G-ACOL's greedy step towards the
    least known arm of R, :func:`cbai_cli.numerics.kernels.design.greedy_arm`; forced True, y* =
    −1), else the Frank–Wolfe vertex a of the active target y* (forced False). R is never
    empty while U is not: x̂* is uncertain (so in R) or certainly feasible, and then r̄ has
    already dropped every uncertain arm less rewarding than it.

    ``predicted`` ≥ 0: the design's last update wrote aᵀA⁻¹y for y = arms[predicted] into
    ``companion`` (:func:`cbai_cli.numerics.kernels.design.absorb`, in its pass over the arms, with
    the products of :func:`frank_wolfe_arm`'s own pass, bit for bit); when y* is that arm the
    vertex comes from ``companion`` (:func:`companion_vertex`, a scan of K numbers) instead
    of another pass over the arm matrix. −1: no prediction.

    Shapes: arms (K, d); rewards, uncertain, feasible, last_upper, norms2, predictions
    (K,); inverse (d, d) A⁻¹; companion (K,) (read only when ``predicted`` ≥ 0);
    ``block``, ``threads_from``: the design's pass settings
    (:func:`cbai_cli.numerics.kernels.design.absorb`).
    """
    answer = empirical_answer(rewards, threshold, uncertain, feasible, last_upper, predictions, optimism)
    cutoff = reward_cutoff(rewards, answer)
    least_known, top = relevant_extremes(norms2, predictions, threshold, uncertain, rewards, cutoff)
    if forcing and exploration_due(norms2, least_known, arms.shape[1], n_samples):
        return greedy_arm(arms, inverse, norms2, least_known, np.int64(-1), np.int64(-1), block,
                          threads_from), True, -1
    target = active_target(norms2, predictions, threshold, uncertain, rewards, cutoff, top)
    if target == predicted:
        vertex = companion_vertex(companion)
    else:
        vertex = frank_wolfe_arm(arms, inverse, target, block, threads_from)
    return vertex, False, target


@njit
def track_and_stop_arm(arms, rewards, threshold, uncertain, feasible, last_upper, inverse, norms2, predictions,
                       n_samples, optimism, block, threads_from, predicted, companion):
    """(arm, forced, y*) of Track-and-Stop's next pull (its ``vertex-or-target`` step):
    :func:`target_and_vertex` with forced exploration, then the Frank–Wolfe vertex a of the
    active target y*, or y* itself when one pull of a lowers y*'s variance less
    (:func:`vertex_or_target`). Arguments: as :func:`target_and_vertex`.
    """
    arm, forced, target = target_and_vertex(arms, rewards, threshold, uncertain, feasible, last_upper, inverse,
                                             norms2, predictions, n_samples, optimism, block, threads_from,
                                             predicted, companion, np.bool_(True))
    if forced:
        return arm, True, -1
    return vertex_or_target(arms, inverse, norms2, target, arm), False, target
