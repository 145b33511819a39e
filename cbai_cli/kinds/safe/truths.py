"""The ground truths a run is scored against: x* and Δ of a regret problem, γ_k and k* of a
safe best-arm problem. Only these functions and the environments read the hidden parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cbai_cli.kinds.safe.problems import SafeBaiProblem, SafeRegretProblem, safe_scales

__all__ = ["RegretTruth", "SafeBaiTruth", "regret_truth", "safe_bai_truth"]


@dataclass(frozen=True, eq=False)
class RegretTruth:
    """Ground truth of a :class:`~.problems.SafeRegretProblem` (Amani et al. 2019, §2 and §3.3).

    Attributes:
        x_star: (d,) the optimal safe action argmin {μ*ᵀx : x ∈ D_0, xᵀBμ* ≤ c}.
        loss_star: μ*ᵀx*.
        safety_gap: Δ = c − x*ᵀBμ* (the "safety gap" of §3.3).
    """

    x_star: np.ndarray
    loss_star: float
    safety_gap: float


def regret_truth(problem: SafeRegretProblem) -> RegretTruth:
    """x*, its loss and the safety gap Δ of ``problem``."""
    setting = problem.setting
    x = setting.action_set.optimal_action(problem.mu_star, setting.B, setting.c)
    if x is None:
        raise ValueError("no arm of the finite action set is safe")
    gap = setting.c - float(x @ setting.B @ problem.mu_star)
    # The LP is solved to ~1e-9; a gap that small means the constraint is active (Δ = 0).
    if abs(gap) < 1e-9:
        gap = 0.0
    return RegretTruth(x_star=x, loss_star=float(problem.mu_star @ x), safety_gap=gap)


@dataclass(frozen=True, eq=False)
class SafeBaiTruth:
    """Ground truth of a :class:`~.problems.SafeBaiProblem` ("Price of Safety" §3.3). Arrays (K,).

    Attributes:
        safety_values: x_kᵀμ*.
        gamma: γ_k, the largest safe fraction of each arm.
        rewards: x_kᵀθ*.
        safe_rewards: γ_k x_kᵀθ*.
        optimal_safe_arm: k* = argmax_k γ_k x_kᵀθ*.
    """

    safety_values: np.ndarray
    gamma: np.ndarray
    rewards: np.ndarray
    safe_rewards: np.ndarray
    optimal_safe_arm: int


def safe_bai_truth(problem: SafeBaiProblem) -> SafeBaiTruth:
    """γ_k, the safe rewards and k* of ``problem``."""
    arms = problem.setting.arms
    s = arms @ problem.mu_star
    g = safe_scales(s, problem.setting.eta0)
    r = arms @ problem.theta_star
    sr = g * r
    return SafeBaiTruth(safety_values=s, gamma=g, rewards=r, safe_rewards=sr, optimal_safe_arm=int(np.argmax(sr)))
