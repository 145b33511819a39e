"""Theorem 1 for yes/no answers: the lower bound with each arm's Bernoulli relative entropy.

Lindner et al. (2022), Theorem 1, compares the instance φ with alternatives φ′ that change the
answer and charges a pull of x the relative entropy of its observation under φ and φ′. For
Gaussian noise of variance σ² that is (xᵀ(φ − φ′))²/(2σ²), which gives 2·kl(δ, 1 − δ)·H_CLB·σ².
A ±1 answer with P(+1) = (1 + m)/2, m = xᵀφ (:class:`cbai_cli.kinds.cbai.noise.BinaryNoise`, paper
Appendix C.2), has the Bernoulli relative entropy kl(p_x, q_x) with p_x = (1 + xᵀφ)/2 and
q_x = (1 + xᵀφ′)/2 instead, at least the unit-variance Gaussian's by Pinsker's inequality and
about (xᵀ(φ − φ′))²/(2(1 − m_x²)) for small changes, the variance 1 − m_x² of the answer.
The same change-of-measure argument (Kaufmann et al. 2016, Lemma 1) then gives

    E[τ] ≥ kl(δ, 1 − δ) / V*,   V* = max_λ min_{y ∈ X≥(x*)} inf_{φ′ : yᵀφ′ = τ} Σ_x λ_x kl(p_x, q_x(φ′)),

written here as E[τ] ≥ 2·kl(δ, 1 − δ)·H_Bern with H_Bern = 1/(2V*) (equal to H_CLB when every
relative entropy is the unit Gaussian's), and in Theorem 1's form 2·log(1/(2.4δ))·H_Bern
(docs/lower-bound.md, "Yes/no answers").

V* is a concave maximisation over λ (each inner infimum is an infimum of functions linear in
λ) whose inner problems are convex in φ′ (kl(p, q) is convex in q, q is affine in φ′, the
constraint is a hyperplane). :func:`bernoulli_design` bounds V* from above with certainty:
every alternative φ′_j it has found gives a cost vector c_j (K,) with
inf ≤ Σ_x λ_x c_{j,x}, so V* ≤ max_λ min_j λᵀc_j, the value of a matrix game, and any mixed
strategy μ over the alternatives bounds that value by max_x Σ_j μ_j c_{j,x}. An upper bound on
V* is a lower bound on the queries, so the reported bound is valid whatever the solver's
progress; its gap says how far from V* it may be. The alternatives come from Kelley's cutting
planes: solve the game over the alternatives found so far (a linear program), then each
target's inner problem at that game's λ (a damped Newton method on the hyperplane), until the
two sides meet.

The alternatives are the instances cbai accepts for yes/no answers: every mean xᵀφ′ in
[−1, 1] (no bound on ‖φ′‖, as in Theorem 1); an alternative that makes some arm's answer
certain where it is not under φ has an infinite relative entropy there and is never used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Weight every arm adds to the inner problem beside λ, relative to 1/K: it keeps every
#: arm's answer uncertain under the alternatives found (each cost vector finite), at a cost
#: to the inner infimum below this relative size.
FLOOR_WEIGHT = 1e-6
#: Newton iterations of one inner problem (the floor's barrier near the means' box slows them:
#: at 60 the inner values on ``cbai driver-arms --n 200 --seed 12`` were up to 7 % high, which
#: stops the rounds early at a looser certified value), and cutting-plane rounds of the outer one.
NEWTON_STEPS = 300
ROUNDS = 200


@dataclass(frozen=True)
class BernoulliDesign:
    """V* bounded: ``value`` ≥ V* (certified by ``strategy``), ``lower`` the best inner value
    found at a λ (≤ V* up to the inner solves' precision), ``weights`` (K,) that λ.

    Attributes:
        value: an upper bound on V* (1/nats per query).
        lower: the largest over the rounds of min over the targets of the inner infimum at
            that round's λ.
        weights: (K,) that λ.
        rounds: cutting-plane rounds made.
    """

    value: float
    lower: float
    weights: np.ndarray
    rounds: int

    @property
    def h_bernoulli(self) -> float:
        """H_Bern = 1/(2·value), a lower bound on 1/(2V*) (infinite when V* = 0)."""
        return math.inf if self.value <= 0 else 0.5 / self.value

    @property
    def gap(self) -> float:
        """(value − lower)/value: how far above V* the certified value may be."""
        return 0.0 if self.value <= 0 else max(0.0, (self.value - self.lower) / self.value)


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


def inner_alternative(arms: np.ndarray, probabilities: np.ndarray, weights: np.ndarray, target: int,
                      threshold: float, constraint: np.ndarray) -> np.ndarray | None:
    """The φ′ on the hyperplane yᵀφ′ = τ (y = ``arms[target]``) that minimises
    Σ_x w_x kl(p_x, q_x(φ′)) for the weights w (K,), or None when no start with every
    relative entropy finite was found.

    The start is the minimiser of the quadratic approximation Σ_x w_x (xᵀε)²/(2v_x), v_x the
    answer's variance 1 − m_x² (floored at 10⁻³): φ − g(y)·M⁻¹y/(yᵀM⁻¹y), M = Σ_x (w_x/v_x)·x xᵀ.
    Then damped Newton steps in the hyperplane, halving a step until it keeps every relative
    entropy finite and lowers the objective (Armijo).
    """
    means = 2.0 * probabilities - 1.0
    variances = np.maximum(1.0 - means**2, 1e-3)
    y = arms[target]
    gram = (arms * (weights / variances)[:, None]).T @ arms
    direction = np.linalg.lstsq(gram + 1e-12 * np.trace(gram) * np.eye(arms.shape[1]), y, rcond=None)[0]
    scale = float(y @ direction)
    if not scale > 0:
        return None
    start = constraint - (float(y @ constraint) - threshold) * direction / scale
    if not _finite(probabilities, (1.0 + arms @ start) / 2.0):
        start = _inside_start(arms, probabilities, y, threshold, start)
        if start is None:
            return None
    # an orthonormal basis of the hyperplane's directions (those with yᵀe = 0)
    basis = np.linalg.svd(y[None, :])[2][1:].T
    local = arms @ basis  # (K, d − 1)
    point = start

    def objective(candidate: np.ndarray) -> float:
        q = (1.0 + arms @ candidate) / 2.0
        return float(weights @ bernoulli_kl(probabilities, q)) if _finite(probabilities, q) else math.inf

    value = objective(point)
    for _ in range(NEWTON_STEPS):
        q = (1.0 + arms @ point) / 2.0
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(weights > 0, (q - probabilities) / (q * (1.0 - q)), 0.0)
            curvature = np.where(weights > 0, np.where(probabilities > 0, probabilities / q**2, 0.0)
                                 + np.where(probabilities < 1, (1 - probabilities) / (1 - q) ** 2, 0.0), 0.0)
        gradient = local.T @ (weights * slope) / 2.0
        hessian = (local * (weights * curvature / 4.0)[:, None]).T @ local
        hessian += 1e-14 * max(float(np.trace(hessian)), 1e-300) * np.eye(hessian.shape[0])
        step = -np.linalg.solve(hessian, gradient)
        decrement = float(-gradient @ step)
        if not decrement > 1e-15 * max(value, 1e-300):
            break
        length = 1.0
        while length > 1e-12:
            candidate = point + length * (basis @ step)
            new = objective(candidate)
            if new <= value - 0.25 * length * decrement:
                point, value = candidate, new
                break
            length /= 2.0
        else:
            break
    return point


def _inside_start(arms: np.ndarray, probabilities: np.ndarray, y: np.ndarray, threshold: float,
                  goal: np.ndarray) -> np.ndarray | None:
    """A point of the hyperplane yᵀφ′ = τ at which every relative entropy is finite, as close to
    ``goal`` (d,) along a segment as the domain allows, or None when there is none.

    A linear program finds the point of the hyperplane whose means keep the largest margin s
    inside (−1, 1); the domain is convex, so bisection on the segment from there to ``goal``
    keeps inside it.
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
    inside, outside = result.x[:dim], goal
    for _ in range(60):
        middle = (inside + outside) / 2.0
        if _finite(probabilities, (1.0 + arms @ middle) / 2.0):
            inside = middle
        else:
            outside = middle
    return inside


def _game(costs: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """The matrix game max_λ min_j λᵀc_j over the rows c_j of ``costs`` (J, K): (λ (K,), an upper
    bound on its value certified by the mixed strategy μ (J,) of the other player,
    max_x Σ_j μ_j c_{j,x}, and μ).

    The linear program maximises t with Σ_x λ_x c_{j,x} ≥ t for every j, Σλ = 1, λ ≥ 0, each
    row divided by its largest cost (relative entropies of arms far from an alternative's
    change are many orders above those near it); μ is the rows' duals, scaled back. Only μ
    enters the value, so a solve that is numerically off loosens the bound but never
    invalidates it; when HiGHS's simplex and interior-point methods both fail, μ is uniform.
    """
    from scipy.optimize import linprog

    rows, arms = costs.shape
    scales = np.maximum(np.max(costs, axis=1), np.finfo(float).tiny)
    objective = np.zeros(arms + 1)
    objective[-1] = -1.0
    upper = np.hstack([-costs / scales[:, None], 1.0 / scales[:, None]])
    equality = np.hstack([np.ones((1, arms)), np.zeros((1, 1))])
    for method in ("highs-ds", "highs-ipm"):
        result = linprog(objective, A_ub=upper, b_ub=np.zeros(rows), A_eq=equality, b_eq=[1.0],
                         bounds=[(0, None)] * arms + [(None, None)], method=method)
        if result.status == 0:
            weights = np.maximum(result.x[:arms], 0.0)
            strategy = np.maximum(-result.ineqlin.marginals, 0.0) / scales
            break
    else:
        weights, strategy = np.ones(arms), np.ones(rows)
    weights /= weights.sum()
    strategy = strategy / strategy.sum() if strategy.sum() > 0 else np.full(rows, 1.0 / rows)
    return weights, float(np.max(strategy @ costs)), strategy


def bernoulli_design(arms: np.ndarray, constraint: np.ndarray, threshold: float, targets: np.ndarray,
                     start: np.ndarray, tolerance: float = 1e-3) -> BernoulliDesign:
    """An upper bound on V* (module docstring) for ±1 answers on ``arms`` (K, d) with the truth
    ``constraint`` (d,) and τ = ``threshold``, the answer to be changed at each arm of
    ``targets`` (K,) bool, to a relative gap ``tolerance`` or :data:`ROUNDS` rounds.
    ``start`` (K,): the first λ (the H_CLB design is a good one: it is optimal for small gaps).

    Raises:
        ValueError: a target lies on the boundary (its answer changes for free: V* = 0 there,
            which the caller reports as an infinite bound), or no alternative was found for one.
    """
    arms = np.asarray(arms, dtype=float)
    probabilities = answer_probabilities(arms @ constraint)
    floor = FLOOR_WEIGHT / arms.shape[0]
    chosen = np.flatnonzero(targets)
    weights = np.asarray(start, dtype=float) / float(np.sum(start))
    costs: list[np.ndarray] = []
    best_lower, best_weights, value, rounds = 0.0, weights, math.inf, 0
    for rounds in range(1, ROUNDS + 1):
        lower = math.inf
        for target in chosen.tolist():
            point = inner_alternative(arms, probabilities, weights + floor, target, threshold, constraint)
            if point is None:
                raise ValueError(f"no alternative with finite relative entropies was found for arm {target}")
            cost = bernoulli_kl(probabilities, answer_probabilities(arms @ point))
            costs.append(cost)
            lower = min(lower, float(weights @ cost))
        if lower > best_lower:
            best_lower, best_weights = lower, weights
        weights, certified, _ = _game(np.array(costs))
        value = min(value, certified)
        if value - best_lower <= tolerance * value:
            break
    return BernoulliDesign(value, best_lower, best_weights, rounds)
