"""G-ACOL Uniform: G-ACOL's stopping rule with uniform sampling from U (Table D.2)."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive


class GACOLUniform(Adaptive):
    """Pull an arm drawn uniformly from the uncertain set U."""

    def select(self) -> int:
        return self.uniform_among(self.state.uncertain)
