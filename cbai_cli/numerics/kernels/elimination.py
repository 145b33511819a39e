"""The intervals of a radius regime and the elimination update of one run (Lindner et al.
2022, Algorithms 1 and 2, lines 14–18; :class:`cbai_cli.algorithms.elimination.EliminationState`).

The per-arm work is written once, on a range of arms (:func:`interval`, :func:`admit`,
:func:`prune`): :func:`interval_bounds` and :func:`apply_bounds` run it over every arm,
and the update's pass over the arm matrix runs it block by block while each block is in
cache (:func:`cbai_cli.numerics.kernels.threads.absorb_pass`).
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.kernels.jit import njit


@njit
def interval(radius, norm2, prediction):
    """(l(x), u(x)) = xᵀφ̂ ∓ r·‖x‖_{A⁻¹} of one arm; a negative round-off ‖x‖²_{A⁻¹}
    counts as 0."""
    width = radius * math.sqrt(max(norm2, 0.0))
    return prediction - width, prediction + width


@njit
def interval_rows(radius, norms2, predictions, lower, upper, start, stop):
    """:func:`interval` of the arms ``start:stop`` into ``lower``, ``upper``; all (K,)."""
    # slices indexed from 0: numba then knows no index is negative and vectorises the loop
    norm2, prediction, low, high = norms2[start:stop], predictions[start:stop], lower[start:stop], upper[start:stop]
    for a in range(norm2.shape[0]):
        low[a], high[a] = interval(radius, norm2[a], prediction[a])


@njit
def interval_bounds(radius, norms2, predictions, lower, upper):
    """l(x), u(x) = xᵀφ̂ ∓ r·‖x‖_{A⁻¹} of every arm into ``lower``, ``upper``; all (K,)."""
    interval_rows(radius, norms2, predictions, lower, upper, np.int64(0), norms2.shape[0])


@njit
def admit(upper, rewards, threshold, feasible, best, start, stop):
    """F ← F ∪ {u(x) ≤ τ} over the arms ``start:stop``; returns max(``best``, the largest
    θᵀx among them in F). Shapes: upper, rewards, feasible (K,)."""
    high, reward, certain = upper[start:stop], rewards[start:stop], feasible[start:stop]  # see interval_rows
    for a in range(high.shape[0]):
        if high[a] <= threshold:
            certain[a] = True
            if reward[a] > best:
                best = reward[a]
    return best


@njit
def prune(lower, upper, rewards, threshold, uncertain, best, start, stop):
    """U ← U ∖ ({u ≤ τ} ∪ {l > τ} ∪ {θᵀx < r̄}) over the arms ``start:stop``, r̄ = ``best``;
    returns whether one of them is still in U. Shapes: lower, upper, rewards, uncertain (K,)."""
    low, high, reward, undecided = lower[start:stop], upper[start:stop], rewards[start:stop], uncertain[start:stop]
    left = False
    for a in range(low.shape[0]):  # slices: see interval_rows
        if high[a] <= threshold or low[a] > threshold or reward[a] < best:
            undecided[a] = False
        left = left or undecided[a]
    return left


@njit
def apply_bounds(lower, upper, rewards, threshold, uncertain, feasible, best):
    """F ← F ∪ {u(x) ≤ τ}; r̄ ← max(r̄, max θᵀx over the new F); U ← U ∖ ({u ≤ τ} ∪ {l > τ} ∪
    {θᵀx < r̄}) in place; returns r̄ (``best``, −∞ while F is empty) and whether U is empty.

    Shapes: lower, upper, rewards, uncertain, feasible (K,).
    """
    k = rewards.shape[0]
    best = admit(upper, rewards, threshold, feasible, best, np.int64(0), k)
    return best, not prune(lower, upper, rewards, threshold, uncertain, best, np.int64(0), k)
