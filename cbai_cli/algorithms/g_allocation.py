"""G-Allocation: the G-optimal fixed allocation (paper §3.3 and Appendix B.2)."""

from __future__ import annotations

from cbai_cli.algorithms.fixed_design import FixedDesign
from cbai_cli.design import optimal_design


class GAllocation(FixedDesign):
    """Algorithm 3 with λ^G ∈ argmin_λ max_{x∈X} ‖x‖²_{A_λ⁻¹} (Kiefer–Wolfowitz value d)."""

    def __init__(self, problem, config, rng) -> None:
        super().__init__(problem, config, rng)
        self.weights = optimal_design(problem.arms, problem.arms, tol=config.design_tolerance).weights
