"""The kernels' dot products, alike compiled and interpreted.

numba compiles ``np.dot`` of two float64 vectors and of a C-contiguous matrix by a vector
into calls of scipy's BLAS (``ddot``; ``dgemv`` on the transposed matrix). numpy's own
``np.dot`` calls numpy's BLAS, another build that rounds some products differently (33 of
2,000 random matrix-vector products of up to 40 × 40, measured): the interpreted view of
:func:`dot` calls scipy's BLAS the way the compiled code does (:mod:`cbai_cli.numerics.fortran`).
"""

from __future__ import annotations

import numpy as np

from cbai_cli.numerics.fortran import blas
from cbai_cli.numerics.kernels.jit import njit_interpreted_as


def _scipy_dot(a: np.ndarray, b: np.ndarray):
    """``np.dot(a, b)`` by scipy's BLAS as numba calls it: a (d,) or (k, d), b (d,)."""
    if a.ndim == 1:
        return blas().ddot(a, b)
    if a.size == 0:  # no product to round; scipy's wrapper refuses empty arrays
        return np.dot(a, b)
    return blas().dgemv(1.0, a.T, b, trans=1)


@njit_interpreted_as(_scipy_dot)
def dot(a, b):
    """aᵀb for vectors a, b (d,); the products of the rows of a (k, d) with b (d,)."""
    return np.dot(a, b)
