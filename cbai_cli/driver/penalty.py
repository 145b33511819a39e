"""Constraint versus reward penalty: the study behind Figure 4 of the paper.

Lindner et al. (ICML 2022), Section 4.3, Figure 4.

For each scenario and each ``lambda`` on a grid, the unconstrained CEM maximises
``(theta - lambda * phi)^T f``; we record the task reward ``theta^T f`` and the
constraint value ``phi^T f`` of its solution. Against this we put the
constrained CEM's solution of ``max theta^T f s.t. phi^T f <= tau``. The paper's
point: the smallest ``lambda`` that gives a feasible policy differs between
scenarios, and even that one earns less reward than the constrained solution.

As in the authors' experiment, every problem is solved with several independent
CEM restarts and the best is kept (highest penalised return; for the
constrained problem the feasible restart with the highest reward). The grid
default is theirs too: 0, 0.1, ..., 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cbai_cli.driver.cem import CEMConfig, CEMResult, Problem, cross_entropy
from cbai_cli.driver.scenarios import SCENARIO_NAMES, Environment, scenario
from cbai_cli.contracts.validation import integer

__all__ = ["DEFAULT_PENALTIES", "PenaltyStudy", "penalty_study"]

#: The authors' grid of penalty weights lambda.
DEFAULT_PENALTIES = tuple(round(0.1 * k, 1) for k in range(21))


@dataclass(frozen=True, eq=False)
class PenaltyStudy:
    """Results of :func:`penalty_study` for ``S`` scenarios and ``L`` penalty weights.

    Attributes:
        scenarios: the ``S`` scenario names.
        penalties: ``(L,)`` the weights ``lambda``.
        penalised_reward: ``(S, L)`` task reward ``theta^T f`` of the penalised optimum.
        penalised_constraint: ``(S, L)`` its constraint value ``phi^T f``.
        penalised_actions: ``(S, L, 20, 2)`` the penalised optima.
        constrained_reward: ``(S,)`` reward of the constrained CEM solution.
        constrained_constraint: ``(S,)`` its constraint value.
        constrained_feasible: ``(S,)`` whether a feasible policy was found.
        constrained_actions: ``(S, 20, 2)`` the constrained solutions.
        threshold: ``tau`` (1).
    """

    scenarios: tuple[str, ...]
    penalties: np.ndarray
    penalised_reward: np.ndarray
    penalised_constraint: np.ndarray
    penalised_actions: np.ndarray
    constrained_reward: np.ndarray
    constrained_constraint: np.ndarray
    constrained_feasible: np.ndarray
    constrained_actions: np.ndarray
    threshold: float

    @property
    def penalised_feasible(self) -> np.ndarray:
        """``(S, L)`` whether each penalised optimum satisfies the constraint."""
        return self.penalised_constraint <= self.threshold

    @property
    def smallest_feasible_penalty(self) -> np.ndarray:
        """``(S,)`` the smallest ``lambda`` whose optimum is feasible (NaN if none is)."""
        out = np.full(len(self.scenarios), np.nan)
        for s, row in enumerate(self.penalised_feasible):
            if row.any():
                out[s] = self.penalties[np.flatnonzero(row)[0]]
        return out


def _best_of_restarts(
    problem: Problem, env: Environment, seed: int, key: tuple[int, int], n_restarts: int, config: CEMConfig
) -> CEMResult:
    best: CEMResult | None = None
    for r in range(n_restarts):
        # One stream per (scenario, problem, restart), addressed by spawn key, so a
        # result does not depend on which other scenarios or restarts are run.
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key + (r,)))
        result = cross_entropy(env, problem, rng, config)
        if best is None:
            best = result
        elif problem.constrained:
            if (result.feasible, result.reward if result.feasible else -result.constraint) > (
                best.feasible,
                best.reward if best.feasible else -best.constraint,
            ):
                best = result
        elif result.reward > best.reward:
            best = result
    assert best is not None
    return best


def penalty_study(
    seed: int,
    *,
    penalties: Sequence[float] = DEFAULT_PENALTIES,
    scenarios: Sequence[str] = SCENARIO_NAMES,
    n_restarts: int = 10,
    config: CEMConfig = CEMConfig(),
) -> PenaltyStudy:
    """Run the Figure 4 study.

    Args:
        seed: root seed. The CEM for scenario ``s`` (its index in
            :data:`SCENARIO_NAMES`), problem ``j`` (0 = constrained, ``1 + l`` =
            the ``l``-th penalty) and restart ``r`` draws from
            ``SeedSequence(seed, spawn_key=(s, j, r))``.
        penalties: the grid of ``lambda`` values (non-negative).
        scenarios: scenario names.
        n_restarts: independent CEM runs per problem; the best is kept.
        config: CEM parameters.

    Returns:
        A :class:`PenaltyStudy`; the cost is ``S * (L + 1) * n_restarts`` CEM runs.
    """
    seed = integer(seed, "seed", 0)
    lambdas = np.asarray(penalties, dtype=float)
    if lambdas.ndim != 1 or lambdas.size == 0 or not np.all(np.isfinite(lambdas)) or np.any(lambdas < 0):
        raise ValueError("penalties must be a non-empty list of non-negative numbers")
    if n_restarts < 1:
        raise ValueError(f"n_restarts must be >= 1, got {n_restarts}")
    names = tuple(scenarios)
    scs = [scenario(name) for name in names]  # raises on unknown names, listing valid ones
    S, L = len(scs), lambdas.size
    horizon = scs[0].environment.horizon if scs else 20
    pen_reward = np.empty((S, L))
    pen_constraint = np.empty((S, L))
    pen_actions = np.empty((S, L, horizon, 2))
    con_reward = np.empty(S)
    con_constraint = np.empty(S)
    con_feasible = np.empty(S, dtype=bool)
    con_actions = np.empty((S, horizon, 2))
    for s, sc in enumerate(scs):
        index = SCENARIO_NAMES.index(sc.name)
        problem = Problem(sc.theta, sc.phi, sc.tau, constrained=True)
        constrained = _best_of_restarts(problem, sc.environment, int(seed), (index, 0), n_restarts, config)
        con_reward[s] = constrained.features @ sc.theta
        con_constraint[s] = constrained.constraint
        con_feasible[s] = constrained.feasible
        con_actions[s] = constrained.actions
        for l, lam in enumerate(lambdas):
            problem = Problem(sc.theta - lam * sc.phi, sc.phi, sc.tau, constrained=False)
            result = _best_of_restarts(problem, sc.environment, int(seed), (index, 1 + l), n_restarts, config)
            # Report the task reward theta^T f, not the penalised objective.
            pen_reward[s, l] = result.features @ sc.theta
            pen_constraint[s, l] = result.constraint
            pen_actions[s, l] = result.actions
    for a in (lambdas, pen_reward, pen_constraint, pen_actions, con_reward, con_constraint, con_feasible, con_actions):
        a.setflags(write=False)
    return PenaltyStudy(
        scenarios=names,
        penalties=lambdas,
        penalised_reward=pen_reward,
        penalised_constraint=pen_constraint,
        penalised_actions=pen_actions,
        constrained_reward=con_reward,
        constrained_constraint=con_constraint,
        constrained_feasible=con_feasible,
        constrained_actions=con_actions,
        threshold=float(scs[0].tau) if scs else 1.0,
    )
