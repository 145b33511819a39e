"""Cross-entropy method for (constrained) policy search in the Driver environment.

Lindner et al. (ICML 2022), Appendix C.1, Algorithm 4 (Rubinstein & Kroese 2004; the
constrained ordering of Wen & Topcu 2020).

A policy is its 20 actions, i.e. 40 numbers. Starting from ``mu = 0`` and
``sigma = 5`` per coordinate, every iteration draws ``n_samples`` policies from
``N(mu, diag(sigma^2))``, clips them to ``[-1, 1]``, rolls all of them out as one
batch and refits ``mu`` and ``sigma`` (mean and standard deviation per
coordinate) to ``n_elite`` of them:

- unconstrained: the ``n_elite`` samples with the highest return ``w^T f``;
- constrained: sort by constraint value ``J = phi^T f``. If the ``n_elite``-th
  lowest ``J`` is above ``tau`` (fewer than ``n_elite`` feasible samples) the elite
  is the ``n_elite`` lowest-``J`` samples, pushing the search towards feasibility;
  otherwise it is the ``n_elite`` feasible samples with the highest return.

The environment is deterministic, so instead of Algorithm 4's final mean we
return the best sample ever evaluated: the best feasible one for the constrained
problem, the best-return one for the unconstrained (penalised) problem.

The defaults (50 iterations x 50 samples = 2500 roll-outs, 5 elite, sigma 5)
are the authors'. The elite are the *clipped* samples, as in the authors' code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cbai_cli.driver.features import N_FEATURES, policy_features
from cbai_cli.driver.scenarios import Environment

__all__ = ["CEMConfig", "Problem", "CEMResult", "select_elite", "cross_entropy"]


@dataclass(frozen=True)
class CEMConfig:
    """Parameters of Algorithm 4 (defaults: the authors' code).

    Attributes:
        n_iterations: number of sample-evaluate-refit rounds (50).
        n_samples: policies sampled per iteration (50), rolled out as one batch.
        n_elite: samples the Gaussian is refitted to (5).
        init_std: initial standard deviation of every coordinate (5; with clipping
            to ``[-1, 1]`` the first iteration is close to bang-bang control).
        action_bound: samples are clipped to ``[-action_bound, action_bound]`` (1).
    """

    n_iterations: int = 50
    n_samples: int = 50
    n_elite: int = 5
    init_std: float = 5.0
    action_bound: float = 1.0

    def __post_init__(self) -> None:
        for name in ("n_iterations", "n_samples", "n_elite"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.n_elite > self.n_samples:
            raise ValueError(f"n_elite ({self.n_elite}) cannot exceed n_samples ({self.n_samples})")
        if not (self.init_std >= 0 and np.isfinite(self.init_std)):
            raise ValueError(f"init_std must be finite and >= 0, got {self.init_std!r}")
        if not (self.action_bound > 0):
            raise ValueError(f"action_bound must be positive, got {self.action_bound!r}")

    @property
    def n_rollouts(self) -> int:
        """Roll-outs one run costs (2500 with the defaults)."""
        return self.n_iterations * self.n_samples


@dataclass(frozen=True, eq=False)
class Problem:
    """What the CEM optimises.

    Attributes:
        reward: ``(8,)`` weights ``w`` of the return ``w^T f`` (maximised). For the
            penalty formulation of Figure 4 pass ``theta - lambda * phi``.
        constraint: ``(8,)`` constraint weights ``phi``. Always reported; used for
            the elite only when ``constrained``.
        threshold: ``tau``: feasible iff ``phi^T f <= tau``.
        constrained: Wen & Topcu ordering if true, plain CEM on ``reward`` if false.
    """

    reward: np.ndarray
    constraint: np.ndarray
    threshold: float
    constrained: bool = True

    def __post_init__(self) -> None:
        reward = np.array(self.reward, dtype=float)
        constraint = np.array(self.constraint, dtype=float)
        if reward.shape != (N_FEATURES,) or constraint.shape != (N_FEATURES,):
            raise ValueError(f"reward and constraint must be ({N_FEATURES},), got {reward.shape}, {constraint.shape}")
        if not (np.all(np.isfinite(reward)) and np.all(np.isfinite(constraint)) and np.isfinite(self.threshold)):
            raise ValueError("reward, constraint and threshold must be finite")
        reward.setflags(write=False)
        constraint.setflags(write=False)
        object.__setattr__(self, "reward", reward)
        object.__setattr__(self, "constraint", constraint)
        object.__setattr__(self, "threshold", float(self.threshold))
        object.__setattr__(self, "constrained", bool(self.constrained))


@dataclass(frozen=True, eq=False)
class CEMResult:
    """The policy a CEM run returns.

    Attributes:
        actions: ``(T, 2)`` the best sample (see the module docstring).
        features: ``(8,)`` its summed features.
        reward: its return ``w^T f`` under the problem's reward weights.
        constraint: its constraint value ``phi^T f``.
        feasible: ``constraint <= threshold``. False only if a constrained run never
            sampled a feasible policy; then the lowest-``J`` sample is returned.
        n_rollouts: roll-outs spent.
    """

    actions: np.ndarray
    features: np.ndarray
    reward: float
    constraint: float
    feasible: bool
    n_rollouts: int


def select_elite(
    returns: np.ndarray,
    constraints: np.ndarray | None,
    threshold: float,
    n_elite: int,
) -> np.ndarray:
    """Indices of the elite samples (Algorithm 4, lines 6-16).

    Args:
        returns: ``(n,)`` returns ``G``.
        constraints: ``(n,)`` constraint values ``J``, or ``None`` for the unconstrained CEM.
        threshold: ``tau`` (Algorithm 4 writes 0 because it folds the threshold in).
        n_elite: elite size, at most ``n``.

    Returns:
        ``(n_elite,)`` integer indices. Unconstrained: highest returns first.
        Constrained: if the ``n_elite``-th lowest ``J`` exceeds ``threshold``, the
        ``n_elite`` lowest ``J`` (lowest first); otherwise the ``n_elite`` feasible
        samples with the highest returns (highest first). Ties keep sample order
        (stable sorts), so the result is deterministic.
    """
    returns = np.asarray(returns, dtype=float)
    if not 1 <= n_elite <= returns.shape[0]:
        raise ValueError(f"n_elite must be in [1, {returns.shape[0]}], got {n_elite}")
    by_return = np.argsort(-returns, kind="stable")
    if constraints is None:
        return by_return[:n_elite]
    constraints = np.asarray(constraints, dtype=float)
    by_constraint = np.argsort(constraints, kind="stable")
    if constraints[by_constraint[n_elite - 1]] > threshold:
        # Fewer than n_elite feasible samples: move towards the feasible region first.
        return by_constraint[:n_elite]
    feasible_by_return = by_return[constraints[by_return] <= threshold]
    return feasible_by_return[:n_elite]


def cross_entropy(
    environment: Environment,
    problem: Problem,
    rng: np.random.Generator,
    config: CEMConfig = CEMConfig(),
) -> CEMResult:
    """Run the (constrained) cross-entropy method of Algorithm 4 once.

    Args:
        environment: where the policies are rolled out.
        problem: reward weights, constraint and whether it is enforced.
        rng: the only source of randomness; one ``(n_samples, 2T)`` normal draw per iteration.
        config: iterations, samples, elite size, initial spread.

    Returns:
        The best feasible sample seen over all iterations (constrained), or the
        best-return sample (unconstrained); see :class:`CEMResult`.
    """
    horizon = environment.horizon
    dim = 2 * horizon
    mu = np.zeros(dim)
    sigma = np.full(dim, float(config.init_std))
    bound = config.action_bound

    best_actions: np.ndarray | None = None
    best_features = np.zeros(N_FEATURES)
    best_key = -np.inf  # return of the best candidate, or -J while nothing is feasible
    best_is_feasible = False

    for _ in range(config.n_iterations):
        samples = np.clip(mu + sigma * rng.standard_normal((config.n_samples, dim)), -bound, bound)
        # Flattened as (a1_0, a2_0, a1_1, ...): reshape gives (n_samples, T, 2).
        features = policy_features(samples.reshape(config.n_samples, horizon, 2), environment)
        returns = features @ problem.reward
        constraints = features @ problem.constraint
        feasible = constraints <= problem.threshold

        # Track the best sample. Deterministic dynamics make a sample's value
        # exact, so the best one ever seen beats the final mean.
        if problem.constrained:
            if feasible.any():
                candidates = np.flatnonzero(feasible)
                i = candidates[np.argmax(returns[candidates])]
                if not best_is_feasible or returns[i] > best_key:
                    best_actions, best_features, best_key = samples[i], features[i], returns[i]
                    best_is_feasible = True
            elif not best_is_feasible:
                # Fallback while nothing feasible was seen: the least violating sample.
                i = int(np.argmin(constraints))
                if best_actions is None or -constraints[i] > best_key:
                    best_actions, best_features, best_key = samples[i], features[i], -constraints[i]
        else:
            i = int(np.argmax(returns))
            if best_actions is None or returns[i] > best_key:
                best_actions, best_features, best_key = samples[i], features[i], returns[i]

        elite = select_elite(returns, constraints if problem.constrained else None, problem.threshold, config.n_elite)
        mu = samples[elite].mean(axis=0)
        sigma = samples[elite].std(axis=0)

    assert best_actions is not None  # n_iterations >= 1
    constraint_value = float(best_features @ problem.constraint)
    actions = best_actions.reshape(horizon, 2).copy()
    features_out = np.array(best_features)
    actions.setflags(write=False)
    features_out.setflags(write=False)
    return CEMResult(
        actions=actions,
        features=features_out,
        reward=float(best_features @ problem.reward),
        constraint=constraint_value,
        feasible=bool(constraint_value <= problem.threshold),
        n_rollouts=config.n_rollouts,
    )
