"""Environments and scoring (cbai_cli/kinds/safe/environment.py): answers to queries, noise from the
run's Generator, violation counting, scored runs through the one run API, and a generic
ask/answer/tell loop."""

import numpy as np
import pytest

from cbai_cli.contracts.protocol import Environment, Learner, Query
from cbai_cli.kinds.safe.environment import SafeBaiEnvironment, SafeRegretEnvironment
from cbai_cli.kinds.safe.paper_instances import instance_a, instance_b, price_of_safety_instance
from cbai_cli.algorithms.safe.safe_lingape import SafeLinGapE, SafeLinGapEConfig
from cbai_cli.algorithms.safe.safe_lucb import SafeLUCB, SafeLUCBConfig
from cbai_cli.run.simulate import RunRequest, prepare, run_once, spawned_streams
from tests.safe.runs import instance_of, run, run_with_curve


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
    p = price_of_safety_instance().with_setting(sigma=0.0, sigma_safe=0.0)
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


def test_a_scored_regret_run_reads_its_curve():
    p = instance_a(T=3000)
    r, curve = run_with_curve(p, "safe-lucb", 0, exploration="1000")
    assert r.checkpoints == ((1000, curve[999]), (3000, curve[2999]))
    assert r.regret == curve[-1] and dict(r.curve)[2000] == curve[1999]
    assert r.exploration_rounds == 1000 and r.lambda_minus == pytest.approx(0.0381875, abs=1e-7)
    assert r.lambda_min_target == pytest.approx(1000 * r.lambda_minus / 2)
    assert 0 <= r.x_star_in_safe <= 1
    r2 = run(p, "safe-lucb", 0, exploration=str(10**6))  # all exploration
    assert r2.exploration_rounds == 3000 and r2.x_star_in_safe is None
    assert r2.lambda_min_design > 0


def test_a_scored_bai_run_is_reproducible_and_capped_by_its_budget():
    p = price_of_safety_instance()
    a = run(p, "safe-lingape", 11)
    b = run(p, "safe-lingape", 11)
    assert a.iterations == b.iterations and a.pulls == b.pulls
    c = run(p, "safe-lingape", 11, budget=900)
    assert c.stopped == "budget" and c.iterations == 900


def test_spawned_streams_are_those_of_rng_spawn():
    """A run on ``spawned_streams(default_rng(s))`` draws the algorithm's numbers from the first
    child of ``default_rng(s).spawn(2)`` and the noise from the second."""
    alg_rng, env_rng = np.random.default_rng(5).spawn(2)
    noise, algorithm, trace = spawned_streams(np.random.default_rng(5))
    assert noise.random() == env_rng.random() and algorithm.random() == alg_rng.random()
    assert trace.random() not in (noise.random(), algorithm.random())


def _generic_loop(learner, environment):
    """The one loop every learner and environment of the protocol must support."""
    while not learner.done:
        query = learner.ask()
        learner.tell(query, environment.answer(query))


def test_a_generic_loop_reproduces_a_regret_run():
    p = instance_a(T=600)
    noise_rng, alg_rng, _ = spawned_streams(np.random.default_rng(3))
    env = SafeRegretEnvironment(p, noise_rng)
    alg = SafeLUCB(p.learner_view(), SafeLUCBConfig(exploration=200), alg_rng)
    assert isinstance(alg, Learner) and isinstance(env, Environment)
    _generic_loop(alg, env)
    r = run(p, "safe-lucb", 3, exploration="200")
    assert env.t == p.setting.T and env.cumulative_regret == r.regret and env.n_unsafe == r.violations


def test_a_generic_loop_reproduces_a_bai_run():
    p = price_of_safety_instance()
    noise_rng, alg_rng, _ = spawned_streams(np.random.default_rng(4))
    env = SafeBaiEnvironment(p, noise_rng)
    alg = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(), alg_rng)
    assert isinstance(alg, Learner) and isinstance(env, Environment)
    _generic_loop(alg, env)
    r = run(p, "safe-lingape", 4)
    assert env.t == r.iterations and env.pulls.tolist() == list(r.pulls)
    assert alg.recommendation == (r.recommended, r.scale)


def test_seeded_streams_and_spawned_streams_are_different_runs():
    """``run_once`` without ``streams`` draws from ``SeedSequence(seed)``, as the CLI does."""
    prepared = prepare(RunRequest.of("safe-lingape", budget=1500), instance_of(price_of_safety_instance()))
    own = run_once(prepared, 2)
    assert own.to_dict() | {"wall_s": 0} == run_once(prepared, 2).to_dict() | {"wall_s": 0}
    assert own.pulls != run(price_of_safety_instance(), "safe-lingape", 2, budget=1500).pulls


def test_a_full_pull_is_a_pull_at_scale_one():
    p = price_of_safety_instance().with_setting(sigma=0.0, sigma_safe=0.0)
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
