"""Design-matrix states (cbai_cli/numerics/linalg.py): rank-one updates agree with direct solves."""

from __future__ import annotations

import numpy as np

import math

import pytest

from cbai_cli.numerics.linalg import (
    DesignState,
    RidgeDesign,
    inverse_sqrt,
    least_squares_widths,
    quadratic_forms,
    sqrt_pair,
    variance_reduction,
    weighted_norms,
)


def direct(arms, pulls, totals, ridge):
    gram = ridge * np.eye(arms.shape[1]) + (arms[pulls].T * 1.0) @ arms[pulls]
    target = arms[pulls].T @ totals
    inverse = np.linalg.inv(gram)
    estimate = inverse @ target
    return inverse, estimate, np.einsum("kd,de,ke->k", arms, inverse, arms), arms @ estimate, np.linalg.slogdet(gram)[1]


def test_rank_one_updates_match_direct_solves_after_thousands_of_updates():
    rng = np.random.default_rng(0)
    arms = rng.standard_normal((50, 6))
    state = DesignState(arms, ridge=0.1, refresh_every=10**9)  # no refresh: test the updates alone
    pulls = rng.integers(50, size=5000)
    totals = rng.standard_normal(5000)
    for arm, total in zip(pulls, totals):
        state.update(int(arm), float(total))
    inverse, estimate, norms2, predictions, logdet = direct(arms, pulls, totals, 0.1)
    np.testing.assert_allclose(state.inverse, inverse, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(state.estimate(), estimate, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(state.norms2, norms2, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(state.predictions, predictions, rtol=1e-6, atol=1e-9)
    assert abs(state.logdet - logdet) < 1e-8


def test_batched_update_equals_repeated_single_updates():
    rng = np.random.default_rng(1)
    arms = rng.standard_normal((8, 3))
    once, many = DesignState(arms, 1.0), DesignState(arms, 1.0)
    once.update(2, 3.0, count=3)
    for _ in range(3):
        many.update(2, 1.0)
    np.testing.assert_allclose(once.inverse, many.inverse)
    np.testing.assert_allclose(once.estimate(), many.estimate())


def test_refresh_recomputes_the_same_values():
    rng = np.random.default_rng(2)
    arms = rng.standard_normal((20, 4))
    state = DesignState(arms, 0.5, refresh_every=10**9)
    for arm in rng.integers(20, size=300):
        state.update(int(arm), float(rng.standard_normal()))
    before = (state.norms2.copy(), state.predictions.copy(), state.logdet)
    state.refresh()
    np.testing.assert_allclose(state.norms2, before[0], rtol=1e-9)
    np.testing.assert_allclose(state.predictions, before[1], rtol=1e-9, atol=1e-12)
    assert abs(state.logdet - before[2]) < 1e-9


def test_gain_is_the_sherman_morrison_reduction():
    rng = np.random.default_rng(3)
    arms = rng.standard_normal((6, 3))
    state = DesignState(arms, 1.0)
    y = arms[0]
    for a in range(6):
        after = np.linalg.inv(np.eye(3) + np.outer(arms[a], arms[a]))
        assert np.isclose(y @ y - y @ after @ y, state.gain(y)[a])


def test_least_squares_widths_are_infinite_outside_the_span():
    arms = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    predictions, norms = least_squares_widths(arms, np.array([4, 0, 0]), np.array([2.0, 0.0, 0.0]))
    np.testing.assert_allclose(predictions[:2], [0.5, 1.0])
    np.testing.assert_allclose(norms[:2], [0.5, 1.0])
    assert np.isinf(norms[2])


@pytest.mark.parametrize("scale", [2.0**-60, 2.0**60])
def test_least_squares_widths_do_not_depend_on_the_arms_units(scale):
    # the unit-scale answer of the test above: arm 2, never pulled, stays outside the span
    arms = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]]) * scale
    predictions, norms = least_squares_widths(arms, np.array([4, 0, 0]), np.array([2.0, 0.0, 0.0]) * scale)
    np.testing.assert_allclose(predictions[:2], np.array([0.5, 1.0]) * scale)
    np.testing.assert_allclose(norms[:2], [0.5, 1.0])
    assert np.isinf(norms[2])


def test_ridge_design_matches_direct_solution():
    rng = np.random.default_rng(0)
    d, lam = 3, 0.7
    design = RidgeDesign(d, lam, n_targets=2, refresh_every=10**9)  # no refresh: pure updates
    X = rng.normal(size=(500, d))
    Y = rng.normal(size=(500, 2))
    for x, y in zip(X, Y):
        design.add(x, y)
    A = lam * np.eye(d) + X.T @ X
    np.testing.assert_allclose(design.gram, A, rtol=1e-12)
    np.testing.assert_allclose(design.inverse, np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    assert design.logdet == pytest.approx(np.linalg.slogdet(A)[1], rel=1e-10)
    for m in range(2):
        np.testing.assert_allclose(design.estimate(m), np.linalg.solve(A, X.T @ Y[:, m]), rtol=1e-8)
    assert design.n_samples == 500
    np.testing.assert_allclose(design.norms(X[:5]), np.sqrt(np.einsum("ij,jk,ik->i", X[:5], np.linalg.inv(A), X[:5])))
    assert design.lambda_min() == pytest.approx(np.linalg.eigvalsh(A)[0])


def test_ridge_design_weighted_observation_equals_repeated_ones():
    once, many = RidgeDesign(2, 1.0), RidgeDesign(2, 1.0)
    x = np.array([0.3, -1.2])
    once.add(x, 6.0, count=3)
    for _ in range(3):
        many.add(x, 2.0)
    np.testing.assert_allclose(once.inverse, many.inverse)
    np.testing.assert_allclose(once.estimate(), many.estimate())
    assert once.logdet == pytest.approx(many.logdet) and once.n_samples == many.n_samples == 3


def test_ridge_design_refresh_keeps_long_streams_accurate():
    """10^5 nearly collinear updates: the periodic refresh keeps A⁻¹ at machine accuracy."""
    rng = np.random.default_rng(1)
    design = RidgeDesign(2, 1.0, refresh_every=1000)
    X = np.column_stack([np.ones(100_000), 1e-3 * rng.normal(size=100_000)])
    for x in X:
        design.add(x, 0.0)
    A = np.eye(2) + X.T @ X
    np.testing.assert_allclose(design.inverse @ A, np.eye(2), atol=1e-8)
    assert design.logdet == pytest.approx(np.linalg.slogdet(A)[1], rel=1e-12)


def test_ridge_design_validation():
    with pytest.raises(ValueError, match="ridge"):
        RidgeDesign(2, 0.0)
    with pytest.raises(ValueError, match="d must"):
        RidgeDesign(0, 1.0)


def test_design_state_takes_arbitrary_vectors_and_keeps_its_arm_caches():
    """A scaled pull γ·x_k (or any vector) updates ‖a‖²_{A⁻¹} and aᵀφ̂ of every arm correctly."""
    rng = np.random.default_rng(4)
    arms = rng.standard_normal((7, 3))
    state = DesignState(arms, 0.5, refresh_every=10**9)
    X = rng.standard_normal((200, 3))
    Y = rng.standard_normal(200)
    for x, y in zip(X, Y):
        state.add(x, float(y))
    A = 0.5 * np.eye(3) + X.T @ X
    inverse = np.linalg.inv(A)
    np.testing.assert_allclose(state.norms2, np.einsum("kd,de,ke->k", arms, inverse, arms), rtol=1e-9)
    np.testing.assert_allclose(state.predictions, arms @ inverse @ (X.T @ Y), rtol=1e-8, atol=1e-12)


def test_quadratic_forms_and_norms_of_rows_and_of_one_vector():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]])
    np.testing.assert_allclose(quadratic_forms(X, M), [2.0, 4.0, 2.0])
    np.testing.assert_allclose(weighted_norms(X, M), [math.sqrt(2.0), 2.0, math.sqrt(2.0)])
    assert float(weighted_norms(np.array([1.0, -1.0]), M)) == pytest.approx(math.sqrt(2.0))


def test_variance_reduction_against_direct_inverses():
    rng = np.random.default_rng(5)
    candidates = rng.normal(size=(6, 3))
    M = rng.normal(size=(3, 3))
    A = M @ M.T + np.eye(3)
    y = rng.normal(size=3)
    direct = [y @ np.linalg.inv(A) @ y - y @ np.linalg.inv(A + np.outer(a, a)) @ y for a in candidates]
    np.testing.assert_allclose(variance_reduction(candidates, np.linalg.inv(A), y), direct, rtol=1e-9)


def test_sqrt_pair_in_two_and_three_dimensions():
    rng = np.random.default_rng(6)
    for d in (2, 3):
        M = rng.normal(size=(d, d))
        A = M @ M.T + 0.5 * np.eye(d)
        root, inverse_root = sqrt_pair(A)
        np.testing.assert_allclose(root @ root, A, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(inverse_root @ A @ inverse_root, np.eye(d), atol=1e-10)
        np.testing.assert_allclose(inverse_sqrt(A), inverse_root)


def streaming_state(arms: np.ndarray, ridge: float = 0.5) -> DesignState:
    """A DesignState that takes the fused path even on a small arm matrix, with blocks of
    64 rows so that the blocked products really cross block boundaries."""
    state = DesignState(arms, ridge)
    state._streaming, state.block, state.MAX_CONTENDERS = True, 64, 8
    return state


def test_fused_update_gives_the_gain_of_a_separate_product():
    rng = np.random.default_rng(3)
    arms = rng.standard_normal((300, 6))
    fused, plain = streaming_state(arms), DesignState(arms, 0.5)
    uncertain = rng.random(300) < 0.7
    predicted = 0
    for _ in range(60):
        arm = int(rng.integers(300))
        total = float(rng.standard_normal())
        fused.update(arm, total, 1, uncertain)
        plain.update(arm, total, 1)
        target = plain.max_variance_arm(uncertain)
        predicted += fused.contender == target
        if fused.contender == target:
            np.testing.assert_array_equal(fused.companion, arms @ (plain.inverse @ arms[target]))
        assert fused.greedy_arm(target) == int(plain.gain(arms[target]).argmax())
        np.testing.assert_array_equal(fused.norms2, plain.norms2)
        np.testing.assert_array_equal(fused.predictions, plain.predictions)
    assert predicted >= 50  # the prediction holds on almost every step


def test_on_a_streaming_matrix_predicting_the_gain_changes_no_number():
    # 8200 × 32 streams (kernels.codes.streams): the products come from pair_products, fused
    # into the update's pass when the next direction is predicted, computed by the gain's
    # own pass otherwise
    rng = np.random.default_rng(5)
    arms = rng.standard_normal((8200, 32))
    predicting, plain = DesignState(arms, 0.5), DesignState(arms, 0.5)
    assert predicting._streaming
    uncertain = rng.random(8200) < 0.7
    predicted = 0
    for _ in range(30):
        arm, total = int(rng.integers(8200)), float(rng.standard_normal())
        predicting.update(arm, total, 1, uncertain)
        plain.update(arm, total, 1)
        target = plain.max_variance_arm(uncertain)
        predicted += predicting.contender == target
        assert predicting.greedy_arm(target) == plain.greedy_arm(target)
        np.testing.assert_array_equal(predicting.norms2, plain.norms2)
        np.testing.assert_array_equal(predicting.predictions, plain.predictions)
    assert predicted >= 25


def test_prediction_is_the_largest_new_variance_among_the_candidates():
    rng = np.random.default_rng(4)
    arms = rng.standard_normal((200, 5))
    state = streaming_state(arms)
    candidates = rng.random(200) < 0.5
    for _ in range(30):
        state.update(int(rng.integers(200)), float(rng.standard_normal()), 1, candidates)
        if state.contender >= 0:
            assert state.contender == state.max_variance_arm(candidates)


def test_refresh_drops_the_fused_product():
    rng = np.random.default_rng(5)
    arms = rng.standard_normal((200, 4))
    state = streaming_state(arms)
    state.refresh_every = 3
    for step in range(3):
        state.update(step, 1.0, 1, np.ones(200, dtype=bool))
    assert state.contender == -1  # the third update refreshed A⁻¹: the product no longer matches it


def test_max_variance_arm_takes_the_first_of_ties_among_candidates():
    arms = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 2.0], [0.5, 0.0]])
    state = DesignState(arms, 1.0)
    assert state.max_variance_arm(np.array([True, True, True, True])) == 1
    assert state.max_variance_arm(np.array([True, False, True, True])) == 2
    assert state.max_variance_arm(np.array([True, False, False, True])) == 0


def test_a_design_matrix_that_is_not_positive_definite_is_a_numerical_error_naming_the_remedy():
    from cbai_cli.contracts.errors import NumericalError
    from cbai_cli.numerics.linalg import exact_design

    arms = np.array([[1e90, 1e90], [2e90, 2e90]])  # collinear: only λ makes A positive definite
    gram = 0.1 * np.eye(2) + arms.T @ arms  # and λ = 0.1 is lost beside 1e180: singular in floating point
    with pytest.raises(NumericalError, match="rescale the arms .* or raise --lambda"):
        exact_design(arms, gram, np.zeros(2))


def test_ridge_design_recomputes_an_inverse_that_round_off_broke_instead_of_failing():
    """With λ = 1e-20 ≪ ‖x‖² the Sherman–Morrison downdate cancels: the third update met
    1 + xᵀA⁻¹x < 0 and log1p raised "math domain error"; A⁻¹ is recomputed from A instead."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (3, 2))
    design = RidgeDesign(2, 1e-20)
    for x in X:
        design.add(x, 0.0)
    A = 1e-20 * np.eye(2) + X.T @ X
    np.testing.assert_allclose(design.inverse @ A, np.eye(2), atol=1e-8)
    assert design.logdet == pytest.approx(np.linalg.slogdet(A)[1], rel=1e-9)


def test_ridge_design_whose_matrix_is_not_positive_definite_is_a_numerical_error():
    from cbai_cli.contracts.errors import NumericalError

    design = RidgeDesign(2, 1.0)
    design.inverse = -np.eye(2)  # as if round-off had broken A⁻¹
    design.gram = np.array([[1.0, 2.0], [2.0, 1.0]])  # and A itself were indefinite
    with pytest.raises(NumericalError, match="not numerically positive definite"):
        design.add(np.array([1.0, 0.0]), 0.0)
