"""The exploration set D^w and the exploration lengths (Amani et al. 2019, §2.2 and §3.2–3.4)."""

import math

import numpy as np
import pytest

from cbai_cli.kinds.safe.action_sets import BallSet, BoxSet, FiniteSet
from cbai_cli.algorithms.safe.exploration import (
    build_exploration_set,
    exploration_length,
    sample_exploration,
    uniform_ball,
)
from cbai_cli.kinds.safe.paper_instances import instance_a, instance_b
from cbai_cli.kinds.safe.problems import SafeRegretSetting


def _setting(action_set, B, c=0.9, S=1.0, T=1000):
    return SafeRegretSetting(action_set=action_set, B=B, c=c, T=T, S=S, L=action_set.max_norm,
                             R=1.0, lam=1.0, delta=0.01)


def _worst_case_safety(X, B, S):
    """max over all admissible ‖μ‖ ≤ S of xᵀBμ = S ‖Bᵀx‖ (closed form, per row)."""
    return S * np.linalg.norm(X @ B, axis=1)


@pytest.mark.parametrize("dw", ["ball", "ellipsoid"])
def test_dw_is_safe_for_every_admissible_mu(dw):
    rng = np.random.default_rng(0)
    settings = [instance_a().learner_view(), instance_b().learner_view()]
    for _ in range(5):
        B = rng.normal(size=(3, 3))
        settings.append(_setting(BoxSet(3), B, c=rng.uniform(0.1, 2.0), S=rng.uniform(0.5, 2.0)))
        settings.append(_setting(BallSet(3, 1.5), B, c=rng.uniform(0.1, 2.0), S=rng.uniform(0.5, 2.0)))
    for s in settings:
        ex = build_exploration_set(s, dw, rng=rng, mc_samples=2000)
        X = sample_exploration(ex, s.action_set, rng, 5000)
        assert np.all(s.action_set.contains(X))
        assert np.all(_worst_case_safety(X, s.B, s.S) <= s.c * (1 + 1e-12))
        # And against explicit random admissible parameters on the sphere ‖μ‖ = S.
        M = rng.normal(size=(200, s.d))
        M *= s.S / np.linalg.norm(M, axis=1, keepdims=True)
        assert np.all(X @ s.B @ M.T <= s.c + 1e-12)


def test_lambda_minus_matches_empirical_covariance():
    rng = np.random.default_rng(1)
    for s in (instance_a().learner_view(), instance_b().learner_view()):
        for dw in ("ball", "ellipsoid"):
            ex = build_exploration_set(s, dw)
            X = sample_exploration(ex, s.action_set, rng, 200_000)
            lm = np.linalg.eigvalsh(X.T @ X / len(X))[0]
            assert lm == pytest.approx(ex.lambda_minus, rel=0.02)


def test_uniform_ball_radius_law():
    X = uniform_ball(np.random.default_rng(2), 100_000, 3, 2.0)
    r = np.linalg.norm(X, axis=1)
    assert r.max() <= 2.0
    # P(‖x‖ ≤ r/2) = 1/8 in 3-D.
    assert np.mean(r <= 1.0) == pytest.approx(1 / 8, abs=0.005)


def test_dw_cut_by_the_box_uses_rejection_and_monte_carlo():
    rng = np.random.default_rng(3)
    s = _setting(BoxSet(2), 0.25 * np.eye(2), c=0.9)  # r_w = 3.6 > 1: the ball leaves the box
    ex = build_exploration_set(s, "ball", rng=rng, mc_samples=50_000)
    assert ex.rejection and not ex.lambda_minus_exact
    # Here D^w ∩ D_0 is the whole box: λ_− = 1/3.
    assert ex.lambda_minus == pytest.approx(1 / 3, rel=0.02)
    X = sample_exploration(ex, s.action_set, rng, 1000)
    assert X.shape == (1000, 2) and np.all(np.abs(X) <= 1)
    # Without a generator the set is known but its λ_− is not: nothing is drawn.
    unknown = build_exploration_set(s, "ball")
    assert unknown.rejection and not unknown.lambda_minus_exact and np.isnan(unknown.lambda_minus)


def test_ball_action_set_keeps_the_smaller_ball():
    s = _setting(BallSet(2, 0.5), 0.25 * np.eye(2), c=0.9)
    ex = build_exploration_set(s, "ball")
    assert ex.radius == 0.5 and ex.lambda_minus == pytest.approx(0.25 / 4)


def test_finite_dw():
    arms = np.array([[0.1, 0.0], [0.0, 0.1], [2.0, 0.0], [0.0, -3.0]])
    s = _setting(FiniteSet(arms), np.eye(2), c=0.5)
    ex = build_exploration_set(s, "ball")
    np.testing.assert_allclose(ex.points, arms[:2])
    assert ex.lambda_minus == pytest.approx(0.005)
    far = _setting(FiniteSet(arms[2:]), np.eye(2), c=0.5)
    with pytest.raises(ValueError, match="D\\^w"):
        build_exploration_set(far, "ball")


def test_exploration_length_modes():
    s = instance_a(T=5000).learner_view()
    ex = build_exploration_set(s, "ball")
    assert exploration_length(s, 0, ex.lambda_minus) == 0
    assert exploration_length(s, 123, ex.lambda_minus) == 123
    assert exploration_length(s, 10**9, ex.lambda_minus) == 5000  # capped at T
    assert exploration_length(s, "gap", ex.lambda_minus, 3.166) == 5000  # T_Δ > T here
    with pytest.raises(ValueError, match="safety_gap"):
        exploration_length(s, "gap", ex.lambda_minus)
    with pytest.raises(ValueError, match="exploration"):
        exploration_length(s, "sometimes", ex.lambda_minus)
    assert exploration_length(instance_a().learner_view(), "t23", ex.lambda_minus) == math.ceil(54114.9375)
