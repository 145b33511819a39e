"""Problem dataclasses: validation, immutability, learner views, truths."""

import dataclasses
import math

import numpy as np
import pytest

from cbai_cli.safe.problems import (
    BallSet,
    BoxSet,
    FiniteSet,
    LinearBaiProblem,
    SafeBaiProblem,
    SafeRegretProblem,
    SafeRegretSetting,
    instance_a,
    optimal_action,
    price_of_safety_instance,
    safe_bai_truth,
    true_gamma,
    worst_case_safe_scale,
)


def _regret_kwargs(**over):
    kw = dict(
        action_set=BoxSet(2), mu_star=np.array([0.5, 0.1]), B=np.eye(2), c=0.5, T=100,
        noise_sd=0.1, S=1.0, L=math.sqrt(2), R=1.0, lam=1.0, delta=0.05,
    )
    kw.update(over)
    return kw


@pytest.mark.parametrize(
    "field, value",
    [
        ("c", 0.0), ("c", -1.0), ("T", 0), ("T", 2.5), ("noise_sd", -1.0), ("S", 0.1),
        ("L", 1.0), ("R", -1.0), ("lam", 0.0), ("delta", 1.0), ("B", np.eye(3)),
        ("mu_star", np.ones(3)), ("mu_star", [np.nan, 0.0]),
    ],
)
def test_safe_regret_problem_validation_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        SafeRegretProblem(**_regret_kwargs(**{field: value}))


def test_action_set_validation():
    with pytest.raises(ValueError, match="half_width"):
        BoxSet(2, -1.0)
    with pytest.raises(ValueError, match="radius"):
        BallSet(2, 0.0)
    with pytest.raises(ValueError, match="arms"):
        FiniteSet(np.ones(3))


def test_problems_are_frozen_and_arrays_read_only():
    p = instance_a()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.c = 1.0
    with pytest.raises(ValueError):
        p.mu_star[0] = 0.0
    src = np.array([0.5, 0.1])
    q = SafeRegretProblem(**_regret_kwargs(mu_star=src))
    src[0] = 9.0  # the problem holds its own copy
    assert q.mu_star[0] == 0.5


def test_learner_view_hides_the_truth():
    view = instance_a().learner_view()
    assert isinstance(view, SafeRegretSetting)
    assert not hasattr(view, "mu_star")
    bview = price_of_safety_instance().learner_view()
    assert not hasattr(bview, "mu_star") and not hasattr(bview, "theta_star")


@pytest.mark.parametrize(
    "field, value",
    [
        ("eta0", 0.0), ("eta0", 0.3), ("sigma", -1.0), ("epsilon", -0.1), ("delta_r", 0.0),
        ("delta_s", 1.0), ("lam", -1.0), ("T_FE", -1), ("gamma_FE", 0.0), ("gamma_FE", 1.5),
        ("S_theta", 1.0), ("S_mu", 0.5), ("theta_star", np.ones(2)), ("arms", np.ones((4, 3))),
    ],
)
def test_safe_bai_problem_validation_names_the_field(field, value):
    p = price_of_safety_instance()
    kw = {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}
    kw[field] = value
    with pytest.raises(ValueError, match=field):
        SafeBaiProblem(**kw)


def test_linear_bai_problem_validation():
    with pytest.raises(ValueError, match="span"):
        LinearBaiProblem(arms=np.array([[1.0, 0.0], [2.0, 0.0]]), theta_star=np.ones(2), sigma=1.0,
                         epsilon=0.0, delta=0.05, lam=1.0, S=2.0)
    with pytest.raises(ValueError, match="S="):
        LinearBaiProblem(arms=np.eye(2), theta_star=np.ones(2) * 3, sigma=1.0,
                         epsilon=0.0, delta=0.05, lam=1.0, S=2.0)


def test_optimal_action_ball_against_brute_force():
    rng = np.random.default_rng(0)
    th = np.linspace(0, 2 * np.pi, 4000)
    for _ in range(10):
        mu = rng.normal(size=2)
        B = rng.normal(size=(2, 2))
        c = rng.uniform(0.05, 1.0)
        r = rng.uniform(0.5, 2.0)
        x = optimal_action(BallSet(2, r), mu, B, c)
        assert np.linalg.norm(x) <= r + 1e-9 and x @ B @ mu <= c + 1e-9
        rad = np.linspace(0, r, 100)
        P = (rad[:, None, None] * np.stack([np.cos(th), np.sin(th)], -1)[None]).reshape(-1, 2)
        P = P[P @ (B @ mu) <= c]
        assert mu @ x <= (P @ mu).min() + 1e-9
        assert mu @ x >= (P @ mu).min() - 1e-2 * np.linalg.norm(mu) * r


def test_optimal_action_finite_and_box():
    arms = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, -1.0], [0.0, 0.0]])
    mu = np.array([1.0, 0.5])
    B = np.eye(2)
    # arm (−1, 0) has safety −1 ≤ 0.2 and the smallest loss −1.
    np.testing.assert_allclose(optimal_action(FiniteSet(arms), mu, B, 0.2), [-1.0, 0.0])
    # Bμ = (−1, 0): the constraint is x1 ≥ −0.2; the unique optimum is (−0.2, −1).
    np.testing.assert_allclose(optimal_action(BoxSet(2), mu, np.diag([-1.0, 0.0]), 0.2), [-0.2, -1.0], atol=1e-9)


def test_true_gamma_formula():
    np.testing.assert_allclose(true_gamma(np.array([0.3, 0.0, -0.25, -1.0, -4.0]), -0.5), [1, 1, 1, 0.5, 0.125])
    assert worst_case_safe_scale(np.eye(3), -0.5, 1.0) == 0.5
    assert worst_case_safe_scale(np.eye(3), -2.0, 1.0) == 1.0


def test_price_of_safety_builder_scales_with_d():
    for d in (2, 4, 6):
        p = price_of_safety_instance(d=d)
        assert p.arms.shape == (d + 1, d) and p.T_FE == 200 * (d + 1)
        tr = safe_bai_truth(p)
        assert tr.optimal_safe_arm == 0 and tr.gamma[1] == 0.5
