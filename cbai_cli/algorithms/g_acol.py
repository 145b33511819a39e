"""G-ACOL, Greedy Adaptive Constraint Learning (paper Algorithm 2)."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.base import Adaptive
from cbai_cli.numerics.kernels.codes import G_ACOL


class GACOL(Adaptive):
    """y = argmax_{x∈U} ‖x‖_{A⁻¹}; pull the arm a ∈ X that most reduces ‖y‖²_{A⁻¹}:
    argmin_a ‖y‖²_{(A+aaᵀ)⁻¹} = argmax_a (yᵀA⁻¹a)²/(1 + ‖a‖²_{A⁻¹}).

    The paper's box pulls y itself; the authors' code (and this implementation)
    pulls the most informative arm about y, which is y when nothing is better.
    Ties: the first index. Cost O(K·d + d²). The rule is compiled
    (:func:`cbai_cli.numerics.kernels.select.select`).
    """

    kernel_code = G_ACOL

    def candidates(self) -> np.ndarray:
        """(K,) bool: where y ranges."""
        return self.state.uncertain

    def lookahead(self) -> np.ndarray:
        return self.candidates()
