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

from cbai_cli.numerics.kernels.state import BEST, RunState, Slot
from cbai_cli.numerics.row_view import RowView


class EliminationState(RowView):
    """Uncertain set U, feasible set F and the best certainly-feasible reward r̄: a view on one
    row of a :class:`~cbai_cli.numerics.kernels.state.RunState` (its own, or the one an adaptive
    learner's design views too), updated in place.

    Args:
        rewards: (K,) known rewards θᵀx.
        threshold: τ.
        run: (state, row) to view; None: a state of its own.

    Attributes:
        uncertain, feasible: (K,) bool, U and F.
        last_lower, last_upper: (K,) the last intervals.
        best_feasible_reward: r̄ (−∞ while F is empty).
    """

    best_feasible_reward = Slot("_reals", BEST, float)

    #: The attributes that are views on the state's row (:meth:`_bind`).
    _VIEWS = ("uncertain", "feasible", "last_lower", "last_upper", "_reals")

    def __init__(self, rewards: np.ndarray, threshold: float, run: tuple[RunState, int] | None = None) -> None:
        self.rewards = np.asarray(rewards, dtype=float)
        self.threshold = float(threshold)
        self.run = run if run is not None else (RunState.empty(self.rewards.shape[0], 0), 0)
        self._bind()

    def _bind(self) -> None:
        """The arrays as views on the row ``run`` of its state."""
        state, row = self.run
        self.uncertain, self.feasible = state.uncertain[row], state.feasible[row]
        self.last_lower, self.last_upper = state.last_lower[row], state.last_upper[row]
        self._reals = state.reals[row]

    @property
    def done(self) -> bool:
        return not self.uncertain.any()

    def update(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Apply one set of confidence bounds (K,) and (K,) to F, r̄ and U
        (:func:`cbai_cli.numerics.kernels.elimination.apply_bounds`)."""
        from cbai_cli.numerics.kernels.elimination import apply_bounds

        lower = np.ascontiguousarray(lower, dtype=float)
        upper = np.ascontiguousarray(upper, dtype=float)
        self._reals[BEST], _ = apply_bounds(lower, upper, self.rewards, self.threshold, self.uncertain, self.feasible,
                                            self._reals[BEST])
        self.last_lower[...], self.last_upper[...] = lower, upper

    def recommendation(self) -> int | None:
        """argmax_{x∈F} θᵀx (first index among ties, as the compiled rules'
        :func:`~cbai_cli.numerics.kernels.select.first_max`, which MaxRew-F pulls), or None when F is
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
