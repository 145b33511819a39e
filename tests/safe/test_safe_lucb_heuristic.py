"""Safe-LUCB's "modified heuristic" for an unknown Δ (``exploration="heuristic"``).

This is our rule (the paper mentions a "modified heuristic" without details) — heuristic, not the paper's:
explore as with ``"t23"`` (budget ⌈T_0⌉) but stop once the plug-in gap estimate Δ̂_t > 0 and
``t ≥ max{t_δ, 8L²‖B‖²β_T²/(λ_−Δ̂_t²)}``, checked on a geometric grid of rounds.

On amani-a itself the rule fires only after ≈ 3·10^4 exploration rounds (so it can beat ⌈T_0⌉
only for T ≳ 4·10^4); the multi-seed safety and determinism tests therefore use amani-a with
``c = 2`` (same box, μ*, B; Δ = 4.27, λ_− five times larger), where it fires within T = 8000.
"""

import dataclasses
import math

import numpy as np
import pytest

from cbai_cli.kinds.cbai.families import family
from cbai_cli.contracts.protocol import Answer
from cbai_cli.kinds.safe.action_sets import BallSet, BoxSet, FiniteSet
from cbai_cli.kinds.safe.environment import SafeRegretEnvironment
from cbai_cli.algorithms.safe.exploration import exploration_length, plug_in_gap, t_gap, t_zero
from cbai_cli.kinds.safe.paper_instances import instance_a
from cbai_cli.kinds.safe.problems import SafeRegretSetting
from cbai_cli.algorithms.safe.safe_lucb import SafeLUCB, SafeLUCBConfig
from cbai_cli.kinds.safe.truths import regret_truth
from cbai_cli.run.simulate import spawned_streams
from tests.safe.runs import run, run_with_curve

HEURISTIC = SafeLUCBConfig(exploration="heuristic")


def _explore_until_phase_2(problem, config, seed, noise_sd=0.01):
    """Drive ``SafeLUCB`` through phase 1 only; returns the algorithm and the actions played."""
    alg = SafeLUCB(problem.learner_view(), config, np.random.default_rng(seed))
    noise = np.random.default_rng(seed + 1000)
    actions = []
    while alg.phase == 1 and alg.t <= problem.setting.T:
        query = alg.ask()
        x = query.action
        actions.append(x)
        alg.tell(query, Answer(constraint=np.array([float(problem.mu_star @ x) + noise_sd * noise.standard_normal()])))
    return alg, np.array(actions)


@pytest.fixture(scope="module")
def amani_a_exploration():
    """The shipped amani-a (T = 10^5), phase 1 of the heuristic, seed 0 (≈ 1 s)."""
    problem = family("amani-a").generate().problem
    alg, _ = _explore_until_phase_2(problem, HEURISTIC, seed=0)
    return problem, alg


def _amani_a_c2(T):
    return dataclasses.replace(instance_a(T).with_setting(c=2.0), name="amani-a, c = 2")


def _setting(action_set, B, c):
    return SafeRegretSetting(action_set=action_set, B=np.asarray(B, dtype=float), c=c, T=1000, S=1.0,
                             L=action_set.max_norm, R=1.0, lam=1.0, delta=0.01)


# --------------------------------------------------------------------------- plug-in x̂*, Δ̂


def test_plug_in_equals_true_optimum_when_estimate_is_exact_box():
    """Box [−1,1]², μ = (0.5, 0.1), B = diag(−1, 1), c = 0.5: the corner (−1, −1) has
    xᵀBμ = 0.5 − 0.1 = 0.4 ≤ c, so x* = (−1, −1) and Δ = 0.1; with A⁻¹ = 10⁻⁶ I and β = 1,
    Δ̂ = 0.1 − 2·10⁻³·‖Bᵀx*‖ = 0.1 − 2√2·10⁻³."""
    mu = np.array([0.5, 0.1])
    s = _setting(BoxSet(2), np.diag([-1.0, 1.0]), 0.5)
    x_hat, gap_hat = plug_in_gap(s, mu, 1e-6 * np.eye(2), 1.0)
    np.testing.assert_allclose(x_hat, [-1.0, -1.0], atol=1e-9)
    assert gap_hat == pytest.approx(0.1 - 2e-3 * math.sqrt(2.0), abs=1e-9)


@pytest.mark.parametrize("case", ["box", "ball"])
def test_plug_in_gap_is_negative_when_the_constraint_is_active(case):
    """Δ = 0 by hand. Box: same μ, B with c = 0.3 — the constraint −0.5x₁ + 0.1x₂ ≤ 0.3 binds and
    the LP optimum is x* = (−0.8, −1). Ball (r = 1): μ = (0.6, 0.8), B = −I, c = 0.5 — the
    constraint μᵀx ≥ −0.5 binds and the closed form gives x* = −0.5 μ = (−0.3, −0.4).
    Then Δ̂ = 0 − 2β‖Bᵀx*‖_{A⁻¹} < 0 whatever the data."""
    if case == "box":
        mu, s, x_star = np.array([0.5, 0.1]), _setting(BoxSet(2), np.diag([-1.0, 1.0]), 0.3), [-0.8, -1.0]
    else:
        mu, s, x_star = np.array([0.6, 0.8]), _setting(BallSet(2, 1.0), -np.eye(2), 0.5), [-0.3, -0.4]
    A_inv = 1e-4 * np.eye(2)
    x_hat, gap_hat = plug_in_gap(s, mu, A_inv, 2.0)
    np.testing.assert_allclose(x_hat, x_star, atol=1e-9)
    assert gap_hat == pytest.approx(-2.0 * 2.0 * 1e-2 * np.linalg.norm(s.B.T @ x_hat), abs=1e-9)


def test_plug_in_on_a_finite_set_enumerates_and_handles_no_safe_arm():
    """Arms (1, 0), (−1, 0), (0, −1), B = I, c = 0.1, μ̂ = (1, 0.5): (1, 0) is plug-in unsafe,
    the best safe arm is (−1, 0) with slack 1.1. With μ̂ = (1, 1) and arms (1, 0), (0, 1) no arm
    is plug-in safe: no x̂*, Δ̂ = −∞ (the heuristic keeps exploring)."""
    s = _setting(FiniteSet(np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, -1.0]])), np.eye(2), 0.1)
    x_hat, gap_hat = plug_in_gap(s, np.array([1.0, 0.5]), 0.01 * np.eye(2), 1.0)
    np.testing.assert_array_equal(x_hat, [-1.0, 0.0])
    assert gap_hat == pytest.approx(1.1 - 2.0 * 0.1, abs=1e-12)
    s2 = _setting(FiniteSet(np.eye(2)), np.eye(2), 0.1)
    assert plug_in_gap(s2, np.array([1.0, 1.0]), np.eye(2), 1.0) == (None, -math.inf)


# --------------------------------------------------------------------------- amani-a, T = 10^5


def test_stops_after_t_delta_and_strictly_before_t0_on_amani_a(amani_a_exploration):
    problem, alg = amani_a_exploration
    T0 = math.ceil(t_zero(problem.learner_view(), alg.lambda_minus))
    assert alg.exploration_budget == T0 == 54_115
    assert alg.exploration_decided and alg.phase == 2
    assert alg.t_delta <= alg.exploration_rounds < T0


def test_never_stops_before_the_known_gap_length_on_amani_a(amani_a_exploration):
    """Δ̂ ≈ Δ − 2β‖Bᵀx*‖_{A⁻¹} < Δ here, so the heuristic explores at least ⌈T_Δ⌉ (10 245)."""
    problem, alg = amani_a_exploration
    T_gap = t_gap(problem.learner_view(), alg.lambda_minus, regret_truth(problem).safety_gap)
    assert alg.exploration_rounds >= math.ceil(T_gap)


def test_stopping_rule_holds_at_the_last_check_only(amani_a_exploration):
    problem, alg = amani_a_exploration
    s = problem.learner_view()
    fired = [g > 0 and t >= t_gap(s, alg.lambda_minus, g) for t, g in alg.gap_checks]
    assert fired[-1] and not any(fired[:-1])
    assert alg.gap_checks[-1][0] == alg.exploration_rounds


def test_checks_follow_the_geometric_grid(amani_a_exploration):
    """First possible check at ⌈t_δ⌉, then t ← max(t + 1, ⌈(1 + g)t⌉); checks whose LP was
    skipped by the cheap bound only remove grid points, so consecutive ratios are ≥ 1 + g."""
    _, alg = amani_a_exploration
    t = np.array([c[0] for c in alg.gap_checks], dtype=float)
    assert t[0] >= math.ceil(alg.t_delta)
    assert np.all(t[1:] >= (1 + HEURISTIC.heuristic_growth) * t[:-1] - 1e-9)
    assert len(t) < 100  # a few dozen LPs, not one per round


# --------------------------------------------------------------------------- amani-b (Δ = 0)


def test_falls_back_to_t0_when_the_gap_is_zero():
    """amani-b has Δ = 0 (x* on the constraint line): Δ̂ stays negative and T' = ⌈T_0⌉, which
    the run result reports (T = 30 000 so that ⌈T_0⌉ < T and phase 2 is reached)."""
    problem = family("amani-b").generate(T=30_000).problem
    assert regret_truth(problem).safety_gap == 0.0
    r = run(problem, "safe-lucb", 0, exploration="heuristic")
    budget = exploration_length(problem.learner_view(), "t23", r.lambda_minus)
    assert budget < problem.setting.T
    assert r.exploration_rounds == budget
    assert r.violations == 0


# --------------------------------------------------------------------------- amani-a with c = 2


def test_exploration_is_t23_truncated():
    """Same seed: the heuristic plays exactly t23's exploration actions up to its own T'."""
    p = _amani_a_c2(8000)
    heur, xs_h = _explore_until_phase_2(p, HEURISTIC, seed=3)
    t23, xs_t = _explore_until_phase_2(p, SafeLUCBConfig(exploration="t23"), seed=3)
    assert heur.exploration_rounds < t23.exploration_rounds == heur.exploration_budget
    np.testing.assert_array_equal(xs_h, xs_t[: heur.exploration_rounds])


def test_zero_unsafe_actions_over_20_seeds():
    """20 seeds on amani-a with c = 2, T = 8000: every seed stops before ⌈T_0⌉, and neither the
    exploration nor the first 500 phase-2 rounds after the switch play an unsafe action."""
    p = _amani_a_c2(8000)
    for seed in range(20):
        env_rng, alg_rng, _ = spawned_streams(np.random.default_rng(seed))
        env = SafeRegretEnvironment(p, env_rng)
        alg = SafeLUCB(p.learner_view(), HEURISTIC, alg_rng)
        while alg.t <= min(p.setting.T, alg.exploration_rounds + 500):
            query = alg.ask()
            alg.tell(query, env.answer(query))
        assert alg.exploration_decided and alg.exploration_rounds < alg.exploration_budget
        assert env.n_unsafe == 0


def test_same_seed_gives_the_same_run():
    p = _amani_a_c2(8000)
    r1, curve_1 = run_with_curve(p, "safe-lucb", 11, exploration="heuristic")
    r2, curve_2 = run_with_curve(p, "safe-lucb", 11, exploration="heuristic")
    assert r1.exploration_rounds == r2.exploration_rounds
    np.testing.assert_array_equal(curve_1, curve_2)


def test_run_result_reports_the_realised_exploration_length():
    """The result's T' is the round at which the rule fired (replayed by hand with the same
    generators), and the λ_min diagnostic refers to it."""
    p = _amani_a_c2(8000)
    r, curve = run_with_curve(p, "safe-lucb", 5, exploration="heuristic")
    env_rng, alg_rng, _ = spawned_streams(np.random.default_rng(5))  # the streams of the run
    env = SafeRegretEnvironment(p, env_rng)
    alg = SafeLUCB(p.learner_view(), HEURISTIC, alg_rng)
    while alg.phase == 1:
        query = alg.ask()
        alg.tell(query, env.answer(query))
    assert r.exploration_rounds == alg.exploration_rounds < alg.exploration_budget
    assert curve[alg.exploration_rounds - 1] == env.cumulative_regret
    assert r.lambda_min_target == pytest.approx(r.exploration_rounds * r.lambda_minus / 2)
    design = np.linalg.eigvalsh(alg.state.gram - p.setting.lam * np.eye(2))[0]
    assert r.lambda_min_design == pytest.approx(design, rel=1e-9)


# --------------------------------------------------------------------------- options


def test_heuristic_options_and_budget():
    s = instance_a().learner_view()
    assert exploration_length(s, "heuristic", 0.0381875) == exploration_length(s, "t23", 0.0381875)
    with pytest.raises(ValueError, match="heuristic_growth"):
        SafeLUCBConfig(exploration="heuristic", heuristic_growth=0.0)
    with pytest.raises(ValueError, match="heuristic"):
        SafeLUCBConfig(exploration="heuristics")
