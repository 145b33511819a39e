"""The inner problem of the yes/no lower bound: the cheapest alternative for one target, and a
certified lower bound on its cost.

For weights w (K,), a target y (a row of the arms X (K, d)) and the truth's answer probabilities
p (K,), the inner problem of :mod:`cbai_cli.kinds.cbai.bernoulli_bound` is

    I(w) = inf_{φ′ : yᵀφ′ = τ} Σ_x w_x kl(p_x, q_x(φ′)),   q_x(φ′) = (1 + xᵀφ′)/2,

a convex problem on the hyperplane. :func:`solve_inner` finds a near-optimal φ′ by damped
Newton steps; its cost vector is a valid cutting plane whatever its precision. Its value
bounds I(w) only from above, so the solve also gives a lower bound by weak duality
(:func:`dual_lower_bound`): for multipliers u (K,) with Xᵀu = −νy,

    I(w) ≥ Σ_x g_x(u_x) − ντ,   g_x(u) = min_{z ∈ [−1, 1]} w_x kl(p_x, (1 + z)/2) − u z,

each g_x in closed form (a quadratic's root). The Newton solve stops when its value and that
bound meet, so the bound's outer loop compares an upper and a lower bound on V*, both
certified up to rounding, instead of trusting the inner solve's precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Newton iterations of one inner problem at most (a solve that ends here only weakens its lower bound).
NEWTON_STEPS = 300
#: An inner solve stops once its value and its dual lower bound are within this relative gap.
INNER_GAP = 1e-9
#: Where on the segment from the largest-margin point to the domain's edge (towards the
#: quadratic start) a solve starts when that start leaves the means' box: at the edge itself
#: some answer is all but certain, and damped Newton steps stall there.
BACK_OFF = 0.999


@dataclass(frozen=True)
class Alternative:
    """One inner solve: ``point`` (d,) φ′ on the hyperplane, ``costs`` (K,) its relative entropies
    kl(p_x, q_x(φ′)) (a cutting plane), and ``lower`` ≤ I(w), the weak-duality bound."""

    point: np.ndarray
    costs: np.ndarray
    lower: float


def answer_probabilities(means: np.ndarray) -> np.ndarray:
    """(K,) P(+1) = (1 + m)/2 clipped to [0, 1] for the means m (K,) (:class:`cbai_cli.kinds.cbai.noise.BinaryNoise`)."""
    return np.clip((1.0 + np.asarray(means, dtype=float)) / 2.0, 0.0, 1.0)


def bernoulli_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Elementwise kl(p, q) = p log(p/q) + (1 − p) log((1 − p)/(1 − q)), with 0·log 0 = 0 and ∞
    where q puts no mass on an outcome p has."""
    p, q = np.broadcast_arrays(np.asarray(p, dtype=float), np.asarray(q, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        ones = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
        zeros = np.where(p < 1, (1 - p) * (np.log1p(-p) - np.log1p(-q)), 0.0)
    return ones + zeros


def _finite(p: np.ndarray, q: np.ndarray) -> bool:
    """Whether (1 + xᵀφ′)/2 = q (K,), unclipped, is an instance with every kl(p_x, q_x)
    finite: q in [0, 1] (every mean in [−1, 1], as cbai's yes/no instances need), and 0 or 1
    only where p is."""
    return bool(np.all((q >= 0) & (q <= 1) & ((q > 0) | (p == 0)) & ((q < 1) | (p == 1))))


def _derivatives(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(K,) ∂kl(p, q)/∂q = −p/q + (1 − p)/(1 − q) and ∂²kl/∂q² = p/q² + (1 − p)/(1 − q)², each
    term left out where its p is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(p > 0, -p / q, 0.0) + np.where(p < 1, (1 - p) / (1 - q), 0.0)
        curvature = np.where(p > 0, p / q**2, 0.0) + np.where(p < 1, (1 - p) / (1 - q) ** 2, 0.0)
    return slope, curvature


def solve_inner(arms: np.ndarray, probabilities: np.ndarray, weights: np.ndarray, target: int, threshold: float,
                constraint: np.ndarray, warm: np.ndarray | None = None) -> Alternative | None:
    """Minimise Σ_x w_x kl(p_x, q_x(φ′)) over the hyperplane yᵀφ′ = τ (y = ``arms[target]``) for
    the weights w (K,); None when no start with every relative entropy finite was found.

    The start is ``warm`` (d,), the previous alternative of this target, when its relative
    entropies are finite; otherwise the minimiser of the quadratic approximation
    Σ_x w_x (xᵀε)²/(2v_x), v_x the answer's variance 1 − m_x² (floored at 10⁻³):
    φ − g(y)·M⁻¹y/(yᵀM⁻¹y), M = Σ_x (w_x/v_x)·x xᵀ, moved inside the means' box when it leaves
    it (:func:`_inside_start`). Then damped Newton steps in the hyperplane, each first shortened
    to stay inside the box and then halved until the objective falls (Armijo), until the value
    and :func:`dual_lower_bound` are within :data:`INNER_GAP` or :data:`NEWTON_STEPS` steps.
    """
    y = arms[target]

    def objective(candidate: np.ndarray) -> float:
        q = (1.0 + arms @ candidate) / 2.0
        return float(weights @ bernoulli_kl(probabilities, q)) if _finite(probabilities, q) else math.inf

    point, value = (None, math.inf) if warm is None else (warm, objective(warm))
    if not math.isfinite(value):
        point = _quadratic_start(arms, probabilities, weights, y, threshold, constraint)
        if point is None:
            return None
        value = objective(point)
    # an orthonormal basis of the hyperplane's directions (those with yᵀe = 0)
    basis = np.linalg.svd(y[None, :])[2][1:].T
    local = arms @ basis  # (K, d − 1)
    lower = -math.inf
    for _ in range(NEWTON_STEPS):
        q = (1.0 + arms @ point) / 2.0
        slope, curvature = _derivatives(probabilities, q)
        lower = _dual_bound(arms, probabilities, weights, y, threshold, slope, curvature)
        if value - lower <= INNER_GAP * value:
            break
        gradient = local.T @ (weights * slope) / 2.0
        hessian = (local * (weights * curvature / 4.0)[:, None]).T @ local
        hessian += 1e-14 * max(float(np.trace(hessian)), 1e-300) * np.eye(hessian.shape[0])
        step = -np.linalg.solve(hessian, gradient)
        decrement = float(-gradient @ step)
        change = local @ step / 2.0  # the step's change of each q
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(change > 0, (1 - q) / change, np.where(change < 0, -q / change, math.inf))
        length = min(1.0, 0.99 * float(np.min(room, initial=math.inf)))
        while length > 1e-12:
            candidate = point + length * (basis @ step)
            new = objective(candidate)
            if new <= value - 0.25 * length * decrement:
                point, value = candidate, new
                break
            length /= 2.0
        else:
            break
    else:
        lower = dual_lower_bound(arms, probabilities, weights, target, threshold, point)
    costs = bernoulli_kl(probabilities, answer_probabilities(arms @ point))
    return Alternative(point, costs, min(lower, value))


def _quadratic_start(arms: np.ndarray, probabilities: np.ndarray, weights: np.ndarray, y: np.ndarray,
                     threshold: float, constraint: np.ndarray) -> np.ndarray | None:
    """The minimiser (d,) on the hyperplane of the quadratic approximation (:func:`solve_inner`),
    moved inside the means' box when it leaves it; None when there is none."""
    means = 2.0 * probabilities - 1.0
    variances = np.maximum(1.0 - means**2, 1e-3)
    gram = (arms * (weights / variances)[:, None]).T @ arms
    direction = np.linalg.lstsq(gram + 1e-12 * np.trace(gram) * np.eye(arms.shape[1]), y, rcond=None)[0]
    scale = float(y @ direction)
    if not scale > 0:
        return None
    start = constraint - (float(y @ constraint) - threshold) * direction / scale
    if _finite(probabilities, (1.0 + arms @ start) / 2.0):
        return start
    return _inside_start(arms, probabilities, y, threshold, start)


def _inside_start(arms: np.ndarray, probabilities: np.ndarray, y: np.ndarray, threshold: float,
                  goal: np.ndarray) -> np.ndarray | None:
    """A point of the hyperplane yᵀφ′ = τ at which every relative entropy is finite, towards
    ``goal`` (d,) along a segment, short of the domain's edge, or None when there is none.

    A linear program finds the point c of the hyperplane whose means keep the largest margin s
    inside (−1, 1); the domain is convex, so bisection on the segment from c to ``goal`` finds
    its edge e inside it, and the start is c + :data:`BACK_OFF`·(e − c).
    """
    from scipy.optimize import linprog

    dim = arms.shape[1]
    margin = np.ones((arms.shape[0], 1))
    objective = np.zeros(dim + 1)
    objective[-1] = -1.0
    result = linprog(objective, A_ub=np.vstack([np.hstack([arms, margin]), np.hstack([-arms, margin])]),
                     b_ub=np.ones(2 * arms.shape[0]), A_eq=np.append(y, 0.0)[None, :],
                     b_eq=[threshold], bounds=[(None, None)] * dim + [(None, 1.0)], method="highs")
    if result.status != 0 or not result.x[-1] > 0:
        return None
    center = inside = result.x[:dim]
    outside = goal
    for _ in range(60):
        middle = (inside + outside) / 2.0
        if _finite(probabilities, (1.0 + arms @ middle) / 2.0):
            inside = middle
        else:
            outside = middle
    return center + BACK_OFF * (inside - center)


def _minimising_probability(weights: np.ndarray, p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(K,) the q in [0, 1] minimising w kl(p, q) − u(2q − 1): the root in [0, 1] of
    2u q² + (w − 2u) q − w p = 0 (negative at 0, w(1 − p) ≥ 0 at 1), by the form of the
    quadratic formula without cancellation."""
    b = weights - 2 * u
    disc = np.sqrt(b * b + 8 * u * weights * p)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(b >= 0, 2 * weights * p / (b + disc), (disc - b) / (4 * u))
    return np.clip(np.nan_to_num(q, nan=0.0), 0.0, 1.0)


def conjugate_terms(weights: np.ndarray, p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(K,) g_x(u_x) = min_{z ∈ [−1, 1]} w_x kl(p_x, (1 + z)/2) − u_x z.

    The minimiser's P(+1) q and P(−1) s are each computed as the small root of their own
    quadratic (s is q's with p → 1 − p, u → −u), so that log q and log s keep their precision
    at either end; a term that still overflows is replaced by −|u_x| ≤ g_x(u_x)."""
    q = _minimising_probability(weights, p, u)
    s = _minimising_probability(weights, 1 - p, -u)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = (np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
              + np.where(p < 1, (1 - p) * (np.log1p(-p) - np.log(s)), 0.0))
        terms = np.where(weights > 0, weights * kl, 0.0) - u * (q - s)
    return np.where(np.isfinite(terms), terms, -np.abs(u))


def dual_lower_bound(arms: np.ndarray, probabilities: np.ndarray, weights: np.ndarray, target: int,
                     threshold: float, point: np.ndarray) -> float:
    """A lower bound on the inner infimum I(w) (module docstring) from the multipliers of the
    point φ′ (d,): u_x = w_x ∂kl/∂z at φ′, the gradient of each term in its mean z = xᵀφ′.

    At the optimum Xᵀu is a multiple −νy of y; elsewhere u is corrected to make it so, first
    along D·X·a with D the terms' curvature (a Newton step of the dual, which moves u where that
    costs least), then along X·a to clean up what the first leaves. A residual r = Xᵀu + νy
    that rounding leaves is written Xᵀs (least squares) and charged ‖s‖₁: for every alternative
    with its means in [−1, 1], rᵀφ′ = sᵀXφ′ ≥ −‖s‖₁. So the bound is Σ_x g_x(u_x) − ντ − ‖s‖₁.
    """
    slope, curvature = _derivatives(probabilities, (1.0 + arms @ point) / 2.0)
    return _dual_bound(arms, probabilities, weights, arms[target], threshold, slope, curvature)


def _dual_bound(arms: np.ndarray, probabilities: np.ndarray, weights: np.ndarray, y: np.ndarray, threshold: float,
                slope: np.ndarray, curvature: np.ndarray) -> float:
    """:func:`dual_lower_bound` from the point's derivatives (K,) of each kl in its q (:func:`_derivatives`)."""
    u = weights * slope / 2.0
    across = np.eye(y.size) - np.outer(y, y) / float(y @ y)  # projects out y
    for scale in (np.where(np.isfinite(curvature), weights * curvature / 4.0, 0.0), np.ones_like(weights)):
        normal = across @ (arms.T * scale) @ arms @ across
        shift = across @ np.linalg.lstsq(normal, -(across @ (arms.T @ u)), rcond=None)[0]
        u = u + scale * (arms @ shift)
    nu = -float(y @ (arms.T @ u)) / float(y @ y)
    residual = np.linalg.lstsq(arms.T, arms.T @ u + nu * y, rcond=None)[0]
    return float(np.sum(conjugate_terms(weights, probabilities, u)) - nu * threshold - np.sum(np.abs(residual)))
