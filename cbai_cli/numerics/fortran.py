"""scipy's BLAS and LAPACK, without the import of ``scipy.linalg``.

``scipy.linalg.lapack.dpotrf``, ``scipy.linalg.blas.dgemv`` and the other routines cbai
calls are functions of two f2py extension modules, ``scipy.linalg._flapack`` and
``scipy.linalg._fblas``. Importing ``scipy.linalg`` to reach them costs 0.13–0.24 s (its
package imports the whole of ``scipy.linalg`` and clones numpy's namespace for the array
API), a third of a small ``cbai solve``; loading an extension module itself costs about
4 ms. :func:`lapack` and :func:`blas` load them under their own names, so that a later
``import scipy.linalg`` finds these very modules and every routine is the one scipy would
call, bit for bit; where one cannot be found as a file (another layout of scipy), they
import ``scipy.linalg``'s.

The BLAS is also the one numba's compiled ``np.dot`` calls (numba takes its BLAS from
``scipy.linalg.cython_blas``, which :func:`load_cython_modules` loads the same way), and
the one the interpreted kernels call (:mod:`cbai_cli.numerics.kernels.blas`).
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np


def _extension(name: str) -> ModuleType:
    """The module ``scipy.linalg.<name>``, loaded from its file alone when it is one."""
    full = f"scipy.linalg.{name}"
    if full in sys.modules:
        return sys.modules[full]
    spec = importlib.util.find_spec("scipy")
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "linalg"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = folder / f"{name}{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader(full, str(path))
                module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(full, path,
                                                                                                loader=loader))
                sys.modules[full] = module
                try:
                    loader.exec_module(module)
                except BaseException:
                    del sys.modules[full]
                    raise
                return module
    return importlib.import_module(full)


@functools.cache
def lapack() -> ModuleType:
    """The module of scipy's LAPACK routines (``dpotrf``, ``dgeqrf``, …)."""
    return _extension("_flapack")


@functools.cache
def blas() -> ModuleType:
    """The module of scipy's BLAS routines (``ddot``, ``dgemv``, …)."""
    return _extension("_fblas")


def load_cython_modules() -> None:
    """Load ``scipy.linalg.cython_blas`` and ``cython_lapack``, where numba finds the BLAS
    and LAPACK its compiled code calls: numba imports them by their full names, which then
    does not import the whole of ``scipy.linalg`` (0.2 s) with them."""
    for name in ("cython_blas", "cython_lapack"):
        _extension(name)


def pivoted_columns(a: np.ndarray) -> np.ndarray:
    """The column order of QR with column pivoting of ``a`` (m, n): ``scipy.linalg.qr(a,
    pivoting=True)[-1]``, by the same LAPACK call (``dgeqp3`` with its optimal workspace)."""
    geqp3 = lapack().dgeqp3
    work = geqp3(a, lwork=-1)[-2]
    _, pivots, _, _, info = geqp3(a, lwork=work[0].real.astype(np.int_))
    if info < 0:
        raise ValueError(f"illegal value in {-info}th argument of internal geqp3")
    return pivots - 1
