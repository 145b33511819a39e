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

from cbai_cli.kinds.cbai.bernoulli_inner import answer_probabilities, solve_inner

#: Weight every arm adds to the inner problem beside λ, relative to 1/K: it keeps every
#: arm's answer uncertain under the alternatives found (each cost vector finite), at a cost
#: to the inner infimum below this relative size.
FLOOR_WEIGHT = 1e-6
#: Rounds of the outer loop at most.
ROUNDS = 200
#: Wentges' smoothing: each round's inner problems are solved at SMOOTHING·λ_best +
#: (1 − SMOOTHING)·λ_game. Chosen on the 14 driver instances of docs/lower-bound.md: at 1/2 and
#: 0.3 every one converged (at most 79 rounds); plain cutting planes (0) took all 200 rounds on
#: the 1,000-arm driver, and 0.8 did too.
SMOOTHING = 0.5


@dataclass(frozen=True)
class BernoulliDesign:
    """V* bracketed: ``lower`` ≤ V* ≤ ``value``, both certified (up to rounding), and ``weights``
    (K,) the allocation λ at which f(λ) ≥ ``lower`` was shown.

    Attributes:
        value: an upper bound on V* (1/nats per query), certified by a mixed strategy over the
            alternatives found.
        lower: a lower bound on V*: the largest over the rounds of min over the targets of the
            inner solves' weak-duality bounds.
        weights: (K,) that λ.
        rounds: rounds made.
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
    """V* (module docstring) bracketed for ±1 answers on ``arms`` (K, d) with the truth
    ``constraint`` (d,) and τ = ``threshold``, the answer to be changed at each arm of
    ``targets`` (K,) bool, to a relative gap ``tolerance`` or :data:`ROUNDS` rounds.
    ``start`` (K,): the first λ (the H_CLB design is a good one: it is optimal for small gaps).

    Each inner problem is solved at λ plus :data:`FLOOR_WEIGHT`/K on every arm; its dual bound
    is then one on f at that allocation normalised, λ′ = (λ + floor)/(1 + K·floor), since f is
    positively homogeneous. Each target's solve starts from its previous alternative.

    Raises:
        ValueError: a target lies on the boundary (its answer changes for free: V* = 0 there,
            which the caller reports as an infinite bound), or no alternative was found for one.
    """
    arms = np.asarray(arms, dtype=float)
    probabilities = answer_probabilities(arms @ constraint)
    floor = FLOOR_WEIGHT / arms.shape[0]
    chosen = np.flatnonzero(targets).tolist()
    weights = np.asarray(start, dtype=float) / float(np.sum(start))
    game_weights, game_value = weights, math.inf
    costs: list[np.ndarray] = []
    previous: dict[int, np.ndarray] = {}
    best_lower, best_weights, value, rounds = -math.inf, weights, math.inf, 0
    for rounds in range(1, ROUNDS + 1):
        floored = weights + floor
        found = []
        for target in chosen:
            alternative = solve_inner(arms, probabilities, floored, target, threshold, constraint, previous.get(target))
            if alternative is None:
                raise ValueError(f"no alternative with finite relative entropies was found for arm {target}")
            previous[target] = alternative.point
            found.append(alternative)
        lower = min(alternative.lower for alternative in found) / float(np.sum(floored))
        if lower > best_lower:
            best_lower, best_weights = lower, floored / float(np.sum(floored))
        # a smoothed round that does not cut off the last game's λ is a mispricing (Wentges)
        mispriced = min(float(game_weights @ alternative.costs) for alternative in found) >= game_value
        costs.extend(alternative.costs for alternative in found)
        matrix = np.array(costs)
        game_weights, certified, _ = _game(matrix)
        game_value = float(np.min(matrix @ game_weights))
        value = min(value, certified)
        if value - best_lower <= tolerance * value:
            break
        smoothing = 0.0 if mispriced else SMOOTHING
        weights = smoothing * best_weights + (1.0 - smoothing) * game_weights
    return BernoulliDesign(value, max(best_lower, 0.0), best_weights, rounds)
