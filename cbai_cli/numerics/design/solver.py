"""Optimal experimental designs for linear bandits, with certified optimality gaps.

The one optimisation problem behind every static allocation in cbai: given design
arms ``X`` (K x d) and target vectors ``Y`` (m x d) lying in span(X), compute ::

    value* = min_{lambda in simplex(X)}  max_{y in Y}  y^T A_lambda^+ y,
    A_lambda = sum_x lambda_x x x^T.

* ``Y = X`` is G-optimal design (G-Allocation); by the Kiefer--Wolfowitz
  equivalence theorem (Kiefer & Wolfowitz 1960) its value is rank(X).
* ``Y = {x / |g(x)| : x in X>=(x*)}`` gives H_CLB, Definition 2 of Lindner et al.
  (ICML 2022); ``Y = U_t`` gives rho*_t of ACOL (Algorithm 1, lines 7-8).

Span coordinates
----------------
Everything is computed in coordinates of span(X) taken from the thin SVD
X = U S Q^T (z -> S^-1 Q^T z, which also whitens the arms), so arms that do not span
R^d are fine: A_lambda is then an r x r matrix and "A^+" means its inverse on
span(X).  The rank r counts singular values above
``s_max * max(K, d) * eps`` (numpy's ``matrix_rank`` default).  A target whose
component orthogonal to span(X) exceeds ``_SPAN_RTOL * |y|`` raises ValueError: its
variance would be infinite whatever the design.  A design whose support does not
span span(X) has value +inf when some target leaves the range of its A_lambda.

Certificate (why every result carries ``lower`` and ``gap``)
------------------------------------------------------------
For any design lambda with A = A_lambda invertible and any distribution mu over
the targets, with M = sum_y mu_y y y^T and c_x = x^T A^-1 M A^-1 x, Cauchy--Schwarz
gives, for every other design lambda',

    tr(M A^-1) = tr[(M^1/2 A'^-1/2)(A'^1/2 A^-1 M^1/2)]
              <= sqrt(tr(M A'^-1)) * sqrt(sum_x lambda'_x c_x),

hence  max_y y^T A'^-1 y >= tr(M A'^-1) >= tr(M A^-1)^2 / max_x c_x,  i.e.

    value* >= lower(lambda, mu) = tr(M A^-1)^2 / max_x c_x.

At a saddle point the Frank--Wolfe optimality condition max_x c_x = tr(M A^-1) holds
and the bound equals value*, so ``gap = (value - lower) / value`` goes to zero and
is a stopping rule that certifies the answer.  (The linearised bound
2 tr(M A^-1) - max_x c_x is weaker; it is not used.)

Method (``solver="fw"``): fully-corrective Frank--Wolfe, i.e. column-and-row generation
--------------------------------------------------------------------------------------
Plain Frank--Wolfe with step 2/(k+2) (the paper authors' code) converges slowly on
this non-smooth min-max and its stopping rule certifies nothing.  Instead:

1. Keep a working set S of design arms (initially r arms that span span(X),
   chosen by a pivoted QR) and a working set T of targets (initially the targets
   with the largest variance under the uniform design on S).
2. Solve the restricted min-max over (S, T) with a dense log-barrier Newton
   method.  By homogeneity (v_y(c w) = v_y(w) / c) the restricted problem equals
   min 1^T w  s.t.  v_y(w) = y^T A_w^-1 y <= 1 (y in T),  w >= 0,
   with lambda = w / 1^T w and the same optimal value; this removes both the
   epigraph variable and the simplex equality.  Derivatives:
   dv_y/dw_i = -(x_i^T A^-1 y)^2 and
   d2v_y/dw_i dw_j = 2 (x_i^T A^-1 y)(x_j^T A^-1 y)(x_i^T A^-1 x_j).
   On the central path mu_y = 1 / (kappa (1 - v_y)) are the dual multipliers.
3. Price globally: the arms with the largest c_x > tr(M A^-1) (the Frank--Wolfe
   vertices) and the targets with the largest v_y above the restricted maximum are
   added in batches; the certificate above is evaluated on all of X and Y.  New
   columns/rows are added only while the global gap is dominated by them rather
   than by the restricted problem's own barrier gap, so early restricted problems
   are solved loosely.
4. Stop when gap <= tol.  Finally drop negligible weights, renormalise, and report
   ``value``/``gap`` of the weights actually returned.

Why this method: it is a Frank--Wolfe method in which every step re-optimises over
all vertices found so far (so it cannot zig-zag), its stopping rule is the
certificate above, and the restricted problems stay small: an optimal design needs
at most r(r+1)/2 support points (Caratheodory) and, in practice, a few times r.
Near the end the barrier multipliers 1/(kappa (1 - v_y)) lose digits because the
slacks approach round-off, so once the restricted problem is solved the target
weights are recomputed from the optimality conditions by NNLS
(:func:`_polished_mu`); any mu >= 0 gives a valid bound, so this can only help.

Two safeguards close the gap on designs with large supports (H̄_CLB of
``cbai generate random`` instances needs about 450 support arms at K = 10^4, d = 30,
about 2000 at K = 10^4, d = 100 and nearly all 1000 arms at K = 1000, d = 200).
After kappa grows, the damped Newton method crept along the boundary v_y -> 1, the
barrier falling by about 2 a step where it had to fall by about kappa 1^T w, so the
60-step centring cap was hit and the loop stopped at gaps of 1e-1 to 1; each Newton
iteration therefore first moves to the barrier's exact minimum on the ray {c w}
(:func:`_ray_minimum`, free by homogeneity) when that gains more than ``_RAY_GAIN``.
And once the restricted problem is solved, the certificate's target weights are
optimised by a linear program (:func:`_lp_lower`) that uses only variances, where the
barrier multipliers have lost their digits.

Singular optimal designs (``_conic_rescue``): with few targets the optimal design is
often singular (a few targets best served by their own arms, as for H_CLB when X>=(x*)
has a handful of arms).  The barrier iterates then approach the boundary, the centring
fails in floating point, and the multipliers certify nothing (K = 10^4, d = 30, five
targets: the loop stalled at a gap of 1.8e-3).  When a centring fails (and the working sets are small
enough for the cone program, ``_RESCUE_MAX_CONES``; otherwise the barrier goes on), or
the loop ends above ``tol``, the working sets go to a column generation whose restricted problem is
the second-order cone program of :func:`_restricted_socp` (Clarabel), well posed for
singular designs; its equality multipliers h_y give the certificate

    value* >= sum_y u_y (h_y^T y)^2 / max_x sum_y u_y (h_y^T x)^2   (any h_y, u >= 0),

which for h_y = A^-1 y is the bound above and for other generalized inverses certifies
singular optima.  Problems where the barrier converges never reach this path, so their
results are unchanged.

Time limit: with ``time_limit`` the clock is read between Newton steps and between rounds
(never inside a numpy call); once it has passed, the solver stops, and the design returned
is the best one found with the best certificate found, so [lower, value] still contains
value*.  A barrier stopped mid-stage has loose multipliers, so the certificate of the best
design is then sharpened once by :func:`_lp_lower` (at K = 10^4, d = 100 after 20 s it
closes the reported gap from 8e-2 to 3e-2).  Without a time limit nothing reads the clock
and the result is deterministic.

Every step is dense linear algebra on |T| x |S| and r x r blocks; there is no Python
loop over arms or targets.  A round costs one restricted centring (Newton steps of
O(|T| |S|^2 + |S|^3)) plus O((K + m) r^2) for the global certificate.  Variances
come from a QR factorisation of diag(sqrt(w)) X_S rather than a Cholesky factor of
A (error ~ sqrt(cond A) eps instead of cond(A) eps), and coordinates are whitened
(see :func:`_project`); both are needed for the certificate to close at 1e-6.

Performance (benchmarks/bench_design.py, Gaussian arms, tol 1e-6, one BLAS
thread, shared 2-core machine): K = 1000, d = 30, m = 1000 in about 0.5 s;
K = 10^4, d = 10 in under 0.1 s; d = 100 takes 3-60 s.  Degenerate instances
(arms on a sphere, where every arm is active in the G-optimal design) need working
sets of about r(r+1)/2 and are slower (K = 1000, d = 30: about 2-4 s).  Multi-threaded
OpenBLAS on a busy machine slows the small dense products here by up to two
orders of magnitude (the same K = 1000, d = 30 case took 120 s with default
threading under load), so processes that solve many designs should pin BLAS to
one thread (``OPENBLAS_NUM_THREADS=1`` before numpy is imported, or threadpoolctl).

Also here: the rounding of a design to integer counts (efficient apportionment,
Pukelsheim, *Optimal Design of Experiments*, ch. 12), r(epsilon) of Algorithm 1, and
:class:`DesignCache`, which lets the runs of one request solve each distinct design once.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cbai_cli.numerics.fortran import lapack, pivoted_columns
from cbai_cli.numerics.design.geometry import (_certificate, _factor, _h_certificate, _h_scales, _project, _sqnorms,
                                               _values_full, _whiten)

__all__ = ["Design", "DesignSolverError", "optimal_design", "optimal_design_cvxpy"]

#: Weights below this fraction of the largest weight are candidates for removal
#: at the end of ``optimal_design`` (kept if removing them would break the gap).
_DROP_RTOL = (1e-3, 1e-4, 1e-5, 1e-6, 1e-8)
#: Barrier parameter growth per stage.
_KAPPA_FACTOR = 20.0
#: Newton steps per centring, at most.
_MAX_NEWTON = 60
#: Smallest decrease of the barrier (a self-concordant function, so in absolute units)
#: for which :func:`_center` takes the step along the ray of the current weights.
_RAY_GAIN = 1e-3
#: Centring accuracy (half the squared Newton decrement).
_NEWTON_TOL = 1e-9
#: Barrier duality gap (relative) below which further centring is pointless in
#: double precision.
_BARRIER_FLOOR = 1e-13
#: Columns (arms) and rows (targets) added per round: max(_ADD_MIN, _ADD_PER_DIM * r).
_ADD_MIN = 8
_ADD_PER_DIM = 1.0
#: After adding columns/rows the barrier parameter steps back by this factor.
_KAPPA_RESTART = 20.0
#: The conic column generation (:func:`_conic_rescue`) takes over from the barrier
#: method only while the working set of targets is at most this large (its restricted
#: problem has |S|·|T| cones), and runs at most this many rounds.
_RESCUE_MAX_TARGETS = 200
_RESCUE_ROUNDS = 40
#: ... and stops growing once the restricted problem has this many cones.
_RESCUE_MAX_CONES = 20_000


class DesignSolverError(RuntimeError):
    """A numerical solver failed to return a usable design."""


@dataclass(frozen=True)
class _Deadline:
    """The monotonic-clock time after which ``optimal_design`` stops (its ``time_limit``).

    Read only between iterations (Newton steps, rounds), never inside a numpy call, so a
    capped solve stops at the end of the iteration during which the time ran out.
    """

    end: float

    @classmethod
    def after(cls, seconds: float | None) -> _Deadline | None:
        return None if seconds is None else cls(time.monotonic() + seconds)

    def passed(self) -> bool:
        return time.monotonic() >= self.end


@dataclass(frozen=True, eq=False)
class Design:
    """A design lambda on the arms and how good it is.

    Attributes:
        weights: (K,) probability vector over the arms (read-only array).
        value: max_y y^T A_w^+ y of exactly these weights (an upper bound on value*).
        lower: a certified lower bound on value* (see the module docstring).
        gap: relative duality gap (value - lower) / value, >= 0 (0 when value is 0).
        iterations: outer rounds (restricted solve + global certificate) for
            ``solver="fw"``; solver iterations for cvxpy.
        solver: ``"fw"`` or ``"cvxpy"``.
        time_limited: True when ``optimal_design`` stopped at its ``time_limit`` before
            certifying ``tol``: ``[lower, value]`` is then the certified interval of value*.
    """

    weights: np.ndarray
    value: float
    lower: float
    gap: float
    iterations: int
    solver: str
    time_limited: bool = False

    @property
    def support(self) -> np.ndarray:
        """Indices of the arms with positive weight, ascending."""
        return np.flatnonzero(self.weights > 0)


# --------------------------------------------------------------------------- #
# Span coordinates and variances
# --------------------------------------------------------------------------- #



def _most_violated(indices: np.ndarray, scores: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` entries of ``indices`` with the largest ``scores`` (all when fewer):
    the columns or targets column generation adds next."""
    if indices.size <= count:
        return indices
    return indices[np.argpartition(-scores[indices], count - 1)[:count]]

def _center(XS: np.ndarray, YT: np.ndarray, w: np.ndarray, kappa: float, deadline: _Deadline | None = None):
    """Minimise kappa 1^T w - sum_y log(1 - v_y(w)) - sum_i log w_i from feasible w.

    Returns (w, mu, newton_steps, converged); mu_y = 1 / (kappa (1 - v_y)); converged
    is False when the Newton method stopped without meeting its tolerance (step limit, or
    no decrease possible at this precision), or when ``deadline`` passed (checked after
    each Newton step, so at least one is taken).
    """
    s = w.size
    converged = True

    def evaluate(w_):
        if np.any(w_ <= 0):
            return np.inf, None
        W_ = _factor(XS, w_)
        if W_ is None:
            return np.inf, None
        Yh_ = _whiten(W_, YT)
        v_ = _sqnorms(Yh_)
        if np.any(v_ >= 1.0):
            return np.inf, None
        return kappa * w_.sum() - np.log1p(-v_).sum() - np.log(w_).sum(), (W_, Yh_, v_)

    f, aux = evaluate(w)
    if aux is None:  # pragma: no cover - callers pass strictly feasible points
        raise DesignSolverError("barrier started at an infeasible point")
    steps = 0
    diag = np.arange(s)
    for _ in range(_MAX_NEWTON):
        w_r, f_r, aux_r = _ray_minimum(w, aux, kappa)
        if f_r < f - _RAY_GAIN:
            # Near the centre the gain is nil and the slacks 1 - v_y are tiny, so a
            # rescaling by a bisected factor would only cost them digits.
            w, f, aux = w_r, f_r, aux_r
        W, Yh, v = aux
        Xh = _whiten(W, XS)
        G = Yh @ Xh.T  # G[y, i] = y^T A^-1 x_i
        sig = 1.0 / (1.0 - v)
        G2 = G * G
        grad = kappa - sig @ G2 - 1.0 / w
        Gs = sig[:, None] * G2
        H = Gs.T @ Gs  # sum_y sig_y^2 grad v_y grad v_y^T (A^T A form: numpy uses syrk)
        N = Yh.T @ (sig[:, None] * Yh)
        # sum_y sig_y * Hessian(v_y) = 2 P o (G^T diag(sig) G), P = X A^-1 X^T
        H += 2.0 * (Xh @ Xh.T) * (Xh @ N @ Xh.T)
        H[diag, diag] += 1.0 / (w * w)
        # Jacobi scaling: weights near zero make the diagonal span many decades.
        dsc = 1.0 / np.sqrt(H[diag, diag])
        Hs = H * dsc[:, None] * dsc[None, :]
        c, info = lapack().dpotrf(Hs, lower=1)
        if info == 0:
            sol, info = lapack().dpotrs(c, dsc * grad, lower=1)
        if info == 0:
            dw = -dsc * sol
        else:  # numerically indefinite: least squares is the safe fallback
            dw = -dsc * np.linalg.lstsq(Hs, dsc * grad, rcond=None)[0]
        dec2 = float(-grad @ dw)
        if not np.isfinite(dec2) or dec2 / 2.0 <= _NEWTON_TOL:
            converged = bool(np.isfinite(dec2))
            break
        neg = dw < 0
        step = min(1.0, 0.99 * float(np.min(-w[neg] / dw[neg]))) if np.any(neg) else 1.0
        while step > 1e-12:
            fn, auxn = evaluate(w + step * dw)
            if fn <= f - 0.25 * step * dec2:
                break
            step *= 0.5
        else:
            converged = False
            break  # no progress possible at this precision
        steps += 1
        w, f, aux = w + step * dw, fn, auxn
        if deadline is not None and deadline.passed():
            converged = False
            break
    else:
        converged = False
    v = aux[2]
    return w, 1.0 / (kappa * (1.0 - v)), steps, converged


def _ray_minimum(w: np.ndarray, aux, kappa: float):
    """The barrier's minimum along the ray {c w : c > 0}, exactly and without a new factor.

    By homogeneity v_y(c w) = v_y(w) / c, so along the ray the barrier is the convex
    function f(c) = kappa c 1^T w - sum_y log(1 - v_y / c) - s log c (+ const), whose
    derivative kappa 1^T w - sum_y v_y / (c (c - v_y)) - s / c increases from -inf at
    c = max v_y to kappa 1^T w; its root is found by :func:`_ray_root`.  The factor
    W = R^-1 scales as c^-1/2.  Why: after kappa grows, the damped Newton method
    otherwise creeps along the boundary v_y -> 1 for hundreds of steps (the barrier
    falls by about 2 a step while it must fall by about kappa 1^T w); one scalar step
    removes that slow direction.

    Returns (c w, f(c w), (W c^-1/2, Yh c^-1/2, v / c)).
    """
    W, Yh, v = aux
    c = _ray_root(v, kappa * float(w.sum()), w.size)
    w, v = w * c, v / c
    root = 1.0 / math.sqrt(c)
    f = kappa * w.sum() - np.log1p(-v).sum() - np.log(w).sum()
    return w, f, (W * root, Yh * root, v)


def _ray_root(v: np.ndarray, level: float, s: int) -> float:
    """The root c > max v of g(c) = level - sum_y v_y / (c (c - v_y)) - s / c (v: (m,)).

    g increases and is concave on (max v, inf) (each term -1/(c - v_y) + 1/c - s/c has a
    negative second derivative), so a Newton step from a point where g ≤ 0 lands at or
    left of the root: from a lower bound, Newton's iterates increase monotonically to it
    (about four steps). Two lower bounds: v_y / (c (c - v_y)) ≥ v_y / c² gives
    g(c) ≤ level - (sum v)/c² - s/c, which vanishes at c₀ = (s + √(s² + 4·level·sum v)) / (2·level);
    keeping only the largest v_y gives c₁ = (v_max + √(v_max² + 4·v_max/level)) / 2.
    Stops when a step moves c by at most 1e-13·c.
    """
    v_max, v_sum = float(v.max()), float(v.sum())
    c = max((s + math.sqrt(s * s + 4.0 * level * v_sum)) / (2.0 * level),
            (v_max + math.sqrt(v_max * v_max + 4.0 * v_max / level)) / 2.0, v_max * (1.0 + 1e-12))
    for _ in range(100):
        gap = c - v
        value = level - float(np.dot(v, 1.0 / (c * gap))) - s / c
        slope = float(np.dot(v, (2.0 * c - v) / (gap * gap))) / (c * c) + s / (c * c)
        step = value / slope
        c -= step
        if abs(step) <= 1e-13 * c:
            break
    return c


def _lp_lower(X: np.ndarray, Y: np.ndarray, S: np.ndarray, lam_S: np.ndarray, T: np.ndarray, c: np.ndarray) -> float:
    """The best certificate of :func:`_h_certificate` with h_y = A^-1 y (y in T) for the
    design lam_S on S: a linear program in the target scales u.

    With h_y = A^-1 y the bound reads sum_y u_y v_y^2 / max_x sum_y u_y (y^T A^-1 x)^2,
    homogeneous of degree 0 in u, so its maximum over u >= 0 is the linear program
    max sum_y u_y v_y^2 s.t. sum_y u_y (y^T A^-1 x)^2 <= 1 for every arm x
    (:func:`_h_scales`).  The program keeps the rows of the arms most likely to bind (the
    support and the arms with the largest scores ``c`` (K,) of the last certificate);
    the bound is then evaluated over all arms, so it is valid whatever rows were kept,
    and arms that violate the kept rows are added for up to three rounds.  Unlike the
    barrier multipliers this uses only variances, which are accurate to round-off, so it
    closes the gap once the design itself is optimal to the tolerance.
    """
    W = _factor(X[S], lam_S)
    if W is None:
        return 0.0
    YhT = _whiten(W, Y[T])
    a2 = _sqnorms(YhT) ** 2
    H = YhT @ W.T  # rows A^-1 y
    rows = np.unique(np.concatenate([S[lam_S >= 1e-6 * lam_S.max()], _most_violated(np.arange(X.shape[0]), c, 2 * S.size)]))
    lower = 0.0
    for _ in range(3):
        u = _h_scales(a2, (X[rows] @ H.T) ** 2)
        low, scores = _h_certificate(X, Y[T], H, u)
        lower = max(lower, low)
        worst = np.flatnonzero(scores > 1.0 + 1e-9)
        worst = np.setdiff1d(worst, rows)
        if not worst.size:
            break
        rows = np.concatenate([rows, _most_violated(worst, scores, 2 * S.size)])
    return lower


def _polished_mu(X, Y, S, lam_S, T, v_T):
    """Target weights from the optimality conditions instead of barrier slacks.

    At a saddle point c_i = sum_y mu_y (y^T A^-1 x_i)^2 = value on the support
    and mu vanishes off the active targets.  Solving these linear equations for
    mu >= 0 (NNLS) uses only accurately computed quantities, whereas the barrier
    multipliers 1/(kappa (1 - v_y)) lose digits once the slacks approach round-off.
    Any mu >= 0 gives a valid certificate, so this is only ever used to improve it.
    """
    from scipy.optimize import nnls

    vmax = float(v_T.max())
    supp = np.flatnonzero(lam_S >= 1e-4 * lam_S.max())
    act = np.flatnonzero(v_T >= vmax * (1.0 - 1e-4))
    W = _factor(X[S], lam_S)
    if W is None:
        return None
    G = _whiten(W, Y[T[act]]) @ _whiten(W, X[S[supp]]).T
    try:
        sol, _ = nnls(G.T * G.T, np.full(supp.size, vmax), maxiter=20 * max(act.size, 10))
    except RuntimeError:
        return None
    if not np.all(np.isfinite(sol)) or sol.sum() <= 0:
        return None
    mu = np.zeros(T.size)
    mu[act] = sol
    return mu


def _restricted_values(XS: np.ndarray, YT: np.ndarray, w: np.ndarray) -> np.ndarray:
    W = _factor(XS, w)
    return _sqnorms(_whiten(W, YT))


# --------------------------------------------------------------------------- #
# Singular optima: conic column generation
# --------------------------------------------------------------------------- #


def _restricted_socp(XS: np.ndarray, YT: np.ndarray):
    """The restricted problem as a second-order cone program, solved by Clarabel.

    With y^T A_lambda^+ y = min { sum_i z_i^2 / lambda_i : sum_i z_i x_i = y } (the
    variance of the best unbiased combination; z_i = 0 where lambda_i = 0), the problem is

        min t  s.t.  sum_i lambda_i = 1,  lambda >= 0,  and for every target y:
                     sum_i z_yi x_i = y,  sum_i s_yi <= t,  z_yi^2 <= s_yi lambda_i,

    jointly convex and well posed when the optimal design is singular (the barrier
    method's difficulty).  The multipliers h_y of the equations sum_i z_yi x_i = y are
    the dual variables of :func:`_h_certificate`.

    Returns (lambda (|S|,), H (|T| x r), t) or None if the solver fails.
    """
    import clarabel
    import scipy.sparse as sps

    n, r = XS.shape
    m = YT.shape[0]
    nz = m * n
    i_lam, i_z, i_s = 1, 1 + n, 1 + n + nz
    nv = 1 + n + 2 * nz
    q = np.zeros(nv)
    q[0] = 1.0
    # Zero cone: sum(lambda) = 1, then Z_y X_S = y for every target (m*r rows).
    rows = [np.zeros(n, np.intp)]
    cols = [i_lam + np.arange(n)]
    vals = [np.ones(n)]
    y_idx, i_idx, k_idx = np.meshgrid(np.arange(m), np.arange(n), np.arange(r), indexing="ij")
    rows.append((1 + y_idx * r + k_idx).ravel())
    cols.append((i_z + y_idx * n + i_idx).ravel())
    vals.append(np.broadcast_to(XS[None, :, :], (m, n, r)).ravel())
    n_zero = 1 + m * r
    # Nonnegative cone: lambda >= 0 (n rows), t - sum_i s_yi >= 0 (m rows); rows are -A.
    base = n_zero
    rows.append(base + np.arange(n))
    cols.append(i_lam + np.arange(n))
    vals.append(-np.ones(n))
    base += n
    rows.append(base + np.arange(m))
    cols.append(np.zeros(m, np.intp))
    vals.append(-np.ones(m))
    rows.append(base + np.repeat(np.arange(m), n))
    cols.append(i_s + np.arange(nz))
    vals.append(np.ones(nz))
    base += m
    # Second-order cones (s + lambda, 2 z, s - lambda), one per (target, arm).
    cone = base + 3 * np.arange(nz)
    lam_of = i_lam + np.tile(np.arange(n), m)
    rows += [cone, cone, cone + 1, cone + 2, cone + 2]
    cols += [i_s + np.arange(nz), lam_of, i_z + np.arange(nz), i_s + np.arange(nz), lam_of]
    vals += [-np.ones(nz), -np.ones(nz), -2.0 * np.ones(nz), -np.ones(nz), np.ones(nz)]
    n_rows = base + 3 * nz
    A = sps.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, nv))
    b = np.zeros(n_rows)
    b[0] = 1.0
    b[1:n_zero] = YT.ravel()
    cones = [clarabel.ZeroConeT(n_zero), clarabel.NonnegativeConeT(n + m)] + [clarabel.SecondOrderConeT(3)] * nz
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
    try:
        solution = clarabel.DefaultSolver(sps.csc_matrix((nv, nv)), q, A, b, cones, settings).solve()
    except Exception:  # pragma: no cover - the solver's own failure
        return None
    if str(solution.status) not in ("Solved", "AlmostSolved"):
        return None
    x = np.asarray(solution.x)
    lam = np.clip(x[i_lam:i_lam + n], 0.0, None)
    if not np.all(np.isfinite(lam)) or lam.sum() <= 0:
        return None
    H = np.asarray(solution.z)[1:n_zero].reshape(m, r)
    return lam / lam.sum(), H, float(x[0])


def _conic_rescue(X, Y, S, T, tol, best_val, best_low, deadline: _Deadline | None = None):
    """Column (and row) generation with the restricted problem as a cone program
    (:func:`_restricted_socp`), from the working sets of the barrier method.

    Used when the barrier method stalls: the optimal design is singular (its support
    spans less than span(X), as when a few targets are best served by their own arms),
    so the barrier iterates approach the boundary, the centring fails in floating point,
    and the multipliers 1/(kappa (1 - v_y)) certify nothing.  Each round solves the
    restricted problem over (S, T), certifies it over all arms with the cone program's
    own dual vectors (:func:`_h_certificate`), and adds the arms whose scores exceed
    the restricted maximum and the targets above the restricted value.

    Returns (lambda (K,), lower, value, rounds, time_limited) with the best certificate and
    the best design found, time_limited telling whether ``deadline`` (checked after each
    round) ended it, or None when the cone program cannot be solved.
    """
    K, r = X.shape
    m = Y.shape[0]
    n_add = max(_ADD_MIN, 2 * r)
    best_lam, found, low_best = None, np.inf, best_low
    S = np.unique(S)
    T = np.unique(T)
    time_limited = False
    for rounds in range(1, _RESCUE_ROUNDS + 1):
        if S.size * T.size > _RESCUE_MAX_CONES:
            break
        solved = _restricted_socp(X[S], Y[T])
        if solved is None:
            break
        lam_S, H, t = solved
        lam = np.zeros(K)
        lam[S] = lam_S
        v = _values_full(X, lam, Y)
        val = float(v.max())
        if val < found:
            found, best_lam = val, lam
        a2 = np.einsum("ij,ij->i", H, Y[T]) ** 2
        u = _h_scales(a2, (X[S] @ H.T) ** 2)
        low, c = _h_certificate(X, Y[T], H, u)
        low_best = max(low_best, low)
        top = min(found, best_val)
        if top - low_best <= tol * top:
            break
        cS = float(c[S].max())
        inS = np.zeros(K, bool)
        inS[S] = True
        inT = np.zeros(m, bool)
        inT[T] = True
        new_arms = np.flatnonzero(~inS & (c > cS * (1.0 + 1e-9)))
        new_tgts = np.flatnonzero(~inT & (v > t * (1.0 + 1e-9)))
        if not new_arms.size and not new_tgts.size:
            break
        if deadline is not None and deadline.passed():
            time_limited = True
            break
        new_arms, new_tgts = _most_violated(new_arms, c, n_add), _most_violated(new_tgts, v, n_add)
        S = np.concatenate([S, new_arms])
        T = np.concatenate([T, new_tgts])
    else:
        rounds = _RESCUE_ROUNDS
    if best_lam is None:
        return None
    return best_lam, low_best, found, rounds, time_limited


# --------------------------------------------------------------------------- #
# Public solvers
# --------------------------------------------------------------------------- #


def _trivial(K: int, m: int, solver: str) -> Design:
    w = np.full(K, 1.0 / K)
    w.flags.writeable = False
    return Design(weights=w, value=0.0, lower=0.0, gap=0.0, iterations=0, solver=solver)


def _finish(Xs, Ys, lam, lower, iterations, solver, scale=1.0, time_limited=False) -> Design:
    """Package weights (K,) with value/lower/gap in original units."""
    value = float(_values_full(Xs, lam, Ys).max())
    # lower <= value* <= value in exact arithmetic; clip round-off.
    lower = min(max(float(lower) * scale, 0.0), value)
    if value == 0.0:
        gap = 0.0
    elif not np.isfinite(value):
        gap = 1.0  # the limit of (value - lower) / value; such weights are useless
    else:
        gap = (value - lower) / value
    lam = lam.copy()
    lam.flags.writeable = False
    return Design(weights=lam, value=value, lower=lower, gap=float(gap), iterations=iterations, solver=solver,
                  time_limited=time_limited)


def optimal_design(arms, targets, *, tol: float = 1e-6, max_iter: int = 500, solver: str = "fw",
                   time_limit: float | None = None,
                   progress: Callable[[int, float], None] | None = None) -> Design:
    """min over designs lambda of max_{y in targets} y^T A_lambda^+ y, with a certificate.

    Args:
        arms: (K, d) design arms X (any rank; zero and duplicate rows allowed).
        targets: (m, d) target vectors Y, all in span(X); m = 0 is allowed.
        tol: stop when the relative duality gap (value - lower) / value <= tol.
        max_iter: cap on outer rounds (restricted solve + global certificate);
            if reached, the best design found is returned with its (larger) gap.
        solver: ``"fw"`` (this module's fully-corrective Frank--Wolfe) or
            ``"cvxpy"`` (:func:`optimal_design_cvxpy`).
        time_limit: seconds (> 0) after which ``"fw"`` stops at the end of its current
            iteration (Newton step or round) and returns its best design with its
            certified lower bound; ``time_limited`` is then True and ``gap`` may exceed
            ``tol``.  Where it stops depends on the machine's speed, so a capped result is
            reproducible only as far as the clock is; None (no cap) keeps the solve
            deterministic.  Ignored by ``"cvxpy"``.
        progress: called with the round and the relative gap after each round of
            ``"fw"`` (None: nothing); it only watches.

    Returns:
        A :class:`Design` with (K,) sparse weights.  ``Y = X`` gives G-optimal
        design (value = rank X, Kiefer--Wolfowitz); ``Y = {x / |g(x)|}`` over
        X>=(x*) gives H_CLB (Definition 2); ``Y = U_t`` gives ACOL's lambda*_t and
        rho*_t (Algorithm 1, lines 7-8).

    Raises:
        ValueError: malformed input, or a target outside span(X).
    """
    if solver == "cvxpy":
        return optimal_design_cvxpy(arms, targets)
    if solver != "fw":
        raise ValueError(f"unknown design solver {solver!r}; use 'fw' or 'cvxpy'")
    if not (tol > 0):
        raise ValueError("tol must be positive")
    if isinstance(max_iter, bool) or int(max_iter) != max_iter or max_iter < 1:
        raise ValueError("max_iter must be a positive integer")
    if time_limit is not None and not (0 < time_limit < math.inf):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    deadline = _Deadline.after(time_limit)
    time_limited = False
    Xs, Ys = _project(arms, targets)
    K, r = Xs.shape
    m = Ys.shape[0]
    if m == 0 or r == 0 or not np.any(Ys):
        return _trivial(K, m, "fw")
    if K == 1:  # the simplex is a single point: value* is its value, exactly
        one = np.ones(1)
        val = float(_values_full(Xs, one, Ys).max())
        return _finish(Xs, Ys, one, val, 0, "fw")

    # Scale arms to unit max norm and targets so the initial design has value 1.
    alpha = float(np.linalg.norm(Xs, axis=1).max())
    X = Xs / alpha
    piv = pivoted_columns(X.T)
    S = np.asarray(piv[:r], dtype=np.intp)  # r arms spanning span(X)
    w = np.full(r, 1.0 / r)
    v0 = _restricted_values(X[S], Ys, w)
    if not np.all(np.isfinite(v0)):  # the value itself is beyond float64: nothing to rescale by
        raise ValueError("the design's value overflows (targets about 10^154 or more times the arms, in the "
                         "arms' span)")
    beta = math.sqrt(float(v0.max()))
    Y = Ys / beta
    n_add = max(_ADD_MIN, int(round(_ADD_PER_DIM * r)))
    T = np.argsort(-v0, kind="stable")[: min(m, n_add)]
    # Start strictly inside: max v_T = 0.5 (v_y(w) = v0_y / (beta^2 * 2)).
    w = w * 2.0
    kappa = (S.size + T.size) / w.sum()

    best_val, best_low, best_lam = np.inf, 0.0, None
    rounds = 0
    stalled = False
    while rounds < max_iter:
        rounds += 1
        w, mu, _, converged = _center(X[S], Y[T], w, kappa, deadline)
        lam_S = w / w.sum()
        v, c, tr, low = _certificate(X, Y, S, lam_S, T, mu)
        val = float(v.max())
        if val < best_val:
            best_val, best_lam, best_c = val, (S.copy(), lam_S.copy()), c
        best_low = max(best_low, low)
        gap = (best_val - best_low) / best_val
        if progress is not None:
            progress(rounds, gap)
        barrier_gap = (S.size + T.size) / (kappa * w.sum())
        if gap > tol and barrier_gap < 0.1 * tol:
            # The restricted problem is solved; sharpen the dual side.
            mu_p = _polished_mu(X, Y, S, lam_S, T, v[T])
            if mu_p is not None:
                low = _certificate(X, Y, S, lam_S, T, mu_p)[3]
                best_low = max(best_low, low)
                gap = (best_val - best_low) / best_val
            if gap > tol:
                best_low = max(best_low, _lp_lower(X, Y, S, lam_S, T, c))
                gap = (best_val - best_low) / best_val
        if gap <= tol or barrier_gap < _BARRIER_FLOOR:
            break
        if deadline is not None and deadline.passed():
            time_limited = True
            break
        if not converged and T.size <= _RESCUE_MAX_TARGETS and S.size * T.size <= _RESCUE_MAX_CONES:
            # The barrier problem has become too ill-conditioned to centre (a singular
            # optimal design, typically few targets): its multipliers, hence the
            # certificate and the pricing, are no longer reliable.  Hand over to the
            # conic column generation below.
            stalled = True
            break
        inS = np.zeros(K, bool)
        inS[S] = True
        inT = np.zeros(m, bool)
        inT[T] = True
        new_arms = np.flatnonzero(~inS & (c > tr * (1.0 + 1e-9)))
        new_tgts = np.flatnonzero(~inT & (v > v[T].max() * (1.0 + 1e-9)))
        if (new_arms.size or new_tgts.size) and gap > 4.0 * barrier_gap:
            # Columns/rows missing from the working sets dominate the gap: add the
            # most violated ones (FW vertices and most-uncertain targets).
            new_arms, new_tgts = _most_violated(new_arms, c, n_add), _most_violated(new_tgts, v, n_add)
            S = np.concatenate([S, new_arms])
            T = np.concatenate([T, new_tgts])
            w = np.concatenate([w, np.full(new_arms.size, 1e-2 * w.mean())])
            # New targets may violate v <= 1; rescaling w (homogeneity) restores
            # strict feasibility, and the barrier restarts one stage back.
            vmax = float(_restricted_values(X[S], Y[T], w).max())
            if vmax > 0.5:
                w = w * (vmax / 0.5)
            kappa /= _KAPPA_RESTART
        else:
            kappa *= _KAPPA_FACTOR

    S_best, lam_best = best_lam
    lam = np.zeros(K)
    lam[S_best] = lam_best
    if deadline is not None and deadline.passed() and (best_val - best_low) > tol * best_val:
        time_limited = True  # the loop ended otherwise, but the rescue below has no time left
    if (stalled or (best_val - best_low) > tol * best_val) and T.size <= _RESCUE_MAX_TARGETS and not time_limited:
        rescued = _conic_rescue(X, Y, S, T, tol, best_val, best_low, deadline)
        if rescued is not None:
            lam_r, low_r, val_r, extra, time_limited = rescued
            rounds += extra
            best_low = max(best_low, low_r)
            if val_r < best_val:
                best_val, lam = val_r, lam_r
    scale = beta * beta / (alpha * alpha)
    if time_limited:
        # Stopped early, the restricted problem is solved loosely and its barrier multipliers
        # certify little (8e-2 where this gives 3e-2 at K = 10^4, d = 100): one linear program
        # over the target scales of the best design gives its best certificate of this form.
        best_low = max(best_low, _lp_lower(X, Y, S_best, lam_best, T, best_c))
    time_limited = time_limited and (best_val - best_low) > tol * best_val
    design = _finish(Xs, Ys, lam, best_low, rounds, "fw", scale, time_limited)
    if time_limited:
        # Out of time: the sparsification below would cost up to five more variance passes.
        return design
    # Sparsify: interior-point weights of non-support arms are tiny but positive.
    # Try the most aggressive threshold first; keep the first that preserves the gap.
    for rtol in _DROP_RTOL:
        lam_sp = np.where(lam >= rtol * lam.max(), lam, 0.0)
        if np.count_nonzero(lam_sp) == np.count_nonzero(lam):
            break
        lam_sp /= lam_sp.sum()
        cand = _finish(Xs, Ys, lam_sp, best_low, rounds, "fw", scale)
        if cand.gap <= max(tol, design.gap):
            return cand
    return design


def unsolvable_at_scale(error: ValueError):
    """The user's error for a design whose targets are arms (so in their span) that the
    solver's numerical span leaves out: its tolerance drops directions whose singular
    values are 10¹⁶ below the largest, as with arms of such different scales."""
    from cbai_cli.contracts.errors import NumericalError

    return NumericalError(f"the design cannot be solved in floating point at these arms' scales: {error}")


def optimal_design_cvxpy(arms, targets, *, solver_name: str = "CLARABEL", time_limit: float | None = None,
                         also_scs: bool = True) -> Design:
    """The same design problem solved exactly as a conic program with cvxpy.

    minimise t  s.t.  matrix_frac(y, A_lambda) <= t for every target y,
    lambda >= 0, sum(lambda) = 1, in span coordinates (so A_lambda is r x r).
    ``solver_name`` is tried first, then SCS (unless ``also_scs`` is False; SCS's set-up
    alone is not covered by its time limit), each stopped after ``time_limit`` seconds
    when given (Clarabel's ``time_limit``, SCS's ``time_limit_secs``: badly scaled
    problems, such as targets x/|g(x)| with gaps of 10⁻⁴, can otherwise run for many
    minutes; a stopped solver counts as not optimal).  ``value`` is recomputed in numpy
    from the returned weights (tiny negatives clipped, renormalised); ``lower`` is
    the Cauchy--Schwarz certificate of the module docstring evaluated with the
    solver's dual multipliers of the target constraints.  Meant for small
    problems and for checking :func:`optimal_design`.

    Raises:
        ValueError: malformed input, or a target outside span(X).
        DesignSolverError: no solver reached an optimal status.
    """
    import cvxpy as cp  # imported here: CLI start-up must not import cvxpy

    Xs, Ys = _project(arms, targets)
    K, r = Xs.shape
    m = Ys.shape[0]
    if m == 0 or r == 0 or not np.any(Ys):
        return _trivial(K, m, "cvxpy")
    # Scale for the conic solver's benefit; undone below.
    alpha = float(np.linalg.norm(Xs, axis=1).max())
    beta = float(np.linalg.norm(Ys, axis=1).max())
    X, Y = Xs / alpha, Ys / beta

    lam = cp.Variable(K, nonneg=True)
    t = cp.Variable()
    outer = [np.outer(x, x) for x in X]
    A = sum(lam[i] * outer[i] for i in range(K))
    cons_t = [cp.matrix_frac(Y[j], A) <= t for j in range(m)]
    prob = cp.Problem(cp.Minimize(t), [cp.sum(lam) == 1, *cons_t])

    order = [solver_name] + (["SCS"] if also_scs and solver_name.upper() != "SCS" else [])
    status, errors = None, []
    for name in order:
        try:
            # cvxpy warns on OPTIMAL_INACCURATE; the status is checked below and the
            # objective re-verified in numpy, so the warning would only be noise on stderr.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
                prob.solve(solver=name, **_cvxpy_time_limit(name, time_limit))
        except cp.error.SolverError as exc:
            errors.append(f"{name}: {exc}")
            continue
        status = prob.status
        if status == cp.OPTIMAL:
            break
        errors.append(f"{name}: status {status}")
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or lam.value is None:
        raise DesignSolverError("cvxpy could not solve the design problem: " + "; ".join(errors))

    weights = np.clip(np.asarray(lam.value, dtype=float), 0.0, None)
    weights /= weights.sum()
    duals = np.array([np.nan if ct.dual_value is None else float(ct.dual_value) for ct in cons_t])
    lower = 0.0
    S = np.flatnonzero(weights > 0)
    if np.all(np.isfinite(duals)) and duals.sum() > 0:
        mu = np.clip(duals, 0.0, None)
        T = np.flatnonzero(mu > 0)
        _, _, _, lower = _certificate(X, Y, S, weights[S], T, mu[T])
    v = _values_full(X, weights, Y)
    if np.all(np.isfinite(v)):
        # Solver duals are only as accurate as the solver; the NNLS multipliers
        # (see _polished_mu) and a point mass on the worst target also give valid
        # bounds, so keep the best of them.
        T_all = np.arange(m)
        mu_p = _polished_mu(X, Y, S, weights[S], T_all, v)
        if mu_p is not None:
            lower = max(lower, _certificate(X, Y, S, weights[S], T_all, mu_p)[3])
        T = np.array([int(np.argmax(v))])
        lower = max(lower, _certificate(X, Y, S, weights[S], T, np.ones(1))[3])
    iters = int(getattr(prob.solver_stats, "num_iters", 0) or 0)
    return _finish(Xs, Ys, weights, lower, iters, "cvxpy", beta * beta / (alpha * alpha))


def _cvxpy_time_limit(solver_name: str, time_limit: float | None) -> dict:
    """The keyword that stops ``solver_name`` after ``time_limit`` seconds ({} for None)."""
    if time_limit is None:
        return {}
    return {"time_limit_secs" if solver_name.upper() == "SCS" else "time_limit": float(time_limit)}


