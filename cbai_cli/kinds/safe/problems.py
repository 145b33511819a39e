"""What a safe-bandit learner knows, and the problems that add the hidden truth.

Every setting and problem is a frozen dataclass that validates itself and raises
``ValueError`` naming the offending field. Arrays are copied and made read-only, so neither can
change after construction. A problem holds its setting, what the learner knows, and adds the
unknown parameters; ``learner_view()`` is that setting, which is what the algorithms receive;
only the environments (:mod:`.environment`) and the truths (:mod:`.truths`) read
``mu_star`` / ``theta_star``.

Conventions:

- Safe-LUCB minimises a **loss** μ*ᵀx; safety is xᵀBμ* ≤ c with c > 0 (Amani, Alizadeh,
  Thrampoulidis 2019, §2, eq. (1)).
- LinGapE (Xu, Honda, Sugiyama 2018) identifies the arm of largest reward x_kᵀθ*.
- Safe-LinGapE maximises a reward γ x_kᵀθ* over partial pulls γ ∈ [0, 1]; safety is
  γ x_kᵀμ* ≥ η₀ with η₀ < 0, so that γ = 0 is safe ("Price of Safety in Linear Best Arm
  Identification", §3.3; the orientation ≥ is the one that makes its §5 instance meaningful).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from cbai_cli.kinds.safe.action_sets import ACTION_SET_KINDS, ActionSet
from cbai_cli.contracts.read_only import ReadOnlyWhenUnpickled
from cbai_cli.contracts.validation import NORM_TOL, array, integer, nonnegative, positive, probability, replace_field

__all__ = [
    "SafeRegretSetting",
    "SafeRegretProblem",
    "LinearBaiProblem",
    "SafeBaiSetting",
    "SafeBaiProblem",
    "safe_scales",
    "worst_case_safe_scale",
]


def _check_shape(vector: np.ndarray, name: str, d: int) -> None:
    if vector.shape != (d,):
        raise ValueError(f"{name}: expected shape ({d},), got {vector.shape}")


def _check_norm_bound(vector: np.ndarray, name: str, bound: float, bound_name: str) -> None:
    """The known bound on an unknown parameter must hold (up to round-off)."""
    if np.linalg.norm(vector) > bound + NORM_TOL:
        raise ValueError(f"{bound_name}={bound} is below ‖{name}‖ = {np.linalg.norm(vector):.6g}")



# --------------------------------------------------------------------------- safe regret (Safe-LUCB)


@dataclass(frozen=True, eq=False)
class SafeRegretSetting(ReadOnlyWhenUnpickled):
    """What a Safe-LUCB learner knows (Amani et al. 2019, §2 and Assumptions 1–3): all but μ*.

    Attributes:
        action_set: D_0.
        B: (d, d) constraint matrix.
        c: threshold > 0.
        T: horizon.
        S: bound S ≥ ‖μ*‖.
        L: bound L ≥ max_{x ∈ D_0} ‖x‖.
        R: sub-Gaussian scale of the noise, used in the radius.
        lam: ridge λ.
        delta: confidence δ.
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

    def __post_init__(self) -> None:
        if not isinstance(self.action_set, ActionSet):
            raise ValueError(f"action_set must be an action set ({', '.join(ACTION_SET_KINDS)}), "
                             f"got {type(self.action_set).__name__}")
        d = self.action_set.d
        B = array(self.B, "B", 2)
        if B.shape != (d, d):
            raise ValueError(f"B: expected shape ({d}, {d}), got {B.shape}")
        replace_field(self, "B", B)
        positive(self.c, "c")  # c > 0 makes 0 safe and the safe set non-empty (Assumption 3)
        integer(self.T, "T", 1)
        positive(self.S, "S")
        positive(self.L, "L")
        nonnegative(self.R, "R")
        positive(self.lam, "lam")
        probability(self.delta, "delta")
        if self.L < self.action_set.max_norm - NORM_TOL:
            raise ValueError(f"L={self.L} is below max ‖x‖ = {self.action_set.max_norm:.6g} over the action set")

    @property
    def d(self) -> int:
        return self.action_set.d

    @property
    def B_norm(self) -> float:
        """Spectral norm ‖B‖."""
        return float(np.linalg.norm(self.B, 2))


class _SettingAndTruth(ReadOnlyWhenUnpickled):
    """A problem: what the learner knows (its ``setting``, a frozen dataclass) and the hidden
    truth beside it."""

    setting: Any

    def learner_view(self) -> Any:
        """What the algorithms receive: the setting, without the truth."""
        return self.setting

    def with_setting(self, **changes: object) -> Any:
        """The same truth with the setting's fields ``changes`` replaced, validated again."""
        return dataclasses.replace(self, setting=dataclasses.replace(self.setting, **changes))

    @property
    def d(self) -> int:
        return self.setting.d


@dataclass(frozen=True, eq=False)
class SafeRegretProblem(_SettingAndTruth):
    """A safe linear bandit regret instance (Amani et al. 2019, §2): what the learner knows
    (``setting``) and the truth.

    ``mu_star``: (d,) is the unknown loss parameter (loss μ*ᵀx + N(0, noise_sd²)); the
    safety constraint is xᵀBμ* ≤ c.
    """

    setting: SafeRegretSetting
    mu_star: np.ndarray
    noise_sd: float
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.setting, SafeRegretSetting):
            raise ValueError(f"setting must be a SafeRegretSetting, got {type(self.setting).__name__}")
        mu = array(self.mu_star, "mu_star", 1)
        _check_shape(mu, "mu_star", self.d)
        replace_field(self, "mu_star", mu)
        nonnegative(self.noise_sd, "noise_sd")
        S = self.setting.S
        if np.linalg.norm(mu) > S + NORM_TOL:
            raise ValueError(f"S={S} is below ‖mu_star‖ = {np.linalg.norm(mu):.6g} (Assumption 2)")



# --------------------------------------------------------------------------- best-arm identification


def _spanning_arms(value: object) -> np.ndarray:
    """``arms``: a read-only (K ≥ 2, d) array whose rows span R^d."""
    arms = array(value, "arms", 2)
    if arms.shape[0] < 2:
        raise ValueError(f"arms: need at least 2 arms, got {arms.shape[0]}")
    if np.linalg.matrix_rank(arms) < arms.shape[1]:
        raise ValueError("arms: must span R^d")
    return arms


class _ArmsShape(ReadOnlyWhenUnpickled):
    """``K`` and ``d`` of a problem with an ``arms``: (K, d) field."""

    arms: np.ndarray

    @property
    def K(self) -> int:
        return int(self.arms.shape[0])

    @property
    def d(self) -> int:
        return int(self.arms.shape[1])


@dataclass(frozen=True, eq=False)
class LinearBaiProblem(_ArmsShape):
    """Fixed-confidence (ε, δ) linear best-arm identification without safety (Xu et al. 2018, §2).

    ``arms``: (K, d) spanning R^d, ``theta_star``: (d,), Gaussian noise ``sigma``; the learner
    knows S ≥ ‖θ*‖, ``lam`` and uses ``sigma`` as the sub-Gaussian scale.
    """

    arms: np.ndarray
    theta_star: np.ndarray
    sigma: float
    epsilon: float
    delta: float
    lam: float
    S: float
    name: str = ""

    def __post_init__(self) -> None:
        arms = _spanning_arms(self.arms)
        theta = array(self.theta_star, "theta_star", 1)
        _check_shape(theta, "theta_star", arms.shape[1])
        replace_field(self, "arms", arms)
        replace_field(self, "theta_star", theta)
        nonnegative(self.sigma, "sigma")
        nonnegative(self.epsilon, "epsilon")
        probability(self.delta, "delta")
        positive(self.lam, "lam")
        positive(self.S, "S")
        _check_norm_bound(theta, "theta_star", self.S, "S")

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self.arms @ self.theta_star))

    @property
    def gaps(self) -> np.ndarray:
        """(K,) Δ_k = max_j x_jᵀθ* − x_kᵀθ*."""
        r = self.arms @ self.theta_star
        return r.max() - r


@dataclass(frozen=True, eq=False)
class SafeBaiSetting(_ArmsShape):
    """What a Safe-LinGapE learner knows ("Price of Safety" §3.3 and §5): all but θ* and μ*.

    Attributes:
        arms: (K, d).
        eta0: η₀ < 0; γ·x_k is safe iff γ x_kᵀμ* ≥ η₀.
        sigma: reward noise σ.
        sigma_safe: safety-signal noise σ_safe.
        epsilon: ε of the (ε, δ_r) criterion.
        delta_r: BAI error probability δ_r.
        delta_s: safety confidence δ'_s.
        lam: ridge λ.
        T_FE: forced-exploration rounds.
        gamma_FE: forced-exploration scale.
        S_theta: bound S_θ ≥ ‖θ*‖.
        S_mu: bound S_μ ≥ ‖μ*‖.
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

    def __post_init__(self) -> None:
        replace_field(self, "arms", _spanning_arms(self.arms))
        if not (isinstance(self.eta0, (int, float, np.floating)) and self.eta0 < 0):
            raise ValueError(f"eta0 must be < 0 (so that γ = 0 is safe), got {self.eta0!r}")
        nonnegative(self.sigma, "sigma")
        nonnegative(self.sigma_safe, "sigma_safe")
        nonnegative(self.epsilon, "epsilon")
        probability(self.delta_r, "delta_r")
        probability(self.delta_s, "delta_s")
        positive(self.lam, "lam")
        integer(self.T_FE, "T_FE", 0)
        if not (isinstance(self.gamma_FE, (int, float, np.floating)) and 0 < self.gamma_FE <= 1):
            raise ValueError(f"gamma_FE must be in (0, 1], got {self.gamma_FE!r}")
        positive(self.S_theta, "S_theta")
        positive(self.S_mu, "S_mu")


@dataclass(frozen=True, eq=False)
class SafeBaiProblem(_SettingAndTruth):
    """Safe linear best-arm identification with partial pulls ("Price of Safety" §3.3): what
    the learner knows (``setting``) and the truth θ*, μ*.

    Playing γ·x_k returns the reward γ x_kᵀθ* + N(0, σ²) and the safety signal
    γ x_kᵀμ* + N(0, σ_safe²); the pull is unsafe iff γ x_kᵀμ* < η₀.
    """

    setting: SafeBaiSetting
    theta_star: np.ndarray
    mu_star: np.ndarray
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.setting, SafeBaiSetting):
            raise ValueError(f"setting must be a SafeBaiSetting, got {type(self.setting).__name__}")
        theta = array(self.theta_star, "theta_star", 1)
        mu = array(self.mu_star, "mu_star", 1)
        _check_shape(theta, "theta_star", self.d)
        _check_shape(mu, "mu_star", self.d)
        _check_norm_bound(theta, "theta_star", self.setting.S_theta, "S_theta")
        _check_norm_bound(mu, "mu_star", self.setting.S_mu, "S_mu")
        replace_field(self, "theta_star", theta)
        replace_field(self, "mu_star", mu)

    @property
    def K(self) -> int:
        return self.setting.K


# --------------------------------------------------------------------------- safe scales


def safe_scales(values: np.ndarray, eta0: float) -> np.ndarray:
    """The largest γ ∈ [0, 1] with γ·v ≥ η₀, per entry: γ = min{1, |η₀| / [−v]_+}, 1/0 = ∞.

    With the true safety values v_k = x_kᵀμ* this is the maximal safe fraction γ_k of each
    arm ("Price of Safety" §3.3); with lower confidence bounds l_k it is the conservative
    γ̄_k of the forced-exploration phase ("Price of Safety" §4). (K,) → (K,).
    """
    s = np.asarray(values, dtype=float)
    neg = np.maximum(-s, 0.0)
    with np.errstate(divide="ignore"):
        ratio = np.where(neg > 0, abs(eta0) / np.where(neg > 0, neg, 1.0), np.inf)
    return np.minimum(1.0, ratio)


def worst_case_safe_scale(arms: np.ndarray, eta0: float, S_mu: float) -> float:
    """γ_0 = min(1, |η₀| / (S_μ max_k ‖x_k‖)): safe for every ‖μ‖ ≤ S_μ.

    A known-safe forced-exploration scale for any instance, the analogue of Safe-LUCB's D^w
    (our choice: "Price of Safety" §5 fixes γ_FE = 0.2 for its instance). ``arms``: (K, d).
    """
    return float(min(1.0, abs(eta0) / (S_mu * np.max(np.linalg.norm(arms, axis=1)))))
