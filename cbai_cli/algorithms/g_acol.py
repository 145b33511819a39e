"""G-ACOL, Greedy Adaptive Constraint Learning (paper Algorithm 2)."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.base import Adaptive


class GACOL(Adaptive):
    """y = argmax_{x∈U} ‖x‖_{A⁻¹}; pull the arm a ∈ X that most reduces ‖y‖²_{A⁻¹}:
    argmin_a ‖y‖²_{(A+aaᵀ)⁻¹} = argmax_a (yᵀA⁻¹a)²/(1 + ‖a‖²_{A⁻¹}).

    The paper's box pulls y itself; the authors' code (and this implementation)
    pulls the most informative arm about y, which is y when nothing is better.
    Ties: the first index. Cost O(K·d + d²).
    """

    def candidates(self) -> np.ndarray:
        return self.state.uncertain

    def lookahead(self) -> np.ndarray:
        return self.candidates()

    def select(self) -> int:
        return int(self.design.arm_gain(self.design.max_variance_arm(self.candidates())).argmax())
