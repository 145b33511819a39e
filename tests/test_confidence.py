"""The confidence regimes' radius r (interval φ̂ᵀx ± r·‖x‖_{A⁻¹}) against closed forms:
static (paper Proposition 2), theory (Proposition 3, Abbasi-Yadkori et al.'s horizon
form), det (their determinant form) and tuned (§4.1, β = 1/4).

Tested through the regime classes and ConfidenceSettings on small DesignStates whose
A = λI + Σ n x xᵀ is written out by hand, and through the plain radius formulas that the
regimes and the safe algorithms share.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cbai_cli.numerics.confidence import (
    REGIMES,
    ConfidenceSettings,
    DeterminantRegime,
    OLSRegime,
    StaticRegime,
    TheoryRegime,
    TunedRegime,
    radius_determinant,
    radius_horizon,
    radius_lingape_script,
    radius_static,
    minimum_radius,
    regime_notes,
    register_regime,
    regimes,
)
from cbai_cli.numerics.linalg import DesignState, RidgeDesign

# λ = 0.5, S = 2: the ridge term √λ·S = √0.5 × 2 = √2 = 1.4142136 in every adaptive radius below.
SETTINGS = ConfidenceSettings(delta=0.1, subgaussian=1.0, ridge=0.5, norm_bound=2.0, arm_bound=1.0)


def pulled(arms, pulls: dict[int, int], ridge: float = 0.5) -> DesignState:
    """A DesignState after ``pulls[arm]`` pulls of each arm (the observations do not matter)."""
    state = DesignState(np.asarray(arms, dtype=float), ridge=ridge)
    for arm, count in pulls.items():
        state.update(arm, total=0.0, count=count)
    return state


def test_defaults_are_the_authors_conventions():
    """R = 1, λ = 0.1, S = L = 1 (the paper's experiments); no β unless tuned."""
    settings = ConfidenceSettings(delta=0.05)
    assert (settings.subgaussian, settings.ridge, settings.norm_bound, settings.arm_bound, settings.beta) == (
        1.0, 0.1, 1.0, 1.0, None)


# --------------------------------------------------------------------------- #
# static: R·sqrt(2 log(K/δ_t)) (Proposition 2)
# --------------------------------------------------------------------------- #


def test_static_radius_by_hand():
    # R = 2, K = 10, δ_t = 0.01: 2·sqrt(2·log(1000)) = 2·sqrt(13.815511) = 2 × 3.7169222 = 7.4338444
    regime = StaticRegime(ConfidenceSettings(delta=0.05, subgaussian=2.0))
    assert regime.round_radius(10, 0.01) == pytest.approx(7.4338444, rel=1e-7)


def test_static_radius_ignores_the_ridge_and_norm_bounds():
    """A round's OLS fit has no ridge: λ, S and L play no part."""
    plain = StaticRegime(ConfidenceSettings(delta=0.05)).round_radius(10, 0.01)
    other = StaticRegime(ConfidenceSettings(delta=0.05, ridge=7.0, norm_bound=9.0, arm_bound=3.0)).round_radius(10, 0.01)
    assert plain == other


# --------------------------------------------------------------------------- #
# theory: R·sqrt(d log((1 + tL²/λ)/δ)) + √λ·S (Proposition 3)
# --------------------------------------------------------------------------- #


def test_theory_radius_by_hand():
    # d = 2, t = 3 pulls (e_1 twice, e_2 once), L = 1, λ = 0.5, δ = 0.1:
    # sqrt(2·log((1 + 3/0.5)/0.1)) + √2 = sqrt(2·log 70) + √2 = 2.9149598 + 1.4142136 = 4.3291734
    state = pulled(np.eye(2), {0: 2, 1: 1})
    assert TheoryRegime(SETTINGS).radius(state) == pytest.approx(4.3291734, rel=1e-7)


def test_theory_radius_before_any_pull_is_the_t_0_value():
    # t = 0: sqrt(2·log(1/0.1)) + √2 = 2.1459660 + 1.4142136 = 3.5601796
    assert TheoryRegime(SETTINGS).radius(pulled(np.eye(2), {})) == pytest.approx(3.5601796, rel=1e-7)


def test_theory_radius_counts_pulls_not_updates():
    """t is the number of pulls: one update of count 3 is three pulls."""
    once = pulled(np.eye(2), {0: 3})
    one_by_one = pulled(np.eye(2), {})
    for _ in range(3):
        one_by_one.update(0, 0.0)
    assert TheoryRegime(SETTINGS).radius(once) == TheoryRegime(SETTINGS).radius(one_by_one)


def test_theory_radius_scales_only_its_first_term_with_r():
    # R = 0.05: 0.05 × 2.9149598 + 1.4142136 = 1.5599616
    settings = ConfidenceSettings(delta=0.1, subgaussian=0.05, ridge=0.5, norm_bound=2.0, arm_bound=1.0)
    assert TheoryRegime(settings).radius(pulled(np.eye(2), {0: 2, 1: 1})) == pytest.approx(1.5599616, rel=1e-7)


def test_theory_radius_does_not_depend_on_which_arms_were_pulled():
    """The horizon form sees only t and d, not A."""
    regime = TheoryRegime(SETTINGS)
    assert regime.radius(pulled(np.eye(2), {0: 3})) == regime.radius(pulled(np.eye(2), {0: 1, 1: 2}))


# --------------------------------------------------------------------------- #
# det: R·sqrt(2 log(1/δ) + log(det A/λ^d)) + √λ·S (Abbasi-Yadkori et al. 2011, Theorem 2)
# --------------------------------------------------------------------------- #


def test_determinant_radius_by_hand():
    # arms e_1, e_2, (1, 1); e_1 twice and (1, 1) once, λ = 0.5:
    # A = [[0.5 + 2 + 1, 1], [1, 0.5 + 1]] = [[3.5, 1], [1, 1.5]], det A = 5.25 − 1 = 4.25,
    # det A/λ² = 4.25/0.25 = 17; sqrt(2·log 10 + log 17) + √2 = 2.7273400 + 1.4142136 = 4.1415536
    state = pulled([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], {0: 2, 2: 1})
    assert DeterminantRegime(SETTINGS).radius(state) == pytest.approx(4.1415536, rel=1e-7)


def test_determinant_radius_before_any_pull_is_r_sqrt_2_log_1_over_delta_plus_sqrt_lambda_s():
    # det A = λ^d: sqrt(2·log 10) + √2 = 2.1459660 + 1.4142136 = 3.5601796
    assert DeterminantRegime(SETTINGS).radius(pulled(np.eye(3), {})) == pytest.approx(3.5601796, rel=1e-7)


def test_determinant_radius_does_not_depend_on_the_dimension_before_any_pull():
    regime = DeterminantRegime(SETTINGS)
    assert regime.radius(pulled(np.eye(1), {})) == pytest.approx(regime.radius(pulled(np.eye(5), {})), rel=1e-12)


def test_determinant_radius_depends_on_which_arms_were_pulled():
    # three pulls of e_1: det A/λ² = (3.5 × 0.5)/0.25 = 7; one of e_1, two of e_2: (1.5 × 2.5)/0.25 = 15
    regime = DeterminantRegime(SETTINGS)
    # sqrt(2·log 10 + log 7) + √2 = 2.5595078 + 1.4142136 = 3.9737214
    assert regime.radius(pulled(np.eye(2), {0: 3})) == pytest.approx(3.9737214, rel=1e-7)
    # sqrt(2·log 10 + log 15) + √2 = 2.7042967 + 1.4142136 = 4.1185102
    assert regime.radius(pulled(np.eye(2), {0: 1, 1: 2})) == pytest.approx(4.1185102, rel=1e-7)


# --------------------------------------------------------------------------- #
# theory against det: the d = 1 caveat
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("pulls", [1, 10, 1000])
def test_theory_radius_is_below_the_determinant_radius_in_one_dimension(pulls):
    """d = 1, ‖x‖ = L: theory's inner term log((1 + t/λ)/δ) is det's 2 log(1/δ) + log(1 + t/λ)
    minus log(1/δ), so the horizon form is the smaller, unguaranteed one."""
    state = pulled([[1.0]], {0: pulls})
    assert TheoryRegime(SETTINGS).radius(state) < DeterminantRegime(SETTINGS).radius(state)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_theory_radius_is_at_least_the_determinant_radius_from_two_dimensions(d):
    """det A/λ^d ≤ (1 + tL²/(dλ))^d ≤ (1 + tL²/λ)^d and d log(1/δ) ≥ 2 log(1/δ) for d ≥ 2."""
    rng = np.random.default_rng(d)
    arms = rng.standard_normal((6, d))
    arms /= np.linalg.norm(arms, axis=1, keepdims=True)  # ‖x‖ = L = 1
    state = pulled(arms, {int(arm): int(count) for arm, count in zip(rng.integers(0, 6, 5), rng.integers(1, 20, 5))})
    assert TheoryRegime(SETTINGS).radius(state) >= DeterminantRegime(SETTINGS).radius(state)


# --------------------------------------------------------------------------- #
# tuned: √β (paper §4.1, β = 1/4)
# --------------------------------------------------------------------------- #


def test_tuned_radius_is_the_square_root_of_beta():
    regime = TunedRegime(ConfidenceSettings(delta=0.05, beta=0.25))
    assert regime.radius(pulled(np.eye(2), {})) == 0.5


def test_tuned_radius_ignores_the_design_state():
    regime = TunedRegime(ConfidenceSettings(delta=0.05, beta=4.0))
    assert regime.radius(pulled(np.eye(2), {})) == regime.radius(pulled(np.eye(2), {0: 50, 1: 7})) == 2.0


# --------------------------------------------------------------------------- #
# The registry and the caveats printed with results
# --------------------------------------------------------------------------- #


def test_regimes_are_registered_by_name():
    assert REGIMES == {"static": StaticRegime, "theory": TheoryRegime, "det": DeterminantRegime, "tuned": TunedRegime,
                       "ols": OLSRegime}


def test_one_regime_of_each_style_declares_itself_the_default():
    """Order does not choose the default: theory and static declare it, the others do not."""
    assert {name: REGIMES[name].default for name in ("static", "theory", "det", "tuned", "ols")} == {
        "static": True, "theory": True, "det": False, "tuned": False, "ols": False}
    for adaptive in (True, False):  # a plugin's regimes included
        assert sum(regime.default for regime in regimes().values() if regime.adaptive == adaptive) == 1


def test_an_algorithm_runs_the_declared_default_whatever_the_order(monkeypatch):
    from cbai_cli.algorithms.registry import resolve

    monkeypatch.setattr("cbai_cli.numerics.confidence.REGIMES", dict(reversed(list(REGIMES.items()))))
    assert resolve("g-acol")[0].default_regime == "theory"
    assert resolve("g-acol")[0].regimes[0] == "theory"
    assert resolve("track-and-stop")[0].default_regime == "ols"  # its entry prefers ols


def test_a_second_default_of_a_style_is_refused(monkeypatch):
    monkeypatch.setattr("cbai_cli.numerics.confidence.REGIMES", dict(REGIMES))

    class AnotherDefault(DeterminantRegime):
        name = "another"
        default = True

    with pytest.raises(ValueError, match="adaptive regimes have a default already"):
        register_regime(AnotherDefault)


@pytest.mark.parametrize("regime, adaptive, guaranteed", [
    (StaticRegime, False, True), (TheoryRegime, True, True), (DeterminantRegime, True, True), (TunedRegime, True, False),
    (OLSRegime, True, True),
])
def test_only_static_is_round_based_and_only_tuned_has_no_guarantee(regime, adaptive, guaranteed):
    assert (regime.adaptive, regime.guaranteed) == (adaptive, guaranteed)


def test_theory_in_one_dimension_is_noted_as_unguaranteed():
    notes = regime_notes("theory", 1)
    assert len(notes) == 1 and "no guarantee" in notes[0] and "--regime det" in notes[0]


@pytest.mark.parametrize("dim", [2, 10])
def test_theory_from_two_dimensions_has_no_caveat(dim):
    assert regime_notes("theory", dim) == []


@pytest.mark.parametrize("dim", [1, 3])
def test_tuned_is_noted_as_unguaranteed_in_every_dimension(dim):
    assert regime_notes("tuned", dim) == ["tuned intervals carry no correctness guarantee"]


@pytest.mark.parametrize("name", ["static", "det", "ols"])
@pytest.mark.parametrize("dim", [1, 4])
def test_guaranteed_regimes_other_than_theory_have_no_caveat(name, dim):
    assert regime_notes(name, dim) == []


# ---------------------------------------------------------------- the shared formulas

def test_radius_forms():
    # Determinant form at A = λI: R sqrt(2 log(1/δ)) + sqrt(λ) S.
    assert radius_determinant(2 * math.log(2.0), 2, 2.0, 1.5, 3.0, 0.1) == pytest.approx(
        1.5 * math.sqrt(2 * math.log(10)) + math.sqrt(2) * 3
    )
    # K² union factor.
    assert radius_determinant(0.0, 1, 1.0, 1.0, 0.0, 0.05, union=16) == pytest.approx(math.sqrt(2 * math.log(16 / 0.05)))
    assert radius_horizon(10, 2, 1.0, 1.0, 1.0, math.sqrt(2), 0.01) == pytest.approx(
        math.sqrt(2 * math.log(21 / 0.01)) + 1
    )
    assert radius_lingape_script(7, 3, 1.0, 1.0, 2.0, 1.0, 0.05, 4) == pytest.approx(
        math.sqrt(3 * math.log(16 * 8 / 0.05)) + 2
    )
    with pytest.raises(ValueError, match="delta"):
        radius_horizon(1, 1, 1.0, 1.0, 1.0, 1.0, 1.5)


def test_static_radius():
    assert radius_static(10, 0.05, 2.0) == pytest.approx(2.0 * math.sqrt(2 * math.log(200)))


def test_horizon_form_dominates_determinant_form_for_d_at_least_2():
    """β_n ≥ β_det for d ≥ 2 (det A ≤ (λ + n L²/d)^d), not for d = 1."""
    rng = np.random.default_rng(2)
    for d in (2, 3, 5):
        design = RidgeDesign(d, 1.0)
        for _ in range(200):
            x = rng.normal(size=d)
            design.add(x / max(1.0, np.linalg.norm(x)), 0.0)
        bd = radius_determinant(design.logdet, d, 1.0, 1.0, 1.0, 0.01)
        bh = radius_horizon(design.n_samples, d, 1.0, 1.0, 1.0, 1.0, 0.01)
        assert bh >= bd
    one = RidgeDesign(1, 1.0)
    for _ in range(100):
        one.add(np.ones(1), 0.0)
    assert radius_horizon(100, 1, 1.0, 1.0, 1.0, 1.0, 0.01) < radius_determinant(one.logdet, 1, 1.0, 1.0, 1.0, 0.01)


def test_regimes_call_the_formulas_with_their_settings_and_the_design():
    settings = ConfidenceSettings(delta=0.05, subgaussian=0.5, ridge=0.1, norm_bound=2.0, arm_bound=1.5)
    state = DesignState(np.array([[1.0, 0.0], [0.6, 0.8]]), ridge=0.1)
    state.update(1, 0.3, count=4)
    assert TheoryRegime(settings).radius(state) == radius_horizon(4, 2, 0.1, 0.5, 2.0, 1.5, 0.05)
    assert DeterminantRegime(settings).radius(state) == radius_determinant(state.logdet, 2, 0.1, 0.5, 2.0, 0.05)
    assert StaticRegime(settings).round_radius(5, 0.01) == radius_static(5, 0.01, 0.5)


# --------------------------------------------------------------------------- #
# The hook: regime.intervals(design, rewards) gives an algorithm its bounds
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("regime", [TheoryRegime, DeterminantRegime, TunedRegime])
def test_radius_regimes_give_the_ridge_prediction_plus_minus_radius_times_norm(regime):
    settings = ConfidenceSettings(delta=0.05, ridge=0.5, norm_bound=2.0, beta=0.25)
    state = pulled(np.array([[1.0, 0.0], [0.6, 0.8]]), {1: 3})
    intervals = REGIMES[regime.name](settings).intervals(state)
    intervals.observe(1, 0.0, 3)  # the ridge design already holds the pull: nothing changes
    lower, upper = intervals.bounds()
    half = regime(settings).radius(state) * np.sqrt(state.norms2)
    assert np.allclose(lower, state.predictions - half) and np.allclose(upper, state.predictions + half)


def test_ols_intervals_spend_the_settings_mean_share_on_the_own_means():
    """κ from the settings: least squares at (1 − κ)δ; None takes the regime's default."""
    from cbai_cli.numerics.ols import MEAN_SHARE

    state = DesignState(np.eye(2), ridge=0.5)
    chosen = OLSRegime(ConfidenceSettings(delta=0.1, mean_share=0.2)).intervals(state)
    default = OLSRegime(ConfidenceSettings(delta=0.1)).intervals(state)
    assert chosen.mean_share == 0.2 and chosen.least_squares_delta == pytest.approx(0.08)
    assert default.mean_share == MEAN_SHARE


def test_ols_intervals_keep_their_own_unbiased_fit():
    """Four pulls of e1 summing to 2: centre 0.5 (the ridge centre would be 2/4.5), e2 unbounded."""
    settings = ConfidenceSettings(delta=0.05, ridge=0.5)
    state = DesignState(np.eye(2), ridge=0.5)
    intervals = OLSRegime(settings).intervals(state)
    state.update(0, 2.0, count=4)
    intervals.observe(0, 2.0, 4)
    lower, upper = intervals.bounds()
    assert 0.5 * (lower[0] + upper[0]) == pytest.approx(0.5)
    assert intervals.estimate().tolist() == pytest.approx([0.5, 0.0])
    assert np.isneginf(lower[1]) and np.isposinf(upper[1])


def test_minimum_radius_of_ols_has_no_ridge_term():
    # R·sqrt(2 log(1/δ)) = 2·sqrt(2 log 20) = 2 × 2.4477468 = 4.8954936, whatever λ and S.
    settings = ConfidenceSettings(delta=0.05, subgaussian=2.0, ridge=100.0, norm_bound=100.0)
    radius, source = minimum_radius("ols", settings, 3)
    assert radius == pytest.approx(4.8954936, rel=1e-7) and "--subgaussian 2" in source


def test_minimum_radius_of_det_names_the_ridge_term_when_it_dominates():
    # R·sqrt(2 log 20) + √λ·S = 2.4477468 + 10 × 2 = 22.4477468.
    radius, source = minimum_radius("det", ConfidenceSettings(delta=0.05, ridge=100.0, norm_bound=2.0), 3)
    assert radius == pytest.approx(22.4477468, rel=1e-7) and "--lambda 100" in source
