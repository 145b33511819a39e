"""Adaptive Uniform: uniform sampling with adaptive intervals (paper §4.1, Table D.2)."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive
from cbai_cli.numerics.kernels.codes import ADAPTIVE_UNIFORM


class AdaptiveUniform(Adaptive):
    """Pull an arm drawn uniformly from X: the ⌊u·K⌋-th for the next double u of the
    algorithm's generator (compiled, :func:`cbai_cli.numerics.kernels.select.uniform_choice`)."""

    kernel_code = ADAPTIVE_UNIFORM
