"""A design's weights rounded to pulls by efficient apportionment (Pukelsheim 2006, ch. 12),
the ``Round(λ*_t, N_t)`` of Lindner et al. 2022, Algorithm 1, and r(ε), the pulls below
which Algorithm 1 does not round."""

from __future__ import annotations

import math
from fractions import Fraction
import numpy as np


# --------------------------------------------------------------------------- #
# Rounding (Pukelsheim ch. 12) and r(epsilon) of Algorithm 1
# --------------------------------------------------------------------------- #


#: The largest number of pulls :func:`round_design` apportions: 2^53, below which every
#: integer is exact in float64.
_ROUNDING_MAX = 2**53


def round_design(weights, n: int) -> np.ndarray:
    """Efficient apportionment of n pulls to a design (Pukelsheim 2006, ch. 12).

    With p the support size: start from n_i = ceil((n - p/2) lambda_i) on the
    support; while sum n_i > n decrement an n_j maximising (n_j - 1)/lambda_j;
    while sum n_i < n increment an n_j minimising n_j/lambda_j (ties: the larger
    lambda_j first).  This is Adams' divisor method: the result is
    n_i = ceil(nu lambda_i) for some nu > n - p, so the total is exactly n, every
    support point gets at least one pull when n >= p, and no pull goes outside the
    support.  This is the ``Round(lambda*_t, N_t)`` of Algorithm 1, line 10.

    Args:
        weights: (K,) non-negative design weights (normalised here).
        n: total number of pulls, 0 <= n <= 2^53 (the float arithmetic of the
            apportionment is exact for integers up to 2^53; larger n is refused rather
            than rounded into overflowing int64 counts).

    Returns:
        (K,) int64 counts summing to n.
    """
    lam = np.asarray(weights, dtype=float)
    if lam.ndim != 1 or lam.size == 0:
        raise ValueError("weights must be a non-empty 1-D array")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0) or lam.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero")
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    n = int(n)
    if n > _ROUNDING_MAX:
        raise ValueError(f"n must be at most 2^53 = {_ROUNDING_MAX} (exact in floating point), got {n}")
    lam = lam / lam.sum()
    supp = np.flatnonzero(lam > 0)
    ls = lam[supp]
    p = supp.size
    counts = np.maximum(np.ceil((n - p / 2.0) * ls), 0.0).astype(np.int64)
    excess = int(counts.sum()) - n
    # |excess| <= p/2 (each ceiling adds less than one), so these loops are short.
    while excess > 0:
        j = int(np.argmax((counts - 1) / ls))
        counts[j] -= 1
        excess -= 1
    while excess < 0:
        key = counts / ls
        cand = np.flatnonzero(key == key.min())
        j = int(cand[np.argmax(ls[cand])])
        counts[j] += 1
        excess += 1
    out = np.zeros(lam.size, dtype=np.int64)
    out[supp] = counts
    return out


def rounding_minimum(support_size: int, epsilon: float) -> int:
    """r(epsilon) = ceil(p (1 + epsilon) / epsilon), the floor on N_t in Algorithm 1 (line 9).

    The paper leaves r(epsilon) to the rounding procedure; this is the value for
    :func:`round_design` with a design of support size p.

    Why this suffices: :func:`round_design` is Adams' divisor method,
    n_i = ceil(nu lambda_i) with nu > n - p, so n_i >= (n - p) lambda_i and
    A_counts >= (n - p) A_lambda.  For n >= r(epsilon), p <= n epsilon / (1 + epsilon),
    so n - p >= n / (1 + epsilon) and every
    |x|^2_{A_counts^-1} <= (1 + epsilon)/n |x|^2_{A_lambda^-1}: the
    (1 + epsilon)-approximate rounding that Theorem 2 assumes.  Computed in exact
    rational arithmetic, so floating-point error cannot make it too small.
    """
    if isinstance(support_size, bool) or int(support_size) != support_size or support_size < 0:
        raise ValueError(f"support_size must be a non-negative integer, got {support_size!r}")
    if not (epsilon > 0) or not math.isfinite(epsilon):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    eps = Fraction(epsilon)
    return math.ceil(int(support_size) * (1 + eps) / eps)
