"""G-Allocation: the G-optimal fixed allocation (paper §3.3 and Appendix B.2)."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.fixed_design import FixedDesign


class GAllocation(FixedDesign):
    """Algorithm 3 with λ^G ∈ argmin_λ max_{x∈X} ‖x‖²_{A_λ⁻¹} (Kiefer–Wolfowitz value d),
    solved once for all seeds of a request (the configuration's design cache)."""

    def __init__(self, problem, config, rng) -> None:
        super().__init__(problem, config, rng)
        everywhere = np.ones(problem.n_arms, dtype=bool)
        self.weights = config.designs.design(problem.arms, everywhere, config.design_tolerance).weights
