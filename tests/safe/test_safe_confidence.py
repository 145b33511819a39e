"""Ridge state, radii and closed forms (spec §1)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.safe.confidence import (
    RidgeState,
    ellipsoid_max,
    ellipsoid_min,
    inverse_sqrt,
    l1_polytope_halfspaces,
    l1_polytope_max,
    l1_polytope_min,
    l1_polytope_vertices,
    radius_determinant,
    radius_horizon,
    radius_lingape_script,
    weighted_norms,
)


def test_ridge_state_matches_direct_solution():
    rng = np.random.default_rng(0)
    d, lam = 3, 0.7
    st_ = RidgeState(d, lam, n_targets=2, refresh_every=10**9)  # no refresh: pure updates
    X = rng.normal(size=(500, d))
    Y = rng.normal(size=(500, 2))
    for x, y in zip(X, Y):
        st_.update(x, y)
    A = lam * np.eye(d) + X.T @ X
    np.testing.assert_allclose(st_.A, A, rtol=1e-12)
    np.testing.assert_allclose(st_.A_inv, np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    assert st_.logdet == pytest.approx(np.linalg.slogdet(A)[1], rel=1e-10)
    for m in range(2):
        np.testing.assert_allclose(st_.estimate(m), np.linalg.solve(A, X.T @ Y[:, m]), rtol=1e-8)
    assert st_.n == 500
    np.testing.assert_allclose(st_.norms(X[:5]), np.sqrt(np.einsum("ij,jk,ik->i", X[:5], np.linalg.inv(A), X[:5])))
    assert st_.lambda_min() == pytest.approx(np.linalg.eigvalsh(A)[0])


def test_ridge_state_refresh_keeps_long_streams_accurate():
    """10^5 nearly collinear updates: the periodic refresh keeps A⁻¹ at machine accuracy."""
    rng = np.random.default_rng(1)
    st_ = RidgeState(2, 1.0, refresh_every=1000)
    X = np.column_stack([np.ones(100_000), 1e-3 * rng.normal(size=100_000)])
    for x in X[:100_000:1]:
        st_.update(x, 0.0)
    A = np.eye(2) + X.T @ X
    np.testing.assert_allclose(st_.A_inv @ A, np.eye(2), atol=1e-8)
    assert st_.logdet == pytest.approx(np.linalg.slogdet(A)[1], rel=1e-12)


def test_ridge_state_validation():
    with pytest.raises(ValueError, match="lam"):
        RidgeState(2, 0.0)
    with pytest.raises(ValueError, match="d must"):
        RidgeState(0, 1.0)


def test_radius_forms():
    # Determinant form at A = λI: R sqrt(2 log(1/δ)) + sqrt(λ) S.
    assert radius_determinant(2 * math.log(2.0), 2, 2.0, 1.5, 3.0, 0.1) == pytest.approx(
        1.5 * math.sqrt(2 * math.log(10)) + math.sqrt(2) * 3
    )
    # K² union factor.
    assert radius_determinant(0.0, 1, 1.0, 1.0, 0.0, 0.05, union=16) == pytest.approx(math.sqrt(2 * math.log(16 / 0.05)))
    assert radius_horizon(10, 2, 1.0, 1.0, 1.0, math.sqrt(2), 0.01) == pytest.approx(
        math.sqrt(2 * math.log(21 / 0.01)) + 1
    )
    assert radius_lingape_script(7, 3, 1.0, 1.0, 2.0, 1.0, 0.05, 4) == pytest.approx(
        math.sqrt(3 * math.log(16 * 8 / 0.05)) + 2
    )
    with pytest.raises(ValueError, match="delta"):
        radius_horizon(1, 1, 1.0, 1.0, 1.0, 1.0, 1.5)


def test_horizon_form_dominates_determinant_form_for_d_at_least_2():
    """§1.2: β_n ≥ β_det for d ≥ 2 (det A ≤ (λ + n L²/d)^d), not for d = 1."""
    rng = np.random.default_rng(2)
    for d in (2, 3, 5):
        st_ = RidgeState(d, 1.0)
        for _ in range(200):
            x = rng.normal(size=d)
            st_.update(x / max(1.0, np.linalg.norm(x)), 0.0)
        bd = radius_determinant(st_.logdet, d, 1.0, 1.0, 1.0, 0.01)
        bh = radius_horizon(st_.n, d, 1.0, 1.0, 1.0, 1.0, 0.01)
        assert bh >= bd
    st1 = RidgeState(1, 1.0)
    for _ in range(100):
        st1.update(np.ones(1), 0.0)
    assert radius_horizon(100, 1, 1.0, 1.0, 1.0, 1.0, 0.01) < radius_determinant(st1.logdet, 1, 1.0, 1.0, 1.0, 0.01)


def _random_spd(rng, d):
    M = rng.normal(size=(d, d))
    return M @ M.T + 0.3 * np.eye(d)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 4))
def test_ellipsoid_closed_forms_against_boundary_sampling(seed, d):
    rng = np.random.default_rng(seed)
    A = _random_spd(rng, d)
    A_inv = np.linalg.inv(A)
    center = rng.normal(size=d)
    beta = rng.uniform(0.1, 3.0)
    a = rng.normal(size=(3, d))
    # Boundary points v = center + β A^{-1/2} u with ‖u‖ = 1 lie on ‖v − center‖_A = β.
    U = rng.normal(size=(4000, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    V = center + beta * U @ inverse_sqrt(A)
    vals = a @ V.T
    hi = ellipsoid_max(a, center, A_inv, beta)
    lo = ellipsoid_min(a, center, A_inv, beta)
    assert np.all(vals.max(axis=1) <= hi + 1e-9)
    assert np.all(vals.min(axis=1) >= lo - 1e-9)
    # The maximiser itself: center + β A⁻¹a / ‖a‖_{A⁻¹}.
    for k in range(3):
        v = center + beta * A_inv @ a[k] / weighted_norms(a[k], A_inv)
        assert a[k] @ v == pytest.approx(hi[k], rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 4))
def test_l1_polytope_contains_ellipsoid_and_matches_vertices(seed, d):
    rng = np.random.default_rng(seed)
    A = _random_spd(rng, d)
    A_inv = np.linalg.inv(A)
    M = inverse_sqrt(A)
    center = rng.normal(size=d)
    beta = rng.uniform(0.1, 3.0)
    Vt = l1_polytope_vertices(center, M, beta)
    assert Vt.shape == (2 * d, d)
    a = rng.normal(size=(5, d))
    # Support function = max over the 2d vertices.
    np.testing.assert_allclose(l1_polytope_max(a, center, M, beta), (a @ Vt.T).max(axis=1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(l1_polytope_min(a, center, M, beta), (a @ Vt.T).min(axis=1), rtol=1e-10, atol=1e-10)
    # Outer approximation: polytope support ≥ ellipsoid support in every direction.
    assert np.all(l1_polytope_max(a, center, M, beta) >= ellipsoid_max(a, center, A_inv, beta) - 1e-10)
    # Half-space form: every vertex on the boundary, centre strictly inside, and the
    # ellipsoid maximiser of each facet normal inside.
    G, h = l1_polytope_halfspaces(center, inverse_sqrt(A_inv), beta)  # A^{1/2} = (A⁻¹)^{-1/2}
    assert np.all(G @ Vt.T <= h[:, None] + 1e-9)
    assert np.all(np.isclose((G @ Vt.T - h[:, None]).max(axis=0), 0.0, atol=1e-9))
    assert np.all(G @ center < h)
