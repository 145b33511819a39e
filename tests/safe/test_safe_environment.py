"""Environments and run loops (cbai_cli/safe/environment.py): answers to queries, noise from the
run's Generator, violation counting, results, and a generic ask/answer/tell loop."""

import dataclasses

import numpy as np
import pytest

from cbai_cli.protocol import Environment, Learner, Query
from cbai_cli.safe.environment import (
    LinearBaiEnvironment,
    SafeBaiEnvironment,
    SafeRegretEnvironment,
    run_safe_bai,
    run_safe_regret,
)
from cbai_cli.safe.lingape import LinGapE, LinGapEConfig
from cbai_cli.safe.paper_instances import instance_a, instance_b, lingape_instance, price_of_safety_instance
from cbai_cli.safe.safe_lingape import SafeLinGapE, SafeLinGapEConfig
from cbai_cli.safe.safe_lucb import SafeLUCB, SafeLUCBConfig


def test_regret_environment_counts_violations_and_regret():
    p = instance_b()
    env = SafeRegretEnvironment(p, np.random.default_rng(0))
    x_star = env.truth.x_star
    env.answer(Query.play(x_star))
    assert env.n_unsafe == 0 and env.cumulative_regret == pytest.approx(0.0, abs=1e-12)
    env.answer(Query.play(np.array([-1.0, -1.0])))  # (−1,−1)ᵀBμ* = 0.904 − 0.087 > 0.7: unsafe, and better than x*
    assert env.n_unsafe == 1 and env.cumulative_regret < 0
    env.answer(Query.play(np.zeros(2)))
    assert env.cumulative_regret == pytest.approx(p.mu_star @ np.array([-1.0, -1.0]) - 2 * env.truth.loss_star)
    with pytest.raises(ValueError, match="outside"):
        env.answer(Query.play(np.array([2.0, 0.0])))


def test_regret_noise_comes_from_the_generator():
    p = instance_a()
    a = SafeRegretEnvironment(p, np.random.default_rng(5))
    b = SafeRegretEnvironment(p, np.random.default_rng(5))
    x = np.array([0.1, -0.2])
    la = [a.answer(Query.play(x)).constraint[0] for _ in range(5000)]
    lb = [b.answer(Query.play(x)).constraint[0] for _ in range(5000)]
    assert la == lb
    assert np.std(np.array(la) - p.mu_star @ x) == pytest.approx(p.noise_sd, rel=0.05)


def _pull(env, k, scale):
    """(reward, safety) of one pull of arm k at ``scale``."""
    answer = env.answer(Query.pull(k, scale))
    return float(answer.reward[0]), float(answer.constraint[0])


def test_bai_environment_signals_and_violations():
    p = dataclasses.replace(price_of_safety_instance(), sigma=0.0, sigma_safe=0.0)
    env = SafeBaiEnvironment(p, np.random.default_rng(0))
    assert _pull(env, 1, 0.5) == (0.0, -0.5)  # exactly at η₀: safe
    assert env.n_unsafe == 0
    assert _pull(env, 1, 0.6) == (0.0, pytest.approx(-0.6))
    assert env.n_unsafe == 1
    r, s = _pull(env, 3, 1.0)
    assert r == pytest.approx(2 * np.cos(0.1)) and s == pytest.approx(-np.sin(0.1))
    assert env.pulls.tolist() == [0, 2, 0, 1]
    with pytest.raises(ValueError, match="scale"):
        _pull(env, 0, 1.5)


def test_run_safe_regret_result_fields():
    p = instance_a(T=3000)
    r = run_safe_regret(p, SafeLUCBConfig(exploration=1000), np.random.default_rng(0))
    assert r.checkpoints.tolist() == [1000, 3000]
    assert r.regret_at.tolist() == [r.regret_curve[999], r.regret_curve[2999]]
    assert r.final_regret == r.regret_curve[-1]
    assert r.exploration_rounds == 1000 and r.lambda_minus == pytest.approx(0.0381875, abs=1e-7)
    assert r.lambda_min_target == pytest.approx(1000 * r.lambda_minus / 2)
    assert 0 <= r.x_star_in_safe_fraction <= 1
    r2 = run_safe_regret(p, SafeLUCBConfig(exploration=10**6), np.random.default_rng(0))  # all exploration
    assert r2.exploration_rounds == 3000 and np.isnan(r2.x_star_in_safe_fraction)
    assert r2.lambda_min_design > 0


def test_run_safe_bai_is_reproducible():
    p = price_of_safety_instance()
    a = run_safe_bai(p, SafeLinGapEConfig(), np.random.default_rng(11))
    b = run_safe_bai(p, SafeLinGapEConfig(), np.random.default_rng(11))
    assert a.stopping_time == b.stopping_time and np.array_equal(a.pulls, b.pulls)
    c = run_safe_bai(p, SafeLinGapEConfig(), np.random.default_rng(11), max_steps=900)
    assert not c.stopped and c.stopping_time == 900
    with pytest.raises(TypeError):
        run_safe_bai(p, object(), np.random.default_rng(0))


def _generic_loop(learner, environment):
    """The one loop every learner and environment of the protocol must support."""
    while not learner.done:
        query = learner.ask()
        learner.tell(query, environment.answer(query))


def test_a_generic_loop_reproduces_run_safe_regret():
    p = instance_a(T=600)
    config = SafeLUCBConfig(exploration=200)
    alg_rng, env_rng = np.random.default_rng(3).spawn(2)  # what run_safe_regret spawns
    env = SafeRegretEnvironment(p, env_rng)
    alg = SafeLUCB(p.learner_view(), config, alg_rng)
    assert isinstance(alg, Learner) and isinstance(env, Environment)
    _generic_loop(alg, env)
    r = run_safe_regret(p, config, np.random.default_rng(3), track_x_star=False)
    assert env.t == p.setting.T and env.cumulative_regret == r.final_regret and env.n_unsafe == r.n_unsafe


def test_a_generic_loop_reproduces_run_safe_bai():
    p = price_of_safety_instance()
    alg_rng, env_rng = np.random.default_rng(4).spawn(2)
    env = SafeBaiEnvironment(p, env_rng)
    alg = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(), alg_rng)
    assert isinstance(alg, Learner) and isinstance(env, Environment)
    _generic_loop(alg, env)
    r = run_safe_bai(p, SafeLinGapEConfig(), np.random.default_rng(4))
    assert env.t == r.stopping_time and np.array_equal(env.pulls, r.pulls)
    assert alg.recommendation == (r.recommended_arm, r.recommended_scale)


def test_linear_bai_environment_answers_rewards_without_a_constraint_signal():
    p = dataclasses.replace(lingape_instance(d=2, omega=0.1), sigma=0.0)
    env = LinearBaiEnvironment(p, np.random.default_rng(0))
    answer = env.answer(Query.pull(2))
    assert answer.constraint.shape == (0,) and answer.reward[0] == pytest.approx(2 * np.cos(0.1))
    assert env.t == 1
    alg = LinGapE(p.setting.arms, LinGapEConfig.from_problem(p), np.random.default_rng(1))
    assert isinstance(alg, Learner) and isinstance(env, Environment)


def test_a_full_pull_is_a_pull_at_scale_one():
    p = dataclasses.replace(price_of_safety_instance(), sigma=0.0, sigma_safe=0.0)
    a = SafeBaiEnvironment(p, np.random.default_rng(0)).answer(Query.pull(1))
    b = SafeBaiEnvironment(p, np.random.default_rng(0)).answer(Query.pull(1, 1.0))
    assert (a.reward[0], a.constraint[0]) == (b.reward[0], b.constraint[0]) == (0.0, -1.0)


def test_environments_answer_one_observation_of_their_own_query_shape():
    regret = SafeRegretEnvironment(instance_a(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="action"):
        regret.answer(Query.pull(0))
    bai = SafeBaiEnvironment(price_of_safety_instance(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="one at a time"):
        bai.answer(Query.pulls(np.array([0, 1]), np.array([1, 1])))
    with pytest.raises(ValueError, match="one at a time"):
        bai.answer(Query.pulls(np.array([0]), np.array([3])))
