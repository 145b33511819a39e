"""Design-matrix state: rank-one updates agree with direct solves."""

from __future__ import annotations

import numpy as np

from cbai_cli.linalg import DesignState, least_squares_widths


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
    np.testing.assert_allclose(state.estimate, estimate, rtol=1e-6, atol=1e-9)
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
    np.testing.assert_allclose(once.estimate, many.estimate)


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
