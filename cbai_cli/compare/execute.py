"""Running a plan: its runs in batches on a backend (:mod:`cbai_cli.compare.backends`): this
process, a local process pool or a Dask cluster.

Work travels in batches (tuples of tasks) so that a thousand 10-millisecond runs are
not dominated by the cost of shipping each to a worker. Batch sizes adapt: the first
batch of every (group, algorithm) stream is a single run, which measures the run's
cost; later batches hold about ``target_seconds`` of work, and never more than a fair
share of what is left, so the last batches still spread over all workers.

Lower bounds (Theorem 1, for the ratio column) are computed once per distinct
instance in batches of their own, asked for when the first run on the instance is
dispatched and ahead of the group's later runs; a run's record waits in memory until
its instance's bound has arrived.

Processes sharing a store (:mod:`cbai_cli.compare.claims`) claim the runs of a batch
just before it is dispatched: runs another process has claimed or stored leave the
batch, and the bounds of instances this process runs nothing on are never computed.

Results are identical for every backend and number of workers: each run depends only
on its instance, seed and request (see :mod:`cbai_cli.compare.plan`), and worker
processes use single-threaded BLAS, so no floating-point reduction depends on the
thread count. Records are written by this (the parent) process only, as batches finish.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from cbai_cli.compare.backends import Backend
from cbai_cli.compare.tasks import BoundOutcome, BoundTask, RunOutcome, RunTask

MAX_BATCH = 512


@dataclass
class _Stream:
    """Tasks of similar cost (the bounds of a group, or one algorithm on one group),
    with the measured seconds per task (None until the first batch returns); the tasks
    of ``runs`` streams are claimed before they are dispatched."""

    tasks: deque
    runs: bool
    seconds_per_task: float | None = None
    probing: bool = False


class Scheduler:
    """Feeds a backend with adaptively sized batches and turns outcomes into records.

    Args:
        plan: the plan the runs belong to (groups, algorithms, instances).
        backend: where batches run.
        emit: called with each finished run's record, in completion order.
        with_bounds: attach Theorem 1's lower bound of the run's instance to records (True),
            not (False), or only where it is cheap (None: the kind's ``bound_skip_reason``).
        target_seconds: the work one batch should hold, once costs are measured (None: the
            backend's ``batch_seconds``).
        max_batch: the most runs in one batch.
        progress: called with the number of finished runs after each one.
        claim: given the run keys of a batch about to be dispatched, those this process is
            to run (:meth:`cbai_cli.compare.claims.Claims.claim`); the others are left out.
            None: every run is this process's.
    """

    def __init__(self, plan, backend: Backend, emit: Callable[[dict], None], *, with_bounds: bool | None = None,
                 target_seconds: float | None = None, max_batch: int = MAX_BATCH,
                 progress: Callable[[int], None] | None = None,
                 claim: Callable[[Sequence[str]], Collection[str]] | None = None) -> None:
        self.plan = plan
        self.backend = backend
        self.emit = emit
        self.with_bounds = with_bounds
        self.target_seconds = backend.batch_seconds if target_seconds is None else target_seconds
        self.max_batch = max_batch
        self.progress = progress
        self.claim = claim
        self._runs: dict[int, Any] = {}
        self._streams: dict[tuple, _Stream] = {}
        self._requested: set[tuple[str, float]] = set()
        self._bounds: dict[tuple[str, float], float | None] = {}
        self._parked: dict[tuple[str, float], list[RunOutcome]] = {}
        self._finished = 0

    def run(self, runs: Sequence) -> int:
        """Run ``runs`` (planned runs of ``plan``); returns how many finished."""
        self._fill_streams(runs)
        in_flight: dict[int, tuple] = {}
        limit = 2 * self.backend.workers
        cancel = True
        try:
            while True:
                while len(in_flight) < limit:
                    batch = self._next_batch()
                    if batch is None:
                        break
                    stream_name, tasks = batch
                    in_flight[self.backend.submit(tasks)] = (stream_name, len(tasks))
                if not in_flight:
                    break
                ticket, result = self.backend.next_done()
                stream_name, size = in_flight.pop(ticket)
                self._learn(stream_name, result.elapsed / max(size, 1))
                for outcome in result.outcomes:
                    self._take(outcome)
            cancel = False
        finally:
            self.backend.close(cancel=cancel)
        return self._finished

    def _fill_streams(self, runs: Sequence) -> None:
        self._runs = {run.index: run for run in runs}
        for run in runs:
            instance = self.plan.instance(run)
            choice = self.plan.grid.algorithms[run.algorithm]
            if self._bounded(instance):
                self._stream(("bounds", run.group), runs=False)  # before the group's runs: bounds go first
            self._stream(("runs", run.group, run.algorithm), runs=True).append(
                RunTask(run.index, instance, choice.request, choice.label, run.seed))

    def _bound_time_limit(self) -> float | None:
        """Bounds that ``--bounds`` forces are capped (:data:`cbai_cli.contracts.options.FORCED_BOUND_TIME_LIMIT`);
        those the size rule lets through are cheap and stay deterministic."""
        from cbai_cli.contracts.options import FORCED_BOUND_TIME_LIMIT

        return FORCED_BOUND_TIME_LIMIT if self.with_bounds else None

    def _bounded(self, instance) -> bool:
        """Whether the runs on ``instance`` wait for a reference lower bound."""
        from cbai_cli.kinds import get

        kind = get(instance.kind)
        return kind.has_reference_bound and kind.bound_skip_reason(instance, self.with_bounds) is None

    def _stream(self, name: tuple, runs: bool) -> deque:
        if name not in self._streams:
            self._streams[name] = _Stream(deque(), runs)
        return self._streams[name].tasks

    def _next_batch(self) -> tuple[tuple, tuple] | None:
        # Streams were created group by group, bounds first, so dict order is priority order.
        for name, stream in self._streams.items():
            # A stream of unknown cost sends one task, and nothing more until it returns.
            while stream.tasks and not stream.probing:
                if stream.seconds_per_task is None:
                    size = 1
                else:
                    size = max(1, min(self.max_batch, int(self.target_seconds / max(stream.seconds_per_task, 1e-6))))
                    size = min(size, max(1, math.ceil(len(stream.tasks) / self.backend.workers)), len(stream.tasks))
                tasks = tuple(stream.tasks.popleft() for _ in range(size))
                if stream.runs:
                    tasks = self._claimed(tasks)
                if tasks:
                    stream.probing = stream.seconds_per_task is None
                    return name, tasks
        return None

    def _claimed(self, tasks: tuple) -> tuple:
        """The runs of ``tasks`` this process is to do, with the bounds they wait for asked for."""
        if self.claim is not None:
            mine = set(self.claim([self._runs[task.index].run_key for task in tasks]))
            tasks = tuple(task for task in tasks if self._runs[task.index].run_key in mine)
        for task in tasks:
            self._request_bound(self._runs[task.index])
        return tasks

    def _request_bound(self, run) -> None:
        """Queue the bound of ``run``'s instance, once, if its records carry one."""
        instance = self.plan.instance(run)
        if not self._bounded(instance):
            return
        delta = self.plan.grid.algorithms[run.algorithm].request.get("delta")
        if (instance.content_hash, delta) not in self._requested:
            self._requested.add((instance.content_hash, delta))
            self._stream(("bounds", run.group), runs=False).append(BoundTask(instance, delta, self._bound_time_limit()))

    def _learn(self, name: tuple, seconds: float) -> None:
        stream = self._streams[name]
        stream.probing = False
        # Average with the previous estimate: one slow batch should not shrink the rest.
        previous = stream.seconds_per_task
        stream.seconds_per_task = seconds if previous is None else 0.5 * (previous + seconds)

    def _take(self, outcome) -> None:
        if isinstance(outcome, BoundOutcome):
            key = (outcome.instance_hash, outcome.delta)
            self._bounds[key] = outcome.lower_bound
            for parked in self._parked.pop(key, []):
                self._finish(parked, outcome.lower_bound)
            return
        run = self._runs[outcome.index]
        instance = self.plan.instance(run)
        if not self._bounded(instance):
            self._finish(outcome, None)
            return
        key = (instance.content_hash, self.plan.grid.algorithms[run.algorithm].request.get("delta"))
        if key in self._bounds:
            self._finish(outcome, self._bounds[key])
        else:
            self._parked.setdefault(key, []).append(outcome)

    def _finish(self, outcome: RunOutcome, lower_bound: float | None) -> None:
        self.emit(make_record(self.plan, self._runs[outcome.index], outcome, lower_bound))
        self._finished += 1
        if self.progress is not None:
            self.progress(self._finished)


def make_record(plan, run, outcome: RunOutcome, lower_bound: float | None) -> dict:
    """The record of one finished run (keys: :data:`~cbai_cli.compare.records.RECORD_KEYS`)."""
    from cbai_cli.compare.records import RECORD_KEYS

    group = plan.grid.groups[run.group]
    choice = plan.grid.algorithms[run.algorithm]
    instance = plan.instance(run)
    swept_parameter, swept_value = group.swept if group.swept is not None else (None, None)
    record = {
        "run_key": run.run_key,
        "group": group.label,
        "source": group.source,
        "swept_parameter": swept_parameter,
        "swept_value": swept_value,
        "instance": instance.name,
        "instance_hash": instance.content_hash,
        "algorithm": outcome.algorithm,
        "spec": choice.label,
        "regime": outcome.regime,
        **outcome.options,
        **outcome.result,
        "seed": run.seed,
        "lower_bound": lower_bound,
        "group_index": run.group,
        "algorithm_index": run.algorithm,
        **outcome.versions,
    }
    return {key: record.get(key) for key in RECORD_KEYS}
