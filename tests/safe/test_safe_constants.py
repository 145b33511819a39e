"""Exact constants of the papers' instances.

Safe-LUCB's two Appendix F instances (Amani et al. 2019, as set in the authors' code: x*,
Δ, ‖B‖, λ_−, β_T, t_δ, T_Δ, T_0), LinGapE's Soare instance (Xu et al. 2018) and its L1 ratios,
and the truths of the "Price of Safety" §5 instance. Each value is checked twice: against a
reference value printed to a few decimals (to half a unit of its last printed digit, i.e.
1e-6 or better where six decimals are printed) and against an independent closed form to 1e-9.
"""

import math

import numpy as np
import pytest

from cbai_cli.algorithms.safe.exploration import beta_T, build_exploration_set, exploration_length, t_delta, t_gap, t_zero
from cbai_cli.algorithms.safe.lingape import l1_ratio
from cbai_cli.kinds.safe.paper_instances import instance_a, instance_b, lingape_instance, price_of_safety_instance, soare_arms
from cbai_cli.kinds.safe.truths import regret_truth, safe_bai_truth


def close(value, printed, decimals):
    """|value − printed| ≤ half a unit in the last printed decimal (+ round-off)."""
    return abs(value - printed) <= 0.5 * 10.0 ** (-decimals) + 1e-12


# --------------------------------------------------------------------------- Safe-LUCB, instance A


def test_c1_instance_a():
    p = instance_a()
    tr = regret_truth(p)
    s = p.learner_view()
    ex = build_exploration_set(s, "ball")
    np.testing.assert_allclose(tr.x_star, [-1.0, -1.0], atol=1e-9)
    assert close(tr.loss_star, -0.947826, 6)
    assert close(tr.safety_gap, 3.166087, 6)
    assert close(s.B_norm, 2.302776, 6)
    assert close(ex.lambda_minus, 0.0381875, 7)
    assert close(beta_T(s), 6.798489, 6)
    td = t_delta(s.L, ex.lambda_minus, s.d, s.delta)
    assert close(td, 2219.9, 1)
    TD = t_gap(s, ex.lambda_minus, tr.safety_gap)
    assert close(TD, 10244.3, 1)
    # The authors' script used T' = 10 000, close to T_Δ (a cross-check of its form); ours is ⌈T_Δ⌉.
    assert exploration_length(s, "gap", ex.lambda_minus, tr.safety_gap) == 10245
    # Closed forms.
    assert tr.loss_star == pytest.approx(-21.8 / 23, abs=1e-9)
    assert tr.safety_gap == pytest.approx(0.9 + (12 * 20.8 / 23 + 11 / 23) / 5, abs=1e-9)
    assert s.B_norm == pytest.approx((5 + math.sqrt(1 + 4 * 81)) / 10, abs=1e-12)  # eigen of [[3,9],[9,2]]/5
    lm = 0.81 / (4 * s.B_norm**2)
    assert ex.lambda_minus == pytest.approx(lm, abs=1e-12)
    assert beta_T(s) == pytest.approx(math.sqrt(2 * math.log((1 + 99_999 * 2) / 0.01)) + 1, abs=1e-12)
    assert td == pytest.approx(16 / lm * math.log(200), abs=1e-9)
    assert TD == pytest.approx(16 * s.B_norm**2 * beta_T(s) ** 2 / (lm * tr.safety_gap**2), abs=1e-7)
    # T_0 with the formula of the authors' code (54 115 on instance A).
    assert round(t_zero(s, ex.lambda_minus)) == 54115


def test_c1_ellipsoid_dw_has_the_same_lambda_minus():
    """The authors' ellipsoid D^w gives the same λ_− as the ball (λ_min(B⁻ᵀB⁻¹) = 1/‖B‖²)."""
    for p in (instance_a(), instance_b()):
        s = p.learner_view()
        ball = build_exploration_set(s, "ball")
        ell = build_exploration_set(s, "ellipsoid")
        assert ell.lambda_minus_exact and not ell.rejection
        assert ell.lambda_minus == pytest.approx(ball.lambda_minus, rel=1e-12)


# --------------------------------------------------------------------------- Safe-LUCB, instance B


def test_c2_instance_b():
    p = instance_b()
    tr = regret_truth(p)
    s = p.learner_view()
    ex = build_exploration_set(s, "ball")
    assert close(tr.x_star[0], -0.870192, 6)
    assert tr.x_star[1] == pytest.approx(-1.0, abs=1e-9)
    assert close(tr.loss_star, -0.830435, 6)
    assert tr.safety_gap == 0.0  # constraint active: x* on the tangent line
    assert s.B_norm == pytest.approx(2.0, abs=1e-12)
    assert close(ex.lambda_minus, 0.030625, 6)
    assert close(t_delta(s.L, ex.lambda_minus, s.d, s.delta), 2768.1, 1)
    T0 = t_zero(s, ex.lambda_minus)
    assert round(T0) == 62692
    assert exploration_length(s, "t23", ex.lambda_minus) == math.ceil(T0) == 62693
    # Closed forms: x*_1 solves −μ1 x1 + 2 μ2 (−1) = 0.7 with μ = (20.8, 1)/23.
    mu1, mu2 = 20.8 / 23, 1 / 23
    x1 = -(0.7 + 2 * mu2) / mu1
    assert tr.x_star[0] == pytest.approx(x1, abs=1e-8)
    assert tr.loss_star == pytest.approx(mu1 * x1 - mu2, abs=1e-8)
    with pytest.raises(ValueError, match="safety_gap"):
        t_gap(s, ex.lambda_minus, tr.safety_gap)


# --------------------------------------------------------------------------- LinGapE's Soare instance


def test_c3_lingape_instance():
    p = lingape_instance(d=5, omega=0.01, epsilon=2 * (1 - math.cos(0.01)))
    assert p.theta_star.tolist() == [2.0, 0, 0, 0, 0]
    assert (p.sigma, p.delta, p.lam, p.S) == (1.0, 0.05, 1.0, 2.0)
    assert close(p.epsilon, 9.99992e-5, 10)
    assert p.best_arm == 0
    np.testing.assert_allclose(p.arms[-1], [math.cos(0.01), math.sin(0.01), 0, 0, 0])
    assert lingape_instance().epsilon == 0.0


# --------------------------------------------------------------------------- L1 ratios of the ratio rule


@pytest.mark.parametrize(
    "omega, p1, p2, rho, dec_p, dec_rho",
    [(0.01, 0.005, 0.995, 1.0100e-4, 3, 8), (0.1, 0.0477, 0.9523, 1.0989e-2, 4, 6)],
)
@pytest.mark.parametrize("d", [2, 3, 5])
def test_c4_l1_ratios(omega, p1, p2, rho, dec_p, dec_rho, d):
    X = soare_arms(d, omega)
    w = l1_ratio(X, X[0] - X[-1])
    p = np.abs(w) / np.abs(w).sum()
    r = np.abs(w).sum() ** 2
    assert close(p[0], p1, dec_p) and close(p[1], p2, dec_p)
    assert np.all(p[2:] < 1e-9)
    assert close(r, rho, dec_rho)
    # Closed form: y = (1 − cos ω, −sin ω) = (1 − cos ω) e1 − sin ω e2 is the L1-cheapest representation.
    a, b = 1 - math.cos(omega), math.sin(omega)
    assert p[0] == pytest.approx(a / (a + b), abs=1e-9)
    assert r == pytest.approx((a + b) ** 2, abs=1e-12)


# --------------------------------------------------------------------------- Price of Safety §5 instance


def test_c5_price_of_safety_truths():
    p = price_of_safety_instance()
    tr = safe_bai_truth(p)
    assert (p.K, p.d, p.setting.T_FE, p.setting.gamma_FE, p.setting.eta0) == (4, 3, 800, 0.2, -0.5)
    assert close(p.setting.epsilon, 0.0099917, 7)
    np.testing.assert_allclose(tr.safety_values, [0, -1, 0, -0.099833], atol=5e-7)
    np.testing.assert_allclose(tr.gamma, [1, 0.5, 1, 1], atol=1e-12)
    np.testing.assert_allclose(tr.safe_rewards, [2, 0, 0, 1.990008], atol=5e-7)
    assert tr.optimal_safe_arm == 0
    # a_4 is itself ε-optimal: the gap equals ε exactly (up to round-off).
    assert tr.safe_rewards[0] - tr.safe_rewards[3] == pytest.approx(p.setting.epsilon, abs=1e-14)
