"""Cross-entropy method, Algorithm 4 (paper Appendix C.1)."""

import numpy as np
import pytest

from cbai_cli.driver.cem import CEMConfig, Problem, cross_entropy, select_elite
from cbai_cli.driver.features import policy_features
from cbai_cli.driver.scenarios import scenario


def test_elite_unconstrained_takes_highest_returns():
    returns = np.array([1.0, 5.0, 3.0, 2.0, 4.0])
    np.testing.assert_array_equal(select_elite(returns, None, 0.0, 2), [1, 4])


def test_elite_constrained_too_few_feasible_takes_lowest_constraint():
    returns = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    constraints = np.array([3.0, 2.0, 5.0, 1.0, 4.0])
    # Only one sample (index 3) is feasible for tau = 1.5, the 2nd lowest J = 2 > tau.
    np.testing.assert_array_equal(select_elite(returns, constraints, 1.5, 2), [3, 1])


def test_elite_constrained_enough_feasible_takes_best_feasible_returns():
    returns = np.array([1.0, 10.0, 3.0, 2.0, 20.0])
    constraints = np.array([0.0, 2.0, 0.5, 1.0, 3.0])
    # 2nd lowest J = 0.5 <= 1: elite = feasible {0, 2, 3} by return; the
    # infeasible high-return samples 1 and 4 are excluded; J == tau counts as feasible.
    np.testing.assert_array_equal(select_elite(returns, constraints, 1.0, 2), [2, 3])
    np.testing.assert_array_equal(select_elite(returns, constraints, 1.0, 3), [2, 3, 0])


def test_elite_rejects_bad_size():
    with pytest.raises(ValueError):
        select_elite(np.zeros(3), None, 0.0, 4)


def test_config_validation():
    assert CEMConfig().n_rollouts == 2500
    with pytest.raises(ValueError):
        CEMConfig(n_elite=60)
    with pytest.raises(ValueError):
        CEMConfig(n_iterations=0)


def test_one_iteration_returns_best_feasible_sample_of_that_batch():
    sc = scenario("base")
    problem = Problem(sc.theta, sc.phi, sc.tau)
    # A small initial spread so that some random policies are feasible.
    config = CEMConfig(n_iterations=1, n_samples=30, n_elite=3, init_std=0.3)
    result = cross_entropy(sc.environment, problem, np.random.default_rng(7), config)
    # Re-draw the same batch: one (n_samples, 40) standard normal draw, mu 0, sigma 0.3.
    samples = np.clip(0.3 * np.random.default_rng(7).standard_normal((30, 40)), -1, 1)
    f = policy_features(samples.reshape(30, 20, 2), sc.environment)
    g, j = f @ sc.theta, f @ sc.phi
    feasible = np.flatnonzero(j <= sc.tau)
    assert 0 < feasible.size < 30
    best = feasible[np.argmax(g[feasible])]
    np.testing.assert_array_equal(result.actions, samples[best].reshape(20, 2))
    assert result.reward == pytest.approx(g[best])
    assert result.feasible


def test_unconstrained_returns_best_return_sample():
    sc = scenario("base")
    problem = Problem(sc.theta, sc.phi, sc.tau, constrained=False)
    config = CEMConfig(n_iterations=1, n_samples=30, n_elite=3)
    result = cross_entropy(sc.environment, problem, np.random.default_rng(8), config)
    samples = np.clip(5.0 * np.random.default_rng(8).standard_normal((30, 40)), -1, 1)
    g = policy_features(samples.reshape(30, 20, 2), sc.environment) @ sc.theta
    assert result.reward == pytest.approx(g.max())


def test_small_constrained_cem_finds_feasible_policy_on_base():
    sc = scenario("base")
    config = CEMConfig(n_iterations=10, n_samples=20, n_elite=4)
    result = cross_entropy(sc.environment, Problem(sc.theta, sc.phi, sc.tau), np.random.default_rng(0), config)
    assert result.feasible and result.constraint <= sc.tau
    assert result.actions.shape == (20, 2) and np.all(np.abs(result.actions) <= 1)
    # the reported features are those of the returned actions
    np.testing.assert_allclose(policy_features(result.actions[None], sc.environment)[0], result.features)


def test_default_cem_run_is_feasible_and_reproducible():
    sc = scenario("base")
    problem = Problem(sc.theta, sc.phi, sc.tau)
    a = cross_entropy(sc.environment, problem, np.random.default_rng(123))
    b = cross_entropy(sc.environment, problem, np.random.default_rng(123))
    assert a.n_rollouts == 2500
    assert a.feasible and a.constraint <= 1.0
    np.testing.assert_array_equal(a.actions, b.actions)
    assert a.reward == b.reward
    assert a.reward == pytest.approx(float(a.features @ sc.theta))
    assert a.constraint == pytest.approx(float(a.features @ sc.phi))
    # 50 iterations of search should do clearly better than a random policy
    # (target speed 0.4 kept within about 0.08 on average over 20 steps).
    assert a.reward > -0.15


def test_unreachable_constraint_returns_least_violating_policy():
    sc = scenario("base")
    # Feature 5 (|cos h|) is >= 0, so a threshold of -100 cannot be met.
    problem = Problem(sc.theta, np.eye(8)[4], -100.0)
    config = CEMConfig(n_iterations=3, n_samples=10, n_elite=2)
    result = cross_entropy(sc.environment, problem, np.random.default_rng(1), config)
    assert not result.feasible
    assert result.constraint == pytest.approx(float(result.features[4]))


def test_problem_validation():
    with pytest.raises(ValueError):
        Problem(np.zeros(7), np.zeros(8), 1.0)
    with pytest.raises(ValueError):
        Problem(np.zeros(8), np.full(8, np.nan), 1.0)
