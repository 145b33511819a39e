"""LinGapE (Xu, Honda, Sugiyama 2018): selection rules, the L1 ratio LP, stopping and a full run."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.numerics.linalg import RidgeDesign
from cbai_cli.contracts.protocol import Answer
from cbai_cli.algorithms.safe.lingape import (
    LinGapE,
    LinGapEConfig,
    confidence_width,
    greedy_arm,
    l1_ratio,
    ratio_arm,
    select_direction,
)
from cbai_cli.kinds.safe.paper_instances import lingape_instance
from cbai_cli.kinds.safe.problems import LinearBaiProblem, SafeBaiProblem, SafeBaiSetting
from tests.safe.runs import run


def _reward(value):
    """The answer to one pull of a problem without a constraint signal."""
    return Answer(constraint=np.empty(0), reward=np.array([value]))


def test_greedy_arm_matches_direct_inverse():
    rng = np.random.default_rng(0)
    for _ in range(20):
        X = rng.normal(size=(6, 3))
        M = rng.normal(size=(3, 3))
        A = M @ M.T + np.eye(3)
        y = rng.normal(size=3)
        direct = [y @ np.linalg.inv(A + np.outer(x, x)) @ y for x in X]
        assert greedy_arm(X, np.linalg.inv(A), y) == int(np.argmin(direct))


def test_greedy_ties():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, 0.0])
    assert greedy_arm(X, np.eye(2), y, "first") == 0
    picks = {greedy_arm(X, np.eye(2), y, "random", np.random.default_rng(s)) for s in range(30)}
    assert picks == {0, 1}


def test_l1_ratio_hand_made():
    # Identity arms: w = y itself.
    w = l1_ratio(np.eye(2), np.array([3.0, -1.0]))
    np.testing.assert_allclose(w, [3.0, -1.0], atol=1e-9)
    p = np.abs(w) / np.abs(w).sum()
    np.testing.assert_allclose(p, [0.75, 0.25], atol=1e-9)
    assert np.abs(w).sum() ** 2 == pytest.approx(16.0)
    # A diagonal arm is cheaper than the two basis arms: (1,1) = √2 · (1,1)/√2, L1 cost √2 < 2.
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1 / math.sqrt(2), 1 / math.sqrt(2)]])
    w = l1_ratio(X, np.array([1.0, 1.0]))
    np.testing.assert_allclose(w, [0.0, 0.0, math.sqrt(2)], atol=1e-9)



@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150])
def test_l1_ratio_is_the_same_for_arms_and_direction_scaled_together(scale):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1 / math.sqrt(2), 1 / math.sqrt(2)]])
    np.testing.assert_allclose(l1_ratio(X * scale, np.array([1.0, 1.0]) * scale), [0.0, 0.0, math.sqrt(2)], atol=1e-9)

def test_ratio_arm():
    assert ratio_arm(np.array([5, 1, 0]), np.array([0.5, 0.5, 0.0])) == 1  # arm 2 outside the support
    assert ratio_arm(np.array([10, 10, 3]), np.array([0.9, 0.1, 0.0])) == 0  # 10/0.9 = 11.1 < 10/0.1 = 100
    assert ratio_arm(np.array([10, 10, 3]), np.array([0.1, 0.9, 0.0])) == 1


def test_select_direction_hand_made():
    arms = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]])
    theta = np.array([1.0, 0.2])
    i, j, B = select_direction(arms, theta, np.eye(2), 0.5)
    # means 1, 0.2, 0.92 → i = 0; UCBs of gaps: arm1 −0.8 + 0.5√2, arm2 −0.08 + 0.5·√0.02.
    assert i == 0
    gaps = [0.0, -0.8 + 0.5 * math.sqrt(2), -0.08 + 0.5 * math.sqrt(0.02)]
    assert j == int(np.argmax(gaps)) and B == pytest.approx(max(gaps))
    # A tiny width: no challenger beats 0, so j = i and B = 0.
    i, j, B = select_direction(arms, theta, np.eye(2), 1e-6)
    assert j == i == 0 and B == 0.0


def test_confidence_widths():
    st = RidgeDesign(2, 1.0)
    st.add(np.array([1.0, 0.0]), 0.0)
    logdet = math.log(2.0)
    assert confidence_width("det_k2", st, 3, 1.0, 2.0, 0.05) == pytest.approx(
        math.sqrt(2 * math.log(9 * math.exp(logdet / 2) / 0.05)) + 2
    )
    assert confidence_width("det", st, 3, 1.0, 2.0, 0.05) == pytest.approx(
        math.sqrt(2 * math.log(math.exp(logdet / 2) / 0.05)) + 2
    )
    assert confidence_width("horizon_k2", st, 3, 1.0, 2.0, 0.05, 1.0) == pytest.approx(
        math.sqrt(2 * math.log(9 * 2 / 0.05)) + 2
    )


def test_initial_pulls_and_stopping_semantics():
    p = lingape_instance(d=2, omega=0.1)
    alg = LinGapE(p.arms, LinGapEConfig.from_problem(p), np.random.default_rng(0))
    for k in range(p.K):
        query = alg.ask()
        assert query.arm == k
        alg.tell(query, _reward(float(p.arms[k] @ p.theta_star)))
    assert alg.t == p.K and not alg.done
    # A huge ε stops at the first check.
    alg2 = LinGapE(p.arms, LinGapEConfig.from_problem(p, epsilon=100.0), np.random.default_rng(0))
    for k in range(p.K):
        alg2.tell(alg2.ask(), _reward(0.0))
    assert alg2.done and alg2.recommendation is not None
    with pytest.raises(RuntimeError):
        alg2.ask()
    with pytest.raises(ValueError, match="span"):
        LinGapE(np.array([[1.0, 0.0], [2.0, 0.0]]), LinGapEConfig(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="rule"):
        LinGapEConfig(rule="fast")
    with pytest.raises(ValueError, match="width"):
        LinGapEConfig(width="narrow")


def _without_safety(p: LinearBaiProblem) -> SafeBaiProblem:
    """The plain problem as a safe-bai problem whose constraint never binds (μ* = 0, every full
    pull safe): LinGapE ignores safety, so its runs there are runs of the plain problem."""
    setting = SafeBaiSetting(arms=p.arms, eta0=-1.0, sigma=p.sigma, sigma_safe=0.0, epsilon=p.epsilon, delta_r=p.delta,
                             delta_s=p.delta, lam=p.lam, T_FE=0, gamma_FE=1.0, S_theta=p.S, S_mu=1.0)
    return SafeBaiProblem(setting, theta_star=p.theta_star, mu_star=np.zeros(p.d))


@pytest.mark.parametrize("rule", ["greedy", "ratio"])
def test_lingape_identifies_the_best_arm_on_the_soare_instance(rule):
    """The Soare instance of LinGapE's experiments (ω = 0.1 to keep it fast): correct on every
    seed, and almost all pulls go to arm 2 (e_2), the direction separating x_1 from x_{d+1}."""
    p = _without_safety(lingape_instance(d=3, omega=0.1))
    for seed in range(5):
        r = run(p, "lingape", seed, rule=rule)
        assert r.stopped == "solved" and r.optimal and r.correct and r.violations == 0
        assert r.pulls[1] > 0.8 * r.iterations
        assert r.iterations == sum(r.pulls)


def test_ratio_cache_is_per_pair():
    p = lingape_instance(d=3, omega=0.1)
    alg = LinGapE(p.arms, LinGapEConfig.from_problem(p, rule="ratio"), np.random.default_rng(1))
    rng = np.random.default_rng(2)
    while not alg.done:
        query = alg.ask()
        alg.tell(query, _reward(float(p.arms[query.arm] @ p.theta_star + rng.standard_normal())))
    assert 1 <= len(alg.allocations) <= p.K * (p.K - 1)
    for (i, j), pr in alg.allocations.items():
        w = l1_ratio(p.arms, p.arms[i] - p.arms[j])
        np.testing.assert_allclose(pr, np.abs(w) / np.abs(w).sum(), atol=1e-9)


def test_lingape_asks_for_one_pull_and_needs_the_reward():
    p = lingape_instance(d=2, omega=0.1)
    alg = LinGapE(p.arms, LinGapEConfig.from_problem(p), np.random.default_rng(0))
    query = alg.ask()
    assert (query.arm, query.total, query.scale, query.action) == (0, 1, None, None)
    assert alg.ask() is query  # the same query until tell
    with pytest.raises(ValueError, match="reward"):
        alg.tell(query, Answer(constraint=np.array([0.3])))


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4).flatmap(lambda d: st.tuples(
    st.lists(st.lists(st.integers(-3, 3).map(float), min_size=d, max_size=d), min_size=max(d, 2), max_size=7),
    st.lists(st.integers(-3, 3).map(float), min_size=d, max_size=d))))
def test_l1_ratio_by_supports_is_the_lp_optimum(case):
    """Integer arms, so dependent subsets and tied minima are frequent: where the subsets give
    one least-Σ|w| solution it is HiGHS's optimum, whatever w HiGHS picks."""
    from cbai_cli.algorithms.safe.lingape import _l1_by_highs, _l1_by_supports

    X, y = np.array(case[0]), np.array(case[1])
    if not np.abs(X).max():
        return
    try:
        lp = _l1_by_highs(X, y)
    except RuntimeError:  # y outside the arms' span
        assert np.linalg.matrix_rank(X) < X.shape[1]
        return
    w = _l1_by_supports(X, y)
    if w is None:
        return
    np.testing.assert_allclose(X.T @ w, y, atol=1e-9)
    assert np.abs(w).sum() == pytest.approx(np.abs(lp).sum(), abs=1e-9)
    np.testing.assert_allclose(w, lp, atol=1e-7)
