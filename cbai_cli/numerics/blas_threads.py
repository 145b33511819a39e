"""BLAS threads: one per process unless the user chose otherwise.

cbai's linear algebra is small dense matrices, where the threads of a multi-threaded
BLAS only contend (an optimal design at K = 1000, d = 30 took 121 s threaded on a busy
2-core machine against 0.5 s single-threaded), and where one thread everywhere keeps a
serial run bit-identical to a parallel one. BLAS libraries size their thread pools from
environment variables that they read once, when numpy is first imported. Hence:

- :func:`pin_blas_threads_by_default`: a command calls it first thing, before numpy
  loads, to ask for one thread in this process unless the user chose otherwise;
- :func:`single_threaded_blas`: around the start of worker processes, which must be
  *spawned* (a fresh interpreter reads the environment when it loads numpy; forking a
  process that holds BLAS threads is unsafe).

Importing this module changes nothing and imports nothing heavy (no numpy), so a command
can call :func:`pin_blas_threads_by_default` before numpy loads, at little cost to its start.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["BLAS_THREAD_VARIABLES", "pin_blas_threads_by_default", "single_threaded_blas"]

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
