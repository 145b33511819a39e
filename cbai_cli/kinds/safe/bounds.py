"""``cbai bound`` on the safe kinds: the constants that set each algorithm's difficulty.

- ``safe-regret`` (Amani et al. 2019, §2 and Lemma 1/Theorems 2–3): x*, its loss, the safety gap Δ, ‖B‖,
  λ_− of the exploration set D^w, t_δ, β_T, T_Δ (Theorem 2's exploration length, when
  Δ > 0) and T_0 (Theorem 3's). For the Appendix F instances these are §7.2 C1–C2.
- ``safe-bai`` (§3.3, §4.1): per arm the safety value x_kᵀμ*, the true safe scale γ_k,
  reward and safe reward; the optimal safe arm k*; and LinGapE's complexity H_ε, on the
  full arms (what LinGapE faces, ignoring safety) and on the arms at their true safe
  scales γ_k·x_k (what Safe-LinGapE faces once it knows the scales exactly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cbai_cli.contracts.errors import InstanceError
from cbai_cli.kinds.safe.files import SafeBaiInstance, SafeRegretInstance, action_set_label
from cbai_cli.kinds.cbai.bounds import json_number

# λ_− of a D^w cut by the action set is a Monte Carlo estimate; a fixed seed makes
# `cbai bound` print the same number every time.
MONTE_CARLO_SEED = 0



@dataclass(frozen=True)
class SafeRegretBounds:
    """What ``cbai bound`` reports for a ``safe-regret`` instance (§2.2, §2.4).

    ``T_delta`` is None when Δ = 0 (Theorem 2 does not apply); ``lambda_minus_exact`` is
    False when λ_− is a Monte Carlo estimate.
    """

    name: str
    action_set: str
    dim: int
    horizon: int
    x_star: tuple[float, ...]
    loss_star: float
    safety_gap: float
    B_norm: float
    exploration_radius: float
    lambda_minus: float
    lambda_minus_exact: bool
    t_delta: float
    beta_T: float
    T_delta: float | None
    T_0: float

    def to_json(self) -> dict:
        return {
            "instance": self.name,
            "kind": "safe-regret",
            "action_set": self.action_set,
            "dim": self.dim,
            "T": self.horizon,
            "x_star": list(self.x_star),
            "loss_star": self.loss_star,
            "safety_gap": self.safety_gap,
            "B_norm": self.B_norm,
            "exploration_radius": self.exploration_radius,
            "lambda_minus": json_number(self.lambda_minus),
            "lambda_minus_exact": self.lambda_minus_exact,
            "t_delta": json_number(self.t_delta),
            "beta_T": self.beta_T,
            "T_delta": json_number(self.T_delta),
            "T_0": json_number(self.T_0),
        }


def safe_regret_bounds(instance: SafeRegretInstance) -> SafeRegretBounds:
    """The constants of §2.2/§2.4 for the paper's exploration set D^w (a ball of radius c/(‖B‖S)).

    Raises :class:`InstanceError` (one line, the words ``cbai solve`` uses) when D^w does
    not exist: B = 0 (every action is safe, the ball is unbounded) or a finite action set
    with no arm inside the ball; λ_−, t_δ, T_Δ and T_0 are then undefined.
    """
    from cbai_cli.algorithms.safe.exploration import beta_T, build_exploration_set, t_delta, t_gap, t_zero

    problem = instance.problem
    setting = problem.learner_view()
    truth = instance.truth
    rng = np.random.default_rng(MONTE_CARLO_SEED)
    try:
        explore = build_exploration_set(setting, "ball", rng)
    except ValueError as error:
        raise InstanceError(f"{instance.name}: Safe-LUCB's constants (λ_−, t_δ, T_Δ, T_0) are undefined on this "
                            f"instance: {error}") from None
    lam = explore.lambda_minus
    gap = truth.safety_gap
    return SafeRegretBounds(
        name=instance.name,
        action_set=action_set_label(setting.action_set),
        dim=setting.d,
        horizon=setting.T,
        x_star=tuple(float(v) for v in truth.x_star),
        loss_star=truth.loss_star,
        safety_gap=gap,
        B_norm=setting.B_norm,
        exploration_radius=explore.radius,
        lambda_minus=lam,
        lambda_minus_exact=explore.lambda_minus_exact,
        t_delta=t_delta(setting.L, lam, setting.d, setting.delta),
        beta_T=beta_T(setting),
        T_delta=t_gap(setting, lam, gap) if gap > 0 else None,
        T_0=t_zero(setting, lam),
    )


def lingape_complexity(arms: np.ndarray, theta: np.ndarray, epsilon: float) -> float:
    """LinGapE's H_ε (Xu et al. 2018, §4, the problem complexity of Theorem 2; reconstructed, see docs/safe.md).

    ``H_ε = Σ_a max_{i≠j} p*_a(y_ij) ρ(y_ij) / max(ε, (ε+Δ_i)/3, (ε+Δ_j)/3)²`` with
    ``y_ij = x_i − x_j``, ``w*(y) = argmin ‖w‖₁ s.t. Σ_a w_a x_a = y``, ``p* = |w*|/‖w*‖₁``,
    ``ρ = ‖w*‖₁²`` and ``Δ_i`` the reward gap of arm i. Infinite when two best arms tie
    and ε = 0 (no finite sample tells them apart). ``arms: (K, d)``, ``theta: (d,)``.
    """
    from cbai_cli.algorithms.safe.lingape import l1_ratio

    arms = np.asarray(arms, dtype=float)
    rewards = arms @ theta
    gaps = rewards.max() - rewards
    worst = np.zeros(arms.shape[0])
    for i in range(arms.shape[0]):
        for j in range(i + 1, arms.shape[0]):
            y = arms[i] - arms[j]
            if not np.any(y):
                continue  # identical arms: nothing to distinguish
            denominator = max(epsilon, (epsilon + gaps[i]) / 3, (epsilon + gaps[j]) / 3) ** 2
            if denominator == 0:
                return math.inf
            w = np.abs(l1_ratio(arms, y))
            total = w.sum()
            worst = np.maximum(worst, (w / total) * total**2 / denominator)
    return float(worst.sum())


@dataclass(frozen=True)
class SafeBaiBounds:
    """What ``cbai bound`` reports for a ``safe-bai`` instance (§3.3, §4.1); arrays are per arm."""

    name: str
    n_arms: int
    dim: int
    eta0: float
    epsilon: float
    safety_values: tuple[float, ...]
    true_gamma: tuple[float, ...]
    rewards: tuple[float, ...]
    safe_rewards: tuple[float, ...]
    optimal_arm: int
    unconstrained_best_arm: int
    gamma_FE: float
    complexity_full: float
    complexity_safe: float

    def to_json(self) -> dict:
        return {
            "instance": self.name,
            "kind": "safe-bai",
            "n_arms": self.n_arms,
            "dim": self.dim,
            "eta0": self.eta0,
            "epsilon": self.epsilon,
            "safety_values": list(self.safety_values),
            "true_gamma": list(self.true_gamma),
            "rewards": list(self.rewards),
            "safe_rewards": list(self.safe_rewards),
            "optimal_arm": self.optimal_arm,
            "unconstrained_best_arm": self.unconstrained_best_arm,
            "gamma_FE": self.gamma_FE,
            "lingape_complexity": json_number(self.complexity_full),
            "lingape_complexity_safe": json_number(self.complexity_safe),
        }


def safe_bai_bounds(instance: SafeBaiInstance) -> SafeBaiBounds:
    """γ_k, k* and H_ε (full arms and at the true safe scales) of a safe-bai instance."""
    problem, setting = instance.problem, instance.problem.setting
    truth = instance.truth
    scaled = truth.gamma[:, None] * setting.arms
    return SafeBaiBounds(
        name=instance.name,
        n_arms=setting.K,
        dim=setting.d,
        eta0=setting.eta0,
        epsilon=setting.epsilon,
        safety_values=tuple(map(float, truth.safety_values)),
        true_gamma=tuple(map(float, truth.gamma)),
        rewards=tuple(map(float, truth.rewards)),
        safe_rewards=tuple(map(float, truth.safe_rewards)),
        optimal_arm=truth.optimal_safe_arm,
        unconstrained_best_arm=int(np.argmax(truth.rewards)),
        gamma_FE=setting.gamma_FE,
        complexity_full=lingape_complexity(setting.arms, problem.theta_star, setting.epsilon),
        complexity_safe=lingape_complexity(scaled, problem.theta_star, setting.epsilon),
    )
