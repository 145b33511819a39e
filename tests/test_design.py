"""Tests for cbai_cli.numerics.design.solver: optimal designs, certificates and rounding."""

from __future__ import annotations

import dataclasses
import pickle
from concurrent.futures import ThreadPoolExecutor
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cbai_cli.numerics.design.solver as design_module
from cbai_cli.numerics.design.solver import Design, _ray_root, optimal_design, optimal_design_cvxpy
from cbai_cli.numerics.design.cache import DesignCache
from cbai_cli.numerics.design.geometry import design_value
from cbai_cli.numerics.design.rounding import round_design, rounding_minimum

TOL = 1e-6


def _check_design(D: Design, K: int, tol: float = TOL) -> None:
    """Invariants every returned design satisfies."""
    assert D.weights.shape == (K,)
    assert np.all(D.weights >= 0)
    assert D.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert 0.0 <= D.lower <= D.value
    assert D.gap >= 0
    if D.value > 0:
        assert D.gap == pytest.approx((D.value - D.lower) / D.value, rel=1e-9, abs=1e-15)
    assert np.array_equal(D.support, np.flatnonzero(D.weights > 0))


def _variances(arms, weights, targets) -> np.ndarray:
    """Per-target variances y^T A_w^+ y, one design_value call per target."""
    return np.array([design_value(arms, weights, y[None, :]) for y in np.atleast_2d(targets)])


# --------------------------------------------------------------------------- #
# Kiefer--Wolfowitz
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("K,d", [(1, 1), (7, 1), (5, 5), (30, 3), (200, 8)])
def test_kiefer_wolfowitz_full_rank(seed, K, d):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((K, d)) * rng.uniform(0.2, 5.0, size=(K, 1))
    D = optimal_design(X, X, tol=TOL)
    _check_design(D, K)
    assert D.gap <= TOL
    assert D.lower <= d * (1 + 1e-9) and D.value >= d * (1 - 1e-9)
    assert D.value == pytest.approx(d, rel=2 * TOL)
    assert design_value(X, D.weights, X) == pytest.approx(D.value, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("K,d,k", [(20, 5, 2), (40, 6, 4), (10, 3, 1), (60, 8, 5)])
def test_kiefer_wolfowitz_rank_deficient(seed, K, d, k):
    """Arms in a k-dimensional subspace of R^d: the G-optimal value is k."""
    rng = np.random.default_rng(100 + seed)
    X = rng.standard_normal((K, k)) @ rng.standard_normal((k, d))
    D = optimal_design(X, X)
    _check_design(D, K)
    assert D.gap <= TOL
    assert D.value == pytest.approx(k, rel=2 * TOL)


# --------------------------------------------------------------------------- #
# Hand-computed instances
# --------------------------------------------------------------------------- #


def _irrelevant_dimensions(d: int, eps: float):
    E = np.eye(d)
    arms = np.vstack([E[: d - 1], (1 - eps) * E[d - 1], (1 + eps) * E[d - 1]])
    targets = np.vstack([(1 - eps) * E[d - 1] / eps, (1 + eps) * E[d - 1] / eps])
    return arms, targets


def test_irrelevant_dimensions_hcl_b():
    """Section 7 worked example: H_CLB = 1/eps^2 = 400, all weight on (1+eps) e_d.

    Only the e_d direction matters; the variance of ((1+eps)/eps) e_d under weight
    w on (1+eps) e_d and w' on (1-eps) e_d is ((1+eps)/eps)^2 / (w (1+eps)^2 + w' (1-eps)^2),
    minimised at w = 1 with value 1/eps^2.
    """
    arms, targets = _irrelevant_dimensions(10, 0.05)
    D = optimal_design(arms, targets)
    _check_design(D, 11)
    assert D.gap <= TOL
    assert D.value == pytest.approx(400.0, rel=2 * TOL)
    assert D.weights[-1] == pytest.approx(1.0, abs=1e-6)
    assert D.lower <= 400.0 * (1 + 1e-12)


def test_two_arms_by_hand():
    """x1 = e1, x2 = 2 e2, Y = {e1, e2}: v = max(1/l1, 1/(4 l2)) -> l = (4/5, 1/5), value 5/4."""
    arms = np.array([[1.0, 0.0], [0.0, 2.0]])
    targets = np.eye(2)
    D = optimal_design(arms, targets)
    assert D.value == pytest.approx(1.25, rel=2 * TOL)
    np.testing.assert_allclose(D.weights, [0.8, 0.2], atol=1e-5)
    assert D.gap <= TOL


def test_two_arms_difference_target():
    """x1 = e1, x2 = e1 + e2, y = e2 = x2 - x1: variance 1/l1 + 1/l2, minimised at 1/2 with value 4."""
    arms = np.array([[1.0, 0.0], [1.0, 1.0]])
    D = optimal_design(arms, np.array([[0.0, 1.0]]))
    assert D.value == pytest.approx(4.0, rel=2 * TOL)
    np.testing.assert_allclose(D.weights, [0.5, 0.5], atol=1e-5)


# --------------------------------------------------------------------------- #
# Agreement with cvxpy and validity of the certificate
# --------------------------------------------------------------------------- #


def _random_instance(seed: int):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 7))
    K = int(rng.integers(max(d, 2), 31))
    X = rng.standard_normal((K, d)) * rng.uniform(0.3, 3.0, size=(K, 1))
    m = int(rng.integers(1, K + 1))
    idx = rng.choice(K, size=m, replace=False)
    Y = X[idx] / rng.uniform(0.05, 2.0, size=(m, 1))  # like x / |g(x)|
    return X, Y


@pytest.mark.parametrize("seed", range(8))
def test_fw_agrees_with_cvxpy(seed):
    X, Y = _random_instance(seed)
    fw = optimal_design(X, Y, tol=TOL)
    cx = optimal_design_cvxpy(X, Y)
    _check_design(fw, X.shape[0])
    _check_design(cx, X.shape[0])
    assert fw.solver == "fw" and cx.solver == "cvxpy"
    assert fw.gap <= TOL
    assert fw.value == pytest.approx(cx.value, rel=1e-5)
    # Both lower bounds are certificates: neither may exceed the other's value.
    assert fw.lower <= cx.value * (1 + 1e-12)
    assert cx.lower <= fw.value * (1 + 1e-12)
    assert cx.value <= fw.value * (1 + 1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_certificate_valid_even_when_stopped_early(seed):
    """lower <= value* for loose tolerances and truncated runs, value* from cvxpy."""
    X, Y = _random_instance(50 + seed)
    ref = optimal_design_cvxpy(X, Y).value
    for kwargs in ({"tol": 0.3}, {"tol": 1e-2}, {"max_iter": 1}, {"max_iter": 3}):
        D = optimal_design(X, Y, **kwargs)
        _check_design(D, X.shape[0], tol=kwargs.get("tol", TOL))
        assert D.lower <= ref * (1 + 1e-7)
        assert D.value >= ref * (1 - 1e-7)
        if "tol" in kwargs:
            assert D.gap <= kwargs["tol"]


def test_solver_dispatch():
    X, Y = _random_instance(3)
    assert optimal_design(X, Y, solver="cvxpy").solver == "cvxpy"
    with pytest.raises(ValueError):
        optimal_design(X, Y, solver="nope")


def test_cvxpy_scs_choice():
    X, Y = _random_instance(4)
    D = optimal_design_cvxpy(X, Y, solver_name="SCS")
    ref = optimal_design(X, Y)
    assert D.value == pytest.approx(ref.value, rel=1e-3)
    assert D.lower <= ref.value * (1 + 1e-12)


def test_module_does_not_import_cvxpy():
    code = "import sys, cbai_cli.numerics.design.solver; assert 'cvxpy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- #
# Invariance, larger instances, H_CLB-style targets
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(3))
def test_arm_order_invariance(seed):
    rng = np.random.default_rng(200 + seed)
    X = rng.standard_normal((25, 4))
    Y = X[rng.choice(25, size=8, replace=False)]
    perm = rng.permutation(25)
    D1 = optimal_design(X, Y)
    D2 = optimal_design(X[perm], Y)
    assert D2.value == pytest.approx(D1.value, rel=2 * TOL)
    np.testing.assert_allclose(D2.weights, D1.weights[perm], atol=2e-3)
    # and the permuted weights are optimal for the original order
    assert design_value(X, D2.weights[np.argsort(perm)], Y) == pytest.approx(D1.value, rel=2 * TOL)


def test_target_order_and_duplicates_do_not_matter():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 5))
    Y = X[:10] * 3.0
    D1 = optimal_design(X, Y)
    D2 = optimal_design(X, np.vstack([Y[::-1], Y[:4]]))
    assert D2.value == pytest.approx(D1.value, rel=2 * TOL)


def test_medium_instance_and_sparsity():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((1000, 10))
    Y = X[rng.choice(1000, size=100, replace=False)]
    D = optimal_design(X, Y)
    _check_design(D, 1000)
    assert D.gap <= TOL
    # Caratheodory: an optimal design needs at most r(r+1)/2 support points; the
    # interior-point solution is sparse, not spread over all K arms.
    assert D.support.size <= 200


def test_ill_conditioned_arms():
    """Arms whose directions differ in scale by 1e7: still Kiefer--Wolfowitz, both solvers."""
    rng = np.random.default_rng(13)
    X = rng.standard_normal((40, 5)) @ np.diag([1.0, 1.0, 1.0, 1e-4, 1e-7])
    for f in (optimal_design, optimal_design_cvxpy):
        D = f(X, X)
        assert D.value == pytest.approx(5.0, rel=1e-5)
        assert D.lower <= 5.0 * (1 + 1e-9)


def test_invariance_under_linear_maps():
    """y^T A^-1 y is unchanged when arms and targets are mapped by the same invertible B."""
    X, Y = _random_instance(17)
    d = X.shape[1]
    B = np.random.default_rng(1).standard_normal((d, d)) + 3 * np.eye(d)
    D1 = optimal_design(X, Y)
    D2 = optimal_design(X @ B.T, Y @ B.T)
    assert D2.value == pytest.approx(D1.value, rel=2 * TOL)


def test_scale_invariance():
    """Scaling arms by a and targets by b scales the value by b^2 / a^2."""
    X, Y = _random_instance(21)
    D = optimal_design(X, Y)
    D2 = optimal_design(1e3 * X, 1e-2 * Y)
    assert D2.value == pytest.approx(D.value * 1e-4 / 1e6, rel=2 * TOL)


# --------------------------------------------------------------------------- #
# Edge cases
# --------------------------------------------------------------------------- #


def test_no_targets():
    X = np.random.default_rng(0).standard_normal((6, 3))
    for f in (optimal_design, optimal_design_cvxpy):
        D = f(X, np.zeros((0, 3)))
        assert D.value == 0.0 and D.gap == 0.0
        np.testing.assert_allclose(D.weights, np.full(6, 1 / 6))


def test_zero_arms_and_zero_targets():
    X = np.vstack([np.zeros((2, 3)), np.eye(3)])
    D = optimal_design(X, X)
    assert D.value == pytest.approx(3.0, rel=2 * TOL)
    assert np.all(D.weights[:2] == 0)  # zero arms carry no information
    Z = optimal_design(np.zeros((3, 2)), np.zeros((2, 2)))
    assert Z.value == 0.0
    with pytest.raises(ValueError):
        optimal_design(np.zeros((3, 2)), np.ones((1, 2)))


def test_duplicate_arms():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((8, 3))
    Xd = np.vstack([X, X, X[:3]])
    D = optimal_design(Xd, Xd)
    assert D.value == pytest.approx(3.0, rel=2 * TOL)
    # the duplicated copies of an arm together carry that arm's weight
    D1 = optimal_design(X, X)
    merged = D.weights[:8] + D.weights[8:16]
    merged[:3] += D.weights[16:]
    np.testing.assert_allclose(merged, D1.weights, atol=2e-3)


def test_single_arm():
    D = optimal_design(np.array([[2.0, 0.0]]), np.array([[3.0, 0.0], [1.0, 0.0]]))
    assert D.weights.tolist() == [1.0]
    assert D.value == pytest.approx(9.0 / 4.0) and D.gap == 0.0


def test_one_dimension():
    arms = np.array([[1.0], [-3.0], [2.0], [0.0]])
    D = optimal_design(arms, np.array([[3.0], [1.0]]))
    assert D.value == pytest.approx(1.0, rel=2 * TOL)  # 3^2 / 3^2, all weight on -3
    assert D.weights[1] == pytest.approx(1.0, abs=1e-6)


def test_target_outside_span_raises():
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="span"):
        optimal_design(X, np.array([[0.0, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="span"):
        design_value(X, np.ones(2), np.array([[1.0, 1.0, 1e-3]]))


def test_bad_inputs():
    with pytest.raises(ValueError):
        optimal_design(np.zeros((0, 3)), np.zeros((0, 3)))
    with pytest.raises(ValueError):
        optimal_design(np.ones(3), np.ones((1, 3)))
    with pytest.raises(ValueError):
        optimal_design(np.ones((2, 3)), np.ones((1, 2)))
    with pytest.raises(ValueError):
        optimal_design(np.array([[np.nan, 1.0]]), np.ones((1, 2)))
    with pytest.raises(ValueError):
        optimal_design(np.eye(2), np.eye(2), tol=0)
    with pytest.raises(ValueError):
        optimal_design(np.eye(2), np.eye(2), max_iter=0)


def test_design_is_frozen():
    D = optimal_design(np.eye(2), np.eye(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        D.value = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        D.weights[0] = 0.5


# --------------------------------------------------------------------------- #
# design_value
# --------------------------------------------------------------------------- #


def test_design_value_matches_direct_inverse():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((10, 4))
    w = rng.uniform(0.1, 1.0, 10)
    Y = rng.standard_normal((5, 4))
    A = X.T @ (w[:, None] * X)
    expected = np.max(np.einsum("ij,jk,ik->i", Y, np.linalg.inv(A), Y))
    assert design_value(X, w, Y) == pytest.approx(expected, rel=1e-10)


def test_design_value_singular_and_rank_deficient():
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    # support {x1} does not identify e2: infinite variance
    assert design_value(X, np.array([1.0, 0.0, 0.0]), np.array([[0.0, 1.0, 0.0]])) == np.inf
    # but e1 itself is fine
    assert design_value(X, np.array([1.0, 0.0, 0.0]), np.array([[2.0, 0.0, 0.0]])) == pytest.approx(4.0)
    # X spans a plane in R^3; the pseudo-inverse on that plane
    assert design_value(X, np.array([0.5, 0.5, 0.0]), X[:2]) == pytest.approx(2.0)
    assert design_value(X, np.ones(3), np.zeros((0, 3))) == 0.0
    with pytest.raises(ValueError):
        design_value(X, np.array([1.0, -1.0, 1.0]), X)


# --------------------------------------------------------------------------- #
# Rounding
# --------------------------------------------------------------------------- #

weight_lists = st.lists(
    st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=1.0, allow_subnormal=False)),
    min_size=1,
    max_size=25,
).filter(lambda ws: sum(ws) > 0)


@settings(max_examples=300, deadline=None)
@given(ws=weight_lists, n=st.integers(min_value=0, max_value=400))
def test_rounding_basic_properties(ws, n):
    lam = np.asarray(ws) / np.sum(ws)
    counts = round_design(ws, n)
    p = int(np.count_nonzero(lam))
    assert counts.dtype.kind == "i" and counts.shape == lam.shape
    assert counts.sum() == n
    assert np.all(counts >= 0)
    assert np.all(counts[lam == 0] == 0)
    if n >= p:
        assert np.all(counts[lam > 0] >= 1)
        # Adams' divisor method: n_i = ceil(nu * lam_i) with nu > n - p
        assert np.all(counts[lam > 0] >= (n - p) * lam[lam > 0] - 1e-9)
    # divisor-method characterisation: max (n_j - 1)/lam_j <= min n_j/lam_j
    s = lam > 0
    assert np.max((counts[s] - 1) / lam[s]) <= np.min(counts[s] / lam[s]) * (1 + 1e-12) + 1e-12


@settings(max_examples=150, deadline=None)
@given(
    ws=weight_lists,
    eps=st.sampled_from([0.01, 0.05, 0.1, 0.5, 1.0, 2.0]),
    extra=st.integers(min_value=0, max_value=300),
    seed=st.integers(min_value=0, max_value=2**16),
    d=st.integers(min_value=1, max_value=4),
)
def test_rounding_is_one_plus_eps_efficient(ws, eps, extra, seed, d):
    """For n >= r(eps): A_counts >= n/(1+eps) A_lambda, so every arm's variance
    under the rounded allocation is at most (1+eps)/n times its design variance."""
    lam = np.asarray(ws) / np.sum(ws)
    p = int(np.count_nonzero(lam))
    n = rounding_minimum(p, eps) + extra
    counts = round_design(lam, n)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((lam.size, d))
    A_lam = X.T @ (lam[:, None] * X)
    A_cnt = X.T @ (counts[:, None] * X)
    gap = A_cnt - n / (1 + eps) * A_lam
    assert np.linalg.eigvalsh(gap).min() >= -1e-9 * max(1.0, np.abs(A_cnt).max())
    # per-arm variances (arms on the support span the space the design identifies)
    supp = lam > 0
    Xs = X[supp]
    if np.linalg.matrix_rank(Xs) == np.linalg.matrix_rank(X):
        v_lam = _variances(X, lam, X)
        v_cnt = _variances(X, counts.astype(float), X)
        assert np.all(v_cnt <= (1 + eps) / n * v_lam * (1 + 1e-9) + 1e-12)


def test_rounding_examples():
    assert round_design([0.5, 0.5], 3).sum() == 3
    assert round_design([1.0, 0.0, 3.0], 8).tolist() == [2, 0, 6]
    assert round_design([0.2, 0.8], 0).tolist() == [0, 0]
    # n < p: not every support point can be pulled; larger weights first
    assert round_design([0.1, 0.6, 0.3], 1).tolist() == [0, 1, 0]
    with pytest.raises(ValueError):
        round_design([0.0, 0.0], 3)
    with pytest.raises(ValueError):
        round_design([1.0, -0.1], 3)
    with pytest.raises(ValueError):
        round_design([1.0], -1)
    with pytest.raises(ValueError):
        round_design([1.0], 2.5)


def test_rounding_minimum_values():
    assert rounding_minimum(10, 0.01) == 1010
    assert rounding_minimum(3, 1.0) == 6
    assert rounding_minimum(0, 0.1) == 0
    assert rounding_minimum(7, 0.1) == 77
    # exact check on the binary value of eps (0.03 is stored slightly below 0.03,
    # so r(3, 0.03) is 104, not 103)
    assert rounding_minimum(3, 0.03) == 104
    for p in range(1, 50):
        for eps in (0.01, 0.03, 0.1, 0.3, 0.25):
            r = rounding_minimum(p, eps)
            e = Fraction(eps)
            assert p <= r * e / (1 + e)  # so n - p >= n/(1+eps) for every n >= r
            assert (r - 1) * e / (1 + e) < p  # and r is the smallest such n
    with pytest.raises(ValueError):
        rounding_minimum(3, 0.0)
    with pytest.raises(ValueError):
        rounding_minimum(-1, 0.1)


# --------------------------------------------------------------------------- #
# Singular optima: the conic column generation
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(3))
def test_conic_certificate_bounds_the_optimum_for_any_dual_vectors(seed):
    from cbai_cli.numerics.design.geometry import _h_certificate, _project

    rng = np.random.default_rng(seed)
    X, Y = _project(rng.standard_normal((40, 4)), rng.standard_normal((6, 4)))
    optimum = optimal_design(X, Y).value
    for _ in range(20):
        H = rng.standard_normal((6, 4))
        low, _ = _h_certificate(X, Y, H, rng.uniform(0.0, 1.0, 6))
        assert low <= optimum * (1 + 1e-9)


def test_restricted_cone_program_has_the_optimal_value_of_a_regular_problem():
    from cbai_cli.numerics.design.geometry import _project
    from cbai_cli.numerics.design.solver import _restricted_socp

    rng = np.random.default_rng(3)
    X, Y = _project(rng.standard_normal((20, 3)), rng.standard_normal((4, 3)))
    _, _, value = _restricted_socp(X, Y)
    assert value == pytest.approx(optimal_design(X, Y).value, rel=1e-7)


def test_restricted_cone_program_multipliers_certify_its_value():
    from cbai_cli.numerics.design.geometry import _h_certificate, _h_scales, _project
    from cbai_cli.numerics.design.solver import _restricted_socp

    rng = np.random.default_rng(4)
    X, Y = _project(rng.standard_normal((20, 3)), rng.standard_normal((4, 3)))
    _, H, value = _restricted_socp(X, Y)
    u = _h_scales(np.einsum("ij,ij->i", H, Y) ** 2, (X @ H.T) ** 2)
    low, _ = _h_certificate(X, Y, H, u)
    assert low <= value * (1 + 1e-9) and low == pytest.approx(value, rel=1e-7)


def test_a_singular_optimum_the_barrier_stalls_on_is_certified():
    # Three targets along three of 500 arms in R^15: the optimal design is singular, and
    # the barrier method alone stopped at a relative gap of 0.10 (value 6.6466)
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (500, 15))
    m = rng.integers(3, 10)
    Y = X[:m] / rng.uniform(0.01, 1, (m, 1))
    D = optimal_design(X, Y, tol=TOL)
    _check_design(D, 500)
    assert D.gap <= TOL and D.value == pytest.approx(6.579112, rel=1e-6)


# --------------------------------------------------------------------------- #
# The barrier's step along the ray and the LP-optimal certificate
# --------------------------------------------------------------------------- #


def test_ray_minimum_is_the_barrier_minimum_along_the_ray():
    from scipy.optimize import minimize_scalar

    from cbai_cli.numerics.design.geometry import _factor, _project, _sqnorms, _whiten
    from cbai_cli.numerics.design.solver import _ray_minimum

    rng = np.random.default_rng(7)
    X, Y = _project(rng.standard_normal((12, 4)), rng.standard_normal((5, 4)))
    w = rng.uniform(0.5, 2.0, 12)
    w *= 2.0 * _sqnorms(_whiten(_factor(X, w), Y)).max()  # strictly feasible: max v = 1/2
    W = _factor(X, w)
    Yh = _whiten(W, Y)
    v = _sqnorms(Yh)
    kappa = 300.0

    def barrier(c):
        return kappa * c * w.sum() - np.log1p(-v / c).sum() - np.log(c * w).sum()

    best = minimize_scalar(barrier, bounds=(v.max() * (1 + 1e-9), 100.0), method="bounded",
                           options={"xatol": 1e-12})
    w_r, f_r, (W_r, Yh_r, v_r) = _ray_minimum(w, (W, Yh, v), kappa)
    assert w_r.sum() / w.sum() == pytest.approx(best.x, rel=1e-6)
    assert f_r == pytest.approx(barrier(best.x), rel=1e-12)
    assert np.allclose(v_r, _sqnorms(_whiten(_factor(X, w_r), Y)), rtol=1e-10)
    assert np.allclose(_sqnorms(Yh_r), v_r, rtol=1e-10) and np.allclose(W_r, _factor(X, w_r), rtol=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_lp_certificate_bounds_the_optimum_for_any_design(seed):
    from cbai_cli.numerics.design.solver import _lp_lower
    from cbai_cli.numerics.design.geometry import _project

    rng = np.random.default_rng(seed)
    X, Y = _project(rng.standard_normal((30, 4)), rng.standard_normal((6, 4)))
    optimum = optimal_design_cvxpy(X, Y).value
    S = np.arange(30)
    for _ in range(10):
        lam = rng.dirichlet(np.ones(30))
        assert _lp_lower(X, Y, S, lam, np.arange(6), rng.uniform(size=30)) <= optimum * (1 + 1e-9)


def test_lp_certificate_closes_the_gap_at_the_optimal_design():
    from cbai_cli.numerics.design.solver import _lp_lower
    from cbai_cli.numerics.design.geometry import _project

    X, Y = _project(*_random_instance(11))
    D = optimal_design(X, Y, tol=1e-9)
    S = D.support
    low = _lp_lower(X, Y, S, D.weights[S], np.arange(Y.shape[0]), np.zeros(X.shape[0]))
    assert low <= D.value * (1 + 1e-9) and low == pytest.approx(D.value, rel=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_fw_agrees_with_cvxpy_on_the_h_clb_bar_of_random_instances(seed):
    """H̄_CLB's targets x / |g(x)| of ``cbai generate random`` (one arm close to the boundary
    dominates): both solvers' certificates bracket the other's value."""
    from cbai_cli.kinds.cbai.families import generate_instance

    instance = generate_instance("random", d=4, n=25, seed=seed)
    X = instance.problem.arms
    Y = X / np.abs(instance.gaps)[:, None]
    fw, cx = optimal_design(X, Y, tol=TOL), optimal_design_cvxpy(X, Y)
    assert fw.gap <= TOL
    assert fw.lower <= cx.value * (1 + 1e-9) and cx.lower <= fw.value * (1 + 1e-9)
    assert fw.value == pytest.approx(cx.value, rel=1e-5)


def test_ray_root_solves_a_hand_computed_case():
    # g(c) = 2 - 0.5 / (c (c - 0.5)) - 1 / c vanishes at c = 1: 2 - 1 - 1.
    assert _ray_root(np.array([0.5]), 2.0, 1) == pytest.approx(1.0, rel=1e-12)


@settings(max_examples=200)
@given(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=40), st.floats(1e-3, 1e5), st.integers(0, 50))
def test_ray_root_is_the_sign_change_of_the_barrier_slope(values, level, s):
    v = np.array(values)
    c = _ray_root(v, level, s)

    def slope(point: float) -> float:
        return level - float(np.sum(v / (point * (point - v)))) - s / point

    assert c > v.max()
    assert slope(c * (1 - 1e-9)) <= 0.0 <= slope(c * (1 + 1e-9))


# --------------------------------------------------------------------------- #
# Time limit
# --------------------------------------------------------------------------- #
# A time limit of 1e-9 s has passed before the first check, so the solver stops after
# its first Newton step and first round whatever the machine: these tests do not depend
# on timing.


@pytest.mark.parametrize("seed", range(3))
def test_capped_g_optimal_design_brackets_kiefer_wolfowitz(seed):
    # G-optimal design on 200 Gaussian arms in R^6 has value 6 (Kiefer--Wolfowitz).
    X = np.random.default_rng(seed).standard_normal((200, 6))
    D = optimal_design(X, X, time_limit=1e-9)
    _check_design(D, 200)
    assert D.time_limited and D.gap > TOL
    assert D.lower <= 6.0 * (1 + 1e-9) and D.value >= 6.0 * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_capped_design_brackets_the_uncapped_value(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((150, 5))
    Y = X[:40] / rng.uniform(0.05, 1.0, size=40)[:, None]
    exact = optimal_design(X, Y)
    capped = optimal_design(X, Y, time_limit=1e-9)
    assert exact.gap <= TOL and not exact.time_limited
    assert capped.time_limited
    assert capped.lower <= exact.value * (1 + 1e-9) and exact.value <= capped.value * (1 + 1e-9)
    assert capped.value == pytest.approx(design_value(X, capped.weights, Y), rel=1e-9)


def test_a_cap_that_is_not_reached_changes_nothing():
    X = np.random.default_rng(5).standard_normal((300, 8))
    free, capped = optimal_design(X, X), optimal_design(X, X, time_limit=1e6)
    assert not capped.time_limited
    assert np.array_equal(free.weights, capped.weights) and (free.value, free.lower) == (capped.value, capped.lower)


def test_capped_design_with_a_singular_optimum_brackets_the_value():
    # Few targets, each best served by its own arm: uncapped, the cone program certifies it.
    X = np.random.default_rng(1).standard_normal((400, 10))
    Y = X[:3] / np.array([0.01, 0.02, 0.5])[:, None]
    exact, capped = optimal_design(X, Y), optimal_design(X, Y, time_limit=1e-9)
    assert exact.gap <= TOL and capped.time_limited
    assert capped.lower <= exact.value * (1 + 1e-9) and exact.value <= capped.value * (1 + 1e-9)


@pytest.mark.parametrize("limit", [0.0, -1.0, float("nan"), float("inf")])
def test_time_limit_must_be_positive_and_finite(limit):
    with pytest.raises(ValueError, match="time_limit"):
        optimal_design(np.eye(2), np.eye(2), time_limit=limit)


# --------------------------------------------------------------------------- #
# DesignCache: one solve per (arms, target set, tol)
# --------------------------------------------------------------------------- #


def _same_design(a: Design, b: Design) -> bool:
    return (np.array_equal(a.weights, b.weights) and (a.value, a.lower, a.gap, a.iterations)
            == (b.value, b.lower, b.gap, b.iterations))


@pytest.fixture
def counted_solves(monkeypatch) -> list:
    """The target sets (as row counts) of every ``optimal_design`` call the cache makes."""
    calls = []
    solve = design_module.optimal_design

    def counting(arms, targets, **options):
        calls.append(targets.shape[0])
        return solve(arms, targets, **options)

    monkeypatch.setattr("cbai_cli.numerics.design.cache.optimal_design", counting)
    return calls


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=7, max_size=7), min_size=1, max_size=6),
       st.integers(0, 2**16))
def test_cache_returns_exactly_the_design_of_each_target_set(masks, seed):
    X = np.random.default_rng(seed).standard_normal((7, 3))
    cache = DesignCache()
    for mask in masks:
        mask = np.array(mask)
        assert _same_design(cache.design(X, mask, 1e-4), optimal_design(X, X[mask], tol=1e-4))


def test_cache_solves_a_repeated_target_set_once(counted_solves):
    X = np.random.default_rng(0).standard_normal((9, 4))
    cache = DesignCache()
    masks = [np.arange(9) < 9, np.arange(9) < 5, np.arange(9) < 9, np.arange(9) < 5]
    found = [cache.design(X, mask, 1e-4) for mask in masks]
    assert counted_solves == [9, 5]
    assert found[2] is found[0] and found[3] is found[1]


def test_cache_tells_tolerances_apart(counted_solves):
    X = np.random.default_rng(1).standard_normal((9, 4))
    cache = DesignCache()
    loose, tight = cache.design(X, np.ones(9, bool), 1e-2), cache.design(X, np.ones(9, bool), 1e-8)
    assert counted_solves == [9, 9] and tight.gap <= 1e-8
    assert _same_design(tight, optimal_design(X, X, tol=1e-8)) and _same_design(loose, optimal_design(X, X, tol=1e-2))


def test_cache_never_serves_another_arm_set_even_one_changed_in_place():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((8, 3))
    cache = DesignCache()
    everywhere = np.ones(8, bool)
    cache.design(X, everywhere, 1e-4)
    X[0] *= 3.0  # the same array object, other arms
    assert _same_design(cache.design(X, everywhere, 1e-4), optimal_design(X, X, tol=1e-4))
    Z = rng.standard_normal((8, 3))
    assert _same_design(cache.design(Z, everywhere, 1e-4), optimal_design(Z, Z, tol=1e-4))


def test_cache_evicts_the_least_recently_used_beyond_its_size(counted_solves):
    X = np.random.default_rng(3).standard_normal((6, 2))
    cache = DesignCache()
    cache.max_bytes = 2 * 8 * 6  # two designs of six weights
    first, second, third = (np.arange(6) < k for k in (6, 4, 3))
    cache.design(X, first, 1e-4)
    cache.design(X, second, 1e-4)
    cache.design(X, first, 1e-4)  # first is now the most recently used
    cache.design(X, third, 1e-4)  # evicts second
    assert len(cache) == 2
    cache.design(X, first, 1e-4)
    cache.design(X, second, 1e-4)
    assert counted_solves == [6, 4, 3, 4]


def test_threads_sharing_a_cache_each_get_the_design_of_their_target_set():
    X = np.random.default_rng(4).standard_normal((10, 3))
    masks = [np.arange(10) < k for k in (10, 7, 4)] * 4
    cache = DesignCache()
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda mask: cache.design(X, mask, 1e-4), masks))
    assert all(_same_design(design, optimal_design(X, X[mask], tol=1e-4)) for design, mask in zip(found, masks))
    assert len(cache) == 3


def test_cache_rejects_a_mask_of_another_length():
    with pytest.raises(ValueError, match="mask"):
        DesignCache().design(np.eye(3), np.ones(2, bool), 1e-4)


def test_a_pickled_cache_arrives_empty():
    cache = DesignCache()
    cache.design(np.eye(3), np.ones(3, bool), 1e-4)
    copy = pickle.loads(pickle.dumps(cache))
    assert len(cache) == 1 and len(copy) == 0
    assert _same_design(copy.design(np.eye(3), np.ones(3, bool), 1e-4), cache.design(np.eye(3), np.ones(3, bool), 1e-4))


def test_cache_holds_read_only_arms_without_copying_them(counted_solves):
    X = np.random.default_rng(5).standard_normal((7, 3))
    X.setflags(write=False)  # as an instance's arms are
    cache = DesignCache()
    cache.design(X, np.ones(7, bool), 1e-4)
    assert cache._arms is X
    cache.design(X, np.ones(7, bool), 1e-4)
    assert counted_solves == [7]
    copy = X.copy()  # equal values in another array: still the same arm set
    cache.design(copy, np.ones(7, bool), 1e-4)
    assert counted_solves == [7]
