"""Uniform: the fixed allocation λ uniform over X (paper §4.1 baseline, Table D.2)."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.fixed_design import FixedDesign


class Uniform(FixedDesign):
    """Algorithm 3 with λ(x) = 1/K for every arm."""

    def __init__(self, problem, config, rng) -> None:
        super().__init__(problem, config, rng)
        self.weights = np.full(problem.n_arms, 1.0 / problem.n_arms)
