"""Exact binomial confidence intervals for fractions of runs (the fraction correct of
``cbai compare``, the error rates of the statistical tests of the guarantees).

The Clopper–Pearson interval (Clopper and Pearson 1934) of k successes in n trials at
level 1 − α is [B(α/2; k, n − k + 1), B(1 − α/2; k + 1, n − k)], with B(q; a, b) the
q-quantile of the Beta(a, b) distribution and the ends 0 (k = 0) and 1 (k = n). Each end
misses the true fraction with probability at most α/2, whatever it is: the interval is
conservative, never too short.

When every trial succeeds (k = n) the lower end B(α/2; n, 1) solves p^n = α/2, and when
none does (k = 0) the upper end B(1 − α/2; 1, n) solves 1 − (1 − p)^n = 1 − α/2: closed
forms, computed as ``scipy.special.betaincinv`` computes them (Boost's ``ibeta_inv`` takes
these as special cases), so the ends are the same doubles (tests/test_binomial.py) without
scipy.special's import (0.2 s, most of a summary of ten all-correct runs).
"""

from __future__ import annotations

import math


def clopper_pearson(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The two-sided Clopper–Pearson interval (low, high) of ``successes`` out of ``trials``
    at confidence ``level``.

    The Beta quantiles are ``scipy.special.betaincinv``, the function behind
    ``scipy.stats.beta.ppf``, without the import time of ``scipy.stats``; the closed forms
    of the module docstring at k = n and k = 0. Raises
    ValueError for ``trials`` < 1, ``successes`` outside [0, trials] and ``level``
    outside (0, 1).
    """
    if not trials >= 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must lie in [0, {trials}], got {successes}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    tail = (1.0 - level) / 2.0
    if successes == trials:
        return tail ** (1.0 / trials), 1.0
    if successes == 0:
        return 0.0, -math.expm1(math.log1p(-(1.0 - tail)) / trials)
    from scipy.special import betaincinv

    return (float(betaincinv(successes, trials - successes + 1, tail)),
            float(betaincinv(successes + 1, trials - successes, 1.0 - tail)))

