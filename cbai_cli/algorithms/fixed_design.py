"""Round-based elimination with a fixed allocation (paper Appendix B, Algorithm 3)."""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.algorithms.base import RoundBased, doubling_round_length, log_or_minus_inf
from cbai_cli.numerics.design.rounding import round_design


class FixedDesign(RoundBased):
    """Algorithm 3: the same design λ every round, rounds of length
    N_t = ⌈R²·2^t log(K/δ_t)⌉ (v = 2 as in the authors' code; R = 1 in the paper),
    static intervals and the shared stopping rule.

    The round lengths double rather than follow Appendix B's proof (which sizes the
    last round by the design value), so the earliest rounds are short and cheap; the
    factor R² keeps the schedule the paper's one for the instance rescaled to unit
    noise. Subclasses set ``self.weights`` (K,).
    """

    weights: np.ndarray

    def round_counts(self, t: int) -> np.ndarray:
        scale = self.noise_scale()
        log_term = self.log_arms_over_delta_round(t)
        # ⌈scale·⌈2^t·log(K/δ_t)⌉⌉ ≤ scale·(2^t·log(K/δ_t) + 1) + 1, bounded in logs first
        log_length = log_or_minus_inf(scale) + math.log(2.0**t * log_term + 1.0) if t < 1000 else math.inf
        length = self.checked_length(t, log_length, lambda: max(1, math.ceil(
            scale * doubling_round_length(t, log_term))), "the doubling length R²·2^t·log(K/δ_t)")
        return round_design(self.weights, length)
