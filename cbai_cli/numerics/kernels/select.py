"""The sampling rules of the deterministic adaptive algorithms, by a code that an
:class:`~cbai_cli.algorithms.base.Adaptive` subclass declares (``kernel_code``,
:mod:`cbai_cli.numerics.kernels.codes`).

- ``G_ACOL`` (Lindner et al. 2022, Algorithm 2): y = argmax_{x∈U} ‖x‖_{A⁻¹}, then the arm
  that most reduces ‖y‖²_{A⁻¹} (:func:`cbai_cli.numerics.kernels.design.greedy_arm`);
- ``GREEDY_MAXVAR`` (§4.1, Table D.2): the same with y ranging over all of X;
- ``MAXREW_U`` (§4.2, Table D.2): argmax_{x∈U} θᵀx;
- ``ADAPTIVE_UNIFORM`` (§4.1, Table D.2): an arm uniform over X;
- ``G_ACOL_UNIFORM`` (Table D.2): an arm uniform over U;
- ``MAXREW_F`` (§4.2, Table D.2): argmax_{x∈F} θᵀx, an arm uniform over X when F is empty.

Ties go to the first index. The three random rules read one uniform u ∈ [0, 1) per pull,
the run's next double of the algorithm's own generator (``rng.random()``, drawn ahead in
chunks by :mod:`cbai_cli.numerics.kernels.batch`), and take an arm by :func:`uniform_choice`; MaxRew-F
reads its u also when F is not empty, so that pull t always reads the t-th double.
"""

from __future__ import annotations

import numpy as np

from cbai_cli.numerics.kernels.codes import ADAPTIVE_UNIFORM, G_ACOL_UNIFORM, GREEDY_MAXVAR, MAXREW_F, MAXREW_U
from cbai_cli.numerics.kernels.design import greedy_arm
from cbai_cli.numerics.kernels.jit import njit


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
def uniform_index(u, m):
    """⌊u·m⌋ for u ∈ [0, 1) and m ≥ 1 candidates: each index in 0 … m−1 for a share 1/m of
    the u's (up to the doubles' grid); at most m − 1 even if u·m rounded up to m."""
    return min(int(u * m), m - 1)


@njit
def uniform_choice(u, candidates, everywhere):
    """The :func:`uniform_index`-th (from 0, in index order) of the m indices with
    ``candidates`` set (of all K when ``everywhere``): an index uniform among them for u
    uniform on [0, 1); −1 when there is none. Shapes: candidates (K,)."""
    if everywhere:
        return uniform_index(u, candidates.shape[0])
    m = 0
    for a in range(candidates.shape[0]):
        m += candidates[a]
    if m == 0:
        return -1
    rank = uniform_index(u, m)
    for a in range(candidates.shape[0]):
        if candidates[a]:
            if rank == 0:
                return a
            rank -= 1
    return -1


@njit
def select(code, arms, inverse, norms2, rewards, uncertain, feasible, u, contender, contender_arm, block,
           threads_from):
    """The arm that rule ``code`` pulls next; U = ``uncertain`` not empty, F = ``feasible``,
    u ∈ [0, 1) the pull's uniform (read by the random rules only).

    Shapes: arms (K, d); inverse (d, d); norms2, rewards, uncertain, feasible (K,);
    ``contender``, ``contender_arm``, ``block``, ``threads_from``: see
    :func:`cbai_cli.numerics.kernels.design.greedy_arm`.
    """
    if code == MAXREW_U:
        return first_max(rewards, uncertain, np.bool_(False))
    if code == MAXREW_F:
        best = first_max(rewards, feasible, np.bool_(False))
        return best if best >= 0 else uniform_choice(u, feasible, np.bool_(True))
    if code == ADAPTIVE_UNIFORM or code == G_ACOL_UNIFORM:
        return uniform_choice(u, uncertain, code == ADAPTIVE_UNIFORM)
    direction = max_variance_arm(norms2, uncertain, code == GREEDY_MAXVAR)
    return greedy_arm(arms, inverse, norms2, direction, contender, contender_arm, block, threads_from)
