"""The geometry both design solvers share (see :mod:`cbai_cli.numerics.design.solver` for the
mathematics): arms and targets in span coordinates, the factor and whitening of a design's
matrix, the values max_y ‖y‖²_{A(λ)⁻¹} of the targets, and the Cauchy–Schwarz certificates
of a lower bound; the value of given weights (:func:`design_value`)."""

from __future__ import annotations

import numpy as np
from cbai_cli.numerics.fortran import lapack

#: Relative size of a target's component orthogonal to span(X) above which the
#: target is declared outside the span (ValueError).
_SPAN_RTOL = 1e-8


def _as_arms(arms) -> np.ndarray:
    X = np.asarray(arms, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"arms must be a (K, d) array, got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError("at least one arm is needed")
    if X.shape[1] == 0:
        raise ValueError("arms must have at least one dimension")
    if not np.all(np.isfinite(X)):
        raise ValueError("arms contain NaN or infinity")
    return X


def _as_targets(targets, d: int) -> np.ndarray:
    Y = np.asarray(targets, dtype=float)
    if Y.size == 0:
        return np.zeros((0, d))
    if Y.ndim != 2 or Y.shape[1] != d:
        raise ValueError(f"targets must be an (m, {d}) array, got shape {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise ValueError("targets contain NaN or infinity")
    return Y


def _span_basis(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal basis Q (d x r) of the row space of X and the singular values.

    r counts singular values above s_max * max(K, d) * eps (numpy's matrix_rank rule).
    """
    _, s, vt = np.linalg.svd(X, full_matrices=False)
    if s.size == 0 or s[0] == 0.0:
        return np.zeros((X.shape[1], 0)), np.zeros(0)
    tol = s[0] * max(X.shape) * np.finfo(float).eps
    r = int(np.count_nonzero(s > tol))
    return vt[:r].T, s[:r]


def _project(arms, targets) -> tuple[np.ndarray, np.ndarray]:
    """Arms and targets in whitened span coordinates: (K x r, m x r).

    Coordinates are z -> S^-1 Q^T z with X = U S Q^T the thin SVD, so the arms
    become U (isotropic: X_w^T X_w = I).  The problem is invariant under any
    invertible linear map applied to arms and targets alike (y^T A^-1 y does
    not change), and whitening keeps A_lambda well conditioned for both solvers.

    Raises ValueError when a target has a non-negligible component outside span(X).
    """
    X = _as_arms(arms)
    Y = _as_targets(targets, X.shape[1])
    Q, sv = _span_basis(X)
    Xs, Ys = X @ Q, Y @ Q
    if Y.shape[0]:
        resid = np.linalg.norm(Y - Ys @ Q.T, axis=1)
        norms = np.linalg.norm(Y, axis=1)
        bad = resid > _SPAN_RTOL * norms
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"target {j} is not in the span of the arms "
                f"(relative residual {resid[j] / norms[j]:.2e})"
            )
    return Xs / sv, Ys / sv


def _factor(XS: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """Upper-triangular W = R^-1 with A = XS^T diag(w) XS = R^T R, or None if singular.

    R comes from a QR factorisation of diag(sqrt(w)) XS, so the error in the
    variances is proportional to sqrt(cond(A)) rather than cond(A) (a Cholesky
    factor of A would square the condition number).  Then y^T A^-1 y = |y^T W|^2,
    and "whitening" is one matrix product (cheaper and, on a busy machine, far
    less sensitive to BLAS threading than a triangular solve per call).
    """
    r = XS.shape[1]
    if XS.shape[0] < r:
        return None
    qr, _, _, info = lapack().dgeqrf(np.sqrt(w)[:, None] * XS)
    if info != 0:  # pragma: no cover - LAPACK argument error
        return None
    R = np.triu(qr[:r, :r])
    dg = np.abs(np.diag(R))
    if not np.all(np.isfinite(dg)) or dg.min() <= 1e-13 * dg.max():
        return None
    W, info = lapack().dtrtri(R, lower=0)
    if info != 0:  # pragma: no cover - singular R was excluded above
        return None
    return W


def _whiten(W: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Rows of Z mapped to R^-T z, so that |R^-T z|^2 = z^T A^-1 z."""
    return Z @ W


def _sqnorms(Z: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", Z, Z)


def _values_full(Xs: np.ndarray, w: np.ndarray, Ys: np.ndarray) -> np.ndarray:
    """Variances y^T A_w^+ y in span coordinates, +inf outside the range of A_w.

    Handles singular designs through an SVD of diag(sqrt(w)) X.
    """
    m, r = Ys.shape
    if m == 0:
        return np.zeros(0)
    if r == 0:
        return np.zeros(m)
    pos = w > 0
    B = np.sqrt(w[pos])[:, None] * Xs[pos]
    if B.shape[0] == 0:
        return np.where(np.linalg.norm(Ys, axis=1) > 0, np.inf, 0.0)
    _, s, vt = np.linalg.svd(B, full_matrices=False)
    keep = s > s[0] * max(B.shape) * np.finfo(float).eps if s[0] > 0 else np.zeros(s.shape, bool)
    coef = Ys @ vt[keep].T  # coordinates in the range of A_w
    v = _sqnorms(coef / s[keep])
    resid = np.linalg.norm(Ys - coef @ vt[keep], axis=1)
    outside = resid > _SPAN_RTOL * np.linalg.norm(Ys, axis=1)
    v[outside] = np.inf
    return v


def _certificate(
    X: np.ndarray, Y: np.ndarray, S: np.ndarray, lam_S: np.ndarray, T: np.ndarray, mu_T: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Global variances v (m,), FW scores c (K,), tr(M A^-1) and the lower bound.

    lam_S is the design restricted to S (sums to one); mu_T the target weights on T.
    """
    W = _factor(X[S], lam_S)
    if W is None:
        return np.full(Y.shape[0], np.inf), np.zeros(X.shape[0]), np.inf, 0.0
    Yh = _whiten(W, Y)
    v = _sqnorms(Yh)
    mu = mu_T / mu_T.sum()
    YhT = Yh[T]
    N = YhT.T @ (mu[:, None] * YhT)  # R^-T M R^-1
    Xh = _whiten(W, X)
    c = np.einsum("ij,ij->i", Xh @ N, Xh)  # x^T A^-1 M A^-1 x
    tr = float(mu @ v[T])
    cmax = float(c.max())
    lower = tr * tr / cmax if cmax > 0 else 0.0
    return v, c, tr, lower


# --------------------------------------------------------------------------- #
# Restricted problem: log-barrier Newton method
# --------------------------------------------------------------------------- #

def _h_scales(a2: np.ndarray, B2: np.ndarray) -> np.ndarray:
    """Scales u >= 0 of the dual vectors maximising sum_y u_y a2_y subject to
    B2 u <= 1 (a linear program); u = 1 if it fails."""
    from scipy.optimize import linprog

    res = linprog(-a2, A_ub=B2, b_ub=np.ones(B2.shape[0]), bounds=[(0, None)] * a2.size, method="highs")
    if res.status != 0 or not np.all(np.isfinite(res.x)):
        return np.ones(a2.size)
    return np.clip(res.x, 0.0, None)


def _h_certificate(X: np.ndarray, YT: np.ndarray, H: np.ndarray, u: np.ndarray) -> tuple[float, np.ndarray]:
    """The lower bound sum_y u_y (h_y^T y)^2 / max_x sum_y u_y (h_y^T x)^2 and the scores
    c_x = sum_y u_y (h_y^T x)^2 (K,).

    Valid for any vectors h_y and u >= 0.  For a design lambda with A = A_lambda and
    V = max_y y^T A^+ y (infinite unless every target is in the range of A), each target
    gives, by Cauchy--Schwarz, (h_y^T y)^2 = (h_y^T A A^+ y)^2 <= (h_y^T A h_y)(y^T A^+ y)
    <= (h_y^T A h_y) V; weighting by u_y and summing,
    sum_y u_y (h_y^T y)^2 <= V sum_x lambda_x c_x <= V max_x c_x.  With h_y = A^-1 y
    this is (a sharpening of) the barrier certificate of the module docstring; the cone
    program's multipliers are other generalized-inverse images, which certify singular
    optimal designs.
    """
    a2 = np.einsum("ij,ij->i", H, YT) ** 2
    c = ((X @ H.T) ** 2) @ u
    cmax = float(c.max())
    return (float(a2 @ u) / cmax if cmax > 0 else 0.0), c

def design_value(arms, weights, targets) -> float:
    """max_{y in targets} y^T A_w^+ y for the given (K,) non-negative weights.

    A_w = sum_x w_x x x^T is used as given (weights need not sum to one, so
    integer counts give the variance factors of an actual allocation).  The
    pseudo-inverse is taken on span(arms); the value is +inf if some target is not
    in the range of A_w (the design does not identify it).  0 when there are no
    targets.

    Raises:
        ValueError: malformed input, negative weights, or a target outside span(arms).
    """
    Xs, Ys = _project(arms, targets)
    w = np.asarray(weights, dtype=float)
    if w.shape != (Xs.shape[0],):
        raise ValueError(f"weights must have shape ({Xs.shape[0]},), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    if Ys.shape[0] == 0:
        return 0.0
    return float(_values_full(Xs, w, Ys).max())
