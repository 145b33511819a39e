"""Where batches of ``cbai compare`` run: in this process (``--jobs 1``), on a local pool of
spawned worker processes with single-threaded BLAS, or on a Dask cluster (``--scheduler``).
Every backend gives the same results (:mod:`cbai_cli.compare.tasks`)."""

from __future__ import annotations

import itertools
import signal
import sys
from collections import deque
from pathlib import Path
from typing import Any, Protocol

from cbai_cli.compare.tasks import BatchResult, perform, start_worker
from cbai_cli.contracts.errors import OptionError, WorkerLostError
from cbai_cli.numerics.blas_threads import single_threaded_blas
from cbai_cli.run.parallel import check_jobs, default_jobs

# Seconds to wait for a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT = 10
#: The work one batch holds on worker processes, once costs are measured: short enough that
#: the last batches still spread over every worker.
TARGET_BATCH_SECONDS = 0.25
#: The work of one batch run in this process (``--jobs 1``): no other worker waits for a
#: share, and the seeds of one request in one batch advance as one compiled batch
#: (:func:`cbai_cli.run.simulate.run_many`), about 8% less CPU a query than one by one (ten
#: theory G-ACOL runs on irrelevant-dims d = 10, R = 1); their records are stored at most
#: this much later.
IN_PROCESS_BATCH_SECONDS = 2.0


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
    the comparison with :class:`~cbai_cli.contracts.errors.WorkerLostError`, and ``close(cancel=True)``
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


def user_script() -> bool:
    """Whether this process runs a Python script of the user's (``python script.py``), not
    the ``cbai`` command (its console script, or ``python -m cbai_cli``)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    spec = getattr(main, "__spec__", None)
    return path is not None and Path(path).stem != "cbai" and not (spec and spec.name.startswith("cbai_cli"))
