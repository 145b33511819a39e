"""Oracle: the H_CLB allocation, which needs the true constraint (paper Appendix B.1)."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.fixed_design import FixedDesign


class Oracle(FixedDesign):
    """Algorithm 3 with λ* ∈ argmin_λ max_{x∈X≥(x*)} ‖x‖²_{A_λ⁻¹}/g(x)², the design of
    the lower bound (Definition 2). It is the one algorithm given knowledge of φ, and
    only through this design (``oracle_design``, (K,) weights); it is a yardstick, not
    a usable method.
    """

    def __init__(self, problem, config, rng, oracle_design: np.ndarray) -> None:
        super().__init__(problem, config, rng)
        self.weights = np.asarray(oracle_design, dtype=float)
