"""The radius formulas that both Python and the compiled step evaluate, written once as
plain Python (math only): :mod:`cbai_cli.numerics.confidence` calls them after checking their
arguments, :mod:`cbai_cli.numerics.kernels.jit` registers them so that compiled code calls them as
they are (:mod:`cbai_cli.numerics.kernels.radius`). They live beside the kernels because the
kernels' cache is stamped with the kernels' sources: an edit here recompiles the kernels,
an edit of a regime elsewhere does not.
"""

from __future__ import annotations

import math
import sys

#: The smallest normal float (compiled code reads a module constant, not ``sys``).
FLOAT_MIN = sys.float_info.min


def log_ratio(numerator: float, denominator: float, log_denominator: float | None = None) -> float:
    """log(numerator/denominator) for positive numbers, whatever their size.

    Exactly ``math.log(numerator / denominator)`` where that is accurate: a normal
    (not underflowed) denominator and a finite positive quotient. Otherwise
    log(numerator) − log(denominator), which neither overflows (1/δ for δ = 5e−324) nor
    divides by an underflowed zero (δ² for δ = 1e−300); ``log_denominator`` is the exact
    log of a denominator that was computed with underflow (2 log δ for δ²), used there
    instead of the log of the rounded denominator.
    """
    if denominator >= FLOAT_MIN:
        quotient = numerator / denominator
        if 0.0 < quotient < math.inf:
            return math.log(quotient)
    if log_denominator is None:
        log_denominator = math.log(denominator)
    return math.log(numerator) - log_denominator


def determinant_form(logdet: float, dim: int, ridge: float, subgaussian: float, norm_bound: float,
                     delta: float, union: float) -> float:
    """Abbasi-Yadkori et al. (2011), Theorem 2, in the form of
    :func:`cbai_cli.numerics.confidence.radius_determinant`, without its argument checks: with
    ``union`` u, r = R·sqrt(2 max(log(u·det(A)^½ λ^(−d/2)/δ), 0)) + λ^½ S."""
    log_argument = math.log(union) + 0.5 * logdet - 0.5 * dim * math.log(ridge) - math.log(delta)
    return subgaussian * math.sqrt(2.0 * max(log_argument, 0.0)) + math.sqrt(ridge) * norm_bound


def horizon_form(n_samples: int, dim: int, ridge: float, subgaussian: float, norm_bound: float,
                 arm_bound: float, delta: float) -> float:
    """Lindner et al. (2022), Proposition 3, in the form of
    :func:`cbai_cli.numerics.confidence.radius_horizon`, without its argument checks:
    r = R·sqrt(d log((1 + n L²/λ)/δ)) + λ^½ S."""
    inner = dim * log_ratio(1.0 + n_samples * arm_bound * arm_bound / ridge, delta)
    return subgaussian * math.sqrt(inner) + math.sqrt(ridge) * norm_bound
