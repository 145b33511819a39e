"""Problem dataclasses (cbai_cli/kinds/safe/problems.py): validation, immutability, learner views, safe scales."""

import dataclasses
import math

import numpy as np
import pytest

from cbai_cli.kinds.safe.action_sets import BoxSet
from cbai_cli.kinds.safe.paper_instances import instance_a, price_of_safety_instance
from cbai_cli.kinds.safe.problems import (
    LinearBaiProblem,
    SafeBaiProblem,
    SafeBaiSetting,
    SafeRegretProblem,
    SafeRegretSetting,
    safe_scales,
    worst_case_safe_scale,
)
from cbai_cli.kinds.safe.truths import safe_bai_truth


def _regret_problem(**over):
    """A small regret problem with the fields ``over`` (of the setting or of the truth) replaced."""
    setting = dict(action_set=BoxSet(2), B=np.eye(2), c=0.5, T=100, S=1.0, L=math.sqrt(2), R=1.0, lam=1.0, delta=0.05)
    truth = dict(mu_star=np.array([0.5, 0.1]), noise_sd=0.1)
    for name, value in over.items():
        (truth if name in truth else setting)[name] = value
    return SafeRegretProblem(SafeRegretSetting(**setting), **truth)


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
        _regret_problem(**{field: value})


def test_problems_are_frozen_and_arrays_read_only():
    p = instance_a()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.setting.c = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.noise_sd = 1.0
    with pytest.raises(ValueError):
        p.mu_star[0] = 0.0
    src = np.array([0.5, 0.1])
    q = _regret_problem(mu_star=src)
    src[0] = 9.0  # the problem holds its own copy
    assert q.mu_star[0] == 0.5


def test_learner_view_hides_the_truth():
    p = instance_a()
    view = p.learner_view()
    assert isinstance(view, SafeRegretSetting) and view is p.setting
    assert not hasattr(view, "mu_star")
    bview = price_of_safety_instance().learner_view()
    assert isinstance(bview, SafeBaiSetting)
    assert not hasattr(bview, "mu_star") and not hasattr(bview, "theta_star")


def test_a_problem_holds_its_setting_and_a_new_setting_is_checked_against_the_truth():
    p = instance_a()
    q = p.with_setting(delta=0.1, lam=2.0)
    assert (q.setting.delta, q.setting.lam, q.setting.c) == (0.1, 2.0, p.setting.c)
    assert np.array_equal(q.mu_star, p.mu_star) and p.setting.delta == 0.01  # the original is unchanged
    with pytest.raises(ValueError, match=r"^S=0.5 is below ‖mu_star‖"):
        p.with_setting(S=0.5)
    b = price_of_safety_instance()
    with pytest.raises(ValueError, match=r"^S_mu=0.5 is below ‖mu_star‖"):
        b.with_setting(S_mu=0.5)
    with pytest.raises(ValueError, match="setting must be a SafeRegretSetting"):
        SafeRegretProblem(b.setting, mu_star=np.zeros(3), noise_sd=0.0)


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
    setting = {f.name: getattr(p.setting, f.name) for f in dataclasses.fields(p.setting)}
    truth = {"theta_star": p.theta_star, "mu_star": p.mu_star}
    (truth if field in truth else setting)[field] = value
    with pytest.raises(ValueError, match=field):
        SafeBaiProblem(SafeBaiSetting(**setting), **truth)


def test_linear_bai_problem_validation():
    with pytest.raises(ValueError, match="span"):
        LinearBaiProblem(arms=np.array([[1.0, 0.0], [2.0, 0.0]]), theta_star=np.ones(2), sigma=1.0,
                         epsilon=0.0, delta=0.05, lam=1.0, S=2.0)
    with pytest.raises(ValueError, match="S="):
        LinearBaiProblem(arms=np.eye(2), theta_star=np.ones(2) * 3, sigma=1.0,
                         epsilon=0.0, delta=0.05, lam=1.0, S=2.0)


def test_safe_scales_formula():
    np.testing.assert_allclose(safe_scales(np.array([0.3, 0.0, -0.25, -1.0, -4.0]), -0.5), [1, 1, 1, 0.5, 0.125])
    assert worst_case_safe_scale(np.eye(3), -0.5, 1.0) == 0.5
    assert worst_case_safe_scale(np.eye(3), -2.0, 1.0) == 1.0


def test_price_of_safety_builder_scales_with_d():
    for d in (2, 4, 6):
        p = price_of_safety_instance(d=d)
        assert p.setting.arms.shape == (d + 1, d) and p.setting.T_FE == 200 * (d + 1)
        tr = safe_bai_truth(p)
        assert tr.optimal_safe_arm == 0 and tr.gamma[1] == 0.5
