"""The intervals of a radius regime and the elimination update of one run (Lindner et al.
2022, Algorithms 1 and 2, lines 14–18; :class:`cbai_cli.algorithms.elimination.EliminationState`)."""

from __future__ import annotations

import math

from cbai_cli.kernels.jit import njit


@njit
def interval_bounds(radius, norms2, predictions, lower, upper):
    """l(x), u(x) = xᵀφ̂ ∓ r·‖x‖_{A⁻¹} of every arm into ``lower``, ``upper``; all (K,).
    Negative round-off in ‖x‖²_{A⁻¹} is clipped at 0."""
    for a in range(norms2.shape[0]):
        width = radius * math.sqrt(max(norms2[a], 0.0))
        lower[a] = predictions[a] - width
        upper[a] = predictions[a] + width


@njit
def apply_bounds(lower, upper, rewards, threshold, uncertain, feasible, best):
    """F ← F ∪ {u(x) ≤ τ}; r̄ ← max(r̄, max θᵀx over the new F); U ← U ∖ ({u ≤ τ} ∪ {l > τ} ∪
    {θᵀx < r̄}) in place; returns r̄ (``best``, −∞ while F is empty) and whether U is empty.

    Shapes: lower, upper, rewards, uncertain, feasible (K,).
    """
    k = rewards.shape[0]
    for a in range(k):
        if upper[a] <= threshold:
            feasible[a] = True
            if rewards[a] > best:
                best = rewards[a]
    empty = True
    for a in range(k):
        if upper[a] <= threshold or lower[a] > threshold or rewards[a] < best:
            uncertain[a] = False
        empty = empty and not uncertain[a]
    return best, empty
