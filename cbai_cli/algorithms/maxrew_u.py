"""MaxRew-U: the highest-reward uncertain arm (paper §4.2, Table D.2)."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive
from cbai_cli.numerics.kernels.codes import MAXREW_U


class MaxRewU(Adaptive):
    """Pull argmax_{x∈U} θᵀx (first index among ties; compiled,
    :func:`cbai_cli.numerics.kernels.select.select`)."""

    kernel_code = MAXREW_U
