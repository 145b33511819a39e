"""The sampling rules of the deterministic adaptive algorithms, by a code that an
:class:`~cbai_cli.algorithms.base.Adaptive` subclass declares (``kernel_code``,
:mod:`cbai_cli.kernels.codes`).

- ``G_ACOL`` (Lindner et al. 2022, Algorithm 2): y = argmax_{x∈U} ‖x‖_{A⁻¹}, then the arm
  that most reduces ‖y‖²_{A⁻¹} (:func:`cbai_cli.kernels.design.greedy_arm`);
- ``GREEDY_MAXVAR`` (§4.1, Table D.2): the same with y ranging over all of X;
- ``MAXREW_U`` (§4.2, Table D.2): argmax_{x∈U} θᵀx.

Ties go to the first index.
"""

from __future__ import annotations

import numpy as np

from cbai_cli.kernels.codes import GREEDY_MAXVAR, MAXREW_U
from cbai_cli.kernels.design import greedy_arm
from cbai_cli.kernels.jit import njit


@njit
def first_max(values, candidates, everywhere):
    """argmax of ``values`` over the indices with ``candidates`` set (over all when
    ``everywhere``), first among ties; −1 when there is none. Shapes: values, candidates (K,)."""
    chosen = -1
    for a in range(values.shape[0]):
        if (everywhere or candidates[a]) and (chosen < 0 or values[a] > values[chosen]):
            chosen = a
    return chosen


@njit
def max_variance_arm(norms2, candidates, everywhere):
    """argmax ‖x‖²_{A⁻¹} over the arms with ``candidates`` set (over all when ``everywhere``),
    first among ties. Shapes: norms2, candidates (K,)."""
    return first_max(norms2, candidates, everywhere)


@njit
def select(code, arms, inverse, norms2, rewards, uncertain, contender, contender_arm, block, threads_from):
    """The arm that rule ``code`` pulls next; U = ``uncertain`` not empty.

    Shapes: arms (K, d); inverse (d, d); norms2, rewards, uncertain (K,);
    ``contender``, ``contender_arm``, ``block``, ``threads_from``: see
    :func:`cbai_cli.kernels.design.greedy_arm`.
    """
    if code == MAXREW_U:
        return first_max(rewards, uncertain, np.bool_(False))
    direction = max_variance_arm(norms2, uncertain, code == GREEDY_MAXVAR)
    return greedy_arm(arms, inverse, norms2, direction, contender, contender_arm, block, threads_from)
