"""LinGapE (Xu, Honda, Sugiyama, AISTATS 2018) as an ask/tell learner.

Fixed-confidence (ε, δ) best-arm identification over a finite arm set ``arms``: (K, d)
(Xu et al. 2018, Algorithm 1):

0. Pull every arm once (as both of the authors' public scripts do).
1. Select-direction (Xu et al. 2018, Algorithm 2): i_t = argmax_i x_iᵀθ̂ and
   j_t = argmax_j (x_j − x_i)ᵀθ̂ + C_t‖x_j − x_i‖_{A⁻¹}; B(t) is that maximum.
2. Stop when B(t) ≤ ε and recommend i_t.
3. Pull by the greedy rule (G) or the ratio rule (R) on y = x_i − x_j.

The building blocks (:func:`select_direction`, :func:`greedy_arm`, :func:`l1_ratio`,
:func:`ratio_arm`, :class:`RatioAllocations`) are shared with Safe-LinGapE, which runs them
on scaled arms ("Price of Safety in Linear Best Arm Identification", §4).

Confidence width C_t, option ``width``:

- ``"det_k2"`` (default): R·sqrt(2 log(K² det(A)^{1/2} λ^{-d/2} / δ)) + λ^{1/2} S, the
  authors' ratio-rule code; the K² is a union bound over arm pairs (our default);
- ``"det"``: the same without K² (Abbasi-Yadkori et al. 2011, Theorem 2 as stated);
- ``"horizon_k2"``: R·sqrt(d log(K² (1 + t L²) / (λ δ))) + λ^{1/2} S, the authors' greedy script.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import ItemsView
from dataclasses import dataclass

import numpy as np

from cbai_cli.numerics.confidence import radius_determinant, radius_lingape_script
from cbai_cli.numerics.linalg import RidgeDesign, variance_reduction, weighted_norms
from cbai_cli.contracts.protocol import Answer, Query

from cbai_cli.kinds.safe.problems import LinearBaiProblem, SafeBaiSetting

__all__ = [
    "LinGapEConfig",
    "LinGapE",
    "RatioAllocations",
    "confidence_width",
    "select_direction",
    "greedy_arm",
    "l1_ratio",
    "ratio_arm",
    "reward_of",
]

_WIDTHS = ("det_k2", "det", "horizon_k2")


@dataclass(frozen=True)
class LinGapEConfig:
    """Options of LinGapE (Xu et al. 2018).

    Attributes:
        epsilon: ε ≥ 0 of the (ε, δ) criterion.
        delta: δ ∈ (0, 1).
        R: sub-Gaussian scale (the authors' code: σ = 1).
        S: bound S ≥ ‖θ*‖ (the authors' code: 2).
        lam: ridge λ (the authors' code: 1).
        L: bound on ‖x‖ for ``"horizon_k2"`` (default: the largest arm norm).
        rule: ``"greedy"`` | ``"ratio"``.
        width: see the module docstring.
        ties: greedy tie-breaking: ``"first"`` (lowest index, the greedy script) |
            ``"random"`` (uniform among maximisers within 1e-12, the ratio script's helper).
        refresh_every: updates between exact recomputations of A⁻¹ and log det A.
    """

    epsilon: float = 0.0
    delta: float = 0.05
    R: float = 1.0
    S: float = 1.0
    lam: float = 1.0
    L: float | None = None
    rule: str = "greedy"
    width: str = "det_k2"
    ties: str = "first"
    refresh_every: int = 1000

    def __post_init__(self) -> None:
        if not self.epsilon >= 0:
            raise ValueError(f"epsilon must be >= 0, got {self.epsilon}")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must be in (0, 1), got {self.delta}")
        if not self.R >= 0:
            raise ValueError(f"R must be >= 0, got {self.R}")
        if not self.S > 0:
            raise ValueError(f"S must be > 0, got {self.S}")
        if not self.lam > 0:
            raise ValueError(f"lam must be > 0, got {self.lam}")
        if self.L is not None and not self.L > 0:
            raise ValueError(f"L must be > 0, got {self.L}")
        if self.rule not in ("greedy", "ratio"):
            raise ValueError(f"rule must be 'greedy' or 'ratio', got {self.rule!r}")
        if self.width not in _WIDTHS:
            raise ValueError(f"width must be one of {_WIDTHS}, got {self.width!r}")
        if self.ties not in ("first", "random"):
            raise ValueError(f"ties must be 'first' or 'random', got {self.ties!r}")
        if self.refresh_every < 1:
            raise ValueError(f"refresh_every must be >= 1, got {self.refresh_every}")

    @classmethod
    def from_problem(cls, problem: LinearBaiProblem, **overrides) -> LinGapEConfig:
        """Known constants of a :class:`~.problems.LinearBaiProblem` (ε, δ, σ as R, S, λ)."""
        kw = dict(epsilon=problem.epsilon, delta=problem.delta, R=problem.sigma, S=problem.S, lam=problem.lam)
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def from_safe_setting(cls, setting: SafeBaiSetting, **overrides) -> LinGapEConfig:
        """Plain LinGapE on a safe instance (ignores safety): ε, δ_r, σ, S_θ, λ."""
        kw = dict(epsilon=setting.epsilon, delta=setting.delta_r, R=setting.sigma, S=setting.S_theta, lam=setting.lam)
        kw.update(overrides)
        return cls(**kw)


def confidence_width(
    width: str, state: RidgeDesign, K: int, R: float, S: float, delta: float, L: float = 1.0
) -> float:
    """C_t for the current design ``state`` (``"det_k2"``, ``"det"`` or ``"horizon_k2"``)."""
    if width == "det_k2":
        return radius_determinant(state.logdet, state.dim, state.ridge, R, S, delta, union=K * K)
    if width == "det":
        return radius_determinant(state.logdet, state.dim, state.ridge, R, S, delta)
    if width == "horizon_k2":
        return radius_lingape_script(state.n_samples, state.dim, state.ridge, R, S, L, delta, K)
    raise ValueError(f"width must be one of {_WIDTHS}, got {width!r}")


def select_direction(
    arms: np.ndarray, theta_hat: np.ndarray, A_inv: np.ndarray, C: float
) -> tuple[int, int, float]:
    """Select-direction (Xu et al. 2018, Algorithm 2) on ``arms``: (K, d); returns (i_t, j_t, B(t)).

    j = i_t is a candidate with score 0, so B(t) ≥ 0. Ties: lowest index.
    """
    means = arms @ theta_hat
    i = int(np.argmax(means))
    diff = arms - arms[i]
    ucb = (means - means[i]) + C * weighted_norms(diff, A_inv)
    j = int(np.argmax(ucb))
    return i, j, float(ucb[j])


def greedy_arm(
    candidates: np.ndarray,
    A_inv: np.ndarray,
    y: np.ndarray,
    ties: str = "first",
    rng: np.random.Generator | None = None,
) -> int:
    """Greedy rule (G): argmin_a yᵀ(A + x_a x_aᵀ)⁻¹y, i.e. the largest
    :func:`~cbai_cli.numerics.linalg.variance_reduction` over ``candidates``: (K, d).
    ``ties="random"`` needs ``rng``."""
    gain = variance_reduction(candidates, A_inv, y)
    if ties == "first":
        return int(np.argmax(gain))
    top = np.flatnonzero(gain >= gain.max() - 1e-12 * max(abs(gain.max()), 1e-300))
    return int(top[rng.integers(top.size)]) if top.size > 1 else int(top[0])


#: Most d-subsets of the arms :func:`l1_ratio` solves one by one before it asks HiGHS instead.
_SUPPORTS_MAX = 4096


def l1_ratio(arms: np.ndarray, y: np.ndarray) -> np.ndarray:
    """w*(y) = argmin Σ_a |w_a| s.t. Σ_a w_a x_a = y (the ratio rule's LP, Xu et al. 2018).

    ``arms``: (K, d); returns w*: (K,); p* = |w*| / Σ|w*| and ρ(y) = (Σ|w*|)². The minimum of
    a norm-1 objective over an affine set is reached at a basic solution, nonzero on at most
    d arms whose vectors are independent: when the arms span R^d and there are at most
    :data:`_SUPPORTS_MAX` such d-subsets, every one is solved and the least Σ|w| kept
    (exact, and without scipy.optimize's 0.25 s import). Otherwise, and when two different
    solutions tie for the minimum (where the LP does not say which), HiGHS solves the LP.
    """
    arms = np.asarray(arms, dtype=float)
    y = np.asarray(y, dtype=float)
    # w*(y) is unchanged when the arms and y are scaled together, absolute tolerances are
    # not (arms of size 1e-300 came back as w = 0 from HiGHS): solve at unit scale.
    scale = float(np.abs(arms).max(initial=0.0))
    if scale > 0:
        arms, y = arms / scale, y / scale
    K, d = arms.shape
    if K >= d and math.comb(K, d) <= _SUPPORTS_MAX:
        w = _l1_by_supports(arms, y)
        if w is not None:
            return w
    return _l1_by_highs(arms, y)


def _l1_by_supports(arms: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The least-Σ|w| basic solution over every independent d-subset of ``arms``: (K, d);
    None when no subset is independent or the minimum is not unique."""
    K, d = arms.shape
    supports = np.array(list(itertools.combinations(range(K), d)), dtype=np.intp)  # (n, d)
    M = arms[supports].transpose(0, 2, 1)  # (n, d, d): columns are the support's arms
    scale = np.prod(np.linalg.norm(M, axis=1), axis=1)
    independent = np.abs(np.linalg.det(M)) > 1e-12 * scale
    if not independent.any():
        return None
    supports = supports[independent]
    W = np.linalg.solve(M[independent], np.broadcast_to(y, (supports.shape[0], d))[..., None])[..., 0]
    cost = np.abs(W).sum(axis=1)
    best = int(np.argmin(cost))
    w = np.zeros(K)
    w[supports[best]] = W[best]
    # A second support reaching the same cost with another w: the LP has a face of minima.
    near = np.flatnonzero(cost <= cost[best] * (1 + 1e-9) + 1e-12)
    for k in near:
        other = np.zeros(K)
        other[supports[k]] = W[k]
        if np.abs(other - w).max() > 1e-9 * max(1.0, cost[best]):
            return None
    return w


def _l1_by_highs(arms: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`l1_ratio` by HiGHS: variables (w, u), minimise Σu with −u ≤ w ≤ u."""
    from scipy.optimize import linprog

    K, d = arms.shape
    eye = np.eye(K)
    c = np.concatenate([np.zeros(K), np.ones(K)])
    A_ub = np.block([[eye, -eye], [-eye, -eye]])
    A_eq = np.concatenate([arms.T, np.zeros((d, K))], axis=1)
    res = linprog(
        c, A_ub=A_ub, b_ub=np.zeros(2 * K), A_eq=A_eq, b_eq=y,
        bounds=[(None, None)] * K + [(0, None)] * K, method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"L1 ratio LP failed: {res.message}")
    return np.asarray(res.x[:K], dtype=float)


def ratio_arm(counts: np.ndarray, p: np.ndarray, tol: float = 1e-12) -> int:
    """Ratio rule (R): argmin_{a : p_a > 0} counts_a / p_a (ties: lowest index)."""
    support = p > tol
    ratio = np.where(support, counts / np.where(support, p, 1.0), np.inf)
    return int(np.argmin(ratio))


class RatioAllocations:
    """The ratio rule's allocations p*(x_i − x_j) = |w*| / Σ|w*|, one LP per ordered pair (i, j).

    The LP depends only on the pair and the arms, so it is solved once per pair (the authors
    precompute all K² pairs); :meth:`clear` when the arms change (Safe-LinGapE's γ̄ grows).
    """

    def __init__(self) -> None:
        self._cache: dict[tuple[int, int], np.ndarray] = {}

    def get(self, arms: np.ndarray, i: int, j: int) -> np.ndarray:
        """(K,) p* for y = arms[i] − arms[j]; ``arms``: (K, d)."""
        p = self._cache.get((i, j))
        if p is None:
            w = l1_ratio(arms, arms[i] - arms[j])
            p = np.abs(w) / np.abs(w).sum()
            self._cache[(i, j)] = p
        return p

    def clear(self) -> None:
        self._cache.clear()

    def items(self) -> ItemsView[tuple[int, int], np.ndarray]:
        return self._cache.items()

    def __len__(self) -> int:
        return len(self._cache)


def reward_of(answer: Answer) -> float:
    """The one reward observation of an answer to a single pull."""
    if answer.reward is None:
        raise ValueError("the answer carries no reward observation (answer.reward is None)")
    return float(answer.reward[0])


class LinGapE:
    """LinGapE as an ask/tell learner (Xu et al. 2018, Algorithm 1).

    :meth:`ask` gives ``Query.pull(k)``; :meth:`tell` reads the reward ``answer.reward[0]``.
    ``done`` once the stopping rule fired; ``recommendation`` is i_t then, else None;
    ``t`` counts the pulls (the initial K included); ``pulls``: (K,).

    Args:
        arms: (K, d) spanning R^d.
        config: the options.
        rng: the learner's generator (random greedy tie-breaking).
    """

    #: The answers carry the reward sums (safe BAI: the reward is unknown), which
    #: :class:`cbai_cli.contracts.protocol.CheckedLearner` then requires.
    reads_reward = True

    def __init__(self, arms: np.ndarray, config: LinGapEConfig = LinGapEConfig(),
                 rng: np.random.Generator | None = None) -> None:
        arms = np.array(arms, dtype=float)
        if arms.ndim != 2 or arms.shape[0] < 2:
            raise ValueError(f"arms: expected (K >= 2, d) array, got shape {arms.shape}")
        if np.linalg.matrix_rank(arms) < arms.shape[1]:
            raise ValueError("arms: must span R^d")
        if rng is None:
            raise ValueError("rng: a numpy.random.Generator is required")
        arms.setflags(write=False)
        self.arms = arms
        self.config = config
        self._rng = rng
        self.K, self.d = arms.shape
        self._L = config.L if config.L is not None else float(np.max(np.linalg.norm(arms, axis=1)))
        self.state = RidgeDesign(self.d, config.lam, 1, config.refresh_every)
        self.pulls = np.zeros(self.K, dtype=np.int64)
        self.t = 0
        self._done = False
        self.recommendation: int | None = None
        self.B_value = math.inf
        self.allocations = RatioAllocations()
        self._query: Query | None = Query.pull(0)  # initial pulls: arms 0..K−1 in order

    @property
    def done(self) -> bool:
        """Whether the stopping rule B(t) ≤ ε has fired."""
        return self._done

    def width(self) -> float:
        """The current C_t."""
        c = self.config
        return confidence_width(c.width, self.state, self.K, c.R, c.S, c.delta, self._L)

    def ask(self) -> Query:
        """One pull of the next arm; the same query until :meth:`tell`."""
        if self._done:
            raise RuntimeError("LinGapE has stopped; read .recommendation")
        return self._query

    def tell(self, query: Query, answer: Answer) -> None:
        """Record the reward of one pull of ``query.arm``; stop or decide the next arm."""
        if self._done:
            raise RuntimeError("LinGapE has stopped")
        k = query.arm
        self.state.add(self.arms[k], reward_of(answer))
        self.pulls[k] += 1
        self.t += 1
        if self.t < self.K:  # still in the initial round-robin
            self._query = Query.pull(self.t)
            return
        self._decide()

    def empirical_best(self) -> int:
        """argmax_k x_kᵀθ̂ (the anytime recommendation)."""
        return int(np.argmax(self.arms @ self.state.estimate()))

    def recommend(self) -> tuple[int, float]:
        """(arm, scale): i_t once stopped, else the anytime argmax_k x_kᵀθ̂; always at full
        scale 1 (LinGapE ignores safety)."""
        return (self.recommendation if self._done else self.empirical_best()), 1.0

    @property
    def variant(self) -> str:
        """The algorithm and its arm-selection rule, for records."""
        return f"LinGapE-{self.config.rule}"

    #: LinGapE keeps no safe scales (for records shared with Safe-LinGapE).
    gamma_bar_fe = None
    gamma_bar = None

    def _decide(self) -> None:
        theta_hat = self.state.estimate()
        A_inv = self.state.inverse
        i, j, B = select_direction(self.arms, theta_hat, A_inv, self.width())
        self.B_value = B
        if B <= self.config.epsilon:
            self._done = True
            self.recommendation = i
            self._query = None
            return
        if self.config.rule == "greedy":
            k = greedy_arm(self.arms, A_inv, self.arms[i] - self.arms[j], self.config.ties, self._rng)
        else:
            k = ratio_arm(self.pulls, self.allocations.get(self.arms, i, j))
        self._query = Query.pull(k)
