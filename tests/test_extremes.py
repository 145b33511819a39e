"""Inputs at the edges: nothing hangs, extreme numbers stay numbers, gaps are honest.

- Undecidable instances (an arm of X≥(x*) exactly on the boundary) are refused up front
  by ``prepare`` unless a budget is given, with the explanation ``cbai bound`` gives.
- Round lengths are bounded in logs; a round longer than a run can count
  (:data:`cbai_cli.contracts.options.QUERY_LIMIT`) is one line, or the end of a budgeted run.
- δ down to the smallest subnormal, huge sizes and B = 0 give numbers or one line.
- A design the solver cannot certify says so; a singular optimum is certified.
"""

from __future__ import annotations

import json
from dataclasses import replace
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from cbai_cli.algorithms.acol import ACOL
from cbai_cli.algorithms.base import AlgorithmConfig
from cbai_cli.kinds.cbai.bounds import at_least_set, compute_bounds, h_clb_design, undecidable_arms, undecidable_reason
from cbai_cli.cli.app import app
from cbai_cli.numerics.confidence import ConfidenceSettings, log_ratio, radius_horizon, radius_lingape_script, radius_static
from cbai_cli.numerics.design.rounding import round_design
from cbai_cli.contracts.errors import CbaiError, InstanceError, OptionError
from cbai_cli.kinds.cbai.families import generate_instance
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.kinds import save
from cbai_cli.kinds.cbai.noise import GaussianNoise
from cbai_cli.contracts.options import OPTIONS, QUERY_LIMIT, QueryLimitError
from cbai_cli.run.simulate import RunRequest, drive, prepare, run_once


UNDECIDABLE = "arm 1 lies exactly on the constraint boundary: no algorithm can decide it; give --budget"


def boundary_1d(arms=(0.1, 0.25, 0.5)) -> Instance:
    """1-D arms with φ = 1, τ = 0.25, θ = 1: arm 1 (0.25) is the best feasible arm and lies
    exactly on the boundary, so no finite number of queries decides it."""
    return Instance(name="boundary", arms=np.array(arms, dtype=float)[:, None], reward=np.ones(1),
                    constraint=np.ones(1), threshold=0.25, noise=GaussianNoise(0.05))


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_line_error(result, message: str | None = None) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("cbai: error: "), result.stderr
    assert "Traceback" not in result.stderr
    if message is not None:
        assert message in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def boundary_file(tmp_path):
    path = tmp_path / "boundary.yaml"
    save(boundary_1d(), path)
    return path


# --------------------------------------------------------------------------- #
# Nothing hangs: undecidable instances
# --------------------------------------------------------------------------- #


def test_an_arm_of_x_at_least_on_the_boundary_makes_the_instance_undecidable():
    assert undecidable_arms(boundary_1d()) == [1]
    assert undecidable_reason(boundary_1d()) == "arm 1 lies exactly on the constraint boundary: no algorithm can decide it"


def test_a_boundary_arm_less_rewarding_than_x_star_leaves_the_instance_decidable():
    # θ = −1: the smallest arm 0.1 is best; the boundary arm 0.25 is below it
    instance = Instance(name="b", arms=np.array([[0.1], [0.25], [0.5]]), reward=-np.ones(1), constraint=np.ones(1),
                        threshold=0.25, noise=GaussianNoise(0.05))
    assert instance.boundary_arms.tolist() == [1] and undecidable_arms(instance) == []


def test_undecidable_instances_are_exactly_those_with_infinite_h_clb():
    for instance in (boundary_1d(), boundary_1d((0.1, 0.2, 0.5)), boundary_1d((0.1, 0.25 + 1e-13, 0.5))):
        infinite = math.isinf(h_clb_design(instance, at_least_set(instance)).value)
        assert infinite == bool(undecidable_arms(instance))


def test_an_arm_within_the_boundary_tolerance_counts_as_on_the_boundary():
    instance = boundary_1d((0.1, 0.25 + 1e-13, 0.5))
    assert undecidable_arms(instance) == [1] and math.isinf(compute_bounds(instance).h_clb.value)


def scaled(instance: Instance, scale: float) -> Instance:
    """``instance`` in other units: arms, threshold and noise times ``scale`` (φ and θ kept)."""
    return Instance(name=instance.name, arms=instance.arms * scale, reward=instance.reward,
                    constraint=instance.constraint, threshold=instance.threshold * scale,
                    noise=GaussianNoise(instance.noise.sigma * scale))


@pytest.mark.parametrize("scale", [1e-30, 1e-7, 1e7, 1e30])
def test_the_boundary_does_not_depend_on_the_units(scale):
    # arm 1 on the boundary, arm 2 at 1e-13 off it (round-off), arm 3 a real gap, in any units
    instance = scaled(boundary_1d((0.1, 0.25, 0.25 + 1e-13, 0.5)), scale)
    assert instance.boundary_arms.tolist() == [1, 2]


def test_an_instance_in_tiny_units_is_decidable():
    # gaps of 5e-32: below the old absolute tolerance 1e-12, far from round-off
    instance = scaled(boundary_1d((0.1, 0.2, 0.5)), 1e-30)
    assert undecidable_arms(instance) == [] and math.isfinite(compute_bounds(instance).h_clb.value)


def solved_queries(tmp_path, scale: float, *options) -> int:
    """The queries of `cbai solve` on boundary_1d((0.1, 0.2, 0.5)) in units ``scale`` with ``options``."""
    path = tmp_path / f"scaled{scale:g}.yaml"
    save(scaled(boundary_1d((0.1, 0.2, 0.5)), scale), path)
    result = invoke("solve", path, *options, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["runs"][0]["iterations"]


def test_solve_runs_an_instance_in_tiny_units_as_in_unit_ones(tmp_path):
    # arms up to 5e-29: within the scales adaptive runs keep, gaps of 5e-30
    assert solved_queries(tmp_path, 1.0, "--seed", 3) == solved_queries(tmp_path, 1e-28, "--seed", 3)


@pytest.mark.parametrize("algorithm", ["uniform", "g-allocation", "acol", "oracle"])
def test_round_based_runs_on_small_arms_do_not_take_an_arm_never_pulled_as_known(algorithm):
    # arms of norm 1e-8 at σ = 1: deciding them takes about 10⁹ queries, so no run may stop
    # within 2,000; absolute cuts in the round's least squares once took the arm not yet pulled
    # as known exactly (width 0) and answered it, infeasible, after 1–202 queries
    instance = Instance(name="tiny", arms=[[1e-8, 0.0], [0.0, 1e-8]], reward=[1.0, 2.0], constraint=[0.6, 0.6],
                        threshold=0.3e-8)
    assert run_once(prepare(RunRequest.of(algorithm, budget=2000), instance), 0).stopped == "budget"


def test_acol_on_small_arms_runs_as_on_unit_ones():
    # ACOL's intervals carry no ridge, so a power-of-two change of units changes no number of the run
    runs = [run_once(prepare(RunRequest.of("acol", budget=10**5), scaled(boundary_1d((0.1, 0.2, 0.5)), scale)), 3)
            for scale in (1.0, 2.0**-40)]
    assert runs[0] == replace(runs[1], wall_s=runs[0].wall_s) and runs[0].correct


@pytest.mark.parametrize("scale", [1e-31, 1e31])
def test_solve_refuses_arms_beyond_the_scales_adaptive_runs_keep(tmp_path, scale):
    path = tmp_path / "far.yaml"
    save(scaled(boundary_1d((0.1, 0.2, 1.0)), scale), path)
    one_line_error(invoke("solve", path, "--lambda", 0.1 * scale**2), "outside the 1e-30 … 1e+30")


def test_solve_refuses_arms_whose_squares_underflow(tmp_path):
    # the largest norm of arms near 1e-300 was computed as 0 (their squares underflow) and
    # taken for all-zero arms: track-and-stop then answered a wrong arm after one query
    path = tmp_path / "subnormal.yaml"
    save(scaled(boundary_1d((0.1, 0.2, 1.0)), 1e-300), path)
    one_line_error(invoke("solve", path, "--budget", 200), "the arms' largest norm is 1e-300, outside")


def test_bound_of_arms_whose_design_value_overflows_is_one_line(tmp_path):
    # gaps of 1e-301 on arms of 1e-300: H_CLB is about 10^600, beyond float64
    path = tmp_path / "subnormal.yaml"
    save(scaled(boundary_1d((0.1, 0.2, 1.0)), 1e-300), path)
    one_line_error(invoke("bound", path), "the design's value overflows")


def test_solve_refuses_a_ridge_far_below_the_arms_squared_norm(tmp_path):
    path = tmp_path / "large.yaml"
    save(scaled(boundary_1d((0.1, 0.2, 0.5)), 2.0**33), path)
    one_line_error(invoke("solve", path, "--coordinates", "features"), "give --lambda in the arms' units")


def test_in_the_d_optimal_coordinates_large_arms_run_with_the_default_ridge_as_unit_ones(tmp_path):
    # there λ counts pulls of the D-optimal design, so the arms' units do not matter
    assert solved_queries(tmp_path, 1.0, "--seed", 5) == solved_queries(tmp_path, 2.0**33, "--seed", 5)


def test_in_the_d_optimal_coordinates_a_ridge_far_below_one_pull_is_one_line(tmp_path):
    path = tmp_path / "unit.yaml"
    save(boundary_1d((0.1, 0.2, 0.5)), path)
    one_line_error(invoke("solve", path, "--lambda", 1e-13), "give a larger --lambda")


def test_a_ridge_in_the_arms_units_runs_large_arms_as_unit_ones(tmp_path):
    # a power of two scales every number of the run exactly, so the runs are the same; in the
    # features' coordinates, where the ridge is in the arms' units (in the arms' D-optimal
    # coordinates, the default of ols, λ counts pulls of the D-optimal design: docs/ols.md)
    queries = [solved_queries(tmp_path, scale, "--lambda", 0.1 * scale**2, "--coordinates", "features", "--seed", 5)
               for scale in (1.0, 2.0**33)]
    assert queries[0] == queries[1]


def test_bound_names_the_undecidable_arm_in_its_notes():
    notes = compute_bounds(boundary_1d()).notes
    assert any(note.startswith("arm 1 lies exactly on the constraint boundary: no algorithm can decide it")
               for note in notes)


def test_prepare_refuses_an_undecidable_instance_without_a_budget():
    with pytest.raises(OptionError, match="no algorithm can decide it; give --budget") as caught:
        prepare(RunRequest.of("acol"), boundary_1d())
    assert str(caught.value) == UNDECIDABLE and caught.value.parameter == "budget"


@pytest.mark.parametrize("algorithm", ["acol", "g-allocation", "oracle", "uniform", "g-acol", "maxrew-f"])
def test_prepare_refuses_every_algorithm_on_an_undecidable_instance(algorithm):
    with pytest.raises(OptionError, match="give --budget"):
        prepare(RunRequest.of(algorithm), boundary_1d(), solve_oracle=False)


def test_prepare_accepts_an_undecidable_instance_with_a_budget():
    assert prepare(RunRequest.of("acol", budget=1000), boundary_1d()).budget == 1000


def test_a_budgeted_run_on_an_undecidable_instance_stops_at_its_budget():
    result = run_once(prepare(RunRequest.of("g-acol", budget=500), boundary_1d()), seed=0)
    assert result.stopped == "budget" and result.iterations == 500


def test_a_decidable_instance_with_a_boundary_arm_below_x_star_still_stops():
    instance = Instance(name="b", arms=np.array([[0.1], [0.25], [0.5]]), reward=-np.ones(1), constraint=np.ones(1),
                        threshold=0.25, noise=GaussianNoise(0.05))
    result = run_once(prepare(RunRequest.of("acol"), instance), seed=0)
    assert result.stopped == "solved" and result.correct


def test_solve_refuses_an_undecidable_instance_in_one_line(boundary_file):
    stderr = one_line_error(invoke("solve", boundary_file, "--algo", "acol"))
    assert stderr == f"cbai: error: {UNDECIDABLE}\n"


def test_compare_refuses_an_undecidable_instance_in_one_line(boundary_file):
    one_line_error(invoke("compare", boundary_file, "--algos", "acol", "--seeds", "2", "--jobs", "1", "-q"), UNDECIDABLE)


def test_solve_on_an_undecidable_instance_with_a_budget_exits_with_code_one(boundary_file):
    result = invoke("solve", boundary_file, "--algo", "acol", "--budget", "100000", "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["runs"][0]["stopped"] == "budget" and document["h_clb"] is None
    assert any("no algorithm can decide it" in note for note in document["notes"])


# --------------------------------------------------------------------------- #
# Nothing hangs: round lengths no run can count
# --------------------------------------------------------------------------- #


def test_round_based_rounds_that_outgrow_the_query_limit_end_a_budgeted_run():
    # the doubling rounds on an undecidable instance reach 10^15 queries after ~40 rounds
    result = run_once(prepare(RunRequest.of("g-allocation", budget=QUERY_LIMIT), boundary_1d()), seed=0)
    assert result.stopped == "budget" and result.iterations <= QUERY_LIMIT


def test_acol_with_an_absurd_epsilon_is_refused_in_one_line():
    one_line_error(invoke("solve", "instances/regret-1d.yaml", "--algo", "acol", "--epsilon", "1e300"),
                   "round 1 would ask for 6.64e+299 queries")


def test_acol_with_an_absurd_epsilon_names_the_option_to_change():
    stderr = one_line_error(invoke("solve", "instances/regret-1d.yaml", "--algo", "acol", "--epsilon", "1e300"))
    assert "choose a smaller --epsilon, or give --budget" in stderr


def test_acol_with_a_tiny_epsilon_is_refused_in_one_line():
    one_line_error(invoke("solve", "instances/regret-1d.yaml", "--algo", "acol", "--epsilon", "1e-300"),
                   "r(ε) = ⌈p(1+ε)/ε⌉ for support size p = 1 and --epsilon 1e-300")


def test_acol_with_an_absurd_epsilon_and_a_budget_gives_the_anytime_answer():
    result = invoke("solve", "instances/regret-1d.yaml", "--algo", "acol", "--epsilon", "1e300", "--budget", "1000",
                    "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["runs"][0] | {"wall_s": 0} == {
        "seed": 0, "iterations": 0, "recommended": 0, "label": None, "correct": False, "violation": False,
        "stopped": "budget", "wall_s": 0}


def test_compare_with_an_absurd_epsilon_is_one_line():
    one_line_error(invoke("compare", "instances/regret-1d.yaml", "--algos", "acol", "--epsilon", "1e300", "--seeds",
                          "1", "--jobs", "1", "-q"), "more than one run can count")


def test_acol_round_length_is_refused_before_it_overflows():
    problem = generate_instance("regret-1d").problem
    config = AlgorithmConfig("static", ConfidenceSettings(delta=0.05, subgaussian=1.0), rounding_epsilon=1e300)
    with pytest.raises(QueryLimitError, match="round 40 would ask for"):
        ACOL(problem, config, np.random.default_rng(0)).round_counts(40)


class _TooLarge:
    """A learner whose next query is larger than a run can count."""

    done = False

    def ask(self):
        raise QueryLimitError("too large")


@pytest.mark.parametrize("options,source", [
    ({"ridge": 1e300}, "√λ·S with --lambda 1e+300 and --S 1"),
    ({"norm_bound": 1e300}, "√λ·S with --lambda 0.1 and --S 1e+300"),
    ({"subgaussian": 1e100}, "R·√(d log(1/δ)) with --subgaussian 1e+100 and --delta 0.05"),
])
def test_an_adaptive_run_that_could_never_stop_is_refused_naming_its_options(options, source):
    with pytest.raises(OptionError, match="more than one run can count") as caught:
        prepare(RunRequest.of("g-acol", **options), generate_instance("regret-1d"))
    assert f"({source})" in str(caught.value)


def test_a_tuned_run_with_an_absurd_beta_is_refused_in_one_line():
    one_line_error(invoke("solve", "instances/regret-1d.yaml", "--algo", "g-acol", "--regime", "tuned", "--beta",
                          "1e300"), "the confidence radius is at least 1e+150 (√β with --beta 1e+300)")


def test_an_adaptive_run_with_absurd_options_and_a_budget_runs_to_its_budget():
    result = run_once(prepare(RunRequest.of("g-acol", regime="tuned", beta=1e300, budget=200),
                              generate_instance("regret-1d")), seed=0)
    assert result.stopped == "budget" and result.iterations == 200


def test_round_based_runs_with_an_absurd_noise_scale_are_one_line():
    one_line_error(invoke("solve", "instances/regret-1d.yaml", "--algo", "g-allocation", "--subgaussian", "1e100"),
                   "round 1 would ask for 1.76e+201 queries")


def test_usual_options_are_not_refused_as_unreachable():
    prepare(RunRequest.of("g-acol", regime="tuned", beta=100.0), generate_instance("irrelevant-dims", d=10, eps=0.05))


def test_drive_ends_a_budgeted_run_at_a_query_too_large_to_count():
    outcome = drive(_TooLarge(), environment=None, budget=10)
    assert outcome.stopped == "budget" and outcome.used == 0


def test_drive_reports_a_query_too_large_to_count_without_a_budget():
    with pytest.raises(QueryLimitError):
        drive(_TooLarge(), environment=None, budget=None)


def test_a_budget_above_the_query_limit_is_refused():
    with pytest.raises(OptionError, match=r"--budget must be at most 1e\+15, got 1,000,000,000,000,001$"):
        OPTIONS["budget"].check(QUERY_LIMIT + 1)


def test_a_budget_of_hundreds_of_digits_is_shown_as_a_float_in_its_refusal():
    with pytest.raises(OptionError, match=r"--budget must be at most 1e\+15, got 1e\+300$"):
        OPTIONS["budget"].check(int(1e300))


def test_round_design_refuses_more_pulls_than_floating_point_counts():
    with pytest.raises(ValueError, match="at most 2"):
        round_design([0.5, 0.5], 10**20)


def test_round_design_apportions_the_largest_exact_count():
    assert round_design([0.25, 0.75], 2**53).sum() == 2**53


# --------------------------------------------------------------------------- #
# Extreme numbers: δ
# --------------------------------------------------------------------------- #


def test_log_ratio_is_the_plain_log_where_the_quotient_is_representable():
    assert log_ratio(10, 0.0025) == math.log(10 / 0.0025)


def test_log_ratio_survives_an_overflowing_quotient():
    assert log_ratio(10.0, 5e-324) == pytest.approx(math.log(10.0) - math.log(5e-324))


def test_log_ratio_uses_the_exact_log_of_an_underflowed_denominator():
    assert log_ratio(10.0, (1e-300) ** 2, 2 * math.log(1e-300)) == pytest.approx(math.log(10.0) + 600 * math.log(10))


def test_static_radius_with_an_underflowed_round_delta_is_finite():
    radius = radius_static(10, 0.0, 1.0, log_delta_round=2 * math.log(1e-300))
    assert radius == pytest.approx(math.sqrt(2 * (math.log(10) + 600 * math.log(10))))


def test_horizon_radius_with_the_smallest_subnormal_delta_is_finite():
    assert math.isfinite(radius_horizon(100, 3, 0.1, 1.0, 1.0, 1.0, 5e-324))


def test_lingape_radius_with_an_underflowing_delta_is_finite():
    assert math.isfinite(radius_lingape_script(100, 3, 1e-10, 1.0, 1.0, 1.0, 1e-300, 5))


@pytest.mark.parametrize("algorithm", ["acol", "g-allocation", "oracle", "g-acol"])
def test_runs_with_delta_1e_minus_300_stop_correctly(algorithm):
    result = run_once(prepare(RunRequest.of(algorithm, delta=1e-300), generate_instance("regret-1d")), seed=0)
    assert result.stopped == "solved" and result.correct


def test_g_acol_with_the_smallest_subnormal_delta_stops():
    result = run_once(prepare(RunRequest.of("g-acol", regime="det", delta=5e-324), generate_instance("regret-1d")),
                      seed=0)
    assert result.stopped == "solved" and result.correct


def test_bound_with_delta_1e_minus_300_gives_finite_numbers():
    report = compute_bounds(generate_instance("regret-1d"), delta=1e-300)
    expected = 2 * (300 * math.log(10) - math.log(2.4)) * 36
    assert report.lower_bound == pytest.approx(expected, rel=1e-6) and math.isfinite(report.acol_upper_bound)


def test_bound_cli_with_delta_1e_minus_300_prints_numbers():
    result = invoke("bound", "instances/regret-1d.yaml", "--delta", "1e-300", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["lower_bound"] > 0 and document["acol_upper_bound"] > 0


def test_bound_with_the_smallest_subnormal_delta_gives_finite_numbers():
    report = compute_bounds(generate_instance("regret-1d"), delta=5e-324)
    assert math.isfinite(report.lower_bound) and math.isfinite(report.acol_upper_bound)


def test_bound_with_an_absurd_epsilon_prints_numbers():
    result = invoke("bound", "instances/regret-1d.yaml", "--epsilon", "1e300", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["acol_upper_bound"] > 1e300


# --------------------------------------------------------------------------- #
# Extreme numbers: sizes and B = 0
# --------------------------------------------------------------------------- #


def test_generate_refuses_an_instance_beyond_the_memory_limit():
    one_line_error(invoke("generate", "random", "--n", str(10**12)),
                   "random: n = 1000000000000, d = 5 would take about 564 TiB of memory, more than the limit of 4 GiB")


def test_generate_names_the_size_options_to_shrink():
    one_line_error(invoke("generate", "irrelevant-dims", "--d", str(10**6)), "choose a smaller d")


def test_generate_refuses_a_unit_sphere_beyond_the_memory_limit():
    one_line_error(invoke("generate", "unit-sphere", "--d", "30", "--n", "100000000"),
                   "unit-sphere: n = 100000000, d = 30 would take about")


def test_generate_accepts_an_instance_under_the_memory_limit(tmp_path):
    assert invoke("generate", "random", "--d", "5", "--n", "1000", "-o", tmp_path / "r.npz").exit_code == 0


def test_compare_refuses_seeds_beyond_the_memory_limit():
    stderr = one_line_error(invoke("compare", "instances/regret-1d.yaml", "--algos", "acol", "--seeds", str(10**12),
                                   "-q"), "--seeds 1000000000000 would keep about")
    assert "more than the limit of 4 GiB" in stderr and "seeds fit" in stderr



def test_solve_refuses_runs_beyond_the_memory_limit():
    stderr = one_line_error(invoke("solve", "instances/regret-1d.yaml", "--runs", str(10**12)),
                            "--runs 1000000000000 would keep about")
    assert "more than the limit of 4 GiB (CBAI_MEMORY_LIMIT raises it): at most 1,048,576 runs fit" in stderr

def test_compare_refuses_a_generator_spec_beyond_the_memory_limit():
    one_line_error(invoke("compare", f"random:n={10**12}", "--algos", "acol", "--seeds", "1", "-q"), "random: n =")


def zero_b_instance():
    from cbai_cli.kinds import from_mapping

    mapping = generate_instance("amani-a", T=100).to_mapping()
    mapping["B"] = [[0.0, 0.0], [0.0, 0.0]]
    return from_mapping(mapping)


def test_safe_regret_bound_with_zero_b_is_one_instance_error():
    from cbai_cli.kinds.safe.bounds import safe_regret_bounds

    with pytest.raises(InstanceError, match="B = 0: every action is safe"):
        safe_regret_bounds(zero_b_instance())


def test_bound_cli_on_a_safe_regret_file_with_zero_b_is_one_line(tmp_path):
    path = tmp_path / "zero-b.yaml"
    save(zero_b_instance(), path)
    one_line_error(invoke("bound", path), "Safe-LUCB's constants (λ_−, t_δ, T_Δ, T_0) are undefined on this instance")


def test_a_horizon_beyond_the_limit_is_refused_as_an_option():
    with pytest.raises(OptionError, match=r"--T must be at most 1e\+08"):
        OPTIONS["horizon"].check(10**12)


def test_a_safe_regret_file_with_a_horizon_beyond_the_limit_is_one_line(tmp_path):
    path = tmp_path / "long.yaml"
    save(generate_instance("amani-a", T=10**12), path)
    one_line_error(invoke("solve", path, "--algo", "safe-lucb"), "T = 1000000000000 rounds is more than a run can keep")


def test_a_safe_regret_file_with_a_long_horizon_runs_with_a_shorter_t(tmp_path):
    path = tmp_path / "long.yaml"
    save(generate_instance("amani-a", T=10**12), path)
    assert invoke("solve", path, "--algo", "safe-lucb", "--T", "200", "--exploration", "20").exit_code == 0


# --------------------------------------------------------------------------- #
# Honest numbers
# --------------------------------------------------------------------------- #


def uncertified_report():
    """Bounds of an instance with no feasible arm (X≥ = X: many targets, a gap above zero)
    asked of the solver to an unreachable tolerance."""
    import dataclasses

    from cbai_cli.kinds import load

    instance = dataclasses.replace(load("instances/random-d5-n20-seed0.yaml"), threshold=-100.0)
    return compute_bounds(instance, solver="fw", tolerance=1e-18)


def test_an_uncertified_design_gap_is_named_in_the_notes():
    report = uncertified_report()
    assert report.h_clb.gap > 1e-18
    assert any(f"stopped at a relative gap of {report.h_clb.gap:.1e}, short of its target 1e-18: H_CLB lies between"
               in note for note in report.notes)


def test_theorem_1_uses_the_certified_lower_end_of_an_uncertified_h_clb():
    report = uncertified_report()
    assert report.lower_bound == pytest.approx(2 * math.log(1 / (2.4 * 0.05)) * report.h_clb.value
                                               * (1 - report.h_clb.gap), rel=1e-12)
    assert report.lower_bound < 2 * math.log(1 / (2.4 * 0.05)) * report.h_clb.value


def test_json_gap_is_the_certified_gap():
    report = uncertified_report()
    assert report.to_json()["gap"] == max(report.h_clb.gap, report.h_clb_bar.gap) > 1e-18


def test_a_certified_design_adds_no_gap_note():
    report = compute_bounds(generate_instance("irrelevant-dims", d=10, eps=0.05))
    assert not any("stopped at a relative gap" in note for note in report.notes)


def test_a_singular_h_clb_design_is_certified():
    # X≥(x*) has 8 arms in d = 15: the optimal design is singular and the barrier method
    # alone stalled at a gap of 2e-4 here
    instance = generate_instance("random", d=15, n=1000, seed=5)
    design = h_clb_design(instance, at_least_set(instance), solver="fw")
    assert design.gap <= 1e-6 and design.value == pytest.approx(19.58403, rel=1e-6)


def test_errors_raised_here_are_user_errors():
    assert issubclass(QueryLimitError, CbaiError)



def test_arms_too_large_for_the_fits_are_refused_even_with_a_budget(tmp_path):
    arms = np.random.default_rng(0).standard_normal((20, 5)) * 1e90
    instance = Instance(name="huge", arms=arms, reward=np.ones(5), constraint=np.ones(5) * 1e-90, threshold=0.0,
                        noise=GaussianNoise(0.05))
    path = tmp_path / "huge.npz"
    save(instance, path)
    one_line_error(invoke("solve", path, "--budget", "2000"), "outside the 1e-30 … 1e+30")


# ------------------------------------------------------------ numbers whose squares overflow, scales 10²⁰ apart
def _one_line(result, text):
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and text in result.stderr, result.stderr


def test_a_noise_level_whose_square_overflows_is_refused_in_a_file(tmp_path):
    path = tmp_path / "loud.yaml"
    path.write_text("kind: cbai\nname: loud\narms: [[1.0, 0.0], [0.0, 1.0]]\nreward: [1.0, 0.5]\n"
                    "constraint: [0.5, -0.5]\nthreshold: 0.0\nnoise: {kind: gaussian, sigma: 1.0e+200}\n")
    _one_line(CliRunner().invoke(app, ["bound", str(path)]), "noise.sigma: must lie within ±1e+100")


def test_a_noise_level_whose_square_overflows_is_refused_by_generate(tmp_path):
    result = CliRunner().invoke(app, ["generate", "regret-1d", "--sigma", "1e200", "-o", str(tmp_path / "x.yaml")])
    _one_line(result, "--sigma must be at most 1e+100")


def test_a_subgaussian_scale_whose_square_overflows_is_refused(tmp_path):
    path = tmp_path / "r.yaml"
    save(generate_instance("regret-1d"), path)
    result = CliRunner().invoke(app, ["solve", str(path), "--subgaussian", "1e155", "--budget", "10"])
    _one_line(result, "--subgaussian must lie in (0, 1e+100]")


def scales_apart(tmp_path):
    """Arms e1 and 10⁻²⁰·e2: in each other's span mathematically, not at the solver's tolerance."""
    path = tmp_path / "scales.yaml"
    path.write_text("kind: cbai\nname: scales\narms: [[1.0, 0.0], [0.0, 1.0e-20]]\nreward: [1.0, 0.5]\n"
                    "constraint: [0.2, 0.9]\nthreshold: 0.6\nnoise: {kind: gaussian, sigma: 0.05}\n")
    return path


def test_bound_on_arms_of_scales_far_apart_is_one_line(tmp_path):
    _one_line(CliRunner().invoke(app, ["bound", str(scales_apart(tmp_path))]), "cannot be solved in floating point")


def test_a_round_based_run_on_arms_of_scales_far_apart_is_one_line(tmp_path):
    result = CliRunner().invoke(app, ["solve", str(scales_apart(tmp_path)), "--algo", "acol", "--budget", "100"])
    _one_line(result, "cannot be solved in floating point")


def test_an_adaptive_run_on_arms_of_scales_far_apart_keeps_its_result_without_the_bounds(tmp_path):
    result = CliRunner().invoke(app, ["solve", str(scales_apart(tmp_path)), "--algo", "g-acol", "--regime", "tuned",
                                      "--beta", "0.25", "--budget", "100", "--json"])
    document = json.loads(result.stdout)
    assert result.exit_code in (0, 1) and len(document["runs"]) == 1
    assert document["h_clb"] is None
    assert any("cannot be solved in floating point" in note for note in document["notes"])
