"""Candidate policies and the Driver bandit instance (driver.md, "Arms for the bandit"; cbai.md §6).

Two steps:

1. :func:`build_policies` computes ``n`` candidate policies the paper's way:
   policy ``i`` picks one of six problems (:data:`ARM_PROBLEMS`), perturbs
   every coordinate of ``theta``, ``phi`` and ``tau`` by ``N(0, 0.1^2)`` and
   keeps the actions of a cross-entropy-method solution. Policy ``i`` draws
   only from its own stream, child ``i`` of ``SeedSequence(seed).spawn(n)``,
   so it does not depend on ``n``, on the number of worker processes or on the
   order in which workers finish. (The authors' published 1000 policies hold
   only 20 distinct ones: their workers inherited one global random state.)
2. :func:`build_bandit` evaluates the policies in a scenario's environment and
   turns the feature sums into arms: the threshold is folded in (constant
   feature 1, ``phi`` extended by ``-tau``, ``tau = 0``; the paper's
   ``f(s) = (f1..f8, 1)``) and each arm is rescaled by a positive factor so that
   the constraint values lie in ``[-1, 1]``, as binary feedback needs.

:func:`distinct_rows` finds exact duplicates among policies or arms.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from cbai_cli.driver.cem import CEMConfig, Problem, cross_entropy
from cbai_cli.driver.dynamics import HORIZON
from cbai_cli.driver.features import N_FEATURES, policy_features
from cbai_cli.driver.scenarios import (
    PHI,
    TAU,
    THETA_TARGET_LOCATION,
    THETA_TARGET_VELOCITY,
    Scenario,
    environment,
)
from cbai_cli.driver.scenarios import scenario as get_scenario

__all__ = [
    "PERTURBATION_STD",
    "RESCALE_NUDGE",
    "ArmProblem",
    "ARM_PROBLEMS",
    "Candidate",
    "PolicySet",
    "DriverBandit",
    "DistinctRows",
    "policy_streams",
    "make_policy",
    "build_policies",
    "evaluate_policies",
    "fold_threshold",
    "rescale_for_binary",
    "build_bandit",
    "distinct_rows",
    "count_distinct",
]

#: Standard deviation of the perturbation of every coordinate of theta, phi and tau.
PERTURBATION_STD = 0.1
#: Added to both rescaling divisors: keeps them away from 0 and every |phi'^T x| strictly below 1.
RESCALE_NUDGE = 1e-6


@dataclass(frozen=True)
class ArmProblem:
    """One of the six problems candidate policies are computed for.

    Attributes:
        name: a short label.
        traffic: traffic setting of its environment.
        goal: ``"target_velocity"`` (``theta = e1``) or ``"target_location"`` (``theta = e2``).
        penalty: ``None`` for the constrained CEM on ``(theta, phi, tau)``; a number
            ``lambda`` for the unconstrained CEM on ``theta - lambda * phi``.
    """

    name: str
    traffic: str
    goal: str
    penalty: float | None = None

    @property
    def theta(self) -> np.ndarray:
        return THETA_TARGET_VELOCITY if self.goal == "target_velocity" else THETA_TARGET_LOCATION


#: The six problems of the authors' arm set, in their order (index = ``PolicySet.problem``).
ARM_PROBLEMS = (
    ArmProblem("constrained target velocity", "changing_lane", "target_velocity"),
    ArmProblem("constrained target location", "changing_lane", "target_location"),
    ArmProblem("constrained target velocity, blocked", "blocked", "target_velocity"),
    ArmProblem("penalised target velocity", "changing_lane", "target_velocity", penalty=1.0),
    ArmProblem("penalised target location", "changing_lane", "target_location", penalty=0.5),
    ArmProblem("penalised target velocity, blocked", "blocked", "target_velocity", penalty=1.0),
)


@dataclass(frozen=True, eq=False)
class Candidate:
    """One candidate policy and the perturbed problem it solves.

    Attributes:
        actions: ``(20, 2)`` the CEM solution.
        problem: index into :data:`ARM_PROBLEMS`.
        theta: ``(8,)`` perturbed reward weights.
        phi: ``(8,)`` perturbed constraint weights.
        tau: perturbed threshold.
        feasible: whether the solution satisfies ``phi^T f <= tau`` (its own constraint).
    """

    actions: np.ndarray
    problem: int
    theta: np.ndarray
    phi: np.ndarray
    tau: float
    feasible: bool


@dataclass(frozen=True, eq=False)
class PolicySet:
    """``n`` candidate policies and how each was made.

    Attributes:
        actions: ``(n, 20, 2)`` the policies.
        problem: ``(n,)`` index into :data:`ARM_PROBLEMS`.
        theta: ``(n, 8)`` perturbed reward weights each CEM used.
        phi: ``(n, 8)`` perturbed constraint weights.
        tau: ``(n,)`` perturbed thresholds.
        feasible: ``(n,)`` whether the solution satisfies its own perturbed constraint.
        seed: the root seed.
    """

    actions: np.ndarray
    problem: np.ndarray
    theta: np.ndarray
    phi: np.ndarray
    tau: np.ndarray
    feasible: np.ndarray
    seed: int

    def __len__(self) -> int:
        return int(self.actions.shape[0])


@dataclass(frozen=True, eq=False)
class DriverBandit:
    """A Driver scenario as a constrained linear bandit (threshold folded in).

    Attributes:
        scenario: scenario name.
        actions: ``(n, 20, 2)`` the candidate policies.
        raw_features: ``(n, 8)`` their feature sums in the scenario's environment.
        arms: ``(n, 9)`` ``(f1..f8, 1)`` per policy, each row divided by ``scales``.
        scales: ``(n,)`` the positive per-arm divisors (all 1 without rescaling).
        rewards: ``(n,)`` the known reward of each arm. By default
            ``theta^T raw_features`` (rescaling touches only the constraint side);
            with ``rescale_rewards`` ``(theta, 0)^T arms`` as in the authors' code.
        reward_weights: ``(9,)`` ``(theta, 0)``.
        constraint: ``(9,)`` ``phi' = (phi, -tau)``: arm ``k`` is feasible iff
            ``constraint @ arms[k] <= threshold``.
        threshold: 0 (folded in).
        rescaled: whether the per-arm rescaling was applied.
        rescale_rewards: whether ``rewards`` were computed on the rescaled arms.
    """

    scenario: str
    actions: np.ndarray
    raw_features: np.ndarray
    arms: np.ndarray
    scales: np.ndarray
    rewards: np.ndarray
    reward_weights: np.ndarray
    constraint: np.ndarray
    threshold: float
    rescaled: bool
    rescale_rewards: bool

    @property
    def constraint_values(self) -> np.ndarray:
        """``(n,)`` ``phi'^T x`` of every arm (in ``[-1, 1]`` when rescaled)."""
        return self.arms @ self.constraint

    @property
    def feasible(self) -> np.ndarray:
        """``(n,)`` feasibility of every arm (the same with or without rescaling)."""
        return self.constraint_values <= self.threshold


@dataclass(frozen=True, eq=False)
class DistinctRows:
    """Exact duplicates among ``n`` rows.

    Attributes:
        first: ``(k,)`` index of the first occurrence of each distinct row, ascending.
        inverse: ``(n,)`` for each row, the position in ``first`` of its distinct row.
        counts: ``(k,)`` how often each distinct row occurs.
    """

    first: np.ndarray
    inverse: np.ndarray
    counts: np.ndarray

    @property
    def n_distinct(self) -> int:
        return int(self.first.shape[0])


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.setflags(write=False)
    return a


# --------------------------------------------------------------------------- policies


def policy_streams(seed: int, n: int) -> list[np.random.SeedSequence]:
    """The ``n`` per-policy streams: children of ``SeedSequence(seed)``.

    Child ``i`` has spawn key ``(i,)`` whatever ``n`` is, so policy ``i`` is the
    same for every ``n > i``.
    """
    return np.random.SeedSequence(_check_seed(seed)).spawn(n)


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def make_policy(
    stream: np.random.SeedSequence,
    config: CEMConfig = CEMConfig(),
) -> Candidate:
    """Compute one candidate policy from its own random stream.

    Draw order (part of the format: changing it changes every policy): the problem
    index, then 8 perturbations of ``theta``, 8 of ``phi``, 1 of ``tau``, then the
    CEM's samples. All six problems draw all 17 perturbations, so the streams stay
    aligned. For a penalised problem the CEM maximises ``theta' - lambda phi'``
    with the perturbed ``theta'`` and ``phi'`` (the authors' script perturbed the
    combined vector ``theta - lambda phi`` once instead).

    Args:
        stream: this policy's ``SeedSequence``.
        config: CEM parameters.

    Returns:
        The :class:`Candidate`.
    """
    rng = np.random.default_rng(stream)
    index = int(rng.integers(len(ARM_PROBLEMS)))
    spec = ARM_PROBLEMS[index]
    theta = spec.theta + rng.normal(0.0, PERTURBATION_STD, N_FEATURES)
    phi = PHI + rng.normal(0.0, PERTURBATION_STD, N_FEATURES)
    tau = TAU + float(rng.normal(0.0, PERTURBATION_STD))
    if spec.penalty is None:
        problem = Problem(reward=theta, constraint=phi, threshold=tau, constrained=True)
    else:
        problem = Problem(reward=theta - spec.penalty * phi, constraint=phi, threshold=tau, constrained=False)
    result = cross_entropy(environment(spec.traffic), problem, rng, config)
    return Candidate(np.array(result.actions), index, theta, phi, tau, result.feasible)


def _make_policies_chunk(streams: list[np.random.SeedSequence], config: CEMConfig) -> list[Candidate]:
    return [make_policy(s, config) for s in streams]


_BLAS_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@contextlib.contextmanager
def _single_threaded_blas_for_children() -> Iterator[None]:
    """Make worker processes start with one BLAS thread each.

    BLAS libraries read these variables once, when numpy is imported, so they
    must be in the environment a freshly *spawned* worker inherits; setting them
    inside the worker would come too late. They are restored on exit, and this
    process's own BLAS (already initialised) is unaffected. Without this, two
    workers on two cores could each start a BLAS pool of two threads.
    """
    saved = {name: os.environ.get(name) for name in _BLAS_THREAD_VARIABLES}
    try:
        for name in _BLAS_THREAD_VARIABLES:
            os.environ[name] = "1"
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def build_policies(
    n: int,
    seed: int,
    *,
    jobs: int = 1,
    config: CEMConfig = CEMConfig(),
    progress: Callable[[int, int], None] | None = None,
) -> PolicySet:
    """Compute ``n`` candidate policies the paper's way (driver.md, "Arms for the bandit").

    Args:
        n: number of policies (the paper uses 1000).
        seed: root seed; policy ``i`` uses child ``i`` of ``SeedSequence(seed)``.
        jobs: worker processes. ``1`` runs in this process; more use a
            ``ProcessPoolExecutor`` (spawned workers, one BLAS thread each).
            The result is bit-identical for every value.
        config: CEM parameters (default: the paper's 50 x 50, elite 5).
        progress: called as ``progress(done, n)`` once per finished policy, in
            the calling process (e.g. to advance a progress bar).

    Returns:
        A :class:`PolicySet` in policy order.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    n = int(n)
    streams = policy_streams(seed, n)
    results: list[Candidate | None] = [None] * n
    done = 0
    if jobs == 1:
        for i, stream in enumerate(streams):
            results[i] = make_policy(stream, config)
            done += 1
            if progress is not None:
                progress(done, n)
    else:
        # Small chunks: few enough tasks to keep the pickling overhead low, many
        # enough to balance load and report progress often. Each policy still
        # uses only its own stream, so chunking cannot change any result.
        chunk = max(1, min(8, n // (4 * jobs)))
        starts = range(0, n, chunk)
        context = multiprocessing.get_context("spawn")
        with _single_threaded_blas_for_children():
            pool = concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(starts)), mp_context=context)
            try:
                futures = {
                    pool.submit(_make_policies_chunk, streams[s : s + chunk], config): s for s in starts
                }
                for future in concurrent.futures.as_completed(futures):
                    s = futures[future]
                    for k, result in enumerate(future.result()):
                        results[s + k] = result
                        done += 1
                        if progress is not None:
                            progress(done, n)
            except BaseException:
                # Ctrl-C, a failing worker or a failing callback: drop the queued
                # chunks instead of computing all of them before re-raising.
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
    done_results = [r for r in results if r is not None]
    assert len(done_results) == n
    return PolicySet(
        actions=_readonly(np.stack([r.actions for r in done_results])),
        problem=_readonly(np.array([r.problem for r in done_results], dtype=np.int64)),
        theta=_readonly(np.stack([r.theta for r in done_results])),
        phi=_readonly(np.stack([r.phi for r in done_results])),
        tau=_readonly(np.array([r.tau for r in done_results], dtype=float)),
        feasible=_readonly(np.array([r.feasible for r in done_results], dtype=bool)),
        seed=int(seed),
    )


# --------------------------------------------------------------------------- bandit


def _check_actions(actions: np.ndarray) -> np.ndarray:
    actions = np.asarray(actions, dtype=float)
    if actions.ndim != 3 or actions.shape[1:] != (HORIZON, 2) or actions.shape[0] < 1:
        raise ValueError(f"policies must have shape (n, {HORIZON}, 2) with n >= 1, got {actions.shape}")
    if not np.all(np.isfinite(actions)):
        raise ValueError("policies contain NaN or infinite actions")
    if np.any(np.abs(actions) > 1.0):
        raise ValueError("policy actions must lie in [-1, 1]")
    return actions


def evaluate_policies(actions: np.ndarray, scenario: Scenario | str) -> np.ndarray:
    """Feature sums of policies in a scenario's environment.

    Args:
        actions: ``(n, 20, 2)`` policies with actions in ``[-1, 1]``.
        scenario: a :class:`Scenario` or its name.

    Returns:
        ``(n, 8)`` raw (unscaled) features, all policies rolled out as one batch.
    """
    sc = get_scenario(scenario) if isinstance(scenario, str) else scenario
    return policy_features(_check_actions(actions), sc.environment)


def fold_threshold(features: np.ndarray, phi: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """Fold the threshold into the arms (cbai.md §1, "Unknown threshold").

    Args:
        features: ``(n, d)`` raw features.
        phi: ``(d,)`` constraint weights.
        tau: threshold.

    Returns:
        ``(arms (n, d + 1), phi' (d + 1,))`` with ``arms = (features, 1)`` and
        ``phi' = (phi, -tau)``, so ``phi'^T arm = phi^T f - tau = g`` and the new
        threshold is 0.
    """
    features = np.asarray(features, dtype=float)
    arms = np.concatenate([features, np.ones((features.shape[0], 1))], axis=1)
    return arms, np.append(np.asarray(phi, dtype=float), -float(tau))


def rescale_for_binary(arms: np.ndarray, constraint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-arm positive rescaling that puts the constraint values in ``[-1, 1]`` (cbai.md §6).

    With the threshold folded in, ``g(x) = phi'^T x`` and feasible means
    ``g <= 0``. An infeasible arm (``g > 0``) is divided by ``max_x g(x) + 1e-6``,
    a feasible one (``g <= 0``) by ``-min_x g(x) + 1e-6``. Both divisors are
    nudged by :data:`RESCALE_NUDGE` away from 0: no division by zero when every
    feasible arm has ``g = 0``, and ``|g| < 1`` strictly, so the binary model
    ``P(y = +1) = (g + 1)/2`` never becomes deterministic. Dividing by a positive
    number keeps the sign of ``g`` (every arm keeps its feasibility, an arm on the
    boundary stays there) and keeps the model linear in ``phi'``. (Recomputing
    ``phi'^T x`` from the rescaled arm rounds differently, so an arm whose ``g`` is
    at the level of rounding error, i.e. on the boundary for all purposes, may
    come out on the other side of 0.)

    (The authors' code instead shifted every coordinate of the divided vector by
    -1e-6 / +1e-6, which moves ``g`` by ``-/+ 1e-6 * sum(phi')`` and could flip an
    arm within that distance of the boundary.)

    Args:
        arms: ``(n, d)`` arms with the threshold folded in.
        constraint: ``(d,)`` ``phi'``.

    Returns:
        ``(rescaled arms (n, d), divisors (n,))``; ``rescaled = arms / divisors[:, None]``.
    """
    arms = np.asarray(arms, dtype=float)
    g = arms @ np.asarray(constraint, dtype=float)
    infeasible = g > 0
    # Only the divisor of a class that has members matters; the other is a dummy.
    upper = (g.max() if infeasible.any() else 0.0) + RESCALE_NUDGE
    lower = (-g.min() if (~infeasible).any() else 0.0) + RESCALE_NUDGE
    scales = np.where(infeasible, upper, lower)
    return arms / scales[:, None], scales


def build_bandit(
    actions: np.ndarray,
    scenario: Scenario | str,
    *,
    rescale: bool = True,
    rescale_rewards: bool = False,
) -> DriverBandit:
    """The bandit instance of a scenario for a set of candidate policies.

    Args:
        actions: ``(n, 20, 2)`` candidate policies.
        scenario: a :class:`Scenario` or its name.
        rescale: apply :func:`rescale_for_binary` (needed for binary feedback; a
            Gaussian-feedback instance can keep the raw scale).
        rescale_rewards: compute the rewards on the rescaled arms, reproducing the
            authors' code (which rescaled the feature vectors in place). The default
            keeps each arm's reward ``theta^T f`` on the unscaled features: the best
            arm is the same either way, but which arms the reward test prunes, and so
            query counts, differ.

    Returns:
        A :class:`DriverBandit`.
    """
    sc = get_scenario(scenario) if isinstance(scenario, str) else scenario
    actions = _check_actions(actions)
    raw = policy_features(actions, sc.environment)
    folded, constraint = fold_threshold(raw, sc.phi, sc.tau)
    if rescale:
        arms, scales = rescale_for_binary(folded, constraint)
    else:
        arms, scales = folded, np.ones(folded.shape[0])
    reward_weights = np.append(sc.theta, 0.0)
    rewards = arms @ reward_weights if rescale_rewards else raw @ sc.theta
    return DriverBandit(
        scenario=sc.name,
        actions=_readonly(actions.copy()),
        raw_features=_readonly(raw),
        arms=_readonly(arms),
        scales=_readonly(scales),
        rewards=_readonly(rewards),
        reward_weights=_readonly(reward_weights),
        constraint=_readonly(constraint),
        threshold=0.0,
        rescaled=bool(rescale),
        rescale_rewards=bool(rescale_rewards),
    )


# --------------------------------------------------------------------------- duplicates


def distinct_rows(rows: np.ndarray) -> DistinctRows:
    """Exact duplicates among policies ``(n, 20, 2)`` or arms ``(n, d)``.

    Rows are compared element by element for equality (so ``0.0 == -0.0``), each
    row flattened first.
    """
    rows = np.asarray(rows)
    if rows.ndim < 1 or rows.shape[0] < 1:
        raise ValueError("need at least one row")
    flat = rows.reshape(rows.shape[0], -1)
    _, first, inverse, counts = np.unique(flat, axis=0, return_index=True, return_inverse=True, return_counts=True)
    # np.unique orders by value; report the distinct rows in order of first appearance.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return DistinctRows(
        first=_readonly(first[order]),
        inverse=_readonly(rank[np.ravel(inverse)]),
        counts=_readonly(counts[order]),
    )


def count_distinct(rows: np.ndarray) -> int:
    """Number of distinct rows (exact duplicates counted once)."""
    return distinct_rows(rows).n_distinct
