"""Safe-LinGapE ("Price of Safety in Linear Best Arm Identification", §4) as an ask/tell learner.

Phase 1, forced exploration: T_FE rounds, each k ~ Unif([K]) i.i.d. (our reading of
"uniformly samples arms") played at the known-safe scale γ_FE. Afterwards the
conservative safety coefficients

    l_k = x_kᵀμ̂ − β^s‖x_k‖_{A⁻¹},    γ̄_k = min{1, |η₀| / [−l_k]_+}

make every γ̄_k·x_k safe for all μ in the safety confidence ellipsoid (radius β^s: the
determinant form of Abbasi-Yadkori et al. 2011, Theorem 2, restated as the paper's
Theorem 3, with σ_safe, S_μ, δ'_s).

Phase 2, LinGapE (Xu, Honda, Sugiyama 2018) on the working arms x̃_k = γ̄_k·x_k:
select-direction, stop when B(t) ≤ ε, greedy (G) or ratio (R) selection; the answer is
(k̂, γ̄_k̂).

``update="dynamic"``: γ̄ is recomputed after every phase-2 observation (the paper's dynamic
variant, outside its analysis) and kept monotone, γ̄_k(t) = max(γ̄_k(t−1), new value) (our
choice; valid because the confidence bound holds for all t simultaneously).

Both regressions (reward, safety) share one design matrix: the played actions are the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cbai_cli.numerics.confidence import radius_determinant
from cbai_cli.numerics.linalg import RidgeDesign, weighted_norms
from cbai_cli.contracts.protocol import Answer, Query

from cbai_cli.algorithms.safe.lingape import RatioAllocations, greedy_arm, ratio_arm, reward_of, select_direction
from cbai_cli.kinds.safe.problems import SafeBaiSetting, safe_scales

__all__ = ["SafeLinGapEConfig", "SafeLinGapE", "safety_radius", "reward_radius", "conservative_scales"]

_REWARD, _SAFETY = 0, 1  # targets of the shared RidgeDesign


@dataclass(frozen=True)
class SafeLinGapEConfig:
    """Options of Safe-LinGapE.

    Attributes:
        rule: ``"greedy"`` (default, our choice) | ``"ratio"`` (the paper's two criteria, §4).
        update: ``"static"`` (γ̄ from forced exploration only) | ``"dynamic"``.
        width: reward radius ``"det"`` (default: the paper's restated Theorem 3, no K²) |
            ``"det_k2"`` (LinGapE's code).
        challenger: ``"gap"`` (LinGapE's gap-UCB j_t, default) | ``"optimistic"``
            (argmax_k of the individual UCBs r̄_k, ties broken away from i_t: our reading of
            the optimistic variant the paper proposes in §5).
        count_weight: weight of a past pull of arm k at scale γ_s in the ratio rule's
            "weighted number of pulls" N_t(k): ``"squared"`` (γ_s/γ̄_k)² (default: then
            N_t(k)·γ̄_k² x_k x_kᵀ is arm k's share of A_t) | ``"linear"`` γ_s/γ̄_k (our choices).
        initial_pulls: after forced exploration, pull every working arm once as LinGapE does
            (counted in τ).
        ties: greedy tie-breaking, as in :class:`~.lingape.LinGapEConfig`.
        refresh_every: updates between exact recomputations of A⁻¹ and log det A.
    """

    rule: str = "greedy"
    update: str = "static"
    width: str = "det"
    challenger: str = "gap"
    count_weight: str = "squared"
    initial_pulls: bool = True
    ties: str = "first"
    refresh_every: int = 1000

    def __post_init__(self) -> None:
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
    """β^s = σ_safe·sqrt(2 log(det(A)^{1/2} λ^{-d/2} / δ'_s)) + λ^{1/2} S_μ (the paper's Theorem 3)."""
    return radius_determinant(state.logdet, state.dim, state.ridge, setting.sigma_safe, setting.S_mu, setting.delta_s)


def reward_radius(state: RidgeDesign, setting: SafeBaiSetting, width: str = "det") -> float:
    """β^r_t = σ·sqrt(2 log(u det(A)^{1/2} λ^{-d/2} / δ_r)) + λ^{1/2} S_θ, u = 1 or K² (the
    confidence ellipsoid C^(r)_t of the BAI phase)."""
    union = 1.0 if width == "det" else float(setting.K) ** 2
    return radius_determinant(state.logdet, state.dim, state.ridge, setting.sigma, setting.S_theta, setting.delta_r, union)


def conservative_scales(
    arms: np.ndarray, mu_hat: np.ndarray, A_inv: np.ndarray, beta_s: float, eta0: float
) -> np.ndarray:
    """γ̄_k = min{1, |η₀| / [−l_k]_+} with l_k = x_kᵀμ̂ − β^s‖x_k‖_{A⁻¹} (the paper's
    conservative safety coefficients, §4).

    l_k = min_{μ ∈ C^(s)} x_kᵀμ; then γ·l_k ≥ η₀ for all γ ≤ γ̄_k, so γ̄_k·x_k is safe for
    every μ in the confidence set. ``arms``: (K, d) → (K,).
    """
    lcb = arms @ mu_hat - beta_s * weighted_norms(arms, A_inv)
    return safe_scales(lcb, eta0)


class SafeLinGapE:
    """Safe-LinGapE as an ask/tell learner ("Price of Safety" §4).

    :meth:`ask` gives ``Query.pull(k, scale=γ)``; :meth:`tell` reads the reward
    ``answer.reward[0]`` and the safety signal ``answer.constraint[0]``. ``done`` once the
    stopping rule fired; ``recommendation`` is (k̂, γ̄_k̂) then, else None. Also: ``t`` (pulls
    so far, forced exploration and initial pulls included), ``gamma_bar``: (K,) (the working
    scales; None during forced exploration), ``gamma_bar_fe``: (K,) (the scales right after
    it), ``pulls``: (K,), ``B_value``.

    Args:
        setting: what the learner knows.
        config: the options.
        rng: the learner's generator (forced-exploration arms, random greedy tie-breaking).
    """

    #: The answers carry the reward sums (safe BAI: the reward is unknown), which
    #: :class:`cbai_cli.contracts.protocol.CheckedLearner` then requires.
    reads_reward = True

    def __init__(self, setting: SafeBaiSetting, config: SafeLinGapEConfig = SafeLinGapEConfig(),
                 rng: np.random.Generator | None = None) -> None:
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
        self._done = False
        self.recommendation: tuple[int, float] | None = None
        self.B_value = math.inf
        self.gamma_bar: np.ndarray | None = None
        self.gamma_bar_fe: np.ndarray | None = None
        self._queue: list[int] = []
        self._query: Query | None = None
        self.allocations = RatioAllocations()
        if setting.T_FE == 0:
            self._finish_fe()

    # ----------------------------------------------------------------- public API
    @property
    def done(self) -> bool:
        """Whether the stopping rule B(t) ≤ ε has fired."""
        return self._done

    @property
    def phase(self) -> str:
        """``"fe"``, ``"bai"`` or ``"done"``."""
        if self._done:
            return "done"
        return "fe" if self.gamma_bar is None else "bai"

    def ask(self) -> Query:
        """One pull of an arm at its scale; the same query until :meth:`tell`."""
        if self._done:
            raise RuntimeError("Safe-LinGapE has stopped; read .recommendation")
        if self._query is None:
            if self.gamma_bar is None:
                # Forced exploration: an i.i.d. uniform arm at the known-safe scale.
                self._query = Query.pull(int(self._rng.integers(self.K)), float(self.setting.gamma_FE))
            else:  # pragma: no cover - _advance always sets the query in phase 2
                raise RuntimeError("internal: no decision in phase 2")
        return self._query

    def tell(self, query: Query, answer: Answer) -> None:
        """Record one pull of γ·x_k (``query.scale``, 1 when None) with its reward and safety signal."""
        if self._done:
            raise RuntimeError("Safe-LinGapE has stopped")
        k = query.arm
        scale = 1.0 if query.scale is None else float(query.scale)
        self.state.add(scale * self.arms[k], (reward_of(answer), float(answer.constraint[0])))
        self.pulls[k] += 1
        self._scale_sum[k] += scale
        self._scale_sq_sum[k] += scale * scale
        self.t += 1
        self._query = None
        if self.gamma_bar is None:
            if self.t >= self.setting.T_FE:
                self._finish_fe()
            return
        if self.config.update == "dynamic":
            self._update_scales()
        self._advance()

    def working_arms(self) -> np.ndarray:
        """(K, d) x̃_k = γ̄_k·x_k (phase 2)."""
        return self.gamma_bar[:, None] * self.arms

    def weighted_counts(self) -> np.ndarray:
        """(K,) N_t(k) of the ratio rule: past pulls of arm k weighted by (γ_s/γ̄_k)² (or
        γ_s/γ̄_k), forced exploration included (our reading of "weighted number of pulls")."""
        if self.config.count_weight == "squared":
            return self._scale_sq_sum / self.gamma_bar**2
        return self._scale_sum / self.gamma_bar

    def current_scales(self) -> np.ndarray:
        """(K,) γ̄ computed from the current data (without the monotone max)."""
        mu_hat = self.state.estimate(_SAFETY)
        beta_s = safety_radius(self.state, self.setting)
        return conservative_scales(self.arms, mu_hat, self.state.inverse, beta_s, self.setting.eta0)

    def empirical_best(self) -> tuple[int, float]:
        """The anytime answer (argmax_k x̃_kᵀθ̂, γ̄_k) (phase 2)."""
        k = int(np.argmax(self.working_arms() @ self.state.estimate(_REWARD)))
        return k, float(self.gamma_bar[k])

    def recommend(self) -> tuple[int, float]:
        """(arm, scale): (k̂, γ̄_k̂) once stopped, else the anytime answer; during forced
        exploration nothing beyond γ_FE is known to be safe, so (0, γ_FE)."""
        if self._done:
            return self.recommendation
        if self.gamma_bar is not None:
            return self.empirical_best()
        return 0, float(self.setting.gamma_FE)

    @property
    def variant(self) -> str:
        """The algorithm, its arm-selection rule and its scale updates, for records."""
        return f"Safe-LinGapE-{self.config.rule}-{self.config.update}"

    # ----------------------------------------------------------------- internals
    def _finish_fe(self) -> None:
        self.gamma_bar = self.current_scales()
        self.gamma_bar_fe = self.gamma_bar.copy()
        self._queue = list(range(self.K)) if self.config.initial_pulls else []
        self._advance()

    def _update_scales(self) -> None:
        new = np.maximum(self.gamma_bar, self.current_scales())
        if np.any(new != self.gamma_bar):
            self.allocations.clear()  # the LP depends on the working arms
        self.gamma_bar = new

    def _advance(self) -> None:
        """Next pull in phase 2: pending initial pulls, else LinGapE's step on x̃."""
        if self._queue:
            k = self._queue.pop(0)
            self._query = Query.pull(k, float(self.gamma_bar[k]))
            return
        W = self.working_arms()
        theta_hat = self.state.estimate(_REWARD)
        A_inv = self.state.inverse
        C = reward_radius(self.state, self.setting, self.config.width)
        i, j, B = select_direction(W, theta_hat, A_inv, C)
        self.B_value = B
        if B <= self.setting.epsilon:
            # LinGapE's stopping rule on the filtered arms; the answer is the safe action γ̄_k̂ x_k̂.
            self._done = True
            self.recommendation = (i, float(self.gamma_bar[i]))
            self._query = None
            return
        if self.config.challenger == "optimistic":
            # Individual UCBs r̄_k = x̃_kᵀθ̂ + C‖x̃_k‖_{A⁻¹}; the pulled direction uses the
            # optimistic best arm other than i_t. The stopping rule above stays LinGapE's.
            ucb = W @ theta_hat + C * weighted_norms(W, A_inv)
            ucb[i] = -np.inf
            j = int(np.argmax(ucb))
        if self.config.rule == "greedy":
            k = greedy_arm(W, A_inv, W[i] - W[j], self.config.ties, self._rng)
        else:
            k = ratio_arm(self.weighted_counts(), self.allocations.get(W, i, j))
        self._query = Query.pull(k, float(self.gamma_bar[k]))
