"""Problem definitions, instance builders and ground truths (spec safe.md §2.1, §2.8, §3.5, §4.1, §4.7).

Every problem is a frozen dataclass that validates itself and raises ``ValueError`` naming
the offending field. Arrays are copied and made read-only, so a problem cannot change after
construction. Each problem has a ``learner_view()`` without the unknown parameters: that is
what the algorithms receive; only :mod:`.environment` and the truth functions here read
``mu_star`` / ``theta_star``.

Conventions:

- Safe-LUCB minimises a **loss** ``μ*ᵀx``; safety is ``xᵀ B μ* ≤ c`` (§2.1).
- Safe-LinGapE maximises a reward ``γ x_kᵀθ*``; safety is ``γ x_kᵀμ* ≥ η₀`` with ``η₀ < 0``
  (§4.1, orientation [RECON]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np

from cbai_cli.validation import array as _array
from cbai_cli.validation import integer as _int_at_least
from cbai_cli.validation import nonnegative as _nonneg
from cbai_cli.validation import positive as _positive
from cbai_cli.validation import probability as _prob

__all__ = [
    "BoxSet",
    "BallSet",
    "FiniteSet",
    "ActionSet",
    "SafeRegretSetting",
    "SafeRegretProblem",
    "LinearBaiProblem",
    "SafeBaiSetting",
    "SafeBaiProblem",
    "RegretTruth",
    "SafeBaiTruth",
    "regret_truth",
    "safe_bai_truth",
    "optimal_action",
    "instance_a",
    "instance_b",
    "soare_arms",
    "lingape_instance",
    "price_of_safety_instance",
    "true_gamma",
    "worst_case_safe_scale",
]

# --------------------------------------------------------------------------- helpers


def _set(obj, name: str, value) -> None:
    object.__setattr__(obj, name, value)


_NORM_TOL = 1e-9  # slack when checking the known bounds S, L against the truth (round-off)

# --------------------------------------------------------------------------- action sets


@dataclass(frozen=True)
class BoxSet:
    """``D_0 = [−w, w]^d`` (the authors' setting is ``w = 1``, §2.5b)."""

    d: int
    half_width: float = 1.0

    def __post_init__(self):
        _int_at_least(self.d, "action_set.d", 1)
        _positive(self.half_width, "action_set.half_width")

    @property
    def max_norm(self) -> float:
        """``max_{x ∈ D_0} ‖x‖₂ = w sqrt(d)``."""
        return self.half_width * math.sqrt(self.d)

    def contains(self, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        """Membership of rows of ``X: (m, d)`` (or one ``(d,)`` point)."""
        return np.all(np.abs(X) <= self.half_width + tol, axis=-1)


@dataclass(frozen=True)
class BallSet:
    """``D_0 = {x : ‖x‖₂ ≤ r}`` (§2.5c)."""

    d: int
    radius: float = 1.0

    def __post_init__(self):
        _int_at_least(self.d, "action_set.d", 1)
        _positive(self.radius, "action_set.radius")

    @property
    def max_norm(self) -> float:
        return float(self.radius)

    def contains(self, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        return np.linalg.norm(X, axis=-1) <= self.radius + tol


@dataclass(frozen=True, eq=False)
class FiniteSet:
    """A finite arm list ``arms: (K, d)`` (§2.5a)."""

    arms: np.ndarray

    def __post_init__(self):
        arms = _array(self.arms, "action_set.arms", 2)
        if arms.shape[0] < 1 or arms.shape[1] < 1:
            raise ValueError(f"action_set.arms: need at least one arm of dimension >= 1, got {arms.shape}")
        _set(self, "arms", arms)

    @property
    def d(self) -> int:
        return int(self.arms.shape[1])

    @property
    def max_norm(self) -> float:
        return float(np.max(np.linalg.norm(self.arms, axis=1)))

    def contains(self, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        X = np.atleast_2d(X)
        dist = np.min(np.linalg.norm(X[:, None, :] - self.arms[None], axis=2), axis=1)
        return dist <= tol


ActionSet = Union[BoxSet, BallSet, FiniteSet]

# --------------------------------------------------------------------------- safe regret (Safe-LUCB)


@dataclass(frozen=True, eq=False)
class SafeRegretSetting:
    """What a Safe-LUCB learner knows (§2.2): everything except ``μ*``.

    ``B: (d, d)``; ``c > 0`` threshold; ``T`` horizon; bounds ``S ≥ ‖μ*‖``, ``L ≥ max ‖x‖``,
    ``R`` sub-Gaussian scale used in the radius; ridge ``lam``; confidence ``delta``.
    """

    action_set: ActionSet
    B: np.ndarray
    c: float
    T: int
    S: float
    L: float
    R: float
    lam: float
    delta: float

    def __post_init__(self):
        if not isinstance(self.action_set, (BoxSet, BallSet, FiniteSet)):
            raise ValueError(f"action_set must be BoxSet, BallSet or FiniteSet, got {type(self.action_set).__name__}")
        d = self.action_set.d
        B = _array(self.B, "B", 2)
        if B.shape != (d, d):
            raise ValueError(f"B: expected shape ({d}, {d}), got {B.shape}")
        _set(self, "B", B)
        _positive(self.c, "c")  # c > 0 makes 0 safe and the safe set non-empty (§2.1 A3)
        _int_at_least(self.T, "T", 1)
        _positive(self.S, "S")
        _positive(self.L, "L")
        _nonneg(self.R, "R")
        _positive(self.lam, "lam")
        _prob(self.delta, "delta")
        if self.L < self.action_set.max_norm - _NORM_TOL:
            raise ValueError(f"L={self.L} is below max ‖x‖ = {self.action_set.max_norm:.6g} over the action set")

    @property
    def d(self) -> int:
        return self.action_set.d

    @property
    def B_norm(self) -> float:
        """Spectral norm ``‖B‖``."""
        return float(np.linalg.norm(self.B, 2))


@dataclass(frozen=True, eq=False)
class SafeRegretProblem:
    """A safe linear bandit regret instance (§2.1): the setting plus the truth.

    ``mu_star: (d,)`` is the unknown loss parameter (loss ``μ*ᵀx + N(0, noise_sd²)``);
    the safety constraint is ``xᵀ B μ* ≤ c``.
    """

    action_set: ActionSet
    mu_star: np.ndarray
    B: np.ndarray
    c: float
    T: int
    noise_sd: float
    S: float
    L: float
    R: float
    lam: float
    delta: float
    name: str = ""

    def __post_init__(self):
        view = self.learner_view()  # validates everything except mu_star / noise_sd
        _set(self, "B", view.B)
        mu = _array(self.mu_star, "mu_star", 1)
        if mu.shape != (view.d,):
            raise ValueError(f"mu_star: expected shape ({view.d},), got {mu.shape}")
        _set(self, "mu_star", mu)
        _nonneg(self.noise_sd, "noise_sd")
        if np.linalg.norm(mu) > self.S + _NORM_TOL:
            raise ValueError(f"S={self.S} is below ‖mu_star‖ = {np.linalg.norm(mu):.6g} (Assumption A2)")

    def learner_view(self) -> SafeRegretSetting:
        return SafeRegretSetting(
            action_set=self.action_set, B=self.B, c=self.c, T=self.T, S=self.S,
            L=self.L, R=self.R, lam=self.lam, delta=self.delta,
        )

    @property
    def d(self) -> int:
        return self.action_set.d


def optimal_action(action_set: ActionSet, mu: np.ndarray, B: np.ndarray, c: float) -> np.ndarray:
    """``x* = argmin {μᵀx : x ∈ D_0, xᵀBμ ≤ c}`` (§2.1), shape ``(d,)``.

    Box: an LP (HiGHS). Ball: closed form (unconstrained minimiser ``−rμ/‖μ‖`` if safe,
    otherwise the best point of the sphere on the constraint hyperplane). Finite: enumeration.
    """
    mu = np.asarray(mu, dtype=float)
    a = B @ mu  # the constraint is aᵀx ≤ c
    if isinstance(action_set, BoxSet):
        from scipy.optimize import linprog

        w = action_set.half_width
        res = linprog(mu, A_ub=a[None, :], b_ub=[c], bounds=[(-w, w)] * action_set.d, method="highs")
        if res.status != 0:
            raise RuntimeError(f"linprog failed: {res.message}")
        return np.asarray(res.x, dtype=float)
    if isinstance(action_set, BallSet):
        r = action_set.radius
        nmu = np.linalg.norm(mu)
        x = -r * mu / nmu if nmu > 0 else np.zeros_like(mu)
        if x @ a <= c:
            return x
        # Constraint active: x = (c/‖a‖²) a + z, z ⊥ a, ‖z‖ ≤ sqrt(r² − c²/‖a‖²); minimise μᵀz.
        na2 = a @ a
        base = (c / na2) * a
        rho = math.sqrt(max(r * r - c * c / na2, 0.0))
        p = mu - (mu @ a / na2) * a
        npn = np.linalg.norm(p)
        return base - rho * p / npn if npn > 0 else base
    if isinstance(action_set, FiniteSet):
        X = action_set.arms
        safe = X @ a <= c
        if not safe.any():
            raise ValueError("no arm of the finite action set is safe")
        idx = np.flatnonzero(safe)
        return X[idx[int(np.argmin(X[idx] @ mu))]].copy()
    raise TypeError(f"unknown action set {type(action_set).__name__}")


@dataclass(frozen=True, eq=False)
class RegretTruth:
    """Ground truth of a :class:`SafeRegretProblem` (§2.1–2.2).

    ``x_star: (d,)``; ``loss_star = μ*ᵀx*``; ``safety_gap Δ = c − x*ᵀBμ*``.
    """

    x_star: np.ndarray
    loss_star: float
    safety_gap: float


def regret_truth(problem: SafeRegretProblem) -> RegretTruth:
    x = optimal_action(problem.action_set, problem.mu_star, problem.B, problem.c)
    gap = problem.c - float(x @ problem.B @ problem.mu_star)
    # The LP is solved to ~1e-9; a gap that small means the constraint is active (Δ = 0).
    if abs(gap) < 1e-9:
        gap = 0.0
    return RegretTruth(x_star=x, loss_star=float(problem.mu_star @ x), safety_gap=gap)


_MU_AB = np.array([20.8 / 23.0, 1.0 / 23.0])


def instance_a(T: int = 100_000) -> SafeRegretProblem:
    """Appendix F instance A (authors' ``CLBwithD_0.m``, §2.8): Δ > 0, ``x* = (−1, −1)``."""
    return SafeRegretProblem(
        action_set=BoxSet(d=2, half_width=1.0), mu_star=_MU_AB,
        B=np.array([[3.0, 9.0], [9.0, 2.0]]) / 5.0, c=0.9, T=T, noise_sd=0.01,
        S=1.0, L=math.sqrt(2.0), R=1.0, lam=1.0, delta=0.01, name="safe-lucb-A",
    )


def instance_b(T: int = 100_000) -> SafeRegretProblem:
    """Appendix F instance B (authors' ``intersectCLB.m``, §2.8): Δ = 0, x* on the constraint line."""
    return SafeRegretProblem(
        action_set=BoxSet(d=2, half_width=1.0), mu_star=_MU_AB,
        B=np.diag([-1.0, 2.0]), c=0.7, T=T, noise_sd=0.01,
        S=1.0, L=math.sqrt(2.0), R=1.0, lam=1.0, delta=0.01, name="safe-lucb-B",
    )

# --------------------------------------------------------------------------- best-arm identification


def soare_arms(d: int, omega: float) -> np.ndarray:
    """Soare et al. (2014) arms: ``e_1..e_d`` and ``x_{d+1} = (cos ω, sin ω, 0, …)``. Shape ``(d+1, d)``."""
    _int_at_least(d, "d", 2)
    extra = np.zeros(d)
    extra[0], extra[1] = math.cos(omega), math.sin(omega)
    return np.vstack([np.eye(d), extra])


@dataclass(frozen=True, eq=False)
class LinearBaiProblem:
    """Fixed-confidence (ε, δ) linear best-arm identification without safety (§3.1).

    ``arms: (K, d)`` spanning R^d, ``theta_star: (d,)``, Gaussian noise ``sigma``; the learner
    knows ``S ≥ ‖θ*‖``, ``lam`` and uses ``sigma`` as the sub-Gaussian scale.
    """

    arms: np.ndarray
    theta_star: np.ndarray
    sigma: float
    epsilon: float
    delta: float
    lam: float
    S: float
    name: str = ""

    def __post_init__(self):
        arms = _array(self.arms, "arms", 2)
        K, d = arms.shape
        if K < 2:
            raise ValueError(f"arms: need at least 2 arms, got {K}")
        if np.linalg.matrix_rank(arms) < d:
            raise ValueError("arms: must span R^d")
        theta = _array(self.theta_star, "theta_star", 1)
        if theta.shape != (d,):
            raise ValueError(f"theta_star: expected shape ({d},), got {theta.shape}")
        _set(self, "arms", arms)
        _set(self, "theta_star", theta)
        _nonneg(self.sigma, "sigma")
        _nonneg(self.epsilon, "epsilon")
        _prob(self.delta, "delta")
        _positive(self.lam, "lam")
        _positive(self.S, "S")
        if np.linalg.norm(theta) > self.S + _NORM_TOL:
            raise ValueError(f"S={self.S} is below ‖theta_star‖ = {np.linalg.norm(theta):.6g}")

    @property
    def K(self) -> int:
        return int(self.arms.shape[0])

    @property
    def d(self) -> int:
        return int(self.arms.shape[1])

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self.arms @ self.theta_star))

    @property
    def gaps(self) -> np.ndarray:
        """``Δ_k = max_j x_jᵀθ* − x_kᵀθ*``, shape ``(K,)``."""
        r = self.arms @ self.theta_star
        return r.max() - r


def lingape_instance(d: int = 2, omega: float = 0.01, epsilon: float = 0.0, delta: float = 0.05) -> LinearBaiProblem:
    """LinGapE's synthetic Soare instance (§3.5, §7.2 C3): ``θ* = (2, 0, …)``, σ = 1, λ = 1, S = 2.

    The authors' ratio script uses ε = 0; their greedy script ε = 2(1 − cos 0.01).
    """
    theta = np.zeros(d)
    theta[0] = 2.0
    return LinearBaiProblem(
        arms=soare_arms(d, omega), theta_star=theta, sigma=1.0, epsilon=epsilon,
        delta=delta, lam=1.0, S=2.0, name=f"lingape-soare-d{d}",
    )


@dataclass(frozen=True, eq=False)
class SafeBaiSetting:
    """What a Safe-LinGapE learner knows (§4.2): everything except ``θ*`` and ``μ*``.

    ``arms: (K, d)``; safety ``γ x_kᵀμ* ≥ eta0`` (``eta0 < 0``); noises ``sigma`` (reward) and
    ``sigma_safe`` (safety signal); ``epsilon``; ``delta_r`` (BAI error); ``delta_s`` (safety
    confidence δ'_s); ``lam``; forced exploration of ``T_FE`` rounds at scale ``gamma_FE``;
    norm bounds ``S_theta ≥ ‖θ*‖``, ``S_mu ≥ ‖μ*‖``.
    """

    arms: np.ndarray
    eta0: float
    sigma: float
    sigma_safe: float
    epsilon: float
    delta_r: float
    delta_s: float
    lam: float
    T_FE: int
    gamma_FE: float
    S_theta: float
    S_mu: float

    def __post_init__(self):
        arms = _array(self.arms, "arms", 2)
        K, d = arms.shape
        if K < 2:
            raise ValueError(f"arms: need at least 2 arms, got {K}")
        if np.linalg.matrix_rank(arms) < d:
            raise ValueError("arms: must span R^d")
        _set(self, "arms", arms)
        if not (isinstance(self.eta0, (int, float, np.floating)) and self.eta0 < 0):
            raise ValueError(f"eta0 must be < 0 (so that γ = 0 is safe), got {self.eta0!r}")
        _nonneg(self.sigma, "sigma")
        _nonneg(self.sigma_safe, "sigma_safe")
        _nonneg(self.epsilon, "epsilon")
        _prob(self.delta_r, "delta_r")
        _prob(self.delta_s, "delta_s")
        _positive(self.lam, "lam")
        _int_at_least(self.T_FE, "T_FE", 0)
        if not (isinstance(self.gamma_FE, (int, float, np.floating)) and 0 < self.gamma_FE <= 1):
            raise ValueError(f"gamma_FE must be in (0, 1], got {self.gamma_FE!r}")
        _positive(self.S_theta, "S_theta")
        _positive(self.S_mu, "S_mu")

    @property
    def K(self) -> int:
        return int(self.arms.shape[0])

    @property
    def d(self) -> int:
        return int(self.arms.shape[1])


@dataclass(frozen=True, eq=False)
class SafeBaiProblem:
    """Safe linear best-arm identification with partial pulls (§4.1): setting plus truth.

    Playing ``γ x_k`` returns reward ``γ x_kᵀθ* + N(0, σ²)`` and safety signal
    ``γ x_kᵀμ* + N(0, σ_safe²)``; the pull is unsafe iff ``γ x_kᵀμ* < η₀``.
    """

    arms: np.ndarray
    theta_star: np.ndarray
    mu_star: np.ndarray
    eta0: float
    sigma: float
    sigma_safe: float
    epsilon: float
    delta_r: float
    delta_s: float
    lam: float
    T_FE: int
    gamma_FE: float
    S_theta: float
    S_mu: float
    name: str = ""

    def __post_init__(self):
        view = self.learner_view()
        _set(self, "arms", view.arms)
        d = view.d
        theta = _array(self.theta_star, "theta_star", 1)
        mu = _array(self.mu_star, "mu_star", 1)
        if theta.shape != (d,):
            raise ValueError(f"theta_star: expected shape ({d},), got {theta.shape}")
        if mu.shape != (d,):
            raise ValueError(f"mu_star: expected shape ({d},), got {mu.shape}")
        if np.linalg.norm(theta) > self.S_theta + _NORM_TOL:
            raise ValueError(f"S_theta={self.S_theta} is below ‖theta_star‖ = {np.linalg.norm(theta):.6g}")
        if np.linalg.norm(mu) > self.S_mu + _NORM_TOL:
            raise ValueError(f"S_mu={self.S_mu} is below ‖mu_star‖ = {np.linalg.norm(mu):.6g}")
        _set(self, "theta_star", theta)
        _set(self, "mu_star", mu)

    def learner_view(self) -> SafeBaiSetting:
        return SafeBaiSetting(
            arms=self.arms, eta0=self.eta0, sigma=self.sigma, sigma_safe=self.sigma_safe,
            epsilon=self.epsilon, delta_r=self.delta_r, delta_s=self.delta_s, lam=self.lam,
            T_FE=self.T_FE, gamma_FE=self.gamma_FE, S_theta=self.S_theta, S_mu=self.S_mu,
        )

    @property
    def K(self) -> int:
        return int(self.arms.shape[0])

    @property
    def d(self) -> int:
        return int(self.arms.shape[1])


def true_gamma(safety_values: np.ndarray, eta0: float) -> np.ndarray:
    """Maximal safe fraction ``γ_k = min{1, |η₀| / [−x_kᵀμ*]_+}`` with ``1/0 = ∞`` (§4.1). ``(K,)`` → ``(K,)``.

    The same formula, fed with the lower confidence bound ``l_k`` in place of ``x_kᵀμ*``,
    gives the conservative ``γ̄_k`` of §4.3 step 4.
    """
    s = np.asarray(safety_values, dtype=float)
    neg = np.maximum(-s, 0.0)
    with np.errstate(divide="ignore"):
        ratio = np.where(neg > 0, abs(eta0) / np.where(neg > 0, neg, 1.0), np.inf)
    return np.minimum(1.0, ratio)


@dataclass(frozen=True, eq=False)
class SafeBaiTruth:
    """Ground truth of a :class:`SafeBaiProblem` (§4.1). All arrays ``(K,)``.

    ``safety_values = x_kᵀμ*``; ``gamma = γ_k``; ``safe_rewards = γ_k x_kᵀθ*``;
    ``optimal_safe_arm k* = argmax_k γ_k x_kᵀθ*``.
    """

    safety_values: np.ndarray
    gamma: np.ndarray
    rewards: np.ndarray
    safe_rewards: np.ndarray
    optimal_safe_arm: int


def safe_bai_truth(problem: SafeBaiProblem) -> SafeBaiTruth:
    s = problem.arms @ problem.mu_star
    g = true_gamma(s, problem.eta0)
    r = problem.arms @ problem.theta_star
    sr = g * r
    return SafeBaiTruth(safety_values=s, gamma=g, rewards=r, safe_rewards=sr, optimal_safe_arm=int(np.argmax(sr)))


def worst_case_safe_scale(arms: np.ndarray, eta0: float, S_mu: float) -> float:
    """``γ_0 = min(1, |η₀| / (S_μ max_k ‖x_k‖))``: safe for every ``‖μ‖ ≤ S_μ`` (§4.3 step 1, [PROPOSAL])."""
    return float(min(1.0, abs(eta0) / (S_mu * np.max(np.linalg.norm(arms, axis=1)))))


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
    """The adapted Soare instance of "Price of Safety" §5 (spec §4.7, defaults §4.2).

    Arms ``e_1..e_d, (cos ω, sin ω, 0, …)``; ``θ* = (2, 0, …)``; ``μ* = (0, −1, 0, …)``;
    ``ε = 2(1 − cos ω)``; λ = 1; ``S_θ = 2``, ``S_μ = 1`` ([PROPOSAL]: the true norms).
    ``T_FE`` defaults to ``200 K`` ([PROPOSAL]: the paper's ``4 × 200`` at K = 4, read as 200
    rounds per arm so that it scales with d in Fig. 1(c)).
    """
    arms = soare_arms(d, omega)
    K = arms.shape[0]
    theta = np.zeros(d)
    theta[0] = 2.0
    mu = np.zeros(d)
    mu[1] = -1.0
    return SafeBaiProblem(
        arms=arms, theta_star=theta, mu_star=mu, eta0=eta0, sigma=sigma, sigma_safe=sigma_safe,
        epsilon=2.0 * (1.0 - math.cos(omega)), delta_r=delta_r, delta_s=delta_s, lam=1.0,
        T_FE=200 * K if T_FE is None else T_FE, gamma_FE=gamma_FE, S_theta=2.0, S_mu=1.0,
        name=f"soare-safe-d{d}",
    )
