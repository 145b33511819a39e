"""BLAS threads and worker processes.

cbai's linear algebra is small dense matrices, where the threads of a multi-threaded
BLAS only contend (an optimal design at K = 1000, d = 30 took 121 s threaded on a busy
2-core machine against 0.5 s single-threaded), and where one thread everywhere keeps a
serial run bit-identical to a parallel one. BLAS libraries size their thread pools from
environment variables that they read once, when numpy is first imported. Hence:

- :func:`pin_blas_threads_by_default`: a command calls it first thing, before numpy
  loads, to ask for one thread in this process unless the user chose otherwise;
- :func:`single_threaded_blas`: around the start of worker processes, which must be
  *spawned* (a fresh interpreter reads the environment when it loads numpy; forking a
  process that holds BLAS threads is unsafe);
- :func:`spawn_pool`: a :class:`~concurrent.futures.ProcessPoolExecutor` of such workers;
- :func:`default_jobs` and :func:`check_jobs`: how many workers a command starts.

Importing this module changes nothing and imports nothing heavy (no numpy, and the
process machinery only when a pool is made), so a command can call
:func:`pin_blas_threads_by_default` before numpy loads, at little cost to its start.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["BLAS_THREAD_VARIABLES", "JOBS_PER_CORE", "check_jobs", "default_jobs", "pin_blas_threads_by_default",
           "single_threaded_blas", "spawn_pool"]

#: Environment variables that size the thread pools of the common BLAS builds.
BLAS_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def pin_blas_threads_by_default() -> None:
    """Ask BLAS for one thread in this process, unless the user set a variable already.

    Sets every variable of :data:`BLAS_THREAD_VARIABLES` that is unset to ``"1"``. Once
    numpy is loaded its BLAS has read them, so then this changes nothing at all.
    """
    if "numpy" in sys.modules:
        return
    for variable in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Set every BLAS thread variable to ``"1"`` while the block runs, then restore this
    process's environment exactly (a variable that was unset is removed again).

    Worker processes started inside the block inherit one BLAS thread each; this
    process's own BLAS, already initialised, is unaffected.
    """
    saved = {variable: os.environ.get(variable) for variable in BLAS_THREAD_VARIABLES}
    os.environ.update({variable: "1" for variable in BLAS_THREAD_VARIABLES})
    try:
        yield
    finally:
        for variable, value in saved.items():
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value


#: The most worker processes a command starts per core it may use: the runs are CPU-bound,
#: so more workers than cores only add memory (each is a Python process of about 175 MB with
#: numpy, scipy and numba loaded: 173–180 MB measured running compare); a few per core still
#: let a user overlap I/O or spread uneven batches.
JOBS_PER_CORE = 4


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS and Windows
        return os.cpu_count() or 1


def check_jobs(jobs: int) -> int:
    """``jobs`` (``--jobs``), or one line when it is not an integer ≥ 1 or exceeds
    ``JOBS_PER_CORE`` workers per core (``--jobs 500`` on two cores would start 500
    interpreters for no speed)."""
    from cbai_cli.contracts.errors import OptionError

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise OptionError(f"--jobs must be an integer ≥ 1, got {jobs!r}", "jobs")
    cores = default_jobs()
    if jobs > JOBS_PER_CORE * cores:
        raise OptionError(f"--jobs {jobs} is more than {JOBS_PER_CORE} workers for each of the {cores} core(s) this "
                          f"process may use: the runs are CPU-bound, so at most {JOBS_PER_CORE * cores} workers",
                          "jobs")
    return jobs


@contextmanager
def spawn_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` spawned processes with one BLAS thread each.

    The executor starts its processes as tasks are submitted, so the BLAS variables stay
    pinned in this process's environment for the whole block. Leaving the block waits
    for the submitted tasks; leaving it by an exception (Ctrl-C, a failing task or
    callback) first drops the tasks not yet started. A worker that dies (the system's
    out-of-memory killer, ``kill -9``) ends the block with
    :class:`~cbai_cli.contracts.errors.WorkerLostError`, one line for the user.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from cbai_cli.contracts.errors import WorkerLostError

    with single_threaded_blas():
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        try:
            yield pool
        except BrokenProcessPool:
            pool.shutdown(wait=True, cancel_futures=True)
            raise WorkerLostError("a worker process ended abruptly (killed, perhaps because the system ran out "
                                  "of memory) before finishing its work") from None
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
