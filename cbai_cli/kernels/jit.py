"""How every kernel is compiled.

``cache=True`` writes the compiled code beside the module (``__pycache__``) or, when the
package directory is not writable, under numba's user cache directory (``NUMBA_CACHE_DIR``
moves it); two processes compiling at once each write whole files, so the worst case is
compiling twice. ``error_model="numpy"``: a division by zero gives ±∞/NaN as in numpy
instead of raising. No fast-math, so that every operation rounds as the numpy code it
replaces and records do not depend on which path ran.
"""

from __future__ import annotations

import numba
from numba.extending import register_jitable

from cbai_cli import confidence


def njit(function):
    """``function`` compiled once per signature, cached on disk."""
    return numba.njit(cache=True, error_model="numpy", nogil=True)(function)


# The radius formulas stay written once, as plain Python in cbai_cli/confidence.py;
# registering them lets compiled code call them as they are.
for _formula in (confidence.log_ratio, confidence.horizon_form, confidence.determinant_form):
    register_jitable(_formula)
