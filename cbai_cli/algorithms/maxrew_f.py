"""MaxRew-F: the highest-reward certainly-feasible arm (paper §4.2, Table D.2)."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive
from cbai_cli.numerics.kernels.codes import MAXREW_F


class MaxRewF(Adaptive):
    """Pull argmax_{x∈F} θᵀx (first index among ties) when F is non-empty, else an arm
    uniform over X (compiled, :func:`cbai_cli.numerics.kernels.select.select`; every pull reads the
    next double of the algorithm's generator, used only when F is empty).

    It adapts regret minimisation within the safe set (UCB/TS-style) to CBAI and can
    fail to stop when the feasible set is not connected (it keeps pulling the same
    certainly-feasible arm): run it with a budget.
    """

    kernel_code = MAXREW_F
