"""Geometry kernels of Safe-LUCB's optimistic step: vertex enumeration, LP, polygon clipping, disc optimisation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.kinds.safe.polytopes import (
    ball_argmin,
    bilinear_argmin,
    box_halfspaces,
    box_polygon_vertices,
    clip_polygon,
    clip_polygon_many,
    disc_candidates,
    enumerate_vertices,
    lp_argmin,
    simplify_polygon_outer,
)


def _random_safe_polytope(rng, d, n_cuts):
    """Box [−1,1]^d cut by half-planes gᵀx ≤ c with c > 0 (origin interior, as for every estimated safe set)."""
    Gb, hb = box_halfspaces(d, 1.0)
    G = np.concatenate([rng.normal(size=(n_cuts, d)), Gb])
    h = np.concatenate([rng.uniform(0.05, 1.0, n_cuts), hb])
    return G, h


def test_box_vertices():
    G, h = box_halfspaces(3, 2.0)
    V = enumerate_vertices(G, h)
    assert V.shape == (8, 3)
    assert set(map(tuple, np.abs(V))) == {(2.0, 2.0, 2.0)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(2, 3), n_cuts=st.integers(1, 5))
def test_enumerate_matches_qhull_and_lp(seed, d, n_cuts):
    rng = np.random.default_rng(seed)
    G, h = _random_safe_polytope(rng, d, n_cuts)
    V1 = enumerate_vertices(G, h, "enumerate")
    V2 = enumerate_vertices(G, h, "qhull")
    # Same vertex sets up to duplicates/round-off.
    for v in V2:
        assert np.min(np.linalg.norm(V1 - v, axis=1)) < 1e-7
    for v in V1:
        assert np.min(np.linalg.norm(V2 - v, axis=1)) < 1e-7
    # Linear minimisation over the vertices equals the LP optimum.
    C = rng.normal(size=(4, d))
    _, _, val_v = bilinear_argmin(V1, C)
    _, _, val_lp = lp_argmin(C, G, h)
    assert val_v == pytest.approx(val_lp, abs=1e-7)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n_cuts=st.integers(1, 6))
def test_box_polygon_clipping_matches_enumeration(seed, n_cuts):
    rng = np.random.default_rng(seed)
    G, h = _random_safe_polytope(rng, 2, n_cuts)
    V1 = enumerate_vertices(G, h)
    V2 = box_polygon_vertices(G[:n_cuts], h[:n_cuts], 1.0)
    for v in V2:
        assert np.min(np.linalg.norm(V1 - v, axis=1)) < 1e-9
    for v in V1:
        assert np.min(np.linalg.norm(V2 - v, axis=1)) < 1e-9


def test_bilinear_argmin_first_minimum():
    U = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert bilinear_argmin(U, V) == (2, 0, -1.0)


def _polygon_contains(P, X, tol=1e-9):
    """Points ``X: (m, 2)`` (or one point) in the convex polygon ``P`` (either orientation)."""
    X = np.atleast_2d(X)
    E = np.roll(P, -1, axis=0) - P  # edges
    D = X[:, None, :] - P[None, :, :]
    cr = E[None, :, 0] * D[:, :, 1] - E[None, :, 1] * D[:, :, 0]
    return np.all(cr >= -tol, axis=1) | np.all(cr <= tol, axis=1)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_clip_polygon_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    ang = np.sort(rng.uniform(0, 2 * np.pi, 7))
    P = np.column_stack([np.cos(ang), np.sin(ang)]) * rng.uniform(0.5, 2.0)
    G = rng.normal(size=(3, 2))
    h = rng.uniform(-0.2, 1.0, 3)
    Q1 = P
    for g, hk in zip(G, h):
        Q1 = clip_polygon(Q1, g, hk)
    Q2 = clip_polygon_many(P, G, h)
    pts = rng.uniform(-2.5, 2.5, size=(2000, 2))
    for Q in (Q1, Q2):
        inside_true = _polygon_contains(P, pts, 0) & np.all(pts @ G.T <= h, axis=1)
        if Q.shape[0] < 3:
            assert inside_true.sum() == 0
            continue
        inside_q = _polygon_contains(Q, pts, 1e-12)
        # Allow disagreement only within 1e-6 of an edge.
        assert np.sum(inside_true != inside_q) <= 2


def test_simplify_polygon_outer_contains_original():
    rng = np.random.default_rng(3)
    ang = np.sort(rng.uniform(0, 2 * np.pi, 30))
    P = np.column_stack([np.cos(ang), 0.5 * np.sin(ang)])
    Q = simplify_polygon_outer(P, 8)
    assert len(Q) <= 8
    assert np.all(_polygon_contains(Q, P, 1e-9))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), n_cuts=st.integers(0, 4))
def test_disc_optimum_against_dense_sampling(seed, n_cuts):
    """Exact 2-D ball optimisation vs dense sampling of the feasible set."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(0.5, 2.0)
    G = rng.normal(size=(n_cuts, 2))
    h = rng.uniform(0.05, 1.0, n_cuts)
    V = rng.normal(size=(4, 2))
    x, i, val = ball_argmin(V, G, h, r)
    assert np.linalg.norm(x) <= r * (1 + 1e-9)
    assert np.all(G @ x <= h + 1e-9)
    assert V[i] @ x == pytest.approx(val)
    # Dense sample: polar grid of the disc, keep feasible points.
    rad = np.sqrt(np.linspace(0, 1, 200))[:, None] * r
    th = np.linspace(0, 2 * np.pi, 1000, endpoint=False)[None, :]
    pts = np.stack([(rad * np.cos(th)).ravel(), (rad * np.sin(th)).ravel()], axis=1)
    pts = pts[np.all(pts @ G.T <= h, axis=1)]
    brute = (pts @ V.T).min()
    assert val <= brute + 1e-12  # exact optimum is at least as good as any sample
    assert val >= brute - 0.02 * r * np.abs(V).max()  # and the grid gets close to it


def test_disc_candidates_include_line_circle_points():
    # Half-plane x ≤ 0.5 on the unit disc, objective −x: optimum on the chord x = 0.5.
    X = disc_candidates(np.array([[1.0, 0.0]]), np.array([0.5]), 1.0, np.array([[-1.0, 0.0]]))
    assert np.max(X[:, 0]) == pytest.approx(0.5)


def test_ball_argmin_cvxpy_3d():
    rng = np.random.default_rng(5)
    G = rng.normal(size=(2, 3))
    h = np.array([0.3, 0.4])
    V = rng.normal(size=(2, 3))
    x, i, val = ball_argmin(V, G, h, 1.0)
    assert np.linalg.norm(x) <= 1 + 1e-6 and np.all(G @ x <= h + 1e-6)
    pts = rng.normal(size=(20000, 3))
    pts *= (rng.random(20000) ** (1 / 3) / np.linalg.norm(pts, axis=1))[:, None]
    pts = pts[np.all(pts @ G.T <= h, axis=1)]
    assert val <= (pts @ V.T).min() + 1e-6


@pytest.mark.parametrize("d", [1, 3])
def test_ball_argmin_outside_the_plane_returns_points_inside_the_ball_and_the_half_spaces(d):
    """The SOCP solver's point lay up to 1.3e-9 outside the unit ball (Safe-LUCB then played
    an action outside D_0 and the environment refused it); it is scaled into both."""
    for seed in range(30):
        rng = np.random.default_rng(seed)
        G = rng.normal(size=(2, d))
        h = np.array([0.3, 0.4])
        V = rng.normal(size=(2, d))
        x, i, val = ball_argmin(V, G, h, 1.0)
        assert np.linalg.norm(x) <= 1.0 and np.all(G @ x <= h), seed
        assert val == V[i] @ x
