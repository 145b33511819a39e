"""cbai_cli.kinds.cbai.bounds against closed forms (paper Definition 2, Theorem 1, Proposition 1,
Theorem 2), and the choices the module documents where the paper is silent.

Most instances use orthonormal arms e_1..e_d. Then A_λ = diag(λ) and
‖e_i‖²_{A_λ⁻¹} = 1/λ_i, so min_λ max_{i∈S} 1/(λ_i g_i²) is attained at λ_i ∝ 1/g_i² on S
with value Σ_{i∈S} 1/g_i². In one dimension ‖x‖²_{A_λ⁻¹} = x²/Σλ_i x_i², so the min-max
is max_{x∈S} (x/g(x))² / max_i x_i², all weight on the longest arm.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cbai_cli.kinds.cbai.bounds import (
    DesignSummary,
    at_least_set,
    bound_skip_reason,
    compute_bounds,
    h_clb_design,
    json_number,
    kl_of_errors,
    oracle_design,
)
from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds.cbai.families import family, make_noise
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.kinds.cbai.noise import GaussianNoise

# The designs are certified to a relative gap of 1e-6 (the default tolerance).
REL = 1e-5


def orthonormal(constraint, reward=(2.0, 1.0, 3.0), threshold: float = 1.0, sigma: float = 0.05) -> Instance:
    """Arms e_1, e_2, e_3 with φ = ``constraint``; g_i = φ_i − τ."""
    return Instance(name="orthonormal", arms=np.eye(3), reward=np.array(reward, dtype=float),
                    constraint=np.array(constraint, dtype=float), threshold=threshold, noise=GaussianNoise(sigma))


# g = (−0.5, 0.5, 1): only arm 0 is feasible, x* = arm 0 (reward 2); X≥ = {0, 2} (rewards 2 and 3).
# H_CLB = 1/0.5² + 1/1² = 5 with λ = (4, 0, 1)/5; H̄_CLB = 4 + 4 + 1 = 9 with λ = (4, 4, 1)/9;
# C⁺_min = 0.5; Proposition 1: 3/0.5² = 12.
BASIC = (0.5, 1.5, 2.0)


def one_dimensional() -> Instance:
    """Arms 1, 2, 3; θ = −1 (smaller is better), φ = 1, τ = 2.5: g = (−1.5, −0.5, 0.5).

    x* = 1 (arm 0) and X≥ = {1} alone: H_CLB = (1/1.5)²/3² = (4/9)/9 = 4/81.
    H̄_CLB is set by arm 2: (3/0.5)²/3² = 36/9 = 4 (arm 1 gives (2/0.5)²/9 = 16/9).
    """
    return Instance(name="1d", arms=np.array([[1.0], [2.0], [3.0]]), reward=np.array([-1.0]),
                    constraint=np.array([1.0]), threshold=2.5, noise=GaussianNoise(0.05))


# --------------------------------------------------------------------------- #
# Definition 2: H_CLB, and H̄_CLB over all arms
# --------------------------------------------------------------------------- #


def test_x_at_least_holds_the_arms_at_least_as_rewarding_as_the_best():
    assert at_least_set(orthonormal(BASIC)).tolist() == [True, False, True]


def test_x_at_least_includes_arms_tied_with_the_best_reward():
    # rewards (2, 2, 3), x* = arm 0: arm 1 ties it, so it is in X≥ although it is infeasible.
    assert at_least_set(orthonormal(BASIC, reward=(2.0, 2.0, 3.0))).tolist() == [True, True, True]


def test_h_clb_of_orthonormal_arms_sums_inverse_squared_gaps_over_x_at_least():
    # X≥ = {0, 2}: 1/0.5² + 1/1² = 4 + 1 = 5
    assert compute_bounds(orthonormal(BASIC)).h_clb.value == pytest.approx(5.0, rel=REL)


def test_h_clb_design_of_orthonormal_arms_weights_each_arm_by_its_inverse_squared_gap():
    # λ ∝ (4, 0, 1): arm 1 lies outside X≥ and gets nothing
    np.testing.assert_allclose(compute_bounds(orthonormal(BASIC)).h_clb.weights, [0.8, 0.0, 0.2], atol=1e-4)


def test_h_clb_bar_of_orthonormal_arms_sums_inverse_squared_gaps_over_every_arm():
    # 1/0.5² + 1/0.5² + 1/1² = 9
    assert compute_bounds(orthonormal(BASIC)).h_clb_bar.value == pytest.approx(9.0, rel=REL)


def test_h_clb_bar_design_of_orthonormal_arms_weights_every_arm():
    np.testing.assert_allclose(compute_bounds(orthonormal(BASIC)).h_clb_bar.weights, [4 / 9, 4 / 9, 1 / 9], atol=1e-4)


def test_h_clb_in_one_dimension_is_the_largest_ratio_over_the_longest_arm():
    assert compute_bounds(one_dimensional()).h_clb.value == pytest.approx(4 / 81, rel=REL)


def test_h_clb_bar_in_one_dimension_counts_the_arms_outside_x_at_least():
    assert compute_bounds(one_dimensional()).h_clb_bar.value == pytest.approx(4.0, rel=REL)


def test_h_clb_design_over_a_chosen_mask():
    # X≥ of BASIC without arm 0: only arm 2, g = 1, so 1/1² = 1 with all weight on arm 2
    summary = h_clb_design(orthonormal(BASIC), np.array([False, False, True]))
    assert summary.value == pytest.approx(1.0, rel=REL)
    assert summary.weights[2] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("solver", ["auto", "fw", "cvxpy"])
def test_every_solver_finds_the_closed_form_h_clb(solver):
    assert compute_bounds(orthonormal(BASIC), solver=solver).h_clb.value == pytest.approx(5.0, rel=REL)


@pytest.mark.parametrize("seed", range(6))
def test_h_clb_bar_is_at_least_h_clb(seed):
    """X≥(x*) ⊆ X, so the max of H̄_CLB runs over more arms (Theorem 2)."""
    report = compute_bounds(family("random").generate(d=3, n=8, seed=seed))
    # both values are within a relative 1e-6 above their optimum
    assert report.h_clb.value <= report.h_clb_bar.value * (1 + 2e-6)


# --------------------------------------------------------------------------- #
# Theorem 1: the lower bound 2 log(1/(2.4δ))·H_CLB
# --------------------------------------------------------------------------- #


def test_theorem_1_lower_bound_is_2_log_of_1_over_2_4_delta_times_h_clb():
    # δ = 0.05: 2.4δ = 0.12; 2·log(1/0.12)·5 = 10·log(25/3) = 10 × 2.1202635 = 21.202635
    assert compute_bounds(orthonormal(BASIC), delta=0.05).lower_bound == pytest.approx(21.202635, rel=REL)


def test_theorem_1_lower_bound_grows_with_log_1_over_delta():
    # δ = 0.001: 2·log(1/0.0024)·5 = 10 × 6.0322865 = 60.322865
    assert compute_bounds(orthonormal(BASIC), delta=0.001).lower_bound == pytest.approx(60.322865, rel=REL)


def test_theorem_1_lower_bound_scales_with_the_noise_variance():
    # σ = 0.1: 21.202635 × 0.01
    report = compute_bounds(orthonormal(BASIC, sigma=0.1), delta=0.05)
    assert report.noise_variance == pytest.approx(0.01)
    assert report.lower_bound_noise == pytest.approx(0.21202635, rel=REL)


def test_theorem_1_unit_noise_bound_does_not_depend_on_sigma():
    quiet = compute_bounds(orthonormal(BASIC, sigma=0.01)).lower_bound
    loud = compute_bounds(orthonormal(BASIC, sigma=3.0)).lower_bound
    assert quiet == pytest.approx(loud, rel=1e-9)


def test_theorem_1_has_no_noise_scaled_bound_for_binary_feedback():
    report = compute_bounds(family("regret-1d").generate(make_noise("binary", None, 0.05)))
    assert report.noise_variance is None and report.lower_bound_noise is None
    # regret-1d: H_CLB = 36, so 2·log(1/0.12)·36 = 152.65897 (the README's solve example)
    assert report.lower_bound == pytest.approx(152.65897, rel=REL)


@pytest.mark.parametrize("delta", [1 / 2.4, 0.5, 0.9])
def test_theorem_1_gives_zero_when_delta_is_at_least_1_over_2_4(delta):
    report = compute_bounds(orthonormal(BASIC), delta=delta)
    assert report.lower_bound == 0.0
    assert any("1/2.4" in note for note in report.notes)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1])
def test_delta_outside_the_open_unit_interval_is_refused(delta):
    with pytest.raises(OptionError, match="--delta"):
        compute_bounds(orthonormal(BASIC), delta=delta)


# --------------------------------------------------------------------------- #
# Theorem 1 before its last step: 2 kl(δ, 1 − δ)·H_CLB (docs/lower-bound.md)
# --------------------------------------------------------------------------- #


def test_kl_of_errors_by_hand():
    # kl(0.05, 0.95) = 0.05·log(0.05/0.95) + 0.95·log(0.95/0.05) = 0.9·log 19 = 2.6499951
    assert kl_of_errors(0.05) == pytest.approx(2.6499951, rel=1e-7)


@given(st.floats(min_value=1e-300, max_value=1 / 2.4, exclude_max=True))
def test_kl_of_errors_is_at_least_the_log_theorem_1_relaxes_it_to(delta):
    assert kl_of_errors(delta) >= math.log(1 / (2.4 * delta)) - 1e-12


@pytest.mark.parametrize("delta", [0.5, 0.7])
def test_kl_of_errors_is_zero_from_one_half(delta):
    assert kl_of_errors(delta) == 0.0


def test_unrelaxed_lower_bound_is_2_kl_times_h_clb():
    # 2 × 2.6499951 × 5 = 26.499951, 25 % above Theorem 1's 21.202635
    report = compute_bounds(orthonormal(BASIC), delta=0.05)
    assert report.lower_bound_kl == pytest.approx(26.499951, rel=REL)
    assert report.lower_bound_kl / report.lower_bound == pytest.approx(1.2498, abs=1e-4)


def test_unrelaxed_lower_bound_scales_with_the_noise_variance():
    report = compute_bounds(orthonormal(BASIC, sigma=0.1), delta=0.05)
    assert report.lower_bound_kl_noise == pytest.approx(0.26499951, rel=REL)


def test_unrelaxed_lower_bound_has_no_noise_scaled_value_for_binary_feedback():
    report = compute_bounds(family("regret-1d").generate(make_noise("binary", None, 0.05)))
    assert report.lower_bound_kl_noise is None and report.lower_bound_kl > report.lower_bound


def test_unrelaxed_lower_bound_is_positive_where_theorem_1_gives_zero():
    # δ = 0.45: kl = 0.1·log(0.55/0.45) = 0.0200671, so 2 × 0.0200671 × 5 = 0.200671
    report = compute_bounds(orthonormal(BASIC), delta=0.45)
    assert report.lower_bound == 0.0
    assert report.lower_bound_kl == pytest.approx(0.200671, rel=REL)
    assert any("unrelaxed form" in note for note in report.notes)


def test_a_sequential_test_spends_the_kl_of_its_error_chances():
    """Kaufmann et al. (2016), Lemma 1, the step the unrelaxed bound keeps: E_ν[τ]·KL(ν, ν′)
    ≥ kl(P_ν(E), P_ν′(E)). Wald's sequential probability ratio test between N(−μ, 1) and
    N(μ, 1) comes close to equality (its only loss is the overshoot of its thresholds), so
    the kl form is nearly attained while log(1/(2.4δ)) at the test's error is 20 % below it."""
    mu, threshold, runs = 0.5, math.log(19.0), 20_000
    rng = np.random.default_rng(20261204)

    def sprt(mean):
        llr, steps = np.zeros(runs), np.zeros(runs, dtype=np.int64)
        running = np.ones(runs, dtype=bool)
        while running.any():
            llr[running] -= 2.0 * mu * rng.normal(mean, 1.0, running.sum())
            steps[running] += 1
            running &= np.abs(llr) < threshold
        return steps, llr >= threshold  # E: "the mean is −μ"

    steps, said_minus = sprt(-mu)
    p = said_minus.mean()
    q = sprt(mu)[1].mean()
    kl = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
    spent = steps.mean() * (2 * mu) ** 2 / 2  # E[τ]·KL(N(−μ,1), N(μ,1))
    error = max(1 - p, q)
    assert spent >= kl
    assert spent <= 1.1 * kl
    assert math.log(1 / (2.4 * error)) <= 0.85 * kl


# --------------------------------------------------------------------------- #
# Proposition 1: C⁺_min and d/(C⁺_min)²
# --------------------------------------------------------------------------- #


def test_c_min_is_the_smallest_absolute_gap_over_all_arms():
    # g = (−0.2, 0.5, 1): the closest arm is feasible, below the boundary
    assert compute_bounds(orthonormal((0.8, 1.5, 2.0))).c_min == pytest.approx(0.2)


def test_c_min_counts_arms_outside_x_at_least():
    # one_dimensional: g = (−1.5, −0.5, 0.5) and X≥ = {arm 0}: still 0.5
    assert compute_bounds(one_dimensional()).c_min == pytest.approx(0.5)


def test_proposition_1_bound_is_d_over_c_min_squared():
    # 3/0.5² = 12
    assert compute_bounds(orthonormal(BASIC)).prop1_bound == pytest.approx(12.0)


def test_proposition_1_uses_the_rank_of_arms_that_do_not_span():
    """Documented choice: d is the rank of the arms, the span on which φ is identified."""
    # arms e_1, e_2, e_1 + e_2 in R³; g = (0.5 − 1, 1.5 − 1, 2 − 1) = (−0.5, 0.5, 1): 2/0.5² = 8
    instance = Instance(name="plane", arms=np.array([[1.0, 0, 0], [0, 1.0, 0], [1.0, 1.0, 0]]),
                        reward=np.array([2.0, 1.0, 0.0]), constraint=np.array([0.5, 1.5, 7.0]), threshold=1.0)
    report = compute_bounds(instance)
    assert (report.dim, report.rank) == (3, 2)
    assert report.prop1_bound == pytest.approx(8.0)


def test_arms_that_do_not_span_are_noted():
    instance = Instance(name="plane", arms=np.array([[1.0, 0, 0], [0, 1.0, 0]]), reward=np.array([1.0, 0, 0]),
                        constraint=np.array([0.5, 2.0, 7.0]), threshold=1.0)
    assert any("2-dimensional subspace of R^3" in note for note in compute_bounds(instance).notes)


def test_proposition_1_counts_the_constant_feature_of_an_unknown_threshold():
    # The learner's arms are (x, 1): rank 2; C⁺_min = 0.5 as before: 2/0.5² = 8
    instance = Instance(name="1d", arms=np.array([[1.0], [2.0], [3.0]]), reward=np.array([-1.0]),
                        constraint=np.array([1.0]), threshold=2.5, threshold_known=False)
    report = compute_bounds(instance)
    assert report.rank == 2
    assert report.prop1_bound == pytest.approx(8.0)


def test_proposition_1_is_tight_for_orthonormal_arms_equidistant_from_the_boundary():
    """The tight instance of Proposition 1: all |g| = c, all arms in X≥ (equal rewards)."""
    # c = 0.25: H_CLB = 3 × 1/0.25² = 48 = 3/0.25²
    report = compute_bounds(orthonormal((-0.25, 0.25, 0.25), reward=(0.0, 0.0, 0.0), threshold=0.0))
    assert report.h_clb.value == pytest.approx(48.0, rel=REL)
    assert report.prop1_bound == pytest.approx(48.0)


@pytest.mark.parametrize("seed", range(6))
def test_h_clb_bar_is_at_most_the_proposition_1_bound(seed):
    report = compute_bounds(family("random").generate(d=3, n=8, seed=seed))
    assert report.h_clb_bar.value <= report.prop1_bound * (1 + 2e-6)


# --------------------------------------------------------------------------- #
# Theorem 2: ACOL's upper bound 8 log(K t̄²/δ²)(1+ε) t̄ H̄_CLB + t̄, t̄ = ⌈−log₂ C⁺_min⌉
# --------------------------------------------------------------------------- #


def test_theorem_2_acol_bound_by_hand():
    # K = 3, C⁺_min = 0.5 → t̄ = 1; H̄_CLB = 9; δ = 0.05, ε = 0.01:
    # 8·log(3/0.0025)·1.01·1·9 + 1 = 8 × 7.0900768 × 1.01 × 9 + 1 = 516.59039
    report = compute_bounds(orthonormal(BASIC), delta=0.05, epsilon=0.01)
    assert report.acol_upper_bound == pytest.approx(516.59039, rel=REL)


def test_theorem_2_rounds_t_bar_up():
    # g = (−0.3, 0.5, 1): C⁺_min = 0.3, −log₂ 0.3 = 1.737 → t̄ = 2; H̄_CLB = 1/0.09 + 4 + 1 = 145/9;
    # 8·log(3·2²/0.0025)·1.01·2·(145/9) + 2 = 8 × 8.4763711 × 1.01 × 32.222222 + 2 = 2208.8703
    report = compute_bounds(orthonormal((0.7, 1.5, 2.0)), delta=0.05, epsilon=0.01)
    assert report.acol_upper_bound == pytest.approx(2208.8703, rel=REL)


def test_theorem_2_runs_at_least_one_round_when_c_min_is_at_least_one():
    """The code takes t̄ = max(1, ⌈−log₂ C⁺_min⌉): Algorithm 1 runs at least one round,
    where the paper's t̄ = 0 would make log(K t̄²/δ²) = log 0."""
    # g = (−2, 1, 4): C⁺_min = 1 → t̄ = 1; H̄_CLB = 1/4 + 1 + 1/16 = 1.3125;
    # 8·log(1200)·1.01·1.3125 + 1 = 76.190265
    report = compute_bounds(orthonormal((-1.0, 2.0, 5.0)), delta=0.05, epsilon=0.01)
    assert report.acol_upper_bound == pytest.approx(76.190265, rel=REL)


def test_theorem_2_scales_with_one_plus_epsilon():
    instance = orthonormal(BASIC)
    t_bar = 1
    half = compute_bounds(instance, epsilon=0.5).acol_upper_bound - t_bar
    whole = compute_bounds(instance, epsilon=1.0).acol_upper_bound - t_bar
    assert whole / half == pytest.approx(2.0 / 1.5, rel=1e-9)


# --------------------------------------------------------------------------- #
# Documented choices: no feasible arm, arms on the boundary
# --------------------------------------------------------------------------- #

# g = (0.5, 1, 2): nothing is feasible.
INFEASIBLE = (0.5, 1.0, 2.0)


def test_with_no_feasible_arm_there_is_no_best_arm():
    report = compute_bounds(orthonormal(INFEASIBLE, threshold=0.0))
    assert report.best_arm is None and report.best_reward is None and report.n_feasible == 0


def test_with_no_feasible_arm_x_at_least_is_every_arm():
    """Documented choice: every arm must be shown infeasible, so X≥ = X."""
    report = compute_bounds(orthonormal(INFEASIBLE, threshold=0.0))
    assert report.n_at_least == 3
    # 1/0.5² + 1/1² + 1/2² = 4 + 1 + 0.25 = 5.25
    assert report.h_clb.value == pytest.approx(5.25, rel=REL)


def test_with_no_feasible_arm_h_clb_equals_h_clb_bar():
    report = compute_bounds(orthonormal(INFEASIBLE, threshold=0.0))
    assert report.h_clb_bar.value == report.h_clb.value


def test_no_feasible_arm_is_noted():
    notes = compute_bounds(orthonormal(INFEASIBLE, threshold=0.0)).notes
    assert any("no arm is feasible" in note for note in notes)


def test_boundary_arm_in_x_at_least_makes_h_clb_and_the_lower_bound_infinite():
    # g = (0, 0.5, 1): x* = arm 0 lies on the boundary (g = 0 counts as feasible)
    report = compute_bounds(orthonormal((1.0, 1.5, 2.0)))
    assert report.best_arm == 0 and report.boundary_arms == [0]
    assert math.isinf(report.h_clb.value) and math.isinf(report.lower_bound)


def test_boundary_arm_makes_c_min_zero_and_proposition_1_and_theorem_2_infinite():
    report = compute_bounds(orthonormal((1.0, 1.5, 2.0)))
    assert report.c_min == 0.0
    assert math.isinf(report.prop1_bound) and math.isinf(report.acol_upper_bound)


def test_boundary_arm_outside_x_at_least_leaves_h_clb_and_the_lower_bound_finite():
    # g = (−0.5, 0, 1), rewards (2, 1, 3): arm 1 is on the boundary but below x*;
    # X≥ = {0, 2} still gives H_CLB = 4 + 1 = 5, but H̄_CLB involves arm 1
    report = compute_bounds(orthonormal((0.5, 1.0, 2.0)))
    assert report.h_clb.value == pytest.approx(5.0, rel=REL)
    assert report.lower_bound == pytest.approx(21.202635, rel=REL)
    assert math.isinf(report.h_clb_bar.value)


def test_boundary_arms_are_named_in_a_note():
    notes = compute_bounds(orthonormal((0.5, 1.0, 2.0))).notes
    assert any("arm(s) 1 lie exactly on the constraint boundary" in note for note in notes)


def test_oracle_design_is_the_h_clb_design():
    np.testing.assert_allclose(oracle_design(orthonormal(BASIC)), [0.8, 0.0, 0.2], atol=1e-4)


def test_oracle_design_refuses_a_boundary_arm_in_x_at_least():
    with pytest.raises(OptionError, match="boundary"):
        oracle_design(orthonormal((1.0, 1.5, 2.0)))


# --------------------------------------------------------------------------- #
# Report helpers
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("value, expected", [(math.inf, None), (-math.inf, None), (math.nan, None), (None, None),
                                             (2.5, 2.5), (np.float64(3.0), 3.0)])
def test_json_number_writes_non_finite_values_as_null(value, expected):
    assert json_number(value) == expected


def test_design_summary_top_lists_support_points_by_decreasing_weight():
    summary = DesignSummary(1.0, 0.0, np.array([0.2, 0.0, 0.5, 0.3]), "fw")
    assert summary.top() == [{"arm": 2, "weight": 0.5}, {"arm": 3, "weight": 0.3}, {"arm": 0, "weight": 0.2}]
    assert summary.top(1) == [{"arm": 2, "weight": 0.5}]


@pytest.mark.parametrize(("n_arms", "dim", "asked", "computed"), [
    (10**5, 10, None, True),         # K·d = 10⁶ and K·d³ = 10⁸: within both
    (10**5 + 1, 10, None, False),    # K·d above 10⁶
    (10**4, 100, None, False),       # K·d = 10⁶, but K·d³ = 10¹⁰
    (10**5, 100, None, False),
    (10**5, 100, True, True),
    (20, 5, False, False),
    (20, 5, None, True),
])
def test_bound_skip_reason_decides_on_size_and_flag(n_arms, dim, asked, computed):
    assert (bound_skip_reason(n_arms, dim, asked) is None) == computed


@pytest.mark.parametrize("n_arms, dim, computed", [(10**4, 30, True), (10**5, 10, True), (1000, 40, True),
                                                   (5000, 40, False), (1000, 100, False), (1000, 300, False)])
def test_bound_skip_reason_skips_high_dimensions_below_the_entry_limit(n_arms, dim, computed):
    assert n_arms * dim <= 10**6
    assert (bound_skip_reason(n_arms, dim, None) is None) == computed


def test_bound_skip_reason_names_the_dimension_cost():
    assert "K·d³ = 1e+09, more than 3e+08 (the design solver's cost grows as d³)" in bound_skip_reason(1000, 100, None)


def test_bound_skip_reason_names_the_size_and_the_flag():
    assert "K·d = 10,000,000 arm entries" in bound_skip_reason(10**5, 100, None)
    assert "--bound" in bound_skip_reason(10**5, 100, None)
    assert "--no-bound" in bound_skip_reason(3, 2, False)


# --------------------------------------------------------------------------- #
# Time limit (1e-9 s has passed at the first check: one round per design, on any machine)
# --------------------------------------------------------------------------- #


def random_instance() -> Instance:
    from cbai_cli.kinds.cbai.families import generate_instance

    return generate_instance("random", d=6, n=100, seed=0)


def test_capped_bounds_bracket_the_uncapped_ones():
    exact, capped = compute_bounds(random_instance()), compute_bounds(random_instance(), time_limit=1e-9)
    assert not exact.time_limited and capped.time_limited
    for name, value in (("h_clb", exact.h_clb.value), ("h_clb_bar", exact.h_clb_bar.value),
                        ("lower_bound", exact.lower_bound), ("acol_upper_bound", exact.acol_upper_bound)):
        low, high = capped.intervals()[name]
        assert low <= value * (1 + 1e-5) and value <= high * (1 + 1e-9), name
    # Theorem 1 is a lower bound: a capped solve reports the certified lower end.
    assert capped.lower_bound == pytest.approx(capped.intervals()["lower_bound"][0], rel=1e-12)
    assert capped.lower_bound <= exact.lower_bound * (1 + 1e-5)


def test_capped_bounds_say_so_in_the_notes_and_the_json():
    document = compute_bounds(random_instance(), time_limit=1e-9).to_json()
    assert document["time_limit"] == 1e-9 and document["time_limit_reached"] is True
    assert any("time limit of 1e-09 s was reached" in note for note in document["notes"])
    assert any("H_CLB lies between" in note for note in document["notes"])


def test_uncapped_intervals_are_the_certified_gap():
    report = compute_bounds(random_instance())
    document = report.to_json()
    assert document["time_limit"] is None and document["time_limit_reached"] is False
    assert set(document["intervals"]) == {"h_clb", "h_clb_bar", "lower_bound", "lower_bound_noise", "lower_bound_kl",
                                          "lower_bound_kl_noise", "acol_upper_bound", "h_bernoulli",
                                          "lower_bound_bernoulli", "lower_bound_bernoulli_kl"}
    assert document["intervals"]["h_bernoulli"] == [None, None]  # Gaussian noise: no yes/no bound
    low, high = document["intervals"]["h_clb"]
    assert high == report.h_clb.value and (high - low) / high == pytest.approx(report.h_clb.gap, abs=1e-15)
    assert not report.solver_notes


@pytest.mark.parametrize("limit", [0.0, -2.0, math.nan, math.inf])
def test_compute_bounds_refuses_a_bad_time_limit(limit):
    with pytest.raises(OptionError, match="--time-limit"):
        compute_bounds(random_instance(), time_limit=limit)


def test_a_failed_exact_fallback_keeps_the_first_order_design(monkeypatch):
    import cbai_cli.numerics.design.solver as design_module
    from cbai_cli.kinds.cbai.bounds import _exact_if_better
    from cbai_cli.numerics.design.solver import DesignSolverError, optimal_design

    arms = np.eye(2)
    first_order = optimal_design(arms, arms)

    def fails(*args, **kwargs):
        raise DesignSolverError("stopped by its time limit")

    monkeypatch.setattr(design_module, "optimal_design_cvxpy", fails)
    assert _exact_if_better(first_order, arms, arms) is first_order


def test_an_exact_fallback_with_a_larger_gap_is_not_kept(monkeypatch):
    import dataclasses

    import cbai_cli.numerics.design.solver as design_module
    from cbai_cli.kinds.cbai.bounds import _exact_if_better
    from cbai_cli.numerics.design.solver import optimal_design

    arms = np.eye(2)
    first_order = optimal_design(arms, arms)
    worse = dataclasses.replace(first_order, gap=first_order.gap + 0.3)
    monkeypatch.setattr(design_module, "optimal_design_cvxpy", lambda *args, **kwargs: worse)
    assert _exact_if_better(first_order, arms, arms) is first_order


def test_a_capped_cvxpy_solve_is_stopped_at_its_deadline_with_a_certified_interval():
    # cvxpy compiles before it solves, and neither stops by itself: the solve runs in a process
    # stopped at the deadline (1 ms: before the process has even imported cvxpy), and one
    # round of the fw solver gives the certified interval
    instance = random_instance()
    exact = compute_bounds(instance, solver="cvxpy")
    capped = compute_bounds(instance, solver="cvxpy", time_limit=1e-3)
    assert capped.time_limited and (capped.h_clb.solver, capped.h_clb_bar.solver) == ("fw", "fw")
    for name, value in (("h_clb", exact.h_clb.value), ("h_clb_bar", exact.h_clb_bar.value)):
        low, high = capped.intervals()[name]
        assert low <= value * (1 + 1e-5) and value <= high * (1 + 1e-9), name
    assert any("time limit of 0.001 s was reached" in note for note in capped.notes)


def test_the_exact_fallback_of_auto_is_stopped_at_the_deadline(monkeypatch):
    # an fw solve that stops short of its tolerance makes auto try cvxpy; uncapped, cvxpy then
    # certifies this small instance exactly, while a 1 ms cap stops it and keeps the fw design
    import dataclasses

    import cbai_cli.numerics.design.solver as design_module

    solve = design_module.optimal_design

    def short(*args, **kwargs):
        design = solve(*args, **kwargs)
        return dataclasses.replace(design, lower=design.value / 2, gap=0.5, time_limited=False)

    monkeypatch.setattr(design_module, "optimal_design", short)
    instance = family("unit-sphere").generate(d=3, n=8, seed=1)
    assert compute_bounds(instance).h_clb.solver == "cvxpy"
    assert compute_bounds(instance, time_limit=1e-3).h_clb.solver == "fw"


def test_a_design_solve_that_cannot_fit_in_memory_is_refused_before_it_starts(monkeypatch):
    from cbai_cli.contracts.options import bytes_text

    instance = random_instance()  # K = 100 arms in d = 6
    targets = int(at_least_set(instance).sum())
    fw, cvxpy = 64 * (100 + targets) * 6, 256 * 100 * targets * 36
    monkeypatch.setenv("CBAI_MEMORY_LIMIT", str(fw))
    with pytest.raises(OptionError) as caught:
        compute_bounds(instance, solver="cvxpy")
    assert str(caught.value) == (f"the cvxpy design solve over K = 100 arms and {targets} targets in d = 6 dimensions "
                                 f"would hold about {bytes_text(cvxpy)}, more than the limit of {bytes_text(fw)} (CBAI_MEMORY_LIMIT raises it); "
                                 f"--solver fw would hold about {bytes_text(fw)}")
    assert caught.value.parameter == "solver"
    monkeypatch.setenv("CBAI_MEMORY_LIMIT", str(fw - 1))
    with pytest.raises(OptionError, match=r"^the fw design solve over K = 100 arms and .* \(CBAI_MEMORY_LIMIT "
                                          r"raises it\); or use fewer arms or dimensions$"):
        compute_bounds(instance)


def test_forced_bounds_that_cannot_fit_in_memory_are_refused(monkeypatch):
    monkeypatch.setenv("CBAI_MEMORY_LIMIT", str(64 * 2 * 1000 * 10 - 1))
    with pytest.raises(OptionError, match=r"^--bound: the bounds' design solves over K = 1,000 arms in d = 10 "
                                          r"dimensions would hold about 1\.22 MiB, more than the limit of 1\.22 MiB \(CBAI_MEMORY_LIMIT raises it\); leave "
                                          r"out --bound \(--bounds in compare\) to run without them$"):
        bound_skip_reason(1000, 10, True)
    assert bound_skip_reason(1000, 10, None) is None and bound_skip_reason(1000, 10, False) is not None


@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])
def test_the_conic_solvers_accept_their_time_limit(solver):
    from cbai_cli.numerics.design.solver import optimal_design_cvxpy

    design = optimal_design_cvxpy(np.eye(2), np.eye(2), solver_name=solver, time_limit=30.0, also_scs=False)
    assert design.value == pytest.approx(2.0, rel=1e-4)  # G-optimal design of the plane: d = 2


# --------------------------------------------------------------------------- #
# Parameters checked as the options they are (cbai_cli.contracts.options)
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("tolerance", [0.0, 1.0, -0.5, math.inf, math.nan])
def test_compute_bounds_refuses_a_tolerance_outside_the_open_unit_interval(tolerance):
    with pytest.raises(OptionError, match=r"^--tolerance must lie in \(0, 1\)") as caught:
        compute_bounds(orthonormal(BASIC), tolerance=tolerance)
    assert caught.value.parameter == "tolerance"


def test_a_loose_tolerance_does_not_overstate_the_lower_bound():
    # The solve stops at a gap of about 0.87 at tolerance 0.99; its value then overstates
    # H_CLB 7.6-fold, and Theorem 1 must take the certified lower end instead.
    instance = family("unit-sphere").generate(d=8, n=60, seed=1)
    tight = compute_bounds(instance, solver="fw").lower_bound
    loose = compute_bounds(instance, solver="fw", tolerance=0.99).lower_bound
    assert loose <= tight * (1 + 1e-6)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, -2.0, math.nan, math.inf])
def test_compute_bounds_refuses_an_epsilon_that_is_not_a_finite_positive_number(epsilon):
    with pytest.raises(OptionError, match="^--epsilon must be a finite number > 0") as caught:
        compute_bounds(orthonormal(BASIC), epsilon=epsilon)
    assert caught.value.parameter == "rounding_epsilon"


@pytest.mark.parametrize("delta", ["0.05", [0.05], True])
def test_compute_bounds_refuses_a_delta_that_is_not_a_number(delta):
    with pytest.raises(OptionError, match="^--delta must be a real number") as caught:
        compute_bounds(orthonormal(BASIC), delta=delta)
    assert caught.value.parameter == "delta"


def test_compute_bounds_names_delta_when_it_is_out_of_range():
    with pytest.raises(OptionError, match=r"^--delta must lie in \(0, 1\), got 0.0$") as caught:
        compute_bounds(orthonormal(BASIC), delta=0.0)
    assert caught.value.parameter == "delta"


def test_compute_bounds_takes_delta_none_as_the_default():
    assert compute_bounds(orthonormal(BASIC), delta=None).delta == 0.05


def test_compute_bounds_names_the_solver_when_it_is_unknown():
    with pytest.raises(OptionError, match="^--solver must be auto or fw or cvxpy, got 'newton'$") as caught:
        compute_bounds(orthonormal(BASIC), solver="newton")
    assert caught.value.parameter == "solver"


@pytest.mark.parametrize("limit", ["5", True])
def test_compute_bounds_refuses_a_time_limit_that_is_not_a_number(limit):
    with pytest.raises(OptionError, match="^--time-limit must be a real number") as caught:
        compute_bounds(orthonormal(BASIC), time_limit=limit)
    assert caught.value.parameter == "time_limit"


def test_a_reports_duplicate_groups_cannot_change_the_instances():
    instance = Instance(name="copies", arms=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]), reward=np.array([1.0, 2.0]),
                        constraint=np.array([0.2, 0.3]), threshold=0.5, noise=GaussianNoise(0.05))
    report = compute_bounds(instance)
    assert report.duplicate_groups == ((0, 2),)
    with pytest.raises(AttributeError):
        report.duplicate_groups.append([0, 1])
    assert instance.duplicate_groups == [[0, 2]]


def test_proposition_1_is_zero_for_arms_that_are_all_zero_even_when_c_min_squared_underflows():
    # Every gap is −τ = −2.5e-301, whose square underflows to 0; with rank 0, d/C⁺_min² = 0.
    instance = Instance(name="zeros", arms=np.zeros((3, 1)), reward=np.array([1.0]), constraint=np.array([1.0]),
                        threshold=2.5e-301, noise=GaussianNoise(0.05))
    assert compute_bounds(instance).prop1_bound == 0.0
