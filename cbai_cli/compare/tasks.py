"""The work of ``cbai compare`` as it travels to workers: batches of run and bound tasks, what
they send back, and :func:`perform`, which a worker (or this process) runs on a batch.
Each run depends only on its instance, seed and request, so a batch's results do not depend
on where it runs."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Any


def start_worker(kernel_threads: int) -> None:
    """Worker initializer. Ctrl-C goes to the whole process group, but only the parent
    should handle it (it stops the pool and keeps the store valid). The compiled step may
    split a pass over a large arm set across numba's threads: a worker gets at most
    ``kernel_threads`` (its share of the cores, so that J workers do not run J times as
    many threads as cores) and no more than ``NUMBA_NUM_THREADS`` if the user set it;
    numba reads the variable when it loads, after this."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    chosen = os.environ.get("NUMBA_NUM_THREADS", "")
    if chosen.isdigit() and int(chosen) > 0:
        kernel_threads = min(kernel_threads, int(chosen))
    os.environ["NUMBA_NUM_THREADS"] = str(kernel_threads)


@dataclass(frozen=True)
class RunTask:
    """One run: the instance (shipped, so remote workers need no files), the request,
    the spec's label (to share a prepared request within a batch) and the seed."""

    index: int
    instance: Any
    request: Any
    label: str
    seed: int


@dataclass(frozen=True)
class BoundTask:
    """Theorem 1's lower bound of one instance at confidence δ, its design solves capped at
    ``time_limit`` seconds (None: no cap)."""

    instance: Any
    delta: float
    time_limit: float | None = None


@dataclass(frozen=True)
class RunOutcome:
    """What a worker reports about one run: the resolved algorithm and regime, the
    options in effect (None where an option does not enter the algorithm), the scored
    result and the versions of the code that ran it."""

    index: int
    algorithm: str
    regime: str | None
    options: dict
    result: dict
    versions: dict


@dataclass(frozen=True)
class BoundOutcome:
    instance_hash: str
    delta: float
    lower_bound: float | None


@dataclass(frozen=True)
class BatchResult:
    """The outcomes of a batch and the seconds the worker spent on it."""

    elapsed: float
    outcomes: tuple


def reference_lower_bound(instance, delta: float, time_limit: float | None = None) -> float | None:
    """The instance kind's reference lower bound (Theorem 1 for ``cbai``), or None."""
    from cbai_cli.kinds import get

    return get(instance.kind).reference_lower_bound(instance, delta, time_limit)


def perform(tasks: tuple) -> BatchResult:
    """Worker entry point: run a batch of :class:`RunTask` or :class:`BoundTask`.

    A request is prepared once per (instance, spec) within the batch, so the Oracle's
    design is solved once for all seeds of a fixed instance in the batch, and the seeds
    of one (instance, spec) run together (:func:`~cbai_cli.run.simulate.run_many`: as one
    compiled batch where they can; every record as if run alone).
    """
    from cbai_cli.compare.plan import stream_key
    from cbai_cli.compare.records import runtime_versions
    from cbai_cli.compare.requests import prepare_request, run_prepared

    versions = runtime_versions()
    # Timed after the version lookup, which costs the same for any batch size.
    started = time.perf_counter()
    outcomes: dict[int, Any] = {}
    groups: dict[tuple[str, str], list[tuple[int, RunTask]]] = {}
    for position, task in enumerate(tasks):
        if isinstance(task, BoundTask):
            outcomes[position] = BoundOutcome(task.instance.content_hash, task.delta,
                                              reference_lower_bound(task.instance, task.delta, task.time_limit))
        else:
            groups.setdefault((task.instance.content_hash, task.label), []).append((position, task))
    for group in groups.values():
        first = group[0][1]
        prepared = prepare_request(first.request, first.instance)
        seeds = [task.seed for _, task in group]
        for (position, task), parts in zip(group, run_prepared(prepared, seeds, (stream_key(first.instance),))):
            outcomes[position] = RunOutcome(task.index, parts.algorithm, parts.regime, parts.options, parts.result,
                                            versions)
    return BatchResult(time.perf_counter() - started, tuple(outcomes[position] for position in range(len(tasks))))
