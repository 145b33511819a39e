"""Greedy MaxVar: the adaptive counterpart of G-Allocation (paper §4.1, Table D.2)."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.g_acol import GACOL
from cbai_cli.numerics.kernels.codes import GREEDY_MAXVAR


class GreedyMaxVar(GACOL):
    """As G-ACOL with y ranging over all of X instead of U."""

    kernel_code = GREEDY_MAXVAR

    def candidates(self) -> np.ndarray:
        return np.ones(self.problem.n_arms, dtype=bool)
