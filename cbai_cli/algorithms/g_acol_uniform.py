"""G-ACOL Uniform: G-ACOL's stopping rule with uniform sampling from U (Table D.2)."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive
from cbai_cli.numerics.kernels.codes import G_ACOL_UNIFORM


class GACOLUniform(Adaptive):
    """Pull an arm drawn uniformly from the uncertain set U: the ⌊u·|U|⌋-th arm of U in
    index order for the next double u of the algorithm's generator (compiled,
    :func:`cbai_cli.numerics.kernels.select.uniform_choice`)."""

    kernel_code = G_ACOL_UNIFORM
