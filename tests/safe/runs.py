"""Runs of library problems (cbai_cli.kinds.safe.paper_instances, or built in a test) through the one
run API, seeded as ``numpy.random.default_rng(seed)`` (cbai_cli.run.simulate.spawned_streams)."""

from __future__ import annotations

import numpy as np

from cbai_cli.kinds.safe.files import SafeBaiInstance, SafeRegretInstance
from cbai_cli.kinds.safe.problems import SafeRegretProblem
from cbai_cli.run.simulate import RunRequest, drive, prepare, run_once, spawned_streams, start_run


def instance_of(problem):
    """The instance of a safe-regret or safe-bai library problem."""
    return (SafeRegretInstance if isinstance(problem, SafeRegretProblem) else SafeBaiInstance)(problem)


def run(problem, algorithm: str, seed: int, **options):
    """The scored run (a RegretRun or a BaiRun) of ``algorithm`` with ``options`` on ``problem``."""
    prepared = prepare(RunRequest.of(algorithm, **options), instance_of(problem))
    return run_once(prepared, seed, streams=spawned_streams(np.random.default_rng(seed)))


def run_with_curve(problem, algorithm: str, seed: int, **options):
    """:func:`run` on a safe-regret problem, and the cumulative regret after every round, (T,)
    (the run's score keeps it at a few points only)."""
    prepared = prepare(RunRequest.of(algorithm, **options), instance_of(problem))
    learner, environment, observer = start_run(prepared, seed, streams=spawned_streams(np.random.default_rng(seed)))
    loop = drive(learner, environment, prepared.budget, observer)
    return prepared.kind.score(prepared, seed, learner, environment, observer, loop), observer.curve
