"""The papers' instances, as library problems.

- Safe-LUCB, Appendix F of Amani, Alizadeh, Thrampoulidis (2019), as set in the authors'
  public MATLAB code (``CLBwithD_0.m``, ``intersectCLB.m``): :func:`instance_a`,
  :func:`instance_b`.
- The hard instance of Soare, Lazaric, Munos (2014) that LinGapE (Xu, Honda, Sugiyama 2018)
  is evaluated on: :func:`soare_arms`, :func:`lingape_instance`.
- Its safe adaptation of "Price of Safety in Linear Best Arm Identification", §5:
  :func:`price_of_safety_instance`.
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.kinds.safe.action_sets import BoxSet
from cbai_cli.kinds.safe.problems import LinearBaiProblem, SafeBaiProblem, SafeBaiSetting, SafeRegretProblem, SafeRegretSetting
from cbai_cli.contracts.validation import integer

__all__ = ["instance_a", "instance_b", "soare_arms", "lingape_instance", "price_of_safety_instance"]

_MU_AB = np.array([20.8 / 23.0, 1.0 / 23.0])


def _appendix_f_setting(B: np.ndarray, c: float, T: int) -> SafeRegretSetting:
    """The box [−1, 1]² and the constants of both Appendix F instances (the authors' code):
    S = 1, L = √2, R = 1, λ = 1, δ = 0.01."""
    return SafeRegretSetting(action_set=BoxSet(d=2, half_width=1.0), B=B, c=c, T=T, S=1.0, L=math.sqrt(2.0), R=1.0,
                             lam=1.0, delta=0.01)


def instance_a(T: int = 100_000) -> SafeRegretProblem:
    """Appendix F instance with Δ > 0 (the authors' ``CLBwithD_0.m``): box [−1, 1]²,
    μ* = (20.8, 1)/23, B = [[3, 9], [9, 2]]/5, c = 0.9, noise N(0, 0.01²); x* = (−1, −1)."""
    return SafeRegretProblem(_appendix_f_setting(np.array([[3.0, 9.0], [9.0, 2.0]]) / 5.0, 0.9, T), mu_star=_MU_AB,
                             noise_sd=0.01, name="safe-lucb-A")


def instance_b(T: int = 100_000) -> SafeRegretProblem:
    """Appendix F instance with Δ = 0 (the authors' ``intersectCLB.m``): the same box and μ*,
    B = diag(−1, 2), c = 0.7; x* lies on the constraint line."""
    return SafeRegretProblem(_appendix_f_setting(np.diag([-1.0, 2.0]), 0.7, T), mu_star=_MU_AB, noise_sd=0.01,
                             name="safe-lucb-B")


def soare_arms(d: int, omega: float) -> np.ndarray:
    """Soare et al. (2014) arms e_1..e_d and x_{d+1} = (cos ω, sin ω, 0, …): (d+1, d)."""
    integer(d, "d", 2)
    extra = np.zeros(d)
    extra[0], extra[1] = math.cos(omega), math.sin(omega)
    return np.vstack([np.eye(d), extra])


def lingape_instance(d: int = 2, omega: float = 0.01, epsilon: float = 0.0, delta: float = 0.05) -> LinearBaiProblem:
    """LinGapE's synthetic Soare instance (Xu et al. 2018, experiments; the authors' scripts):
    θ* = (2, 0, …), σ = 1, λ = 1, S = 2.

    The authors' ratio-rule script uses ε = 0; their greedy script ε = 2(1 − cos 0.01).
    """
    theta = np.zeros(d)
    theta[0] = 2.0
    return LinearBaiProblem(
        arms=soare_arms(d, omega), theta_star=theta, sigma=1.0, epsilon=epsilon,
        delta=delta, lam=1.0, S=2.0, name=f"lingape-soare-d{d}",
    )


#: The rows of "Price of Safety" Table 1: (algorithm, options) of LinGapE and Safe-LinGapE
#: with each selection rule and, for Safe-LinGapE, static and dynamic safe scales.
TABLE1_RUNS: tuple[tuple[str, dict[str, str]], ...] = (
    ("lingape", {}), ("lingape", {"rule": "ratio"}), ("safe-lingape", {}), ("safe-lingape", {"updates": "dynamic"}),
    ("safe-lingape", {"rule": "ratio"}), ("safe-lingape", {"rule": "ratio", "updates": "dynamic"}),
)


def price_of_safety_instance(
    d: int = 3,
    omega: float = 0.1,
    eta0: float = -0.5,
    T_FE: int | None = None,
    gamma_FE: float = 0.2,
    delta_r: float = 0.001,
    delta_s: float = 0.001,
    sigma: float = 1.0,
    sigma_safe: float = 0.1,
) -> SafeBaiProblem:
    """The adapted Soare instance of "Price of Safety" §5, with that section's defaults.

    Arms e_1..e_d, (cos ω, sin ω, 0, …); θ* = (2, 0, …); μ* = (0, −1, 0, …); ε = 2(1 − cos ω);
    λ = 1; S_θ = 2 and S_μ = 1, the true norms (our choice: the paper does not give them).
    ``T_FE`` defaults to 200·K (our reading of the paper's 4 × 200 at K = 4 as 200 rounds per
    arm, so that it scales with d in its Figure 1(c)).
    """
    arms = soare_arms(d, omega)
    K = arms.shape[0]
    theta = np.zeros(d)
    theta[0] = 2.0
    mu = np.zeros(d)
    mu[1] = -1.0
    setting = SafeBaiSetting(
        arms=arms, eta0=eta0, sigma=sigma, sigma_safe=sigma_safe, epsilon=2.0 * (1.0 - math.cos(omega)),
        delta_r=delta_r, delta_s=delta_s, lam=1.0, T_FE=200 * K if T_FE is None else T_FE, gamma_FE=gamma_FE,
        S_theta=2.0, S_mu=1.0,
    )
    return SafeBaiProblem(setting, theta_star=theta, mu_star=mu, name=f"soare-safe-d{d}")
