"""The eight features of Table C.1 on hand-built states (paper Table C.1)."""

import math

import numpy as np
import pytest

from cbai_cli.driver.dynamics import rollout
from cbai_cli.driver.features import FeatureParams, policy_features, state_features, trajectory_features
from cbai_cli.driver.scenarios import environment

NO_CARS = np.zeros((0, 4))


def features_of(x=0.0, y=0.0, h=math.pi / 2, v=0.4, cars=NO_CARS, params=FeatureParams()):
    return state_features(np.array([x, y, h, v]), np.asarray(cars, dtype=float), params)


def test_all_features_of_one_hand_built_state():
    f = features_of(x=0.3, y=0.5, h=math.pi / 3, v=-0.2, cars=[[0.25, 0.45, math.pi / 2, 0.3]])
    expected = [
        -0.36,  # -(v - 0.4)^2 = -(-0.6)^2
        -(0.13**2),  # -(x - 0.17)^2
        1.0,  # |0.3| > 0.255: off street
        1.0,  # d = 0.13^2 = 0.0169: 1 / (1 + exp(-169 + 10)) = 1 to machine precision
        0.5,  # |cos(pi/3)|
        1.0,  # v < 0
        0.0,  # v <= 0.6
        math.exp(-30 * (10 * 0.05**2 + 0.05**2) + 30 * 0.01),  # = exp(-0.525)
    ]
    np.testing.assert_allclose(f, expected, rtol=1e-12, atol=1e-15)


def test_target_velocity_and_location():
    f = features_of(x=0.17, v=0.4)
    assert f[0] == 0.0 and f[1] == 0.0
    f = features_of(x=-0.17, v=1.0)
    assert f[0] == pytest.approx(-0.36)
    assert f[1] == pytest.approx(-(0.34**2))


def test_off_street_threshold_is_strict():
    assert features_of(x=0.255)[2] == 0.0
    assert features_of(x=-0.2551)[2] == 1.0
    assert features_of(x=0.2)[2] == 0.0


@pytest.mark.parametrize(
    "x, expected",
    [
        (0.0, 1 / (1 + math.exp(10))),  # on a lane centre: d = 0
        (-0.17, 1 / (1 + math.exp(10))),
        (0.17 + math.sqrt(0.001), 0.5),  # b d = a: the sigmoid's midpoint
        (-0.15, 1 / (1 + math.exp(-10000 * 0.0004 + 10))),  # d = 0.02^2 = 4e-4 -> 1 / (1 + e^6)
        (0.085, 1 / (1 + math.exp(-10000 * 0.085**2 + 10))),  # on a lane boundary: ~1
    ],
)
def test_not_in_lane_sigmoid_uses_squared_distance_to_nearest_centre(x, expected):
    assert features_of(x=x)[3] == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_heading_speed_flags():
    f = features_of(h=0.0, v=0.7)
    assert f[4] == 1.0 and f[5] == 0.0 and f[6] == 1.0
    f = features_of(h=math.pi / 2, v=0.6)  # exactly at the limit: not too fast
    assert f[4] == pytest.approx(0.0, abs=1e-15) and f[6] == 0.0
    assert features_of(v=0.0)[5] == 0.0  # standing is not driving backwards
    assert features_of(h=math.pi, v=0.1)[4] == pytest.approx(1.0)


def test_too_close_sums_over_cars_and_c1_is_a_parameter():
    cars = [[0.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.0, 0.0]]
    f = features_of(x=0.0, y=0.0, cars=cars)
    expected = math.exp(0.3) + math.exp(-30 * (10 * 0.01 + 0.04) + 0.3)
    assert f[7] == pytest.approx(expected, rel=1e-12)
    f4 = features_of(x=0.0, y=0.0, cars=cars, params=FeatureParams(close_c1=4.0))  # Table C.1's value
    assert f4[7] == pytest.approx(math.exp(0.3) + math.exp(-30 * (4 * 0.01 + 0.04) + 0.3), rel=1e-12)
    assert features_of(cars=NO_CARS)[7] == 0.0


def test_trajectory_features_sum_post_step_states_only():
    rng = np.random.default_rng(3)
    agent = rng.normal(scale=0.3, size=(4, 21, 4))
    cars = rng.normal(scale=0.3, size=(2, 21, 4))
    total = trajectory_features(agent, cars)
    assert total.shape == (4, 8)
    for i in range(4):
        manual = sum(state_features(agent[i, t], cars[:, t]) for t in range(1, 21))
        np.testing.assert_allclose(total[i], manual, rtol=1e-12, atol=1e-12)


def test_policy_features_uses_updated_other_cars():
    # Agent and the other car evaluated at the same post-step instant t = 1..20.
    env = environment("changing_lane")
    actions = np.random.default_rng(4).uniform(-1, 1, size=(3, 20, 2))
    f = policy_features(actions, env)
    traj = rollout(env.agent_start, actions)
    for i in range(3):
        manual = sum(state_features(traj[i, t], env.traffic.trajectories[:, t]) for t in range(1, 21))
        np.testing.assert_allclose(f[i], manual, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        policy_features(np.zeros((3, 19, 2)), env)
