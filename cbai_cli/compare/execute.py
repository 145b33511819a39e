"""Running a plan: in this process, on a local process pool, or on a Dask cluster.

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

import itertools
import math
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cbai_cli.errors import OptionError, WorkerLostError

from cbai_cli.parallel import check_jobs, default_jobs, single_threaded_blas

TARGET_BATCH_SECONDS = 0.25
#: The work of one batch run in this process (``--jobs 1``): no other worker waits for a
#: share, and the seeds of one request in one batch advance as one compiled batch
#: (:func:`cbai_cli.simulate.run_many`), about 8% less CPU a query than one by one (ten
#: theory G-ACOL runs on irrelevant-dims d = 10, R = 1); their records are stored at most
#: this much later.
IN_PROCESS_BATCH_SECONDS = 2.0
MAX_BATCH = 512
# Seconds to wait for a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT = 10


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


# ---------------------------------------------------------------- tasks (run in workers)

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
    of one (instance, spec) run together (:func:`~cbai_cli.simulate.run_many`: as one
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


# ---------------------------------------------------------------- backends

class Backend(Protocol):
    """Where batches run. ``submit`` returns a ticket; ``next_done`` blocks until some
    batch finishes and returns its ticket and :class:`BatchResult` (or raises the
    worker's exception); ``close(cancel=True)`` abandons unfinished work at once.
    ``batch_seconds``: the work one batch should hold, once costs are measured."""

    workers: int
    batch_seconds: float

    def submit(self, tasks: tuple) -> int: ...

    def next_done(self) -> tuple[int, BatchResult]: ...

    def close(self, cancel: bool) -> None: ...


class InProcessBackend:
    """Runs batches one after the other in this process (``--jobs 1``)."""

    batch_seconds = IN_PROCESS_BATCH_SECONDS

    def __init__(self) -> None:
        self.workers = 1
        self._tickets = itertools.count()
        self._waiting: deque[tuple[int, tuple]] = deque()

    def submit(self, tasks: tuple) -> int:
        ticket = next(self._tickets)
        self._waiting.append((ticket, tasks))
        return ticket

    def next_done(self) -> tuple[int, BatchResult]:
        ticket, tasks = self._waiting.popleft()
        return ticket, perform(tasks)

    def close(self, cancel: bool) -> None:
        self._waiting.clear()


def serve(connection, kernel_threads: int) -> None:
    """A worker process's loop: receive a batch, :func:`perform` it, send back ``(True,
    BatchResult)`` or ``(False, the exception)``, until this process's end of the pipe
    closes (:class:`ProcessPoolBackend`)."""
    start_worker(kernel_threads)
    while True:
        try:
            tasks = connection.recv()
        except (EOFError, OSError):
            return
        try:
            reply = (True, perform(tasks))
        except Exception as error:  # the parent raises it, as it would have been raised here
            reply = (False, error)
        try:
            connection.send(reply)
        except (EOFError, OSError):
            return
        except Exception:  # an exception that does not pickle: its text still reaches the parent
            connection.send((False, RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))


class ProcessPoolBackend:
    """``jobs`` worker processes, started fresh ("spawn") with single-threaded BLAS, their
    share of the cores for numba's threads (:func:`start_worker`) and deaf to Ctrl-C, each
    running :func:`serve` on a pipe of its own.

    Nothing is shared between the workers (no queue, no lock), so a worker that dies at any
    moment (the out-of-memory killer, ``kill -9``, a crash) is noticed within 0.2 s and ends
    the comparison with :class:`~cbai_cli.errors.WorkerLostError`, and ``close(cancel=True)``
    (Ctrl-C, SIGTERM, an error) kills the workers without waiting on anything they hold.
    ``multiprocessing.Pool`` did neither: it waited forever for the batch of a killed worker,
    and its ``terminate`` could hang on a result lock that a killed worker held.
    """

    batch_seconds = TARGET_BATCH_SECONDS

    def __init__(self, jobs: int) -> None:
        import multiprocessing

        self.workers = jobs
        self._tickets = itertools.count()
        self._waiting: deque[tuple[int, tuple]] = deque()
        self._running: dict[int, int] = {}  # worker → the ticket of the batch it runs
        self._processes: list[Any] = []
        self._connections: list[Any] = []
        # "spawn" rather than fork: a fresh interpreter reads the BLAS variables when it
        # loads numpy, and forking a process that holds BLAS threads is unsafe.
        context = multiprocessing.get_context("spawn")
        share = max(1, default_jobs() // jobs)
        try:
            with single_threaded_blas():
                for _ in range(jobs):
                    ours, theirs = context.Pipe()
                    process = context.Process(target=serve, args=(theirs, share), daemon=True)
                    process.start()
                    theirs.close()
                    self._processes.append(process)
                    self._connections.append(ours)
        except BaseException:
            self.close(cancel=True)
            raise

    def submit(self, tasks: tuple) -> int:
        ticket = next(self._tickets)
        self._waiting.append((ticket, tasks))
        self._dispatch()
        return ticket

    def _dispatch(self) -> None:
        """Hand waiting batches to idle workers (an idle worker is reading its pipe, so a
        large batch does not block)."""
        for worker, connection in enumerate(self._connections):
            if not self._waiting:
                return
            if worker in self._running:
                continue
            ticket, tasks = self._waiting[0]
            try:
                connection.send(tasks)
            except OSError:
                raise self._lost(worker) from None
            self._waiting.popleft()
            self._running[worker] = ticket

    def next_done(self) -> tuple[int, BatchResult]:
        from multiprocessing.connection import wait

        if not self._running:
            raise RuntimeError("next_done: no batch was submitted")
        while True:
            running = list(self._running.items())
            # A timeout keeps the wait interruptible by Ctrl-C on every platform.
            wait([self._connections[worker] for worker, _ in running]
                 + [self._processes[worker].sentinel for worker, _ in running], timeout=0.2)
            for worker, ticket in running:
                connection = self._connections[worker]
                if connection.poll():
                    try:
                        succeeded, payload = connection.recv()
                    except (EOFError, OSError):
                        raise self._lost(worker) from None
                    del self._running[worker]
                    self._dispatch()
                    if not succeeded:
                        raise payload
                    return ticket, payload
                if not self._processes[worker].is_alive():
                    raise self._lost(worker)

    def _lost(self, worker: int) -> WorkerLostError:
        """The error for a worker that ended without returning its batch."""
        process = self._processes[worker]
        process.join(timeout=1.0)
        code = process.exitcode
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
            if -code == getattr(signal, "SIGKILL", None):
                how += " (the system may have run out of memory)"
        else:
            how = f"exited with code {code}"
        hint = ""
        if code == 1 and user_script():
            # a spawned worker imports the parent's main script afresh: an unguarded call to
            # compare there raises in the worker's start-up, which exits with code 1
            hint = ("; its error is above (from a Python script, call compare under "
                    "`if __name__ == \"__main__\":`, since each worker imports the script afresh)")
        return WorkerLostError(f"worker process {process.pid} {how} before finishing its runs{hint}")

    def close(self, cancel: bool) -> None:
        """Without ``cancel``: close the pipes, so that each worker's loop ends, and wait for
        them. With it: terminate the workers at once (killed if they are still there after
        5 s), then close the pipes."""
        if not cancel:
            for connection in self._connections:
                connection.close()
        for process in self._processes:
            if cancel and process.is_alive():
                process.terminate()
        for process in self._processes:
            process.join(timeout=5.0)
            if process.is_alive():
                process.kill()
                process.join()
        for connection in self._connections:
            connection.close()


class DaskBackend:
    """Batches as tasks of a dask.distributed cluster at ``address`` (``cbai[dask]``).

    Workers need cbai installed; instances travel with the tasks, so they need no
    files. Dask's nanny already starts workers with single-threaded BLAS.
    """

    batch_seconds = TARGET_BATCH_SECONDS

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise OptionError("--scheduler needs dask.distributed: pip install 'cbai[dask]'") from None
        try:
            self._client = Client(address, timeout=DASK_CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise OptionError(f"--scheduler {address}: cannot connect: {message}") from None
        self.workers = max(1, sum(self._client.nthreads().values()))
        self._completed = as_completed()
        self._tickets = itertools.count()
        self._futures: dict[str, tuple[int, Any]] = {}

    def submit(self, tasks: tuple) -> int:
        ticket = next(self._tickets)
        future = self._client.submit(perform, tasks, pure=False)
        self._futures[future.key] = (ticket, future)
        self._completed.add(future)
        return ticket

    def next_done(self) -> tuple[int, BatchResult]:
        future = next(self._completed)
        ticket, _ = self._futures.pop(future.key)
        return ticket, future.result()

    def close(self, cancel: bool) -> None:
        if cancel and self._futures:
            self._client.cancel([future for _, future in self._futures.values()])
        self._futures.clear()
        self._client.close()


def make_backend(jobs: int | None, scheduler: str | None, runs: int) -> Backend:
    """Dask when a scheduler address is given, else ``jobs`` local processes (default:
    the number of cores, and never more than ``runs``), or this process alone when
    that is one."""
    if scheduler is not None:
        if jobs is not None:
            raise OptionError("--jobs does not apply with --scheduler: the cluster's workers run the batches")
        return DaskBackend(scheduler)
    jobs = default_jobs() if jobs is None else check_jobs(jobs)
    jobs = min(jobs, max(runs, 1))
    return InProcessBackend() if jobs == 1 else ProcessPoolBackend(jobs)


# ---------------------------------------------------------------- scheduling

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
        """Bounds that ``--bounds`` forces are capped (:data:`cbai_cli.options.FORCED_BOUND_TIME_LIMIT`);
        those the size rule lets through are cheap and stay deterministic."""
        from cbai_cli.options import FORCED_BOUND_TIME_LIMIT

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


def user_script() -> bool:
    """Whether this process runs a Python script of the user's (``python script.py``), not
    the ``cbai`` command (its console script, or ``python -m cbai_cli``)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    spec = getattr(main, "__spec__", None)
    return path is not None and Path(path).stem != "cbai" and not (spec and spec.name.startswith("cbai_cli"))
