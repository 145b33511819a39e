"""Runs on the safe kinds as library calls (cbai_cli/kinds/safe/solving.py, cbai_cli/kinds/safe_*.py,
cbai_cli/kinds/safe/bounds.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cbai_cli.contracts.errors import InstanceError, OptionError, UnknownNameError
from cbai_cli.kinds.cbai.families import family
from cbai_cli.kinds import from_mapping
from cbai_cli.kinds.safe.bounds import lingape_complexity, safe_bai_bounds, safe_regret_bounds
from cbai_cli.algorithms.registry import ALGORITHMS, AlgorithmEntry, for_kind, register
from cbai_cli.kinds.safe.solving import curve_points, regret_checkpoints
from cbai_cli.run.simulate import RunRequest, prepare, run_once, run_streams

RECORD_KEYS = {"seed", "algorithm", "kind", "iterations", "regret", "recommended", "scale", "correct", "violation",
               "violations", "exploration_rounds", "stopped", "wall_s"}


@pytest.fixture(scope="module")
def amani_a():
    return family("amani-a").generate(T=1200)


@pytest.fixture(scope="module")
def soare():
    return family("soare-safe").generate()


def test_checkpoints_are_powers_of_ten_and_the_horizon():
    assert regret_checkpoints(100_000) == [1_000, 10_000, 100_000]
    assert regret_checkpoints(25_000) == [1_000, 10_000, 25_000]
    assert regret_checkpoints(500) == [500]
    assert curve_points(1200) == [10, 20, 50, 100, 200, 500, 1000, 1200]


def test_records_have_the_same_flat_keys_for_both_kinds(amani_a, soare):
    regret = run_once(prepare(RunRequest.of("safe-lucb", exploration="100"), amani_a), seed=3)
    bai = run_once(prepare(RunRequest.of("lingape", budget=300), soare), seed=3)
    for run in (regret, bai):
        record = run.record()
        assert set(record) == RECORD_KEYS
        assert all(not isinstance(value, (np.generic, np.ndarray)) for value in record.values())
    assert regret.record()["regret"] == pytest.approx(regret.curve[-1][1])
    assert regret.record()["exploration_rounds"] == 100
    assert bai.record()["iterations"] == 300 and bai.stopped == "budget"


def test_a_recommendation_scaled_beyond_its_true_safe_scale_is_a_violation(soare):
    """LinGapE recommends whole arms; on soare-safe it pulls the risky arm unsafely, and a
    recommendation at scale 1 of an arm whose true γ is below 1 counts as a violation."""
    prepared = prepare(RunRequest.of("lingape"), soare)
    gamma = soare.truth.gamma
    for seed in range(3):
        run = run_once(prepared, seed=seed)
        assert run.scale == 1.0
        assert run.violation == bool(gamma[run.recommended] < 1.0)
    safe = run_once(prepare(RunRequest.of("safe-lingape"), soare), seed=0)
    assert not safe.violation and safe.scale <= gamma[safe.recommended]


def test_same_seed_and_key_give_the_same_run_and_keys_separate_streams(amani_a):
    prepared = prepare(RunRequest.of("safe-lucb", exploration="50"), amani_a)
    first, again = run_once(prepared, 7), run_once(prepared, 7)
    assert first.curve == again.curve and first.violations == again.violations
    assert run_once(prepared, 7, key=(1,)).curve != first.curve
    assert run_once(prepared, 8).curve != first.curve


def test_run_constants_replace_the_files_for_the_run_only(amani_a):
    """--delta, --lambda and --S reach Safe-LUCB's setting (T' = ⌈T_Δ⌉ shrinks with a larger δ
    and grows with a larger S), the instance as run holds them, and the file's stay as they were."""
    longer = amani_a.with_horizon(20_000)
    default = prepare(RunRequest.of("safe-lucb"), longer)
    looser = prepare(RunRequest.of("safe-lucb", delta=0.5, ridge=2.0, norm_bound=1.5), longer)
    explored = default.options["exploration_rounds"]
    assert explored == 9_405 and "delta" not in default.options  # ⌈T_Δ⌉ at T = 2·10⁴
    assert looser.options["exploration_rounds"] != explored
    assert {name: looser.options[name] for name in ("delta", "ridge", "norm_bound")} == {
        "delta": 0.5, "ridge": 2.0, "norm_bound": 1.5}
    setting = looser.instance.problem.setting
    assert (setting.delta, setting.lam, setting.S) == (0.5, 2.0, 1.5) == (
        looser.configured.view.delta, looser.configured.view.lam, looser.configured.view.S)
    assert (longer.problem.setting.delta, longer.problem.setting.lam, longer.problem.setting.S) == (0.01, 1.0, 1.0)
    assert prepare(RunRequest.of("safe-lucb", delta=0.5), longer).options["exploration_rounds"] < explored
    assert prepare(RunRequest.of("safe-lucb", norm_bound=2.0), longer).options["exploration_rounds"] > explored


def test_bai_run_constants_reach_the_configurations(soare):
    lingape = prepare(RunRequest.of("lingape", delta=0.2, ridge=3.0, norm_bound=4.0), soare).config
    assert (lingape.delta, lingape.lam, lingape.S) == (0.2, 3.0, 4.0)
    view = prepare(RunRequest.of("safe-lingape", safety_delta=0.2, safety_norm_bound=4.0), soare).configured.view
    assert (view.delta_s, view.S_mu, view.delta_r, view.S_theta) == (0.2, 4.0, 0.001, 2.0)


def test_run_constants_name_a_run_only_when_given(soare):
    kind = prepare(RunRequest.of("lingape"), soare).kind
    plain = kind.run_identity(RunRequest.of("lingape"))
    assert set(plain) == {"algorithm", "exploration", "rule", "updates", "horizon", "budget", "dw", "confidence_set",
                          "intersect"}
    assert kind.run_identity(RunRequest.of("lingape", delta=0.1)) == {**plain, "delta": 0.1}


def test_exploration_modes(amani_a):
    gap = prepare(RunRequest.of("safe-lucb"), amani_a)
    assert gap.options["exploration"] == "gap" and gap.options["exploration_rounds"] == 1200  # T_Δ > T: capped
    assert prepare(RunRequest.of("safe-lucb", exploration="0"), amani_a).options["exploration_rounds"] == 0
    b = family("amani-b").generate(T=1000)
    assert prepare(RunRequest.of("safe-lucb"), b).options["exploration"] == "t23"
    with pytest.raises(OptionError, match="Δ = 0"):
        prepare(RunRequest.of("safe-lucb", exploration="gap"), b)
    longer = prepare(RunRequest.of("safe-lucb", horizon=100_000), amani_a)
    assert longer.instance.problem.setting.T == 100_000 and longer.options["exploration_rounds"] == 10_245


def test_safe_lucb_needs_an_arm_inside_the_exploration_set():
    mapping = {
        "kind": "safe-regret", "action_set": {"kind": "finite", "arms": [[1.0, 0.0], [0.0, 1.0]]},
        "mu_star": [0.5, 0.1], "B": [[1.0, 0.0], [0.0, 1.0]], "c": 0.2, "T": 10,
        "noise": {"kind": "gaussian", "sigma": 0.1}, "S": 1.0, "L": 1.0, "R": 0.1, "lambda": 1.0, "delta": 0.05,
    }
    with pytest.raises(InstanceError, match="safe-lucb cannot run on this instance: no arm of the finite action set"):
        prepare(RunRequest.of("safe-lucb", exploration="5"), from_mapping(mapping))


def test_algorithm_kind_checks():
    assert for_kind("lingape", "safe-bai")[0] is ALGORITHMS["lingape"]
    assert for_kind("acol", "cbai")[0] is ALGORITHMS["acol"]
    with pytest.raises(OptionError, match="runs on safe-regret instances, but this is a safe-bai instance"):
        for_kind("safe-lucb", "safe-bai")
    with pytest.raises(OptionError, match="runs on cbai instances"):
        for_kind("g-acol", "safe-regret")
    with pytest.raises(UnknownNameError, match="did you mean 'lingape'"):
        for_kind("lingap", "safe-bai")


def test_registry_rejects_clashing_names():
    with pytest.raises(ValueError, match="already registered"):
        register(AlgorithmEntry("acol", "x", "Y", "clash", ("safe-bai",), "adaptive"))
    with pytest.raises(ValueError, match="unknown option"):
        register(AlgorithmEntry("new-one", "x", "Y", "bad option", ("safe-bai",), "adaptive", ("regime",)))


def test_regret_bounds_reproduce_the_paper_constants():
    """Amani et al. (2019), Appendix F: the constants of instances A and B through the bound report."""
    a = safe_regret_bounds(family("amani-a").generate())
    assert a.x_star == (-1.0, -1.0) and a.loss_star == pytest.approx(-0.947826, abs=5e-7)
    assert a.safety_gap == pytest.approx(3.166087, abs=5e-7) and a.B_norm == pytest.approx(2.302776, abs=5e-7)
    assert a.lambda_minus == pytest.approx(0.0381875, abs=5e-8) and a.beta_T == pytest.approx(6.798489, abs=5e-7)
    assert a.t_delta == pytest.approx(2219.9, abs=0.05) and a.T_delta == pytest.approx(10244.3, abs=0.05)
    assert a.T_0 == pytest.approx(54115, abs=0.5)
    b = safe_regret_bounds(family("amani-b").generate())
    assert b.safety_gap == 0 and b.T_delta is None and b.B_norm == 2
    assert b.lambda_minus == pytest.approx(0.030625) and b.t_delta == pytest.approx(2768.1, abs=0.05)
    assert b.T_0 == pytest.approx(62692, abs=0.5)
    assert b.to_json()["T_delta"] is None


def test_bai_bounds_reproduce_the_price_of_safety_truths(soare):
    """"Price of Safety in Linear BAI", §5: the true safe scales and rewards of the Soare et al. instance."""
    report = safe_bai_bounds(soare)
    assert report.safety_values == pytest.approx((0, -1, 0, -0.099833), abs=5e-7)
    assert report.true_gamma == (1.0, 0.5, 1.0, 1.0)
    assert report.safe_rewards == pytest.approx((2, 0, 0, 1.990008), abs=5e-7)
    assert report.optimal_arm == 0 and report.safe_rewards[0] - report.safe_rewards[3] == pytest.approx(report.epsilon)
    assert math.isfinite(report.complexity_full) and report.complexity_safe > report.complexity_full


def test_lingape_complexity_closed_form():
    # Two orthogonal arms, θ = e_1, ε = 0: y = e_1 − e_2, w* = (1, −1), p* = (½, ½), ρ = 4;
    # the denominator is max(0, 0/3, 1/3)² = 1/9, so H = 2 · ½ · 4 · 9 = 36.
    assert lingape_complexity(np.eye(2), np.array([1.0, 0.0]), 0.0) == pytest.approx(36.0)
    # Two best arms tied and ε = 0: no finite sample separates them.
    assert lingape_complexity(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 1.0]), 0.0) == math.inf



def test_lingape_complexity_of_tiny_arms_is_that_of_the_rescaled_problem():
    """Arms of size 1e-300 with θ of size 1e300 have the same gaps and the same H_ε (was NaN)."""
    arms = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.995, 0.0998, 0.0]])
    theta = np.array([2.0, 0.0, 0.0])
    assert lingape_complexity(arms * 1e-300, theta * 1e300, 0.01) == pytest.approx(lingape_complexity(arms, theta, 0.01))

def cut_box(T: int = 3000):
    """Instance A with a box of half-width 0.2: the ball D^w (radius c/(‖B‖S) ≈ 0.39) leaves
    the box, so λ_− of the exploration law has no closed form."""
    mapping = {
        "kind": "safe-regret", "name": "cut-box", "action_set": {"kind": "box", "half_width": 0.2},
        "mu_star": [0.9043478260869565, 0.043478260869565216], "B": [[0.6, 1.8], [1.8, 0.4]], "c": 0.9, "T": T,
        "noise": {"kind": "gaussian", "sigma": 0.01}, "S": 1.0, "L": 0.3, "R": 1.0, "lambda": 1.0, "delta": 0.01,
    }
    return from_mapping(mapping)


def test_no_hidden_seed_decides_the_recorded_exploration_length():
    """With a Monte Carlo λ_−, T' is each run's own: the prepared options do not claim one,
    and each run records the T' it ran with (drawn from its own generator)."""
    prepared = prepare(RunRequest.of("safe-lucb", exploration="t23"), cut_box())
    assert prepared.options["exploration_rounds"] is None and prepared.options["exploration_budget"] is None
    assert any("Monte Carlo" in note for note in prepared.notes)
    for seed in (0, 2):
        run = run_once(prepared, seed=seed)
        learner = prepared.make_algorithm(run_streams(seed)[1])
        assert run.exploration_rounds == learner.exploration_rounds


def test_an_exact_lambda_minus_gives_the_exploration_length_up_front(amani_a):
    prepared = prepare(RunRequest.of("safe-lucb", exploration="t23"), amani_a)
    run = run_once(prepared, seed=0)
    assert prepared.options["exploration_rounds"] == run.exploration_rounds == 1200


def test_an_exploration_set_that_barely_meets_the_action_set_is_one_error_not_a_hang():
    """D^w of radius ≈ 0.39 against a box of half-width 10⁻⁴: rejection sampling of its
    uniform law would take for ever; bound and solve refuse the instance instead."""
    mapping = {
        "kind": "safe-regret", "name": "tiny", "action_set": {"kind": "box", "half_width": 1e-4},
        "mu_star": [0.9, 0.04], "B": [[0.6, 1.8], [1.8, 0.4]], "c": 0.9, "T": 100,
        "noise": {"kind": "gaussian", "sigma": 0.01}, "S": 1.0, "L": 1.0, "R": 1.0, "lambda": 1.0, "delta": 0.01,
    }
    instance = from_mapping(mapping)
    with pytest.raises(InstanceError, match="barely meets the action set"):
        safe_regret_bounds(instance)
    with pytest.raises(InstanceError, match="safe-lucb cannot run on this instance: the exploration set"):
        run_once(prepare(RunRequest.of("safe-lucb", exploration="10"), instance), seed=0)
