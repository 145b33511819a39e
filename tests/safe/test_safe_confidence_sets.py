"""Closed forms over the confidence ellipsoid and its L1 outer polytope (cbai_cli/algorithms/safe/confidence_sets.py).

"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.numerics.linalg import inverse_sqrt, weighted_norms
from cbai_cli.algorithms.safe.confidence_sets import (
    ellipsoid_max,
    ellipsoid_min,
    l1_polytope_halfspaces,
    l1_polytope_max,
    l1_polytope_min,
    l1_polytope_vertices,
)


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
