"""Action sets (cbai_cli/kinds/safe/action_sets.py): membership, optima, the optimistic step, geometry, file form."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.kinds.safe.action_sets import ACTION_SET_KINDS, ActionSet, BallSet, BoxSet, FiniteSet


def test_action_set_validation():
    with pytest.raises(ValueError, match="half_width"):
        BoxSet(2, -1.0)
    with pytest.raises(ValueError, match="radius"):
        BallSet(2, 0.0)
    with pytest.raises(ValueError, match="arms"):
        FiniteSet(np.ones(3))


def test_optimal_action_ball_against_brute_force():
    rng = np.random.default_rng(0)
    th = np.linspace(0, 2 * np.pi, 4000)
    for _ in range(10):
        mu = rng.normal(size=2)
        B = rng.normal(size=(2, 2))
        c = rng.uniform(0.05, 1.0)
        r = rng.uniform(0.5, 2.0)
        x = BallSet(2, r).optimal_action(mu, B, c)
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
    np.testing.assert_allclose(FiniteSet(arms).optimal_action(mu, B, 0.2), [-1.0, 0.0])
    # Bμ = (−1, 0): the constraint is x1 ≥ −0.2; the unique optimum is (−0.2, −1).
    np.testing.assert_allclose(BoxSet(2).optimal_action(mu, np.diag([-1.0, 0.0]), 0.2), [-0.2, -1.0], atol=1e-9)


def test_finite_optimal_action_is_none_when_no_arm_is_safe():
    arms = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert FiniteSet(arms).optimal_action(np.array([1.0, 1.0]), np.eye(2), 0.5) is None


def test_labels():
    assert BoxSet(2, 1.0).label() == "box [−1, 1]^2"
    assert BallSet(3, 1.5).label() == "ball of radius 1.5 in R^3"
    assert FiniteSet(np.zeros((5, 2))).label() == "5 arms in R^2"


@pytest.mark.parametrize("action_set", [BoxSet(2, 0.5), BallSet(3, 2.0), FiniteSet(np.array([[0.0, 1.0], [2.0, 3.0]]))])
def test_file_form_round_trip(action_set):
    mapping = action_set.to_mapping()
    assert mapping["kind"] in ACTION_SET_KINDS and set(mapping) == {"kind", action_set.parameter}
    again = ActionSet.from_mapping(mapping, action_set.d)
    assert type(again) is type(action_set) and again.to_mapping() == mapping


def test_file_forms_by_hand():
    assert BoxSet(2, 0.5).to_mapping() == {"kind": "box", "half_width": 0.5}
    assert BallSet(3, 2.0).to_mapping() == {"kind": "ball", "radius": 2.0}
    assert FiniteSet(np.eye(2)).to_mapping() == {"kind": "finite", "arms": [[1.0, 0.0], [0.0, 1.0]]}
    with pytest.raises(ValueError, match="kind"):
        ActionSet.from_mapping({"kind": "sphere"}, 2)
    with pytest.raises(ValueError, match="box"):
        BoxSet.from_mapping({"kind": "ball", "radius": 1.0}, 2)


def test_capabilities():
    box2, box3, ball, finite = BoxSet(2), BoxSet(3), BallSet(2), FiniteSet(np.eye(2))
    assert [s.supports_ellipsoid_confidence for s in (box2, box3, ball, finite)] == [False, False, False, True]
    assert [s.supports_intersection for s in (box2, box3, ball, finite)] == [True, False, False, False]
    assert [s.supports_polygon_clipping for s in (box2, box3, ball, finite)] == [True, False, False, False]
    assert box2.finite_arms is None and ball.finite_arms is None
    np.testing.assert_array_equal(finite.finite_arms, np.eye(2))
    with pytest.raises(NotImplementedError):
        box2.ellipsoid_optimistic_action(np.zeros(2), 1.0, np.eye(2), np.eye(2), 1.0)


def test_geometry_of_the_exploration_set():
    assert BoxSet(2, 1.0).centred_ball_cut(0.8) == 0.8
    assert BoxSet(2, 1.0).centred_ball_cut(1.2) is None
    assert BallSet(2, 1.0).centred_ball_cut(0.8) == 0.8 and BallSet(2, 1.0).centred_ball_cut(3.0) == 1.0
    assert FiniteSet(np.eye(2)).centred_ball_cut(0.5) is None
    stretch = np.diag([2.0, 0.5])  # extents 2r and r/2 along the axes
    assert BoxSet(2, 1.0).contains_ellipsoid(0.5, stretch) and not BoxSet(2, 1.0).contains_ellipsoid(0.6, stretch)
    assert BallSet(2, 1.0).contains_ellipsoid(0.5, stretch) and not BallSet(2, 1.0).contains_ellipsoid(0.6, stretch)
    shear = np.array([[1.0, 1.0], [0.0, 1.0]])  # row norms √2, 1; spectral norm (1 + √5)/2
    assert BoxSet(2, 1.0).contains_ellipsoid(1 / math.sqrt(2), shear)
    assert not BallSet(2, 1.0).contains_ellipsoid(1 / math.sqrt(2), shear)
    assert not FiniteSet(np.eye(2)).contains_ellipsoid(0.1, np.eye(2))


def test_finite_optimistic_actions_by_hand():
    arms = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, -1.0]])
    finite = FiniteSet(arms)
    vertices = np.array([[1.0, 0.5], [0.5, 1.0]])  # min_i vᵢᵀx: 0, 0.5, −1, −1
    rows = np.array([[1.0, 0.0], [0.0, 0.0]])  # safe iff x₁ ≤ c
    np.testing.assert_array_equal(finite.optimistic_action(vertices, rows, 0.5), [-1.0, 0.0])  # first of the ties
    rows = np.array([[-1.0, 0.0], [0.0, -1.0]])  # safe iff x₁ ≥ −c and x₂ ≥ −c
    np.testing.assert_array_equal(finite.optimistic_action(vertices, rows, 0.5), [0.0, 0.0])
    assert finite.optimistic_action(vertices, -rows, -0.5) is None
    # Ellipsoid with A⁻¹ = I, B = I, β = 0.5, μ̂ = (1, 1): safe iff xᵀμ̂ + 0.5‖x‖ ≤ c;
    # optimistic loss xᵀμ̂ − 0.5‖x‖: 0, 0.5, −1.5, −1.5.
    x = finite.ellipsoid_optimistic_action(np.ones(2), 0.5, np.eye(2), np.eye(2), 0.0)
    np.testing.assert_array_equal(x, [-1.0, 0.0])


def test_box_optimistic_action_methods_agree_in_2d():
    box = BoxSet(2, 1.0)
    vertices = np.array([[0.5, 0.2], [0.3, 0.6], [0.1, 0.4], [0.6, 0.1]])
    rows = vertices @ np.array([[1.0, 0.3], [0.3, 0.8]]).T
    values = {method: float(np.min(vertices @ box.optimistic_action(vertices, rows, 0.3, method)))
              for method in ("clip", "enumerate", "qhull", "lp", "auto")}
    assert max(values.values()) - min(values.values()) < 1e-7


def test_ball_optimistic_action_with_an_inactive_constraint_is_the_tangent_point():
    x = BallSet(2, 2.0).optimistic_action(np.array([[3.0, 4.0]]), np.array([[0.0, 1.0]]), 10.0)
    np.testing.assert_allclose(x, [-1.2, -1.6])


def test_box_knapsack_by_hand():
    from cbai_cli.kinds.safe.polytopes import box_knapsack_argmin

    # Unconstrained minimiser (−1, −1) has aᵀx = −3 ≤ 0: kept.
    np.testing.assert_array_equal(box_knapsack_argmin(np.array([1.0, 2.0]), np.array([1.0, 2.0]), 0.0, 1.0), [-1.0, -1.0])
    # min x₁ + x₂ with −x₁ − 3x₂ ≤ 1 on [−1, 1]²: from (−1, −1), aᵀx = 4; prices 1/1 and 1/3,
    # so x₂ moves first, by 3/3, to 0.
    np.testing.assert_allclose(box_knapsack_argmin(np.array([1.0, 1.0]), np.array([-1.0, -3.0]), 1.0, 1.0), [-1.0, 0.0])
    # A zero objective coordinate starts at the end that lowers aᵀx: x₂ = −1 costs nothing.
    np.testing.assert_array_equal(box_knapsack_argmin(np.array([-1.0, 0.0]), np.array([1.0, 1.0]), 0.0, 1.0), [1.0, -1.0])
    with pytest.raises(ValueError, match="no point"):
        box_knapsack_argmin(np.array([1.0]), np.array([1.0]), -2.0, 1.0)


# Multiples of 1/8: ties and zeros are frequent, and feasibility has no tolerance to argue about.
_EIGHTHS = st.integers(-24, 24).map(lambda k: k / 8)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 5).flatmap(lambda d: st.tuples(
        *(st.lists(_EIGHTHS, min_size=d, max_size=d) for _ in range(2)), _EIGHTHS, st.floats(0.1, 2.0))))
def test_box_knapsack_reaches_the_lp_optimum(case):
    from scipy.optimize import linprog

    from cbai_cli.kinds.safe.polytopes import box_knapsack_argmin

    mu, a, c, w = np.array(case[0]), np.array(case[1]), case[2], case[3]
    res = linprog(mu, A_ub=a[None, :], b_ub=[c], bounds=[(-w, w)] * mu.size, method="highs")
    if res.status != 0:
        with pytest.raises(ValueError):
            box_knapsack_argmin(mu, a, c, w)
        return
    x = box_knapsack_argmin(mu, a, c, w)
    assert np.all(np.abs(x) <= w) and a @ x <= c + 1e-12 * (1 + np.abs(a).sum() * w)
    assert mu @ x == pytest.approx(res.fun, abs=1e-9 * (1 + np.abs(mu).sum() * w))
