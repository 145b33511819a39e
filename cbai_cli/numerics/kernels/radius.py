"""The radius of the ``theory``, ``det`` and ``tuned`` regimes as a code and constants.

A regime hands the kernels ``(code, params)`` (:meth:`cbai_cli.numerics.confidence.RadiusRegime.kernel`);
:func:`radius` evaluates the regime's formula of :mod:`cbai_cli.numerics.kernels.forms`, the same
operations that the regime's Python ``radius`` performs after its argument checks.
"""

from __future__ import annotations

import math

from cbai_cli.numerics.kernels.codes import DETERMINANT, THEORY
from cbai_cli.numerics.kernels.forms import determinant_form, horizon_form
from cbai_cli.numerics.kernels.jit import njit


@njit
def radius(code, n_samples, logdet, params):
    """r of regime ``code`` after ``n_samples`` pulls with log det A = ``logdet``.

    params: (7,) = (R, S, L, λ, δ, β, d). theory: :func:`~cbai_cli.numerics.kernels.forms.horizon_form`
    (Lindner et al. 2022, Proposition 3); det: :func:`~cbai_cli.numerics.kernels.forms.determinant_form`
    with u = 1 (Abbasi-Yadkori et al. 2011, Theorem 2); tuned: √β.
    """
    subgaussian, norm_bound, arm_bound, ridge, delta, beta = params[0], params[1], params[2], params[3], params[4], params[5]
    dim = int(params[6])
    if code == THEORY:
        return horizon_form(n_samples, dim, ridge, subgaussian, norm_bound, arm_bound, delta)
    if code == DETERMINANT:
        return determinant_form(logdet, dim, ridge, subgaussian, norm_bound, delta, 1.0)
    return math.sqrt(beta)
