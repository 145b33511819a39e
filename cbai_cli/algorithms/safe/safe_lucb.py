"""Safe-LUCB (Amani, Alizadeh, Thrampoulidis, NeurIPS 2019, Algorithm 1) as an ask/tell learner.

Phase 1, rounds t = 1..T': i.i.d. actions from the safe set D^w (§2.2, pure exploration).
T' is fixed at construction (``"gap"``: Lemma 2 / Theorem 2; ``"t23"``: Theorem 3; an
integer) or, for ``exploration="heuristic"``, decided during phase 1 by our plug-in rule for
an unknown Δ (heuristic, not the paper's; see :class:`SafeLUCBConfig`).
Phase 2, rounds t = T'+1..T: optimistic safe actions (§2.3, safe exploration–exploitation):

- μ̂_t = the ridge estimate on all past data; β_t = the radius of Theorem 1 with t − 1 samples;
- D_t^s = the actions safe for every parameter of the confidence set (eq. (8));
- x_t = argmin_{x ∈ D_t^s} min_{v ∈ C_t} vᵀx (Algorithm 1 step 10).

The confidence set is either the L1 outer polytope of the ellipsoid (the authors' MATLAB
code, and the default ``confidence_set="polytope"``) or, for finite arm sets only, the
ellipsoid itself (``"ellipsoid"``). The per-set computation of step 10 belongs to the action
set (:meth:`~.action_sets.ActionSet.optimistic_action`): vertex enumeration or LPs for the
box, tangent/corner enumeration or SOCPs for the ball, enumeration for a finite set. For the
2-D box the confidence polytopes of all rounds can be intersected (``intersect=True``: the
authors' ``intersectCLB.m``; valid because Theorem 1 holds for all t simultaneously).

Usage::

    alg = SafeLUCB(problem.learner_view(), SafeLUCBConfig(exploration="t23"), rng)
    while not alg.done:
        query = alg.ask()
        alg.tell(query, environment.answer(query))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cbai_cli.numerics.confidence import radius_horizon
from cbai_cli.numerics.linalg import RidgeDesign, inverse_sqrt, weighted_norms
from cbai_cli.contracts.protocol import Answer, Query

from cbai_cli.kinds.safe.action_sets import VERTEX_METHODS
from cbai_cli.algorithms.safe.confidence_sets import l1_polytope_halfspaces, l1_polytope_vertices
from cbai_cli.algorithms.safe.exploration import (
    ExplorationSet,
    build_exploration_set,
    exploration_length,
    heuristic_gap_needed,
    plug_in_gap,
    sample_exploration,
    t_delta,
    t_gap,
)
from cbai_cli.kinds.safe.polytopes import FEASIBILITY_TOL, clip_polygon_many, simplify_polygon_outer
from cbai_cli.kinds.safe.problems import SafeRegretSetting

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
    """Membership of the rows of ``X``: (m, d) in the estimated safe set D_t^s (Amani et al.
    2019, eq. (8)); returns bool (m,). ``A``: (d, d) is the design matrix.

    ``kind="ellipsoid"``: xᵀBμ̂ + β‖Bᵀx‖_{A⁻¹} ≤ c (safe for every μ with ‖μ − μ̂‖_A ≤ β).
    ``kind="polytope"``: xᵀBv_i ≤ c at the 2d vertices v_i of the L1 outer polytope (the
    authors' code), i.e. xᵀBμ̂ + sqrt(d)·β‖A^{-1/2}Bᵀx‖_∞ ≤ c — a subset of the ellipsoidal set.
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

    Attributes:
        exploration: T' as ``"gap"`` (⌈T_Δ⌉, Lemma 2 / Theorem 2, §3.3; needs
            ``safety_gap``), ``"t23"`` (⌈T_0⌉, Theorem 3, §3.4), ``"heuristic"`` (below) or an
            explicit integer T' ≥ 0.
        safety_gap: the known Δ for ``"gap"``.
        dw: the exploration set D^w: ``"ball"`` {‖x‖ ≤ c/(‖B‖S)} (§2.2) or ``"ellipsoid"``
            {‖Bᵀx‖ ≤ c/S} (the authors' code).
        confidence_set: ``"polytope"`` (the L1 outer polytope of the authors' code, default)
            or ``"ellipsoid"`` (finite action sets only).
        vertex_method: the box's computation of step 10: ``"auto"`` (``"clip"`` in 2-D, else
            ``"enumerate"``), ``"clip"`` (the square clipped by the safety half-planes, 2-D
            only), ``"enumerate"`` (all d-subsets of constraints), ``"qhull"`` or ``"lp"`` (one
            HiGHS LP per confidence vertex).
        intersect: intersect all past confidence polytopes (2-D box; ``intersectCLB.m``).
        max_polygon_vertices: with ``intersect``, once the running polygon has more vertices
            it is outer-simplified to 4 fewer (it stays a superset, so safety is kept; without
            a cap clipping accumulates tiny edges — 66 vertices after 10^5 rounds — and slows
            every round down).
        refresh_every: exact refresh period of A⁻¹ and log det A.
        mc_samples: Monte Carlo draws for λ_− when D^w is cut by D_0.
        heuristic_growth: g > 0 of the heuristic's check grid (below).

    ``exploration="heuristic"`` is our plug-in rule for an unknown Δ: **heuristic, not the
    paper's** (the paper mentions a "modified heuristic" without details), and it needs no
    knowledge of Δ. Phase 1 explores as ``"t23"`` (same samples, budget ⌈T_0⌉), but after
    exploration round t ≥ t_δ it may stop early: with the ridge estimate μ̂, A⁻¹ and radius β
    of the t samples so far it computes the plug-in x̂* = argmin{μ̂ᵀx : x ∈ D_0, xᵀBμ̂ ≤ c}
    (exact: :meth:`~.action_sets.ActionSet.optimal_action`) and
    Δ̂ = c − x̂*ᵀBμ̂ − 2β‖Bᵀx̂*‖_{A⁻¹}, and ends phase 1 with T' = t once Δ̂ > 0 and
    t ≥ max{t_δ, 8L²‖B‖²β_T²/(λ_−Δ̂²)} (the T_Δ of Lemma 2 with Δ̂). Otherwise T' = ⌈T_0⌉.
    *Check schedule*: geometric — the first check at ⌈t_δ⌉, then at
    t ← max(t + 1, ⌈(1 + heuristic_growth)·t⌉). Each check costs an LP (a few ms with HiGHS,
    ~100× a phase-2 round), so checking every round would dominate phase 1; a geometric grid
    has only log(T_0/t_δ)/log(1 + g) points (≈ 100 on the Appendix F instances at the default
    g = 1/32) and overshoots the first grid-free round at which the rule holds by at most a
    fraction g of T' — the same relative slack at every horizon. A grid point is skipped
    without an LP when even the upper bound Δ̂ ≤ c + L‖Bμ̂‖ is too small to stop (same
    decisions; ≈ 30–40 LPs per run remain on amani-a/-b at T = 10^5).
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
    heuristic_growth: float = 1.0 / 32.0

    def __post_init__(self) -> None:
        e = self.exploration
        if isinstance(e, bool) or not (
            e in ("gap", "t23", "heuristic") or (isinstance(e, (int, np.integer)) and e >= 0)
        ):
            raise ValueError(f"exploration must be 'gap', 't23', 'heuristic' or an int >= 0, got {e!r}")
        if e == "gap" and (self.safety_gap is None or not self.safety_gap > 0):
            raise ValueError(f"safety_gap must be > 0 when exploration='gap', got {self.safety_gap!r}")
        if self.dw not in ("ball", "ellipsoid"):
            raise ValueError(f"dw must be 'ball' or 'ellipsoid', got {self.dw!r}")
        if self.confidence_set not in ("polytope", "ellipsoid"):
            raise ValueError(f"confidence_set must be 'polytope' or 'ellipsoid', got {self.confidence_set!r}")
        if self.vertex_method not in VERTEX_METHODS:
            raise ValueError(
                f"vertex_method must be 'auto', 'clip', 'enumerate', 'qhull' or 'lp', got {self.vertex_method!r}"
            )
        if self.max_polygon_vertices < 4:
            raise ValueError(f"max_polygon_vertices must be >= 4, got {self.max_polygon_vertices}")
        if self.refresh_every < 1:
            raise ValueError(f"refresh_every must be >= 1, got {self.refresh_every}")
        if self.mc_samples < 100:
            raise ValueError(f"mc_samples must be >= 100, got {self.mc_samples}")
        g = self.heuristic_growth
        if isinstance(g, bool) or not (isinstance(g, (int, float)) and math.isfinite(g) and g > 0):
            raise ValueError(f"heuristic_growth must be > 0, got {self.heuristic_growth!r}")


class SafeLUCB:
    """Safe-LUCB as an ask/tell learner (Amani et al. 2019, Algorithm 1).

    :meth:`ask` gives ``Query.play(x_t)``; :meth:`tell` reads the loss ℓ_t = μ*ᵀx_t + η_t from
    ``answer.constraint[0]`` (the one signal: μ* sets both the loss and the constraint).

    ``done`` after T rounds. The setting includes the horizon T and the algorithm depends on
    it (T' through T_Δ or T_0, and β_T, §3.3–3.4), and the regret is defined over exactly T
    rounds; so the learner stops itself after its T-th observation and a generic
    ``while not done`` loop needs no separate budget.

    Attributes (read-only by convention):

    - ``exploration_set`` (:class:`~.exploration.ExplorationSet`), ``lambda_minus`` (λ_−),
      ``t_delta`` (t_δ), ``exploration_rounds`` (T'), ``exploration_budget`` (the largest
      possible T');
    - ``state`` (:class:`~cbai_cli.numerics.linalg.RidgeDesign`), ``t`` (the 1-based index of the round
      being asked).

    With ``exploration="heuristic"`` (heuristic, not the paper's) T' is decided on the fly:
    until then ``exploration_rounds`` is the budget ⌈T_0⌉ and ``exploration_decided`` is
    False; once the rule fires after round t, or the budget is reached,
    ``exploration_rounds`` is the realised T' and ``exploration_decided`` is True.
    ``gap_checks`` lists (t, Δ̂_t) of every check that solved the plug-in problem. For the
    other modes ``exploration_rounds == exploration_budget`` from the start.

    Args:
        setting: what the learner knows.
        config: the options.
        rng: the learner's generator (exploration draws, a Monte Carlo λ_−).
    """

    def __init__(
        self,
        setting: SafeRegretSetting,
        config: SafeLUCBConfig = SafeLUCBConfig(exploration="t23"),
        rng: np.random.Generator | None = None,
    ) -> None:
        if rng is None:
            raise ValueError("rng: a numpy.random.Generator is required")
        D0 = setting.action_set
        if config.confidence_set == "ellipsoid" and not D0.supports_ellipsoid_confidence:
            raise ValueError("confidence_set='ellipsoid' is implemented for finite action sets only")
        if config.vertex_method == "clip" and not D0.supports_polygon_clipping:
            raise ValueError("vertex_method='clip' needs a 2-D box")
        if config.intersect and not (D0.supports_intersection and config.confidence_set == "polytope"):
            raise ValueError("intersect=True needs a 2-D box and confidence_set='polytope'")
        self.setting = setting
        self.config = config
        self._rng = rng
        self.exploration_set: ExplorationSet = build_exploration_set(
            setting, config.dw, rng, config.mc_samples
        )
        self.lambda_minus = self.exploration_set.lambda_minus
        self.t_delta = t_delta(setting.L, self.lambda_minus, setting.d, setting.delta)
        self.exploration_budget = exploration_length(setting, config.exploration, self.lambda_minus, config.safety_gap)
        self._exploration_rounds = self.exploration_budget
        self.exploration_decided = config.exploration != "heuristic"
        self._next_check = max(1, math.ceil(self.t_delta)) if math.isfinite(self.t_delta) else math.inf
        self.gap_checks: list[tuple[int, float]] = []
        self.state = RidgeDesign(setting.d, setting.lam, 1, config.refresh_every)
        self.t = 1
        self._query: Query | None = None
        self._batch = np.empty((0, setting.d))
        self._poly: np.ndarray | None = None  # intersected confidence polygon (intersect=True)
        self.intersection_resets = 0  # times the intersection became empty (confidence event failed)
        self._safe_rows: np.ndarray | None = None  # this round's rows g with gᵀx ≤ c (polytope)
        self._ell: tuple | None = None  # this round's (μ̂, β, A⁻¹) (ellipsoid safe set)
        #: Vertices ``(m, d)`` of this round's confidence polytope (phase 2, polytope mode).
        self.confidence_vertices: np.ndarray | None = None

    # ----------------------------------------------------------------- public API
    @property
    def exploration_rounds(self) -> int:
        """``T'``: fixed for ``"gap"``/``"t23"``/integers; for ``"heuristic"`` the budget ⌈T_0⌉
        until the stopping rule fires, then the realised length (see the class docstring)."""
        return self._exploration_rounds

    @property
    def phase(self) -> int:
        """1 during pure exploration (t ≤ T'), 2 afterwards."""
        return 1 if self.t <= self.exploration_rounds else 2

    @property
    def done(self) -> bool:
        """Whether the T rounds of the horizon have been played."""
        return self.t > self.setting.T

    def beta(self) -> float:
        """β_t = R·sqrt(d log((1 + (t−1)L²/λ)/δ)) + λ^{1/2} S (Theorem 1, as in the authors'
        code); t − 1 = the samples so far."""
        s = self.setting
        return radius_horizon(self.state.n_samples, s.d, s.lam, s.R, s.S, s.L, s.delta)

    def ask(self) -> Query:
        """One play of the action x_t: (d,), read-only; the same query until :meth:`tell`."""
        if self.done:
            raise RuntimeError(f"Safe-LUCB has played its T = {self.setting.T} rounds")
        if self._query is None:
            action = np.array(self._explore() if self.phase == 1 else self._optimistic(), dtype=float)
            action.setflags(write=False)
            self._query = Query.play(action)
        return self._query

    def tell(self, query: Query, answer: Answer) -> None:
        """Record the loss ℓ_t = ``answer.constraint[0]`` of the action ``query.action`` and
        move to round t + 1. With ``exploration="heuristic"`` this is also where phase 1 may end."""
        x = query.action
        if x is None or x.shape != (self.setting.d,):
            shape = None if x is None else x.shape
            raise ValueError(f"query.action: expected an action x of shape ({self.setting.d},), got {shape}")
        self.state.add(x, float(answer.constraint[0]))
        self.t += 1
        self._query = None
        if not self.exploration_decided:
            self._heuristic_step()

    def in_estimated_safe_set(self, x: np.ndarray) -> bool:
        """Whether ``x`` lies in this round's estimated safe set D_t^s (phase 2, after :meth:`ask`):
        the diagnostic "does D_t^s contain x*?" of the regret of safety (§3.1)."""
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

    def _heuristic_step(self) -> None:
        """After exploration round n = t − 1: apply the heuristic's stopping rule if n is on the
        geometric check grid (heuristic, not the paper's; see :class:`SafeLUCBConfig`)."""
        n = self.state.n_samples
        if n >= self.exploration_budget:
            self.exploration_decided = True  # fell back to the budget ⌈T_0⌉
            return
        if n < self._next_check:
            return
        self._next_check = max(n + 1, math.ceil((1.0 + self.config.heuristic_growth) * n))
        s = self.setting
        mu_hat = self.state.estimate()
        needed = heuristic_gap_needed(s, self.lambda_minus, n)
        if s.c + s.L * float(np.linalg.norm(s.B @ mu_hat)) < needed:
            return  # Δ̂ ≤ c + L‖Bμ̂‖ cannot reach the threshold: skip the LP
        _, gap_hat = plug_in_gap(s, mu_hat, self.state.inverse, self.beta())
        self.gap_checks.append((n, gap_hat))
        if gap_hat > 0 and n >= t_gap(s, self.lambda_minus, gap_hat):
            self._exploration_rounds = n
            self.exploration_decided = True
            self._batch = self._batch[:0]  # unused phase-1 draws are dropped

    # ----------------------------------------------------------------- phase 2
    def _optimistic(self) -> np.ndarray:
        """Algorithm 1 step 10 over the L1 confidence polytope (or the ellipsoid)."""
        s = self.setting
        mu_hat = self.state.estimate()
        beta = self.beta()
        if self.config.confidence_set == "ellipsoid":
            return self._ellipsoid(mu_hat, beta)
        A_sqrt, A_inv_sqrt = self.state.sqrt_pair()
        V = l1_polytope_vertices(mu_hat, A_inv_sqrt, beta)  # (2d, d) confidence vertices
        if self.config.intersect:
            V = self._intersect(V, mu_hat, A_sqrt, beta)
        # xᵀBv ≤ c for every vertex v ⇔ rows (Bv)ᵀ = vᵀBᵀ: the safe polytope inside D_t^s.
        safe_rows = V @ s.B.T
        self._safe_rows = safe_rows
        self.confidence_vertices = V
        x = s.action_set.optimistic_action(V, safe_rows, s.c, self.config.vertex_method)
        return x if x is not None else self._fallback()

    def _ellipsoid(self, mu_hat: np.ndarray, beta: float) -> np.ndarray:
        """The optimistic step with the confidence ellipsoid itself (finite sets)."""
        s = self.setting
        inverse = self.state.inverse
        self._ell = (mu_hat, beta, inverse.copy())
        x = s.action_set.ellipsoid_optimistic_action(mu_hat, beta, inverse, s.B, s.c)
        return x if x is not None else self._fallback()

    def _fallback(self) -> np.ndarray:
        """The most optimistic D^w arm, when no arm of a finite set is estimated safe (impossible
        when 0 is an arm): D^w is safe for every admissible parameter."""
        P = self.exploration_set.points
        if self.config.confidence_set == "ellipsoid":
            mu_hat, beta, A_inv = self._ell
            sc = P @ mu_hat - beta * weighted_norms(P, A_inv)
        else:
            sc = np.min(P @ self.confidence_vertices.T, axis=1)
        return P[int(np.argmin(sc))].copy()

    def _intersect(self, V: np.ndarray, mu_hat: np.ndarray, A_sqrt: np.ndarray, beta: float) -> np.ndarray:
        """Intersect the running confidence polygon with this round's L1 polytope (the authors'
        ``intersectCLB.m``).

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
