"""Policies as arms of a constrained linear bandit (paper Appendix C, C.2 and C.3)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cbai_cli.driver.bandit import (
    build_bandit,
    check_actions,
    evaluate_policies,
    fold_threshold,
    rescale_for_binary,
    rescale_without_truth,
)
from cbai_cli.driver.scenarios import SCENARIO_NAMES, scenario
from cbai_cli.contracts.validation import FieldError


def test_fold_threshold():
    arms, phi = fold_threshold(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, 0.25]), 1.5)
    np.testing.assert_array_equal(arms, [[1, 2, 1], [3, 4, 1]])
    np.testing.assert_array_equal(phi, [0.5, 0.25, -1.5])
    np.testing.assert_allclose(arms @ phi, [-0.5, 1.0])  # = phi^T f - tau


# Random folded driver arms: features (m, 3), φ (3,) and τ.
random_arms = given(
    features=arrays(np.float64, st.tuples(st.integers(1, 12), st.just(3)), elements=st.floats(-5, 5)),
    phi=arrays(np.float64, 3, elements=st.floats(-2, 2)),
    tau=st.floats(-3, 3),
)


@settings(max_examples=60, deadline=None)
@random_arms
def test_rescaling_keeps_feasibility_and_bounds(features, phi, tau):
    arms, constraint = fold_threshold(features, phi, tau)
    scaled, scales = rescale_for_binary(arms, constraint)
    g, g_scaled = arms @ constraint, scaled @ constraint
    assert np.all(scales > 0)
    np.testing.assert_allclose(scaled * scales[:, None], arms, rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(g_scaled) <= 1.0)
    # Scaling by a positive number keeps the sign of g; only an arm whose g is at
    # the level of rounding error (undecidable anyway) may be computed either side.
    clear = np.abs(g) > 1e-9 * (np.abs(arms) @ np.abs(constraint) + 1.0)
    np.testing.assert_array_equal((g_scaled <= 0)[clear], (g <= 0)[clear])


def test_rescaling_extremes_reach_almost_one():
    arms = np.array([[2.0, 1.0], [-4.0, 1.0], [0.0, 1.0], [1.0, 1.0]])
    scaled, scales = rescale_for_binary(arms, np.array([1.0, 0.0]))
    np.testing.assert_allclose(scaled[:, 0], [2 / (2 + 1e-6), -4 / (4 + 1e-6), 0.0, 1 / (2 + 1e-6)])
    np.testing.assert_allclose(scales, [2 + 1e-6, 4 + 1e-6, 4 + 1e-6, 2 + 1e-6])


def test_rescaling_without_truth_divides_by_the_norm_bound_times_the_arm_norm():
    scaled, scales = rescale_without_truth(np.array([[3.0, 4.0], [0.0, 1.0]]), 2.0)
    np.testing.assert_allclose(scales, [10 + 1e-6, 2 + 1e-6])
    np.testing.assert_allclose(scaled, [[3 / (10 + 1e-6), 4 / (10 + 1e-6)], [0.0, 1 / (2 + 1e-6)]])


@settings(max_examples=60, deadline=None)
@random_arms
def test_rescaling_without_truth_puts_every_constraint_value_inside_minus_one_one(features, phi, tau):
    arms, constraint = fold_threshold(features, phi, tau)
    scaled, scales = rescale_without_truth(arms, float(np.linalg.norm(constraint)))
    g, g_scaled = arms @ constraint, scaled @ constraint
    assert np.all(scales > 0) and np.all(np.abs(g_scaled) < 1.0)
    clear = np.abs(g) > 1e-9 * (np.abs(arms) @ np.abs(constraint) + 1.0)
    np.testing.assert_array_equal((g_scaled <= 0)[clear], (g <= 0)[clear])


def test_rescaling_arms_all_on_the_boundary_keeps_them_there():
    scaled, _ = rescale_for_binary(np.array([[0.0, 1.0]]), np.array([1.0, 0.0]))
    assert scaled[0, 0] == 0.0 and np.all(np.isfinite(scaled))


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_bandit_arms_rescaled_with_unscaled_rewards(policies, name):
    sc = scenario(name)
    bandit = build_bandit(policies.actions, name)
    raw = evaluate_policies(policies.actions, name)
    np.testing.assert_array_equal(bandit.raw_features, raw)
    assert bandit.arms.shape == (12, 9) and bandit.constraint.shape == (9,)
    np.testing.assert_array_equal(bandit.constraint, np.append(sc.phi, -sc.tau))
    assert bandit.threshold == 0.0 and bandit.scenario == name
    np.testing.assert_allclose(bandit.arms[:, 8], 1.0 / bandit.scales)
    cv = bandit.constraint_values
    assert np.all(np.abs(cv) <= 1.0)
    np.testing.assert_array_equal(cv <= 0, raw @ sc.phi <= sc.tau)
    np.testing.assert_array_equal(bandit.feasible, raw @ sc.phi <= sc.tau)
    # default: rewards on the unscaled features
    np.testing.assert_allclose(bandit.rewards, raw @ sc.theta)
    # the authors' behaviour: rewards on the rescaled arms
    authors = build_bandit(policies.actions, name, rescale_rewards=True)
    np.testing.assert_allclose(authors.rewards, (raw @ sc.theta) / bandit.scales)
    np.testing.assert_allclose(authors.rewards, authors.arms @ authors.reward_weights)
    np.testing.assert_array_equal(authors.arms, bandit.arms)


def test_bandit_without_rescaling(policies):
    bandit = build_bandit(policies.actions, scenario("base"), rescale=False)
    np.testing.assert_array_equal(bandit.scales, 1.0)
    np.testing.assert_array_equal(bandit.arms[:, :8], bandit.raw_features)
    np.testing.assert_allclose(bandit.constraint_values, bandit.raw_features @ scenario("base").phi - 1.0)


@pytest.mark.parametrize("actions", [np.zeros((3, 19, 2)), np.full((3, 20, 2), 1.5)])
def test_bandit_rejects_bad_policies(actions):
    with pytest.raises(ValueError):
        build_bandit(actions, "base")


def test_bandit_rejects_an_unknown_scenario():
    with pytest.raises(ValueError):
        build_bandit(np.zeros((3, 20, 2)), "no-such-scenario")


@pytest.mark.parametrize(("actions", "rule"), [
    ({"a": 1}, "must be an array of real numbers of shape (n, 20, 2), got dtype object"),
    (np.full((2, 20, 2), 0.1 + 0.9j), "must be an array of real numbers of shape (n, 20, 2), got dtype complex128"),
    (np.zeros((2, 20, 2), dtype=bool), "must be an array of real numbers of shape (n, 20, 2), got dtype bool"),
    (np.zeros((0, 20, 2)), "must have shape (n, 20, 2) with n ≥ 1"),
    (np.full((2, 20, 2), np.nan), "policy 0 contains NaN or infinite actions"),
    (np.concatenate([np.zeros((1, 20, 2)), np.full((1, 20, 2), -2.0)]), "actions must lie in [-1, 1]; policy 1 has -2"),
])
def test_check_actions_names_the_field_and_the_rule(actions, rule):
    with pytest.raises(FieldError) as error:
        check_actions(actions, "p.npy")
    assert error.value.field == "p.npy" and error.value.rule.startswith(rule)
