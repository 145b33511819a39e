"""Safe-LinGapE ("Price of Safety" §4): γ̄, forced exploration, safety over seeds, dynamic updates, outputs."""

import math

import numpy as np
import pytest

from cbai_cli.numerics.linalg import RidgeDesign
from cbai_cli.contracts.protocol import Answer
from cbai_cli.kinds.safe.environment import SafeBaiEnvironment
from cbai_cli.kinds.safe.paper_instances import price_of_safety_instance
from cbai_cli.algorithms.safe.safe_lingape import (
    SafeLinGapE,
    SafeLinGapEConfig,
    conservative_scales,
    reward_radius,
    safety_radius,
)
from cbai_cli.kinds.safe.truths import safe_bai_truth
from tests.safe.runs import run


def test_conservative_scales_hand_made():
    arms = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0], [3.0, 0.0]])
    mu_hat = np.array([0.1, -0.4])
    A_inv = np.diag([1.0, 0.25])  # ‖x‖_{A⁻¹} = 1, 0.5, 1, 3
    beta_s, eta0 = 0.2, -0.5
    # l_k = x_kᵀμ̂ − β‖x_k‖: 0.1 − 0.2 = −0.1;  −0.4 − 0.1 = −0.5;  −0.8 − 0.2 = −1.0;  0.3 − 0.6 = −0.3
    # γ̄ = min(1, 0.5 / [−l]_+):                 1;              1;              0.5;              1
    np.testing.assert_allclose(conservative_scales(arms, mu_hat, A_inv, beta_s, eta0), [1.0, 1.0, 0.5, 1.0])
    # A positive lower bound gives γ̄ = 1 (the arm is safe at full scale).
    assert conservative_scales(np.array([[1.0, 0.0]]), np.array([2.0, 0.0]), np.eye(2), 0.1, -0.5)[0] == 1.0
    # Very uncertain: l = −10 → γ̄ = 0.05.
    assert conservative_scales(np.array([[1.0, 0.0]]), np.zeros(2), np.eye(2), 10.0, -0.5)[0] == pytest.approx(0.05)


def test_radii_formulas():
    s = price_of_safety_instance().learner_view()
    st = RidgeDesign(3, 1.0)
    st.add(np.array([0.2, 0.0, 0.0]), 0.0)
    ld = math.log(1.04)
    assert safety_radius(st, s) == pytest.approx(0.1 * math.sqrt(2 * math.log(math.exp(ld / 2) / 0.001)) + 1.0)
    assert reward_radius(st, s) == pytest.approx(math.sqrt(2 * math.log(math.exp(ld / 2) / 0.001)) + 2.0)
    assert reward_radius(st, s, "det_k2") == pytest.approx(math.sqrt(2 * math.log(16 * math.exp(ld / 2) / 0.001)) + 2.0)


def test_forced_exploration_then_initial_pulls():
    p = price_of_safety_instance()
    alg = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(), np.random.default_rng(0))
    env = SafeBaiEnvironment(p, np.random.default_rng(1))
    seen = np.zeros(p.K, dtype=int)
    for _ in range(p.setting.T_FE):
        assert alg.phase == "fe" and alg.gamma_bar is None
        query = alg.ask()
        k, g = query.arm, query.scale
        assert g == p.setting.gamma_FE
        seen[k] += 1
        alg.tell(query, env.answer(query))
    assert np.all(seen > 150)  # i.i.d. uniform arms: 200 expected per arm
    assert alg.phase == "bai" and alg.gamma_bar_fe is not None
    for k_expected in range(p.K):  # LinGapE's initial round-robin on the scaled arms
        query = alg.ask()
        k, g = query.arm, query.scale
        assert k == k_expected and g == alg.gamma_bar[k]
        alg.tell(query, env.answer(query))
    assert alg.t == p.setting.T_FE + p.K


@pytest.mark.parametrize("update", ["static", "dynamic"])
def test_zero_unsafe_pulls_and_conservative_scales_over_20_seeds(update):
    p = price_of_safety_instance()
    tr = safe_bai_truth(p)
    for seed in range(20):
        r = run(p, "safe-lingape", seed, updates=update)
        assert r.violations == 0 and not r.violation
        assert r.stopped == "solved" and r.optimal and r.correct
        # γ̄ ≤ γ on the confidence event (which the seeds realise), and the output is safe.
        assert np.all(np.array(r.gamma_bar_fe) <= tr.gamma + 1e-12)
        assert np.all(np.array(r.gamma_bar) <= tr.gamma + 1e-12)
        assert r.scale == r.gamma_bar[r.recommended]
        assert r.iterations == sum(r.pulls) >= p.setting.T_FE + p.K
        if update == "dynamic":
            assert np.all(np.array(r.gamma_bar) >= np.array(r.gamma_bar_fe))


def test_ratio_rule_is_safe_and_correct():
    p = price_of_safety_instance()
    for seed in range(3):
        r = run(p, "safe-lingape", seed, rule="ratio")
        assert r.violations == 0 and r.optimal


def test_plain_lingape_pulls_unsafely_on_the_soare_safe_instance():
    """LinGapE ignores safety: it pulls e_2 at full scale (safety −1 < η₀ = −0.5) most of the time."""
    p = price_of_safety_instance()
    for seed in range(5):
        r = run(p, "lingape", seed)
        assert r.optimal
        assert r.violations == r.pulls[1] > 0.5 * r.iterations


def test_dynamic_scales_are_monotone_during_a_run():
    p = price_of_safety_instance()
    alg = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(update="dynamic"), np.random.default_rng(3))
    env = SafeBaiEnvironment(p, np.random.default_rng(4))
    prev = None
    while not alg.done:
        query = alg.ask()
        alg.tell(query, env.answer(query))
        if alg.gamma_bar is not None:
            if prev is not None:
                assert np.all(alg.gamma_bar >= prev)
            prev = alg.gamma_bar.copy()
    assert prev[1] > alg.gamma_bar_fe[1]  # the risky arm's scale grew
    assert env.n_unsafe == 0


def test_weighted_counts():
    p = price_of_safety_instance()
    alg = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(rule="ratio"), np.random.default_rng(0))
    env = SafeBaiEnvironment(p, np.random.default_rng(1))
    for _ in range(p.setting.T_FE):
        query = alg.ask()
        alg.tell(query, env.answer(query))
    N = alg.weighted_counts()
    # During FE every pull has scale 0.2: N_k = n_k · 0.04 / γ̄_k².
    np.testing.assert_allclose(N, alg.pulls * 0.04 / alg.gamma_bar**2)
    lin = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(rule="ratio", count_weight="linear"), np.random.default_rng(0))
    env = SafeBaiEnvironment(p, np.random.default_rng(1))
    for _ in range(p.setting.T_FE):
        query = lin.ask()
        lin.tell(query, env.answer(query))
    np.testing.assert_allclose(lin.weighted_counts(), lin.pulls * 0.2 / lin.gamma_bar)


def test_zero_forced_exploration_and_validation():
    p = price_of_safety_instance().with_setting(T_FE=0)
    alg = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(), np.random.default_rng(0))
    assert alg.phase == "bai"
    # Without data γ̄_k = |η₀| / (β^s ‖x_k‖/√λ): all arms get the same, conservative scale.
    assert np.allclose(alg.gamma_bar, alg.gamma_bar[0]) and alg.gamma_bar[0] < 0.5
    with pytest.raises(ValueError, match="update"):
        SafeLinGapEConfig(update="sometimes")
    with pytest.raises(ValueError, match="rng"):
        SafeLinGapE(p.learner_view(), SafeLinGapEConfig())


def test_safe_lingape_reads_reward_and_safety_signal_of_a_scaled_pull():
    p = price_of_safety_instance()
    alg = SafeLinGapE(p.learner_view(), SafeLinGapEConfig(), np.random.default_rng(0))
    query = alg.ask()
    assert query.scale == p.setting.gamma_FE and query.total == 1 and alg.ask() is query
    alg.tell(query, Answer(constraint=np.array([-0.25]), reward=np.array([0.5])))
    x = p.setting.gamma_FE * p.setting.arms[query.arm]
    np.testing.assert_allclose(alg.state.targets, [0.5 * x, -0.25 * x])
