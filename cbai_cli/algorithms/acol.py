"""ACOL, Adaptive Constraint Learning (paper Algorithm 1)."""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.algorithms.base import RoundBased, log_or_minus_inf
from cbai_cli.numerics.design.rounding import round_design, rounding_minimum
from cbai_cli.contracts.options import OPTIONS, QUERY_LIMIT


class ACOL(RoundBased):
    """Round t: δ_t = δ²/t²; λ*_t = argmin_λ max_{x∈U_t} ‖x‖²_{A_λ⁻¹} (design over all
    of X, max over U_t) with value ρ_t; N_t = max(⌈R²·2^{2t+3} log(K/δ_t)(1+ε)ρ_t⌉, r(ε));
    pull Round(λ*_t, N_t); refit on this round's data only; update U, F.

    Choices, documented:
    - λ*_t comes from the configuration's design cache (:class:`cbai_cli.numerics.design.cache.DesignCache`):
      the seeds of one request often face the same U_t, whose design is solved once.
    - ρ_t is the value of the design actually used (an upper bound on the optimum that
      the solver certifies to a small relative gap), so the Theorem 2 argument holds
      for the pulls made.
    - The paper's Algorithm 1 is followed, not the authors' code, which uses the
      unsquared max ‖x‖_{A_λ⁻¹} in N_t and a ridge of 0.01 in each round's A.
    - r(ε) = ⌈p(1+ε)/ε⌉ with p the support size of λ*_t: the efficient rounding is then
      (1+ε)-approximate (see :func:`cbai_cli.numerics.design.rounding.rounding_minimum`).
    - The factor R² (R = 1 in the paper) makes every round halve the widths whatever
      the noise scale: width ≤ R·sqrt(2 log(K/δ_t)(1+ε)ρ_t/N_t) ≤ 2^{−(t+1)}.
    - log(K/δ_t) is computed in logs when δ_t = δ²/t² underflows (δ = 1e−300), and N_t
      is first bounded in logs: a round longer than one run can count (an absurd ε,
      rounds that never end) is refused in one line rather than overflowing
      (:meth:`~cbai_cli.algorithms.base.RoundBased.checked_length`).
    """

    def round_counts(self, t: int) -> np.ndarray:
        arms = self.problem.arms
        design = self.config.designs.design(arms, self.state.uncertain, self.config.design_tolerance)
        epsilon = self.config.rounding_epsilon
        log_term = self.log_arms_over_delta_round(t)
        scale = self.noise_scale()
        support = design.support.size
        minimum = rounding_minimum(support, epsilon)
        if minimum > QUERY_LIMIT:
            usual = rounding_minimum(support, OPTIONS["rounding_epsilon"].default) <= QUERY_LIMIT
            raise self.too_long(t, math.log(minimum), f"r(ε) = ⌈p(1+ε)/ε⌉ for support size p = {support} and "
                                f"--epsilon {epsilon:g}", "choose a larger --epsilon" if usual else "")
        rest = log_or_minus_inf(scale) + (2 * t + 3) * math.log(2.0) + log_or_minus_inf(log_term) + log_or_minus_inf(
            design.value)
        usual = rest + math.log1p(OPTIONS["rounding_epsilon"].default) <= math.log(QUERY_LIMIT)
        length = self.checked_length(t, rest + math.log1p(epsilon), lambda: math.ceil(
            scale * 2.0 ** (2 * t + 3) * log_term * (1 + epsilon) * design.value),
            f"R²·2^(2t+3)·log(K/δ_t)·(1+ε)·ρ_t with --epsilon {epsilon:g}",
            "choose a smaller --epsilon" if usual else "")
        length = max(length, minimum)
        return round_design(design.weights, length)
