"""The elimination state shared by every CBAI algorithm (paper Algorithms 1 and 2,
lines 14–18).

After each update with lower/upper confidence bounds l(x), u(x):

- F ← F ∪ {x : u(x) ≤ τ}            (certainly feasible; only grows)
- r̄ ← max_{x∈F} θᵀx                 (−∞ while F is empty)
- U ← U \\ {l(x) > τ} \\ {u(x) ≤ τ} \\ {θᵀx < r̄}   (starts as X; only shrinks)

The run stops when U is empty and returns argmax_{x∈F} θᵀx, or "no feasible arm"
when F is empty.
"""

from __future__ import annotations

import numpy as np


class EliminationState:
    """Uncertain set U, feasible set F and the best certainly-feasible reward r̄.

    Args:
        rewards: (K,) known rewards θᵀx.
        threshold: τ.
    """

    def __init__(self, rewards: np.ndarray, threshold: float) -> None:
        self.rewards = np.asarray(rewards, dtype=float)
        self.threshold = float(threshold)
        self.uncertain = np.ones(self.rewards.shape[0], dtype=bool)
        self.feasible = np.zeros(self.rewards.shape[0], dtype=bool)
        self.best_feasible_reward = -np.inf
        self.last_lower = np.full(self.rewards.shape[0], -np.inf)
        self.last_upper = np.full(self.rewards.shape[0], np.inf)

    @property
    def done(self) -> bool:
        return not self.uncertain.any()

    def update(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Apply one set of confidence bounds (K,) and (K,) to F, r̄ and U
        (:func:`cbai_cli.kernels.elimination.apply_bounds`)."""
        from cbai_cli.kernels.elimination import apply_bounds

        lower = np.ascontiguousarray(lower, dtype=float)
        upper = np.ascontiguousarray(upper, dtype=float)
        best, _ = apply_bounds(lower, upper, self.rewards, self.threshold, self.uncertain, self.feasible,
                               self.best_feasible_reward)
        self.best_feasible_reward = float(best)
        self.last_lower = lower
        self.last_upper = upper

    def recommendation(self) -> int | None:
        """argmax_{x∈F} θᵀx (first index among ties, as the compiled rules'
        :func:`~cbai_cli.kernels.select.first_max`, which MaxRew-F pulls), or None when F is
        empty. In numpy: a status or a final answer then loads no compiled code."""
        feasible = np.flatnonzero(self.feasible)
        if feasible.size == 0:
            return None
        return int(feasible[np.argmax(self.rewards[feasible])])

    def anytime_recommendation(self) -> int | None:
        """The answer when a budget runs out first (cbai's choice; the paper's algorithms always stop): the best arm of F,
        else the arm with the lowest current upper bound."""
        best = self.recommendation()
        if best is not None:
            return best
        return int(np.argmin(self.last_upper))
