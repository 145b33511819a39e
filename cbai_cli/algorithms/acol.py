"""ACOL, Adaptive Constraint Learning (paper Algorithm 1)."""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.algorithms.base import RoundBased
from cbai_cli.design import optimal_design, round_design, rounding_minimum


class ACOL(RoundBased):
    """Round t: δ_t = δ²/t²; λ*_t = argmin_λ max_{x∈U_t} ‖x‖²_{A_λ⁻¹} (design over all
    of X, max over U_t) with value ρ_t; N_t = max(⌈R²·2^{2t+3} log(K/δ_t)(1+ε)ρ_t⌉, r(ε));
    pull Round(λ*_t, N_t); refit on this round's data only; update U, F.

    Choices, documented:
    - ρ_t is the value of the design actually used (an upper bound on the optimum that
      the solver certifies to a small relative gap), so the Theorem 2 argument holds
      for the pulls made.
    - The paper's Algorithm 1 is followed, not the authors' code, which uses the
      unsquared max ‖x‖_{A_λ⁻¹} in N_t and a ridge of 0.01 in each round's A.
    - r(ε) = ⌈p(1+ε)/ε⌉ with p the support size of λ*_t: the efficient rounding is then
      (1+ε)-approximate (see :func:`cbai_cli.design.rounding_minimum`).
    - The factor R² (R = 1 in the paper) makes every round halve the widths whatever
      the noise scale: width ≤ R·sqrt(2 log(K/δ_t)(1+ε)ρ_t/N_t) ≤ 2^{−(t+1)}.
    """

    def round_counts(self, t: int) -> np.ndarray:
        arms = self.problem.arms
        design = optimal_design(arms, arms[self.state.uncertain], tol=self.config.design_tolerance)
        epsilon = self.config.rounding_epsilon
        delta_t = self.delta_round(t)
        scale = self.config.confidence.subgaussian ** 2
        length = math.ceil(scale * 2.0 ** (2 * t + 3) * math.log(arms.shape[0] / delta_t) * (1 + epsilon) * design.value)
        length = max(length, rounding_minimum(design.support.size, epsilon))
        return round_design(design.weights, length)
