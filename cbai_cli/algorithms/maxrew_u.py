"""MaxRew-U: the highest-reward uncertain arm (paper §4.2, Table D.2)."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.base import Adaptive


class MaxRewU(Adaptive):
    """Pull argmax_{x∈U} θᵀx (first index among ties)."""

    def select(self) -> int:
        indices = np.flatnonzero(self.state.uncertain)
        return int(indices[np.argmax(self.problem.rewards[indices])])
