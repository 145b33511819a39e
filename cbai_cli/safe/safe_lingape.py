"""Safe-LinGapE ("Price of Safety in Linear Best Arm Identification") as an ask/tell state
machine (spec safe.md §4).

Phase 1 — forced exploration (§4.3): ``T_FE`` rounds, each ``k ~ Unif([K])`` i.i.d. played at
the known-safe scale ``γ_FE``. Afterwards the conservative safety coefficients

    ``l_k = x_kᵀμ̂ − β^s ‖x_k‖_{A⁻¹}``,   ``γ̄_k = min{1, |η₀| / [−l_k]_+}``

make every ``γ̄_k x_k`` safe for all ``μ`` in the safety confidence ellipsoid (radius ``β^s``,
determinant form with ``σ_safe``, ``S_μ``, ``δ'_s``).

Phase 2 — LinGapE on the working arms ``x̃_k = γ̄_k x_k`` (§4.4): select-direction, stop
when ``B(t) ≤ ε``, greedy (G) or ratio (R) selection; output ``(k̂, γ̄_k̂)``.

``update="dynamic"`` (§4.5): ``γ̄`` is recomputed after every phase-2 observation and kept
monotone, ``γ̄_k(t) = max(γ̄_k(t−1), new value)`` ([PROPOSAL]; valid because the bound holds
for all t simultaneously).

Both regressions (reward, safety) share one design matrix: the played actions are the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cbai_cli.confidence import radius_determinant
from cbai_cli.linalg import RidgeDesign, weighted_norms

from .lingape import greedy_arm, l1_ratio, ratio_arm, select_direction
from .problems import SafeBaiSetting, safe_scales

__all__ = ["SafeLinGapEConfig", "SafeLinGapE", "safety_radius", "reward_radius", "conservative_scales"]

_REWARD, _SAFETY = 0, 1  # targets of the shared RidgeDesign


@dataclass(frozen=True)
class SafeLinGapEConfig:
    """Options of Safe-LinGapE.

    ``rule``: ``"greedy"`` (default, [PROPOSAL]) | ``"ratio"``.
    ``update``: ``"static"`` (γ̄ from FE only) | ``"dynamic"`` (§4.5).
    ``width``: reward radius ``"det"`` (default: the paper's restated theorem, no K²) |
    ``"det_k2"`` (LinGapE's code).
    ``challenger``: ``"gap"`` (LinGapE's gap-UCB ``j_t``, default) | ``"optimistic"``
    (``argmax_k r̄_k``, individual UCBs, ties broken away from ``i_t``; §4.4 step 2 [PROPOSAL]).
    ``count_weight``: weight of a past pull of arm k at scale γ_s in ``N_t(k)``:
    ``"squared"`` ``(γ_s/γ̄_k)²`` (default, information-equivalent) | ``"linear"`` ``γ_s/γ̄_k``.
    ``initial_pulls``: after FE, pull every working arm once as LinGapE does (counted in τ).
    ``ties``: greedy tie-breaking, as in :class:`~.lingape.LinGapEConfig`.
    """

    rule: str = "greedy"
    update: str = "static"
    width: str = "det"
    challenger: str = "gap"
    count_weight: str = "squared"
    initial_pulls: bool = True
    ties: str = "first"
    refresh_every: int = 1000

    def __post_init__(self):
        checks = {
            "rule": ("greedy", "ratio"),
            "update": ("static", "dynamic"),
            "width": ("det", "det_k2"),
            "challenger": ("gap", "optimistic"),
            "count_weight": ("squared", "linear"),
            "ties": ("first", "random"),
        }
        for name, allowed in checks.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.refresh_every < 1:
            raise ValueError(f"refresh_every must be >= 1, got {self.refresh_every}")


def safety_radius(state: RidgeDesign, setting: SafeBaiSetting) -> float:
    """``β^s = σ_safe sqrt(2 log(det(A)^{1/2} λ^{-d/2} / δ'_s)) + λ^{1/2} S_μ`` (§4.3 step 3)."""
    return radius_determinant(state.logdet, state.dim, state.ridge, setting.sigma_safe, setting.S_mu, setting.delta_s)


def reward_radius(state: RidgeDesign, setting: SafeBaiSetting, width: str = "det") -> float:
    """``β^r_t = σ sqrt(2 log(u det(A)^{1/2} λ^{-d/2} / δ_r)) + λ^{1/2} S_θ``, ``u = 1`` or ``K²`` (§4.4 step 1)."""
    union = 1.0 if width == "det" else float(setting.K) ** 2
    return radius_determinant(state.logdet, state.dim, state.ridge, setting.sigma, setting.S_theta, setting.delta_r, union)


def conservative_scales(
    arms: np.ndarray, mu_hat: np.ndarray, A_inv: np.ndarray, beta_s: float, eta0: float
) -> np.ndarray:
    """``γ̄_k = min{1, |η₀| / [−l_k]_+}`` with ``l_k = x_kᵀμ̂ − β^s ‖x_k‖_{A⁻¹}`` (§4.3 step 4).

    ``l_k = min_{μ ∈ C^(s)} x_kᵀμ``; then ``γ l_k ≥ η₀`` for all ``γ ≤ γ̄_k``, so ``γ̄_k x_k``
    is safe for every μ in the confidence set. ``arms: (K, d)`` → ``(K,)``.
    """
    lcb = arms @ mu_hat - beta_s * weighted_norms(arms, A_inv)
    return safe_scales(lcb, eta0)


class SafeLinGapE:
    """Safe-LinGapE ask/tell state machine (§4.3–4.5).

    ``ask() -> (k, scale)``; ``tell(k, scale, reward, safety)``; ``done``;
    ``recommendation`` = ``(k̂, γ̄_k̂)`` at stopping, else ``None``.
    Also: ``t`` (pulls so far, FE and initial pulls included), ``gamma_bar: (K,)`` (current
    working scales; ``None`` during FE), ``gamma_bar_fe: (K,)`` (scales right after FE),
    ``pulls: (K,)``, ``B_value``.
    """

    def __init__(self, setting: SafeBaiSetting, config: SafeLinGapEConfig = SafeLinGapEConfig(), rng: np.random.Generator | None = None):
        if rng is None:
            raise ValueError("rng: a numpy.random.Generator is required")
        self.setting = setting
        self.config = config
        self._rng = rng
        self.arms = setting.arms
        self.K, self.d = setting.K, setting.d
        self.state = RidgeDesign(self.d, setting.lam, 2, config.refresh_every)
        self.pulls = np.zeros(self.K, dtype=np.int64)
        self._scale_sum = np.zeros(self.K)  # Σ γ_s over pulls of arm k
        self._scale_sq_sum = np.zeros(self.K)  # Σ γ_s² over pulls of arm k
        self.t = 0
        self.done = False
        self.recommendation: tuple[int, float] | None = None
        self.B_value = math.inf
        self.gamma_bar: np.ndarray | None = None
        self.gamma_bar_fe: np.ndarray | None = None
        self._queue: list[int] = []
        self._next: tuple[int, float] | None = None
        self._ratio_cache: dict[tuple[int, int], np.ndarray] = {}
        if setting.T_FE == 0:
            self._finish_fe()

    # ----------------------------------------------------------------- public API
    @property
    def phase(self) -> str:
        """``"fe"``, ``"bai"`` or ``"done"``."""
        if self.done:
            return "done"
        return "fe" if self.gamma_bar is None else "bai"

    def ask(self) -> tuple[int, float]:
        """``(arm index, scale)`` to play next; idempotent until :meth:`tell`."""
        if self.done:
            raise RuntimeError("Safe-LinGapE has stopped; read .recommendation")
        if self._next is None:
            if self.gamma_bar is None:
                # Forced exploration: i.i.d. uniform arm at the known-safe scale ([PROPOSAL] i.i.d.).
                self._next = (int(self._rng.integers(self.K)), float(self.setting.gamma_FE))
            else:  # pragma: no cover - _decide always sets _next in phase 2
                raise RuntimeError("internal: no decision in phase 2")
        return self._next

    def tell(self, k: int, scale: float, reward: float, safety: float) -> None:
        """Record one pull of ``scale · x_k`` with its reward and safety signal."""
        if self.done:
            raise RuntimeError("Safe-LinGapE has stopped")
        k = int(k)
        scale = float(scale)
        self.state.add(scale * self.arms[k], (float(reward), float(safety)))
        self.pulls[k] += 1
        self._scale_sum[k] += scale
        self._scale_sq_sum[k] += scale * scale
        self.t += 1
        self._next = None
        if self.gamma_bar is None:
            if self.t >= self.setting.T_FE:
                self._finish_fe()
            return
        if self.config.update == "dynamic":
            self._update_scales()
        self._advance()

    def working_arms(self) -> np.ndarray:
        """``x̃_k = γ̄_k x_k``, shape ``(K, d)`` (phase 2)."""
        return self.gamma_bar[:, None] * self.arms

    def weighted_counts(self) -> np.ndarray:
        """``N_t(k)`` of the ratio rule: past pulls of arm k weighted by ``(γ_s/γ̄_k)²`` (or
        ``γ_s/γ̄_k``), FE pulls included (§4.4 step 4 [PROPOSAL]). Shape ``(K,)``."""
        if self.config.count_weight == "squared":
            return self._scale_sq_sum / self.gamma_bar**2
        return self._scale_sum / self.gamma_bar

    def current_scales(self) -> np.ndarray:
        """``γ̄`` computed from the current data (without the monotone max). ``(K,)``."""
        mu_hat = self.state.estimate(_SAFETY)
        beta_s = safety_radius(self.state, self.setting)
        return conservative_scales(self.arms, mu_hat, self.state.inverse, beta_s, self.setting.eta0)

    def empirical_best(self) -> tuple[int, float]:
        """Anytime recommendation ``(argmax_k x̃_kᵀθ̂, γ̄_k)`` (phase 2)."""
        k = int(np.argmax(self.working_arms() @ self.state.estimate(_REWARD)))
        return k, float(self.gamma_bar[k])

    # ----------------------------------------------------------------- internals
    def _finish_fe(self) -> None:
        self.gamma_bar = self.current_scales()
        self.gamma_bar_fe = self.gamma_bar.copy()
        self._queue = list(range(self.K)) if self.config.initial_pulls else []
        self._advance()

    def _update_scales(self) -> None:
        new = np.maximum(self.gamma_bar, self.current_scales())
        if np.any(new != self.gamma_bar):
            self._ratio_cache.clear()  # the LP depends on the working arms
        self.gamma_bar = new

    def _advance(self) -> None:
        """Next action in phase 2: pending initial pulls, else LinGapE's step on ``x̃``."""
        if self._queue:
            k = self._queue.pop(0)
            self._next = (k, float(self.gamma_bar[k]))
            return
        W = self.working_arms()
        theta_hat = self.state.estimate(_REWARD)
        A_inv = self.state.inverse
        C = reward_radius(self.state, self.setting, self.config.width)
        i, j, B = select_direction(W, theta_hat, A_inv, C)
        self.B_value = B
        if B <= self.setting.epsilon:
            # Stopping rule of LinGapE on the filtered arms; output the safe action γ̄_k̂ x_k̂.
            self.done = True
            self.recommendation = (i, float(self.gamma_bar[i]))
            self._next = None
            return
        if self.config.challenger == "optimistic":
            # Individual UCBs r̄_k = x̃_kᵀθ̂ + C ‖x̃_k‖_{A⁻¹}; the pulled direction uses the
            # optimistic best arm other than i_t. The stopping rule above stays LinGapE's.
            ucb = W @ theta_hat + C * weighted_norms(W, A_inv)
            ucb[i] = -np.inf
            j = int(np.argmax(ucb))
        y = W[i] - W[j]
        if self.config.rule == "greedy":
            k = greedy_arm(W, A_inv, y, self.config.ties, self._rng)
        else:
            p = self._ratio_cache.get((i, j))
            if p is None:
                w = l1_ratio(W, y)
                p = np.abs(w) / np.abs(w).sum()
                self._ratio_cache[(i, j)] = p
            k = ratio_arm(self.weighted_counts(), p)
        self._next = (k, float(self.gamma_bar[k]))
