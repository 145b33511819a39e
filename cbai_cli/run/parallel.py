"""Worker processes: how many a command starts, and a pool of spawned workers with one BLAS
thread each (:func:`cbai_cli.numerics.blas_threads.single_threaded_blas`).

- :func:`spawn_pool`: a :class:`~concurrent.futures.ProcessPoolExecutor` of such workers;
- :func:`default_jobs` and :func:`check_jobs`: how many workers a command starts.

Importing this module imports nothing heavy (the process machinery only when a pool is made).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from cbai_cli.numerics.blas_threads import single_threaded_blas

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["JOBS_PER_CORE", "check_jobs", "default_jobs", "spawn_pool"]

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
