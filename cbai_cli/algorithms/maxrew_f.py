"""MaxRew-F: the highest-reward certainly-feasible arm (paper §4.2, Table D.2)."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive


class MaxRewF(Adaptive):
    """Pull argmax_{x∈F} θᵀx when F is non-empty, else an arm uniform over X.

    It adapts regret minimisation within the safe set (UCB/TS-style) to CBAI and can
    fail to stop when the feasible set is not connected (it keeps pulling the same
    certainly-feasible arm): run it with a budget.
    """

    def select(self) -> int:
        best = self.state.recommendation()
        if best is None:
            return int(self.rng.integers(self.problem.n_arms))
        return best
