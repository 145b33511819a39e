"""Safe-LUCB's pure-exploration phase (Amani, Alizadeh, Thrampoulidis 2019, §2.2 and §3.2–3.4):
the safe set D^w, λ_−, and the lengths t_δ, T_Δ, T_0; plus the plug-in quantities of our
rule for an unknown Δ (heuristic, not the paper's): :func:`plug_in_gap`,
:func:`heuristic_gap_needed`.

D^w is safe for *every* admissible parameter ‖μ‖ ≤ S, so phase 1 is safe with probability
one. Two shapes are offered:

- ``"ball"`` (the paper, §2.2): {x ∈ D_0 : ‖x‖ ≤ c/(‖B‖S)}, since xᵀBμ ≤ ‖x‖‖B‖‖μ‖.
- ``"ellipsoid"`` (the authors' MATLAB code): {x : ‖Bᵀx‖ ≤ c/S}, since
  xᵀBμ = (Bᵀx)ᵀμ ≤ ‖Bᵀx‖S. (The code writes ‖Bx‖ with its transposed-B convention;
  identical for symmetric B.) Unlike the code we keep only samples inside D_0 (rejection),
  which changes nothing when the ellipsoid lies inside D_0 — true for both Appendix F instances.

For a finite arm set, D^w is the set of arms inside the ball (or the ellipsoid), sampled
uniformly (our adaptation). For the uniform law on a centred ball of radius r the
covariance is r²/(d+2)·I, so λ_− = c²/((d+2)S²‖B‖²) for the ball (as in the authors' code);
the ellipsoid gives the *same* λ_− because λ_min(B⁻ᵀB⁻¹) = 1/σ_max(B)². When the set is cut
by D_0, λ_− is estimated by Monte Carlo.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cbai_cli.numerics.confidence import radius_horizon

from cbai_cli.kinds.safe.action_sets import ActionSet
from cbai_cli.kinds.safe.problems import SafeRegretSetting

__all__ = [
    "ExplorationSet",
    "build_exploration_set",
    "sample_exploration",
    "uniform_ball",
    "t_delta",
    "beta_T",
    "t_gap",
    "t_zero",
    "exploration_length",
    "uncapped_exploration_length",
    "plug_in_gap",
    "heuristic_gap_needed",
]


@dataclass(frozen=True, eq=False)
class ExplorationSet:
    """The safe exploration set D^w (Amani et al. 2019, §2.2).

    Attributes:
        kind: ``"ball"``, ``"ellipsoid"`` or ``"finite"``.
        radius: r_w = c/(‖B‖S) for the ball, c/S for the ellipsoid.
        lambda_minus: λ_− = λ_min(E[xxᵀ]) under the uniform law on the set.
        lambda_minus_exact: False when λ_− is a Monte Carlo estimate (set cut by D_0).
        rejection: samples outside D_0 must be rejected.
        transform: (d, d): the ellipsoid is {radius · transform @ u : ‖u‖ ≤ 1} (transform = B⁻ᵀ).
        points: (n, d) the finite exploration arms (``kind == "finite"``).
    """

    kind: str
    radius: float
    lambda_minus: float
    lambda_minus_exact: bool
    rejection: bool
    transform: np.ndarray | None = None
    points: np.ndarray | None = None


def uniform_ball(rng: np.random.Generator, size: int, d: int, r: float) -> np.ndarray:
    """(size, d): i.i.d. uniform points of the ball of radius ``r`` in R^d (g ~ N(0, I),
    u ~ U(0, 1), x = r·u^{1/d}·g/‖g‖)."""
    g = rng.standard_normal((size, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    u = rng.random(size) ** (1.0 / d)
    return r * u[:, None] * g


def _raw_sample(ex: ExplorationSet, rng: np.random.Generator, size: int, d: int) -> np.ndarray:
    if ex.kind == "finite":
        return ex.points[rng.integers(ex.points.shape[0], size=size)]
    U = uniform_ball(rng, size, d, ex.radius)
    if ex.kind == "ellipsoid":
        U = U @ ex.transform.T
    return U


#: Rejection sampling of D^w ∩ D_0 gives up when fewer than this share of draws lands in D_0
#: after MIN_DRAWS draws.
MIN_ACCEPTANCE = 1e-4
MIN_DRAWS = 1_000_000


def sample_exploration(
    ex: ExplorationSet, action_set: ActionSet, rng: np.random.Generator, size: int
) -> np.ndarray:
    """(size, d): i.i.d. draws from Unif(D^w) (Amani et al. 2019, §2.2), rejecting points
    outside D_0 when needed."""
    d = action_set.d
    if not ex.rejection:
        return _raw_sample(ex, rng, size, d)
    out = np.empty((0, d))
    drawn = 0
    while out.shape[0] < size:
        batch = max(size, 64)
        X = _raw_sample(ex, rng, batch, d)
        drawn += batch
        out = np.concatenate([out, X[action_set.contains(X)]])
        # Rejection sampling needs D^w ∩ D_0 to hold a fair share of D^w: below one draw
        # in MIN_ACCEPTANCE it would run for ever in practice.
        if drawn >= MIN_DRAWS and out.shape[0] < drawn * MIN_ACCEPTANCE:
            raise ValueError(f"the exploration set D^w barely meets the action set (fewer than one draw in "
                             f"{1 / MIN_ACCEPTANCE:.0e} lands in it): its uniform law cannot be sampled")
    return out[:size]


def build_exploration_set(
    setting: SafeRegretSetting,
    dw: str = "ball",
    rng: np.random.Generator | None = None,
    mc_samples: int = 100_000,
) -> ExplorationSet:
    """D^w for ``setting`` (Amani et al. 2019, §2.2; see the module docstring).

    ``rng`` is needed only when λ_− must be estimated by Monte Carlo (``mc_samples`` draws);
    without it such a set comes back with ``lambda_minus = nan`` (the set is known, its λ_−
    is not). Finite sets: D^w_X = the arms inside the ball/ellipsoid, λ_− exact for the
    uniform law on them; λ_− = 0 when they do not span R^d (then only an explicit T' is
    possible).
    """
    if dw not in ("ball", "ellipsoid"):
        raise ValueError(f"dw must be 'ball' or 'ellipsoid', got {dw!r}")
    d, B, c, S = setting.d, setting.B, setting.c, setting.S
    D0 = setting.action_set
    B_norm = setting.B_norm
    if dw == "ball":
        if B_norm == 0:
            raise ValueError("B = 0: every action is safe; D^w would be unbounded")
        radius, transform = c / (B_norm * S), None
    else:
        try:
            transform = np.linalg.inv(B.T)  # x = (c/S) B⁻ᵀ u  ⇒  ‖Bᵀx‖ = (c/S)‖u‖
        except np.linalg.LinAlgError:
            raise ValueError("dw='ellipsoid' needs an invertible B") from None
        radius = c / S

    X = D0.finite_arms
    if X is not None:
        if dw == "ball":
            size = np.linalg.norm(X, axis=1) / radius
        else:
            size = np.linalg.norm(X @ B, axis=1) / radius  # rows xᵀB = (Bᵀx)ᵀ
        P = X[size <= 1.0 + 1e-12]
        if P.shape[0] == 0:
            raise ValueError("no arm of the finite action set lies in D^w (add the 0 arm, which is always safe)")
        cov = P.T @ P / P.shape[0]
        lm = float(max(np.linalg.eigvalsh(cov)[0], 0.0))
        P = P.copy()
        P.setflags(write=False)
        return ExplorationSet("finite", radius, lm, True, False, transform, P)

    # Continuous D_0: is the set, cut by D_0, a set with a closed-form λ_−?
    if dw == "ball":
        cut = D0.centred_ball_cut(radius)
        if cut is not None:  # the ball inside D_0, or a ball D_0 inside the ball: the smaller ball
            return ExplorationSet("ball", cut, float(cut**2 / (d + 2)), True, False, None, None)
    elif D0.contains_ellipsoid(radius, transform):
        exact_lm = radius**2 / (d + 2) * float(np.linalg.eigvalsh(transform @ transform.T)[0])
        return ExplorationSet(dw, radius, float(exact_lm), True, False, transform, None)
    ex = ExplorationSet(dw, radius, math.nan, False, True, transform, None)
    if rng is None:  # D^w leaves D_0: λ_− is a Monte Carlo estimate, which only a run's generator may draw
        return ex
    Xmc = sample_exploration(ex, D0, rng, mc_samples)
    lm = float(np.linalg.eigvalsh(Xmc.T @ Xmc / mc_samples)[0])
    return ExplorationSet(dw, radius, lm, False, True, transform, None)


def t_delta(L: float, lambda_minus: float, d: int, delta: float) -> float:
    """t_δ = (8L²/λ_−)·log(d/δ): after T' ≥ t_δ exploration rounds λ_min(Σ xxᵀ) ≥ T'λ_−/2 with
    probability ≥ 1 − δ (Amani et al. 2019, Lemma 1, §3.2; constants re-derived from the
    matrix Chernoff bound); ∞ if λ_− = 0."""
    if lambda_minus <= 0:
        return math.inf
    return 8.0 * L * L / lambda_minus * math.log(d / delta)


def beta_T(setting: SafeRegretSetting) -> float:
    """β_T: the radius of Theorem 1 (Amani et al. 2019) at the last round t = T, i.e. with
    n = T − 1 samples (β_t uses t − 1, as in the authors' code; 6.798489 on instance A)."""
    s = setting
    return radius_horizon(s.T - 1, s.d, s.lam, s.R, s.S, s.L, s.delta)


def t_gap(setting: SafeRegretSetting, lambda_minus: float, safety_gap: float) -> float:
    """T_Δ = max{t_δ, 8L²‖B‖²β_T²/(λ_−Δ²)}: with T' ≥ T_Δ, x* lies in every later estimated safe
    set (Amani et al. 2019, Lemma 2 and Theorem 2, §3.3; constants re-derived); needs Δ > 0."""
    if not safety_gap > 0:
        raise ValueError(f"safety_gap must be > 0 for T_Δ, got {safety_gap}")
    s = setting
    td = t_delta(s.L, lambda_minus, s.d, s.delta)
    if lambda_minus <= 0:
        return math.inf
    b = beta_T(s)
    return max(td, 8.0 * s.L**2 * s.B_norm**2 * b * b / (lambda_minus * safety_gap**2))


def t_zero(setting: SafeRegretSetting, lambda_minus: float) -> float:
    """T_0 = max{t_δ, (sqrt(2d)‖B‖Lβ_T T / (2c·sqrt(λ_−)))^{2/3}}, the T^{2/3} exploration of
    Theorem 3 (Amani et al. 2019, §3.4), as written in the authors' ``CLBwithD_0.m``."""
    s = setting
    td = t_delta(s.L, lambda_minus, s.d, s.delta)
    if lambda_minus <= 0:
        return math.inf
    b = beta_T(s)
    return max(td, (math.sqrt(2 * s.d) * s.B_norm * s.L * b * s.T / (2 * s.c * math.sqrt(lambda_minus))) ** (2.0 / 3.0))


def exploration_length(
    setting: SafeRegretSetting, mode: str | int, lambda_minus: float, safety_gap: float | None = None
) -> int:
    """T' for ``mode`` ∈ {``"gap"`` (⌈T_Δ⌉), ``"t23"`` (⌈T_0⌉), an explicit int ≥ 0}, capped at T.

    ``"heuristic"`` (heuristic, not the paper's) returns its *budget* ⌈T_0⌉ (capped at T):
    an upper bound only, the realised T' is decided during the run
    (:class:`~.safe_lucb.SafeLUCB`).
    """
    return int(min(uncapped_exploration_length(setting, mode, lambda_minus, safety_gap), setting.T))


def uncapped_exploration_length(
    setting: SafeRegretSetting, mode: str | int, lambda_minus: float, safety_gap: float | None = None
) -> int:
    """:func:`exploration_length` before its cap at T: ⌈T_Δ⌉, ⌈T_0⌉ or the count given."""
    if isinstance(mode, (int, np.integer)) and not isinstance(mode, bool):
        if mode < 0:
            raise ValueError(f"exploration must be >= 0, got {mode}")
        return int(mode)
    if mode == "gap":
        if safety_gap is None:
            raise ValueError("exploration='gap' needs safety_gap (Δ is assumed known, Theorem 2)")
        val = t_gap(setting, lambda_minus, safety_gap)
    elif mode in ("t23", "heuristic"):
        val = t_zero(setting, lambda_minus)
    else:
        raise ValueError(f"exploration must be 'gap', 't23', 'heuristic' or an int, got {mode!r}")
    if not math.isfinite(val):
        raise ValueError("λ_− = 0 (D^w does not span R^d): the exploration length is infinite")
    return math.ceil(val)


def plug_in_gap(
    setting: SafeRegretSetting, mu_hat: np.ndarray, A_inv: np.ndarray, beta: float
) -> tuple[np.ndarray | None, float]:
    """Plug-in optimum and safety-gap estimate of our rule for an unknown Δ (heuristic, not
    the paper's — it needs no knowledge of Δ; the paper's safety gap is that of §3.3).

    x̂* = argmin {μ̂ᵀx : x ∈ D_0, xᵀBμ̂ ≤ c}, computed exactly by
    :meth:`~.action_sets.ActionSet.optimal_action` (HiGHS LP for the box, closed form for
    the ball, enumeration for a finite set), and Δ̂ = c − x̂*ᵀBμ̂ − 2β‖Bᵀx̂*‖_{A⁻¹}.

    ``mu_hat``: (d,) the ridge estimate, ``A_inv``: (d, d) the inverse design matrix, ``beta``
    the confidence radius of the same data. Returns (x̂*: (d,), Δ̂); (None, −∞) when no arm of
    a finite set is safe under μ̂ (the origin is always plug-in safe for the box and the ball
    since c > 0).
    """
    s = setting
    mu_hat = np.asarray(mu_hat, dtype=float)
    a = s.B @ mu_hat  # plug-in constraint aᵀx ≤ c
    x_hat = s.action_set.optimal_action(mu_hat, s.B, s.c)
    if x_hat is None:
        return None, -math.inf
    slack = s.c - float(x_hat @ a)
    Bt_x = s.B.T @ x_hat
    width = math.sqrt(max(float(Bt_x @ A_inv @ Bt_x), 0.0))
    return x_hat, slack - 2.0 * beta * width


def heuristic_gap_needed(setting: SafeRegretSetting, lambda_minus: float, t: float) -> float:
    """The smallest gap estimate that lets our heuristic stop at round ``t`` (not the
    paper's): sqrt(8L²‖B‖²β_T²/(λ_− t)).

    ``t ≥ 8L²‖B‖²β_T²/(λ_− Δ̂²)`` (the T_Δ formula with Δ̂) ⇔ ``Δ̂ ≥`` this value, for ``Δ̂ > 0``.
    ``∞`` when ``λ_− = 0`` or ``t ≤ 0``.
    """
    s = setting
    if lambda_minus <= 0 or t <= 0:
        return math.inf
    b = beta_T(s)
    return math.sqrt(8.0 * s.L**2 * s.B_norm**2 * b * b / (lambda_minus * t))
