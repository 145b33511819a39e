"""Adaptive Uniform: uniform sampling with adaptive intervals (paper §4.1, Table D.2)."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive


class AdaptiveUniform(Adaptive):
    """Pull an arm drawn uniformly from X."""

    def select(self) -> int:
        return int(self.rng.integers(self.problem.n_arms))
