"""Candidate policies and the Driver bandit (driver.md "Arms for the bandit"; cbai.md §6)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cbai_cli.driver.arms import (
    ARM_PROBLEMS,
    build_bandit,
    build_policies,
    count_distinct,
    distinct_rows,
    evaluate_policies,
    fold_threshold,
    policy_streams,
    rescale_for_binary,
)
from cbai_cli.driver.cem import CEMConfig
from cbai_cli.driver.scenarios import SCENARIO_NAMES, scenario

FAST = CEMConfig(n_iterations=3, n_samples=10, n_elite=2)
REPO = Path(__file__).resolve().parents[2]
POLICIES_FILE = "driver_policies_1000.npy"


def published_policies() -> np.ndarray:
    for folder in (REPO / ".." / "shared" / "data", Path("/work/shared/data")):
        if (folder / POLICIES_FILE).is_file():
            return np.load(folder / POLICIES_FILE)
    pytest.skip("shared/data with the published driver policies is not available")


@pytest.fixture(scope="module")
def policies():
    return build_policies(12, seed=5, config=FAST)


def test_policy_set_shapes_and_provenance(policies):
    assert len(policies) == 12
    assert policies.actions.shape == (12, 20, 2)
    assert np.all(np.abs(policies.actions) <= 1)
    assert policies.theta.shape == policies.phi.shape == (12, 8)
    assert policies.tau.shape == policies.feasible.shape == policies.problem.shape == (12,)
    assert set(policies.problem) <= set(range(len(ARM_PROBLEMS)))
    # every coordinate is perturbed: no perturbed theta equals an unperturbed one
    assert not np.any(policies.theta == 0.0)
    assert count_distinct(policies.actions) == 12


def test_policy_i_does_not_depend_on_n():
    five = build_policies(5, seed=11, config=FAST)
    ten = build_policies(10, seed=11, config=FAST)
    np.testing.assert_array_equal(five.actions, ten.actions[:5])
    np.testing.assert_array_equal(five.theta, ten.theta[:5])
    # the stream of policy i is child i of SeedSequence(seed)
    assert policy_streams(11, 3)[2].spawn_key == (2,)


def test_workers_give_bit_identical_results():
    calls = []
    serial = build_policies(6, seed=3, config=FAST)
    parallel = build_policies(6, seed=3, config=FAST, jobs=2, progress=lambda done, n: calls.append((done, n)))
    np.testing.assert_array_equal(serial.actions, parallel.actions)
    np.testing.assert_array_equal(serial.problem, parallel.problem)
    np.testing.assert_array_equal(serial.tau, parallel.tau)
    assert calls == [(k, 6) for k in range(1, 7)]


def test_progress_called_once_per_policy_serially():
    calls = []
    build_policies(3, seed=0, config=FAST, progress=lambda done, n: calls.append((done, n)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_bad_arguments():
    with pytest.raises(ValueError):
        build_policies(0, seed=1)
    with pytest.raises(ValueError):
        build_policies(2, seed=-1)
    with pytest.raises(ValueError):
        build_policies(2, seed=1, jobs=0)


def test_fold_threshold():
    arms, phi = fold_threshold(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, 0.25]), 1.5)
    np.testing.assert_array_equal(arms, [[1, 2, 1], [3, 4, 1]])
    np.testing.assert_array_equal(phi, [0.5, 0.25, -1.5])
    np.testing.assert_allclose(arms @ phi, [-0.5, 1.0])  # = phi^T f - tau


@settings(max_examples=60, deadline=None)
@given(
    features=arrays(np.float64, st.tuples(st.integers(1, 12), st.just(3)), elements=st.floats(-5, 5)),
    phi=arrays(np.float64, 3, elements=st.floats(-2, 2)),
    tau=st.floats(-3, 3),
)
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
    # all arms on the boundary: no division by zero, they stay on it
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


def test_bandit_rejects_bad_policies():
    with pytest.raises(ValueError):
        build_bandit(np.zeros((3, 19, 2)), "base")
    with pytest.raises(ValueError):
        build_bandit(np.full((3, 20, 2), 1.5), "base")
    with pytest.raises(ValueError):
        build_bandit(np.zeros((3, 20, 2)), "no-such-scenario")


def test_distinct_rows():
    rows = np.array([[1.0, 2.0], [0.0, 0.0], [1.0, 2.0], [-0.0, 0.0], [5.0, 5.0]])
    d = distinct_rows(rows)
    assert d.n_distinct == count_distinct(rows) == 3
    np.testing.assert_array_equal(d.first, [0, 1, 4])
    np.testing.assert_array_equal(d.inverse, [0, 1, 0, 1, 2])
    np.testing.assert_array_equal(d.counts, [2, 2, 1])


def test_published_policies_hold_twenty_distinct_arms():
    published = published_policies()
    assert published.shape == (1000, 20, 2)
    d = distinct_rows(published)
    assert d.n_distinct == 20
    assert d.counts.min() >= 20 and d.counts.max() <= 60
    for name in SCENARIO_NAMES:
        bandit = build_bandit(published, name)
        assert count_distinct(bandit.arms) == 20
        assert np.all(np.abs(bandit.constraint_values) <= 1)


def test_failing_progress_callback_stops_the_workers():
    def boom(done, n):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        build_policies(40, seed=3, config=FAST, jobs=2, progress=boom)


def test_make_policy_returns_candidate():
    from cbai_cli.driver.arms import Candidate, make_policy

    child = policy_streams(4, 3)[1]
    a = make_policy(child, FAST)
    b = make_policy(np.random.SeedSequence(4, spawn_key=(1,)), FAST)
    assert isinstance(a, Candidate)
    np.testing.assert_array_equal(a.actions, b.actions)
    assert a.actions.shape == (20, 2) and a.theta.shape == a.phi.shape == (8,)
