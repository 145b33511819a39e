"""Safe-LUCB (Amani, Alizadeh, Thrampoulidis, NeurIPS 2019) as an ask/tell state machine
(spec safe.md §2).

Phase 1, rounds ``t = 1..T'``: i.i.d. actions from the safe set ``D^w`` (§2.3 step 1).
Phase 2, rounds ``t = T'+1..T``: optimistic safe actions (§2.3 steps 2–6):

- ``μ̂_t`` = ridge estimate on all past data; ``β_t`` = horizon radius with ``t − 1`` samples;
- ``D_t^s`` = actions safe for every parameter of the confidence set;
- ``x_t = argmin_{x ∈ D_t^s} min_{v ∈ C_t} vᵀx``.

The confidence set is either the L1 outer polytope of the ellipsoid (§1.4, the authors'
code and the default, ``confidence_set="polytope"``) or, for finite arm sets only, the
ellipsoid itself (§2.5a, ``"ellipsoid"``). Per action set:

- box (§2.5b): vertex enumeration of the safe polytope and a bilinear min over vertex pairs
  (``vertex_method="clip"`` — the square clipped by the safety half-planes, 2-D default;
  ``"enumerate"`` — vectorised brute force over constraint subsets, default for d ≥ 3;
  ``"qhull"``), or one HiGHS LP per confidence vertex (``"lp"``). Optional intersection of all past confidence polytopes
  (``intersect=True``, 2-D only, §2.5b step 5, the authors' ``intersectCLB.m``).
- ball (§2.5c): exact enumeration of corner/tangent candidates in 2-D; cvxpy SOCPs for d ≥ 3.
- finite (§2.5a): exact enumeration.

Usage::

    alg = SafeLUCB(problem.learner_view(), SafeLUCBConfig(exploration="t23"), rng)
    for t in range(T):
        x = alg.ask()
        alg.tell(x, loss_of(x))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .confidence import (
    RidgeState,
    inverse_sqrt,
    l1_polytope_halfspaces,
    l1_polytope_vertices,
    radius_horizon,
    sqrt_pair,
    weighted_norms,
)
from .exploration import (
    ExplorationSet,
    build_exploration_set,
    exploration_length,
    sample_exploration,
    t_delta,
)
from .polytopes import (
    FEASIBILITY_TOL,
    ball_argmin,
    bilinear_argmin,
    box_halfspaces,
    box_polygon_vertices,
    clip_polygon_many,
    simplify_polygon_outer,
    enumerate_vertices,
    lp_argmin,
)
from .problems import BallSet, BoxSet, FiniteSet, SafeRegretSetting

__all__ = ["SafeLUCBConfig", "SafeLUCB", "estimated_safe_mask"]

_EXPLORATION_BATCH = 1024  # phase-1 actions are drawn in batches (fewer Python-level calls)


def estimated_safe_mask(
    X: np.ndarray,
    B: np.ndarray,
    c: float,
    mu_hat: np.ndarray,
    A: np.ndarray,
    beta: float,
    kind: str = "polytope",
) -> np.ndarray:
    """Membership of the rows of ``X: (m, d)`` in the estimated safe set (§2.3 step 4, §2.5).

    ``kind="ellipsoid"``: ``xᵀBμ̂ + β ‖Bᵀx‖_{A⁻¹} ≤ c`` (safe for every μ with ``‖μ − μ̂‖_A ≤ β``).
    ``kind="polytope"``: ``xᵀBv_i ≤ c`` at the 2d vertices ``v_i`` of the L1 outer polytope
    (§1.4), i.e. ``xᵀBμ̂ + sqrt(d) β ‖A^{-1/2} Bᵀx‖_∞ ≤ c`` — a subset of the ellipsoidal set.
    Returns a boolean ``(m,)`` array. ``A: (d, d)`` is the design matrix.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    XB = X @ B  # rows (Bᵀx)ᵀ
    if kind == "ellipsoid":
        return XB @ mu_hat + beta * weighted_norms(XB, np.linalg.inv(A)) <= c
    if kind == "polytope":
        V = l1_polytope_vertices(mu_hat, inverse_sqrt(A), beta)
        return np.all(XB @ V.T <= c, axis=1)
    raise ValueError(f"kind must be 'polytope' or 'ellipsoid', got {kind!r}")


@dataclass(frozen=True)
class SafeLUCBConfig:
    """Options of Safe-LUCB.

    ``exploration``: ``"gap"`` (``T' = ⌈T_Δ⌉``, Lemma 2 / Theorem 2; needs ``safety_gap``),
    ``"t23"`` (``T' = ⌈T_0⌉``, Theorem 3) or an explicit integer ``T' ≥ 0`` (§2.4).
    ``safety_gap``: the known Δ for ``"gap"``.
    ``dw``: ``"ball"`` (paper) or ``"ellipsoid"`` (authors' code) exploration set (§2.5d).
    ``confidence_set``: ``"polytope"`` (L1 outer polytope, default, §2.7 item 2) or
    ``"ellipsoid"`` (finite action sets only, §2.5a).
    ``vertex_method``: for the box (§2.5b steps 3–4): ``"auto"`` (``"clip"`` in 2-D, else
    ``"enumerate"``), ``"clip"`` (clip the square by the safety half-planes, 2-D only),
    ``"enumerate"`` (all d-subsets of constraints), ``"qhull"`` or ``"lp"`` (one HiGHS LP per
    confidence vertex).
    ``intersect``: intersect all past confidence polytopes (box, d = 2; §2.5b step 5).
    ``max_polygon_vertices``: with ``intersect``, once the running polygon has more vertices it
    is outer-simplified to 4 fewer (it stays a superset, so safety is kept; without a cap clipping
    accumulates tiny edges — 66 vertices after 10^5 rounds — and slows every round down).
    ``refresh_every``: exact refresh period of ``A⁻¹`` and ``log det A``.
    ``mc_samples``: Monte Carlo draws for λ_− when D^w is cut by D_0 (§2.5d).
    """

    exploration: str | int = "gap"
    safety_gap: float | None = None
    dw: str = "ball"
    confidence_set: str = "polytope"
    vertex_method: str = "auto"
    intersect: bool = False
    max_polygon_vertices: int = 12
    refresh_every: int = 1000
    mc_samples: int = 100_000

    def __post_init__(self):
        e = self.exploration
        if isinstance(e, bool) or not (e in ("gap", "t23") or (isinstance(e, (int, np.integer)) and e >= 0)):
            raise ValueError(f"exploration must be 'gap', 't23' or an int >= 0, got {e!r}")
        if e == "gap" and (self.safety_gap is None or not self.safety_gap > 0):
            raise ValueError(f"safety_gap must be > 0 when exploration='gap', got {self.safety_gap!r}")
        if self.dw not in ("ball", "ellipsoid"):
            raise ValueError(f"dw must be 'ball' or 'ellipsoid', got {self.dw!r}")
        if self.confidence_set not in ("polytope", "ellipsoid"):
            raise ValueError(f"confidence_set must be 'polytope' or 'ellipsoid', got {self.confidence_set!r}")
        if self.vertex_method not in ("auto", "clip", "enumerate", "qhull", "lp"):
            raise ValueError(
                f"vertex_method must be 'auto', 'clip', 'enumerate', 'qhull' or 'lp', got {self.vertex_method!r}"
            )
        if self.max_polygon_vertices < 4:
            raise ValueError(f"max_polygon_vertices must be >= 4, got {self.max_polygon_vertices}")
        if self.refresh_every < 1:
            raise ValueError(f"refresh_every must be >= 1, got {self.refresh_every}")
        if self.mc_samples < 100:
            raise ValueError(f"mc_samples must be >= 100, got {self.mc_samples}")


class SafeLUCB:
    """Safe-LUCB ask/tell state machine (§2.3).

    Attributes (read-only by convention):

    - ``exploration_set`` (:class:`ExplorationSet`), ``lambda_minus`` (λ_−), ``t_delta`` (t_δ),
      ``exploration_rounds`` (T');
    - ``state`` (:class:`RidgeState`), ``t`` (the 1-based index of the round being asked).
    """

    def __init__(
        self,
        setting: SafeRegretSetting,
        config: SafeLUCBConfig = SafeLUCBConfig(exploration="t23"),
        rng: np.random.Generator | None = None,
    ):
        if rng is None:
            raise ValueError("rng: a numpy.random.Generator is required")
        D0 = setting.action_set
        if config.confidence_set == "ellipsoid" and not isinstance(D0, FiniteSet):
            raise ValueError("confidence_set='ellipsoid' is implemented for finite action sets only")
        if config.vertex_method == "clip" and not (isinstance(D0, BoxSet) and D0.d == 2):
            raise ValueError("vertex_method='clip' needs a 2-D box")
        if config.intersect and not (isinstance(D0, BoxSet) and D0.d == 2 and config.confidence_set == "polytope"):
            raise ValueError("intersect=True needs a 2-D box and confidence_set='polytope'")
        self.setting = setting
        self.config = config
        self._rng = rng
        self.exploration_set: ExplorationSet = build_exploration_set(
            setting, config.dw, rng, config.mc_samples
        )
        self.lambda_minus = self.exploration_set.lambda_minus
        self.t_delta = t_delta(setting.L, self.lambda_minus, setting.d, setting.delta)
        self.exploration_rounds = exploration_length(setting, config.exploration, self.lambda_minus, config.safety_gap)
        self.state = RidgeState(setting.d, setting.lam, 1, config.refresh_every)
        self.t = 1
        self._pending: np.ndarray | None = None
        self._batch = np.empty((0, setting.d))
        self._box = box_halfspaces(D0.d, D0.half_width) if isinstance(D0, BoxSet) else None
        self._vertex_method = config.vertex_method
        if self._vertex_method == "auto":
            self._vertex_method = "clip" if D0.d == 2 else "enumerate"
        self._poly: np.ndarray | None = None  # intersected confidence polygon (intersect=True)
        self.intersection_resets = 0  # times the intersection became empty (confidence event failed)
        self._safe_rows: np.ndarray | None = None  # this round's rows g with gᵀx ≤ c (polytope)
        self._ell: tuple | None = None  # this round's (μ̂, β, A⁻¹) (ellipsoid safe set)
        #: Vertices ``(m, d)`` of this round's confidence polytope (phase 2, polytope mode).
        self.confidence_vertices: np.ndarray | None = None

    # ----------------------------------------------------------------- public API
    @property
    def phase(self) -> int:
        """1 during pure exploration (``t ≤ T'``), 2 afterwards."""
        return 1 if self.t <= self.exploration_rounds else 2

    def beta(self) -> float:
        """``β_t = R sqrt(d log((1 + (t−1) L²/λ)/δ)) + λ^{1/2} S`` (§2.3 step 3); ``t − 1`` = samples so far."""
        s = self.setting
        return radius_horizon(self.state.n, s.d, s.lam, s.R, s.S, s.L, s.delta)

    def ask(self) -> np.ndarray:
        """The action ``x_t``, shape ``(d,)``. Idempotent until :meth:`tell`."""
        if self._pending is None:
            self._pending = self._explore() if self.phase == 1 else self._optimistic()
        return self._pending.copy()

    def tell(self, x: np.ndarray, loss: float) -> None:
        """Record the observed loss ``ℓ_t`` of action ``x: (d,)`` and move to round ``t + 1``."""
        x = np.asarray(x, dtype=float)
        if x.shape != (self.setting.d,):
            raise ValueError(f"x: expected shape ({self.setting.d},), got {x.shape}")
        self.state.update(x, float(loss))
        self.t += 1
        self._pending = None

    def in_estimated_safe_set(self, x: np.ndarray) -> bool:
        """Whether ``x`` lies in this round's estimated safe set ``D_t^s`` (phase 2, after :meth:`ask`).

        Diagnostic of §2.6 (fraction of rounds with ``x* ∈ D_t^s``).
        """
        x = np.asarray(x, dtype=float)
        c = self.setting.c
        if self._safe_rows is not None:
            return bool(np.all(self._safe_rows @ x <= c + FEASIBILITY_TOL * (1 + c)))
        if self._ell is not None:
            mu_hat, beta, A_inv = self._ell
            Bt_x = self.setting.B.T @ x
            return bool(x @ self.setting.B @ mu_hat + beta * float(weighted_norms(Bt_x, A_inv)) <= c)
        raise RuntimeError("no estimated safe set yet: call ask() in phase 2 first")

    # ----------------------------------------------------------------- phase 1
    def _explore(self) -> np.ndarray:
        if self._batch.shape[0] == 0:
            n = min(_EXPLORATION_BATCH, self.exploration_rounds - self.t + 1)
            self._batch = sample_exploration(self.exploration_set, self.setting.action_set, self._rng, n)
        x, self._batch = self._batch[0], self._batch[1:]
        return x

    # ----------------------------------------------------------------- phase 2
    def _optimistic(self) -> np.ndarray:
        s = self.setting
        mu_hat = self.state.estimate()
        beta = self.beta()
        if self.config.confidence_set == "ellipsoid":
            return self._finite_ellipsoid(mu_hat, beta)
        A_sqrt, A_inv_sqrt = sqrt_pair(self.state.A)
        V = l1_polytope_vertices(mu_hat, A_inv_sqrt, beta)  # (2d, d) confidence vertices
        if self.config.intersect:
            V = self._intersect(V, mu_hat, A_sqrt, beta)
        # xᵀBv ≤ c for every vertex v ⇔ rows (B v)ᵀ = vᵀBᵀ (§2.5b step 2).
        safe_rows = V @ s.B.T
        self._safe_rows = safe_rows
        self.confidence_vertices = V
        D0 = s.action_set
        if isinstance(D0, BoxSet):
            method = self._vertex_method
            if method == "lp":
                x, _, _ = lp_argmin(V, safe_rows, np.full(len(V), s.c), bounds=(-D0.half_width, D0.half_width))
                return x
            if method == "clip":
                U = box_polygon_vertices(safe_rows, np.full(len(V), s.c), D0.half_width)
            else:
                G = np.concatenate([safe_rows, self._box[0]])
                h = np.concatenate([np.full(len(V), s.c), self._box[1]])
                U = enumerate_vertices(G, h, method)
            j, _, _ = bilinear_argmin(U, V)
            return U[j].copy()
        if isinstance(D0, BallSet):
            x, _, _ = ball_argmin(V, safe_rows, np.full(len(V), s.c), D0.radius)
            return x
        # Finite set, polytope confidence set: exact enumeration (§2.5a).
        X = D0.arms
        safe = np.all(X @ safe_rows.T <= s.c, axis=1)
        scores = np.min(X @ V.T, axis=1)  # min_{v ∈ P} vᵀx is attained at a vertex
        return self._finite_pick(X, safe, scores)

    def _finite_ellipsoid(self, mu_hat: np.ndarray, beta: float) -> np.ndarray:
        """§2.5a with the ellipsoid: safe iff ``xᵀBμ̂ + β‖Bᵀx‖_{A⁻¹} ≤ c``; optimistic loss
        ``μ̂ᵀx − β‖x‖_{A⁻¹}``."""
        s = self.setting
        X = s.action_set.arms
        A_inv = self.state.A_inv
        self._ell = (mu_hat, beta, A_inv.copy())
        XB = X @ s.B  # rows (Bᵀx)ᵀ
        safe = XB @ mu_hat + beta * weighted_norms(XB, A_inv) <= s.c
        scores = X @ mu_hat - beta * weighted_norms(X, A_inv)
        return self._finite_pick(X, safe, scores)

    def _finite_pick(self, X: np.ndarray, safe: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if safe.any():
            idx = np.flatnonzero(safe)
            return X[idx[int(np.argmin(scores[idx]))]].copy()
        # Empty estimated safe set (impossible when 0 ∈ X): fall back to the D^w arms,
        # which are safe for every admissible parameter (§2.5a).
        P = self.exploration_set.points
        if self.config.confidence_set == "ellipsoid":
            mu_hat, beta, A_inv = self._ell
            sc = P @ mu_hat - beta * weighted_norms(P, A_inv)
        else:
            sc = np.min(P @ self.confidence_vertices.T, axis=1)
        return P[int(np.argmin(sc))].copy()

    def _intersect(self, V: np.ndarray, mu_hat: np.ndarray, A_sqrt: np.ndarray, beta: float) -> np.ndarray:
        """Intersect the running confidence polygon with this round's L1 polytope (§2.5b step 5).

        Valid because the confidence bound holds for all rounds simultaneously. If the
        intersection becomes empty the confidence event has failed; we then restart from the
        current polytope (counted in ``intersection_resets``).
        """
        if self._poly is None:
            self._poly = V.copy()  # order +e1, +e2, −e1, −e2 is cyclic in 2-D
            return self._poly
        G, h = l1_polytope_halfspaces(mu_hat, A_sqrt, beta)
        P = clip_polygon_many(self._poly, G, h)
        if P.shape[0] == 0:
            self.intersection_resets += 1
            P = V.copy()
        # A degenerate (segment/point) polygon is still a valid vertex description: keep it.
        if P.shape[0] > self.config.max_polygon_vertices:
            # Hysteresis: simplify well below the cap so that it runs every few rounds only.
            P = simplify_polygon_outer(P, max(4, self.config.max_polygon_vertices - 4))
        self._poly = P
        return P
