"""Candidate policies: the arms of the Driver bandit before they become feature vectors.

Lindner et al. (ICML 2022), Section 4.3 and Appendix C.3: the arms are a set of
pre-computed policies, each the solution of the (constrained) cross-entropy method of
Appendix C.1, Algorithm 4. As in the authors' code (linked in Appendix C), policy ``i``
picks one of six problems (:data:`ARM_PROBLEMS`), perturbs every coordinate of
``theta``, ``phi`` and ``tau`` by ``N(0, 0.1^2)`` and keeps the actions of the CEM's
solution.

Policy ``i`` draws only from its own stream, child ``i`` of
``SeedSequence(seed).spawn(n)``, so it does not depend on ``n``, on the number of
worker processes or on the order in which workers finish. (The authors' published
1000 policies hold only 20 distinct ones: their workers inherited one global random
state; see :mod:`cbai_cli.driver.duplicates`.)
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from cbai_cli.driver.arrays import read_only
from cbai_cli.driver.cem import CEMConfig, Problem, cross_entropy
from cbai_cli.driver.features import N_FEATURES
from cbai_cli.driver.scenarios import PHI, TAU, THETA_TARGET_LOCATION, THETA_TARGET_VELOCITY, environment
from cbai_cli.run.parallel import spawn_pool
from cbai_cli.contracts.validation import integer

__all__ = [
    "PERTURBATION_STD",
    "ArmProblem",
    "ARM_PROBLEMS",
    "Candidate",
    "PolicySet",
    "policy_streams",
    "make_policy",
    "build_policies",
]

#: Standard deviation of the perturbation of every coordinate of theta, phi and tau.
PERTURBATION_STD = 0.1
# At most this many policies travel to a worker process in one task.
_MAX_CHUNK = 8


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


def policy_streams(seed: int, n: int) -> list[np.random.SeedSequence]:
    """The ``n`` per-policy streams: children of ``SeedSequence(seed)``.

    Child ``i`` has spawn key ``(i,)`` whatever ``n`` is, so policy ``i`` is the
    same for every ``n > i``.

    Raises:
        FieldError: (a ``ValueError``) when ``seed`` is not an integer ≥ 0.
    """
    return np.random.SeedSequence(integer(seed, "seed", 0)).spawn(n)


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


def _candidates(
    streams: Sequence[np.random.SeedSequence], jobs: int, config: CEMConfig
) -> Iterator[tuple[int, Candidate]]:
    """``(i, policy i)`` as each policy is finished: in order in this process when
    ``jobs == 1``, else in the order in which chunks finish on ``jobs`` workers."""
    if jobs == 1:
        for i, stream in enumerate(streams):
            yield i, make_policy(stream, config)
        return
    # Small chunks: few enough tasks to keep the pickling overhead low, many enough to
    # balance load and report progress often. Each policy still uses only its own
    # stream, so chunking cannot change any result.
    n = len(streams)
    chunk = max(1, min(_MAX_CHUNK, n // (4 * jobs)))
    starts = range(0, n, chunk)
    with spawn_pool(min(jobs, len(starts))) as pool:
        futures = {pool.submit(_make_policies_chunk, list(streams[s : s + chunk]), config): s for s in starts}
        for future in concurrent.futures.as_completed(futures):
            start = futures[future]
            for k, candidate in enumerate(future.result()):
                yield start + k, candidate


def build_policies(
    n: int,
    seed: int,
    *,
    jobs: int = 1,
    config: CEMConfig = CEMConfig(),
    progress: Callable[[int, int], None] | None = None,
) -> PolicySet:
    """Compute ``n`` candidate policies the paper's way (Section 4.3, Appendix C.3).

    Args:
        n: number of policies (the paper uses 1000).
        seed: root seed; policy ``i`` uses child ``i`` of ``SeedSequence(seed)``.
        jobs: worker processes. ``1`` runs in this process; more use a pool of
            spawned workers with one BLAS thread each (:func:`cbai_cli.run.parallel.spawn_pool`).
            The result is bit-identical for every value.
        config: CEM parameters (default: the paper's 50 x 50, elite 5).
        progress: called as ``progress(done, n)`` once per finished policy, in
            the calling process (e.g. to advance a progress bar).

    Returns:
        A :class:`PolicySet` in policy order.

    Raises:
        FieldError: (a ``ValueError``) for ``n`` or ``jobs`` below 1 or ``seed`` below 0.
    """
    n = integer(n, "n", 1)
    jobs = integer(jobs, "jobs", 1)
    streams = policy_streams(seed, n)
    results: list[Candidate | None] = [None] * n
    # closing(): a failing callback or Ctrl-C stops the workers here, not whenever the
    # generator happens to be collected.
    with contextlib.closing(_candidates(streams, jobs, config)) as candidates:
        for done, (i, candidate) in enumerate(candidates, start=1):
            results[i] = candidate
            if progress is not None:
                progress(done, n)
    done_results = [r for r in results if r is not None]
    assert len(done_results) == n
    return PolicySet(
        actions=read_only(np.stack([r.actions for r in done_results])),
        problem=read_only(np.array([r.problem for r in done_results], dtype=np.int64)),
        theta=read_only(np.stack([r.theta for r in done_results])),
        phi=read_only(np.stack([r.phi for r in done_results])),
        tau=read_only(np.array([r.tau for r in done_results], dtype=float)),
        feasible=read_only(np.array([r.feasible for r in done_results], dtype=bool)),
        seed=int(seed),
    )
