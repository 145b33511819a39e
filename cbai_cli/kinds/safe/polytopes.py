"""Small computational-geometry kernels for Safe-LUCB's optimistic step.

Algorithm 1 step 10 of Amani, Alizadeh, Thrampoulidis (2019) minimises vᵀx jointly over a
confidence set and the estimated safe set. With the confidence set replaced by its L1 outer
polytope (the authors' MATLAB code), the safe set of a box is a polytope and a bilinear
function over a product of two polytopes is minimised at a pair of vertices; the authors
enumerate the vertices (``con2vert``). All polytopes here are in half-space form
{x : Gx ≤ h} with G: (m, d), h: (m,).

- :func:`enumerate_vertices` — vertex enumeration by brute force over d-subsets of the
  constraints (vectorised; exact and fast for the small m, d of the box), or with
  ``scipy.spatial.HalfspaceIntersection`` (qhull).
- :func:`box_polygon_vertices` — 2-D: the square clipped by half-planes (the fastest exact
  vertex list for the authors' 2-D box).
- :func:`bilinear_argmin` — min_{j,i} u_jᵀv_i over two vertex lists.
- :func:`lp_argmin` — the LP alternative: one HiGHS LP per confidence vertex.
- :func:`box_knapsack_argmin` — min μᵀx over a box cut by one half-space, exactly, as a
  fractional knapsack (the optimal safe action of a box).
- :func:`clip_polygon` — 2-D convex polygon ∩ half-plane (Sutherland–Hodgman), used by the
  intersection of all past confidence polytopes (the authors' ``intersectCLB.m``).
- :func:`disc_candidates` / :func:`ball_argmin` — exact 2-D optimisation of linear objectives
  over a disc cut by half-planes, and a cvxpy SOCP for d ≥ 3 (our extension to a ball D_0).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

__all__ = [
    "enumerate_vertices",
    "bilinear_argmin",
    "lp_argmin",
    "clip_polygon",
    "clip_polygon_many",
    "simplify_polygon_outer",
    "disc_candidates",
    "ball_argmin",
    "box_halfspaces",
    "box_knapsack_argmin",
    "box_polygon_vertices",
]

#: Relative feasibility tolerance for enumerated vertices (round-off only).
FEASIBILITY_TOL = 1e-9


@functools.lru_cache(maxsize=64)
def _combinations(m: int, d: int) -> np.ndarray:
    """All d-subsets of range(m) as an ``(C(m,d), d)`` int array (pure memoisation)."""
    out = np.array(list(itertools.combinations(range(m), d)), dtype=np.intp).reshape(-1, d)
    out.setflags(write=False)
    return out


def box_halfspaces(d: int, half_width: float) -> tuple[np.ndarray, np.ndarray]:
    """``[−w, w]^d`` as ``G x ≤ h``: rows ``+e_j`` then ``−e_j``. Shapes ``(2d, d)``, ``(2d,)``."""
    eye = np.eye(d)
    return np.concatenate([eye, -eye]), np.full(2 * d, float(half_width))


def _feasible(X: np.ndarray, G: np.ndarray, h: np.ndarray, tol: float) -> np.ndarray:
    """Mask of rows of ``X: (p, d)`` with ``G x ≤ h`` up to a relative tolerance."""
    slack = G @ X.T - h[:, None]
    return np.all(slack <= tol * (1.0 + np.abs(h))[:, None], axis=0)


def enumerate_vertices(
    G: np.ndarray,
    h: np.ndarray,
    method: str = "enumerate",
    interior_point: np.ndarray | None = None,
    tol: float = FEASIBILITY_TOL,
) -> np.ndarray:
    """Vertices of the bounded polytope ``{x : G x ≤ h}``. Returns ``(p, d)``.

    ``method="enumerate"``: solve ``G_S x = h_S`` for every d-subset S of rows with a
    non-singular ``G_S`` and keep the feasible solutions. Exact; the cost is ``C(m, d)``
    small solves, all vectorised (28 for the 2-D box recipe). Duplicates (degenerate
    vertices) may appear; that is harmless for minimisation.

    ``method="qhull"``: ``scipy.spatial.HalfspaceIntersection``; needs a strictly interior
    point (default: the origin, which is interior to every estimated safe set since c > 0).
    """
    G = np.asarray(G, dtype=float)
    h = np.asarray(h, dtype=float)
    m, d = G.shape
    if method == "enumerate":
        combos = _combinations(m, d)
        M = G[combos]  # (n, d, d)
        rhs = h[combos]  # (n, d)
        # Singularity test relative to the row norms, so that scaling G does not matter.
        scale = np.prod(np.linalg.norm(M, axis=2), axis=1)
        if d == 2:
            det = M[:, 0, 0] * M[:, 1, 1] - M[:, 0, 1] * M[:, 1, 0]
            ok = np.abs(det) > 1e-12 * scale
            det, M, rhs = det[ok], M[ok], rhs[ok]
            # Cramer's rule: far cheaper than a batched LAPACK call for 2×2 systems.
            x0 = (rhs[:, 0] * M[:, 1, 1] - M[:, 0, 1] * rhs[:, 1]) / det
            x1 = (M[:, 0, 0] * rhs[:, 1] - rhs[:, 0] * M[:, 1, 0]) / det
            X = np.stack([x0, x1], axis=1)
        else:
            det = np.linalg.det(M)
            ok = np.abs(det) > 1e-12 * scale
            X = np.linalg.solve(M[ok], rhs[ok][..., None])[..., 0]
        return X[_feasible(X, G, h, tol)]
    if method == "qhull":
        from scipy.spatial import HalfspaceIntersection

        ip = np.zeros(d) if interior_point is None else np.asarray(interior_point, dtype=float)
        # scipy's convention: rows [a, b] mean a·x + b ≤ 0.
        hs = HalfspaceIntersection(np.concatenate([G, -h[:, None]], axis=1), ip)
        return np.asarray(hs.intersections)
    raise ValueError(f"method must be 'enumerate' or 'qhull', got {method!r}")


def box_polygon_vertices(G: np.ndarray, h: np.ndarray, half_width: float) -> np.ndarray:
    """Vertices of ``[−w, w]² ∩ {x : Gx ≤ h}`` in cyclic order, shape ``(p, 2)`` (d = 2 only).

    Clips the square by each half-plane (Sutherland–Hodgman). Exact, and on the per-round
    path of the 2-D box several times cheaper than enumerating all
    C(m, 2) line pairs.
    """
    w = float(half_width)
    P = np.array([[w, w], [-w, w], [-w, -w], [w, -w]])
    return clip_polygon_many(P, np.asarray(G, dtype=float), np.asarray(h, dtype=float))


def bilinear_argmin(U: np.ndarray, V: np.ndarray) -> tuple[int, int, float]:
    """``(j, i, value)`` minimising ``U[j]ᵀ V[i]``. Ties: first in row-major order.

    ``U: (p, d)`` (actions), ``V: (q, d)`` (parameters). A bilinear function over a product
    of two polytopes attains its minimum at a pair of vertices.
    """
    scores = U @ V.T
    flat = int(np.argmin(scores))
    j, i = divmod(flat, scores.shape[1])
    return j, i, float(scores[j, i])


def lp_argmin(
    V: np.ndarray, G: np.ndarray, h: np.ndarray, bounds: tuple[float, float] | None = None
) -> tuple[np.ndarray, int, float]:
    """LP alternative to vertex enumeration: for each objective ``V[i]`` solve ``min V[i]ᵀx s.t. Gx ≤ h``
    (plus optional per-coordinate ``bounds``) with HiGHS, return ``(x, i, value)`` of the best.
    """
    from scipy.optimize import linprog

    best = (None, -1, math.inf)
    d = V.shape[1]
    b = [bounds] * d if bounds is not None else [(None, None)] * d
    for i, v in enumerate(V):
        res = linprog(v, A_ub=G, b_ub=h, bounds=b, method="highs")
        if res.status != 0:
            raise RuntimeError(f"linprog failed: {res.message}")
        if res.fun < best[2]:
            best = (np.asarray(res.x, dtype=float), i, float(res.fun))
    return best  # type: ignore[return-value]


def box_knapsack_argmin(mu: np.ndarray, a: np.ndarray, c: float, half_width: float) -> np.ndarray:
    """``argmin μᵀx`` over ``{x ∈ [−w, w]^d : aᵀx ≤ c}``, shape ``(d,)``; ``ValueError`` when empty.

    A linear programme with one constraint besides the box is a fractional knapsack, solved
    exactly by the greedy rule: start from the box's unconstrained minimiser (each
    ``x_j = −w·sign(μ_j)``; where μ_j = 0, the end that lowers aᵀx), and while aᵀx > c move
    the coordinates that lower aᵀx to their other end in increasing order of the price
    ``|μ_j| / |a_j|`` (objective given up per unit of constraint), the last one only as far
    as needed. Equal prices are taken in coordinate order. Same optimum as an LP solver,
    without scipy.optimize's import (0.25 s, the whole of a `cbai bound` on a safe file).
    """
    mu = np.asarray(mu, dtype=float)
    a = np.asarray(a, dtype=float)
    w = float(half_width)
    x = -w * np.where(mu != 0.0, np.sign(mu), np.sign(a))
    excess = float(a @ x) - c
    if excess <= 0.0:
        return x
    movable = np.flatnonzero(a * x > 0.0)
    price = np.abs(mu[movable]) / np.abs(a[movable])
    order = movable[np.argsort(price, kind="stable")]
    # Lowering of aᵀx when coordinate j goes from its end to the other: 2w|a_j|.
    relief = 2.0 * w * np.abs(a[order])
    done = np.cumsum(relief)
    last = int(np.searchsorted(done, excess))
    if last == order.size:
        raise ValueError("the box has no point with aᵀx ≤ c")
    x[order[:last]] = -x[order[:last]]
    j = order[last]
    rest = excess - (done[last - 1] if last > 0 else 0.0)
    x[j] -= np.sign(a[j]) * rest / abs(a[j])
    return x


def clip_polygon(P: np.ndarray, a: np.ndarray, b: float) -> np.ndarray:
    """Convex polygon ``P: (m, 2)`` (vertices in cyclic order) ∩ ``{x : aᵀx ≤ b}``, cyclic order kept.

    Vectorised Sutherland–Hodgman: for each edge k → k+1 emit ``P[k]`` if it is inside,
    then the crossing point if the edge crosses the line. Returns ``(m', 2)``, possibly empty.
    """
    if P.shape[0] == 0:
        return P
    s = P @ a - b
    inside = s <= 0.0
    if inside.all():
        return P
    if not inside.any():
        return P[:0]
    # Successor arrays by slicing (np.roll is several times slower for these tiny arrays).
    s_next = np.concatenate((s[1:], s[:1]))
    P_next = np.concatenate((P[1:], P[:1]))
    cross = inside != (s_next <= 0.0)
    k = np.flatnonzero(cross)
    t = s[k] / (s[k] - s_next[k])
    I = P[k] + t[:, None] * (P_next[k] - P[k])
    # Output order: vertex k (if inside) then crossing point of edge k (if any).
    m = P.shape[0]
    pts = np.empty((2 * m, 2))
    pts[0::2] = P
    pts[2 * k + 1] = I
    keep = np.zeros(2 * m, dtype=bool)
    keep[0::2] = inside
    keep[2 * k + 1] = True
    return pts[keep]


def clip_polygon_many(P: np.ndarray, G: np.ndarray, h: np.ndarray, merge_tol: float = 1e-12) -> np.ndarray:
    """Clip polygon ``P: (m, 2)`` by every half-plane ``G[k]ᵀx ≤ h[k]``; merge near-duplicate
    consecutive vertices (distance ≤ ``merge_tol``) so the vertex list does not grow with
    degenerate copies over 10^5 rounds.

    Plain-Python Sutherland–Hodgman on float tuples: for the ~10-vertex polygons of the
    intersection variant this is several times faster than numpy calls on tiny arrays.
    """
    if P.shape[0] == 0:
        return P
    pts = P.tolist()
    cut = False
    for (a0, a1), b in zip(G.tolist(), h.tolist()):
        sv = [a0 * x + a1 * y - b for x, y in pts]
        if max(sv) <= 0.0:
            continue  # the half-plane does not cut the polygon
        if min(sv) > 0.0:
            return P[:0]
        cut = True
        n = len(pts)
        out = []
        for i in range(n):
            j = i + 1 if i + 1 < n else 0
            si, sj = sv[i], sv[j]
            if si <= 0.0:
                out.append(pts[i])
            if (si <= 0.0) != (sj <= 0.0):
                t = si / (si - sj)
                xi, yi = pts[i]
                xj, yj = pts[j]
                out.append([xi + t * (xj - xi), yi + t * (yj - yi)])
        pts = out
    if not cut:
        return P
    merged = [p for i, p in enumerate(pts)
              if abs(p[0] - pts[i - 1][0]) + abs(p[1] - pts[i - 1][1]) > merge_tol]
    return np.array(merged if merged else pts[:1], dtype=float)


def simplify_polygon_outer(P: np.ndarray, max_vertices: int) -> np.ndarray:
    """Outer simplification of a convex polygon ``P: (n, 2)`` (cyclic order) to at most
    ``max_vertices`` vertices. The result *contains* ``P``.

    Repeatedly removes the edge whose removal adds the least area: the edge ``P[k]P[k+1]`` is
    replaced by the intersection ``Q`` of the lines through its two neighbouring edges (only
    when ``Q`` lies on the outer side, i.e. both neighbouring edges point towards it).
    Why outer: the intersected confidence polygon must stay a superset of the true
    confidence set, otherwise the safe set derived from it would no longer be conservative.
    """
    if max_vertices < 4:
        raise ValueError(f"max_vertices must be >= 4, got {max_vertices}")
    while P.shape[0] > max_vertices:
        n = P.shape[0]
        Pm1 = np.concatenate((P[-1:], P[:-1]))  # P[k-1]
        P1 = np.concatenate((P[1:], P[:1]))  # P[k+1]
        P2 = np.concatenate((P[2:], P[:2]))  # P[k+2]
        e_prev = P - Pm1
        e_next = P2 - P1
        rhs = P1 - P
        # Solve s e_prev − u e_next = rhs  (2×2, Cramer).
        det = -e_prev[:, 0] * e_next[:, 1] + e_prev[:, 1] * e_next[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (-rhs[:, 0] * e_next[:, 1] + rhs[:, 1] * e_next[:, 0]) / det
            u = (e_prev[:, 0] * rhs[:, 1] - e_prev[:, 1] * rhs[:, 0]) / det
        Q = P + s[:, None] * e_prev
        valid = np.isfinite(s) & np.isfinite(u) & (s >= 0) & (u <= 0)
        if not valid.any():
            break  # cannot simplify while staying outer (should not happen for convex P, n > 4)
        d1 = Q - P
        area = 0.5 * np.abs(d1[:, 0] * rhs[:, 1] - d1[:, 1] * rhs[:, 0])
        area[~valid] = np.inf
        k = int(np.argmin(area))
        k1 = (k + 1) % n
        P = P.copy()
        P[k] = Q[k]
        P = np.delete(P, k1, axis=0)
    return P


def disc_candidates(G: np.ndarray, h: np.ndarray, r: float, V: np.ndarray) -> np.ndarray:
    """Feasible candidate minimisers over ``{x ∈ R² : ‖x‖ ≤ r, Gx ≤ h}`` for the objectives ``V: (q, 2)``.

    Exact in 2-D: the minimiser of ``vᵀx`` over a disc cut by half-planes is the
    tangent point ``−r v/‖v‖`` if it is feasible, else a corner — a line–circle intersection
    or a line–line intersection inside the disc. Including every objective's tangent point
    is harmless (each is a feasible point when kept). Returns ``(p, 2)``.
    """
    G = np.asarray(G, dtype=float)
    h = np.asarray(h, dtype=float)
    cands = []
    vn = np.linalg.norm(V, axis=1)
    nz = vn > 0
    cands.append(-r * V[nz] / vn[nz, None])
    gn2 = np.einsum("ij,ij->i", G, G)
    p0 = (h / gn2)[:, None] * G  # foot of the perpendicular from 0 to each line
    dist2 = h * h / gn2
    hit = dist2 <= r * r
    if hit.any():
        perp = np.stack([-G[hit, 1], G[hit, 0]], axis=1) / np.sqrt(gn2[hit])[:, None]
        half = np.sqrt(r * r - dist2[hit])[:, None]
        cands.append(p0[hit] + half * perp)
        cands.append(p0[hit] - half * perp)
    if G.shape[0] >= 2:
        corners = enumerate_vertices(G, h, tol=np.inf)  # all pairwise intersections
        cands.append(corners)
    X = np.concatenate(cands, axis=0)
    tol = FEASIBILITY_TOL
    ok = _feasible(X, G, h, tol) & (np.einsum("ij,ij->i", X, X) <= r * r * (1 + tol))
    return X[ok]


def ball_argmin(V: np.ndarray, G: np.ndarray, h: np.ndarray, r: float) -> tuple[np.ndarray, int, float]:
    """``min_{i, x} V[i]ᵀx`` over ``{‖x‖ ≤ r, Gx ≤ h}``; returns ``(x, i, value)``.

    2-D: exact enumeration (:func:`disc_candidates`). Other d: one cvxpy SOCP per objective
    (slow, ~ms per solve: the general fallback). An interior-point solution lies up to the
    solver's tolerance (~1e-9) outside the ball or the half-spaces, which a caller that
    plays it in D_0 cannot accept, so it is scaled towards the origin into both (the origin
    is feasible when h > 0, as Safe-LUCB's c > 0 makes it); the value is that of the
    scaled point. A solver that finds no solution is a :class:`~cbai_cli.contracts.errors.NumericalError`.
    """
    d = V.shape[1]
    if d == 2:
        X = disc_candidates(G, h, r, V)
        j, i, val = bilinear_argmin(X, V)
        return X[j], i, val
    import cvxpy as cp

    from cbai_cli.contracts.errors import NumericalError

    x = cp.Variable(d)
    v = cp.Parameter(d)
    prob = cp.Problem(cp.Minimize(v @ x), [cp.norm(x, 2) <= r, G @ x <= h])
    best = (None, -1, math.inf)
    for i, vi in enumerate(V):
        v.value = vi
        prob.solve()
        if prob.status not in ("optimal", "optimal_inaccurate") or x.value is None:
            raise NumericalError(f"the optimistic action over the ball could not be computed (the SOCP solver "
                                 f"returned status {prob.status!r})")
        point = _into_ball_and_halfspaces(np.asarray(x.value, dtype=float), G, h, r)
        value = float(vi @ point)
        if value < best[2]:
            best = (point, i, value)
    return best  # type: ignore[return-value]


def _into_ball_and_halfspaces(x: np.ndarray, G: np.ndarray, h: np.ndarray, r: float) -> np.ndarray:
    """``x`` scaled by the largest s ≤ 1 with ‖sx‖ ≤ r and s·Gx ≤ h (the rows with h > 0;
    a solver's point is at most its tolerance outside them, so s is 1 − O(1e-9))."""
    scale = 1.0
    norm = float(np.linalg.norm(x))
    if norm > r:
        scale = r / norm
    lhs = G @ x
    over = (lhs > h) & (h > 0)
    if over.any():
        scale = min(scale, float(np.min(h[over] / lhs[over])))
    if scale >= 1.0:
        return x
    point = scale * x
    # s·‖x‖ may round to one ulp above r: step down until it does not
    while np.linalg.norm(point) > r or np.any((G @ point > h) & (h > 0)):
        point = np.nextafter(point, 0.0)
    return point
