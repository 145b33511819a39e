"""Traffic, environments and the scenario registry (paper Section 4.3, Figure 1)."""

import math

import numpy as np
import pytest

from cbai_cli.driver.scenarios import (
    PHI,
    SCENARIO_NAMES,
    TAU,
    UnknownScenarioError,
    environment,
    scenario,
    traffic,
)
from cbai_cli.contracts.errors import CbaiError


def speed(t, v0=0.41, a2=0.328):
    # v_{t+1} = v_t + (a2 - v_t) 0.2 = 0.8 v_t + 0.2 a2  =>  v_t = a2 + (v0 - a2) 0.8^t
    return a2 + (v0 - a2) * 0.8**t


def test_changing_lane_car_by_hand():
    cars = traffic("changing_lane").trajectories
    assert cars.shape == (1, 21, 4)
    car = cars[0]
    np.testing.assert_allclose(car[0], [0.17, 0.0, math.pi / 2, 0.41])
    np.testing.assert_allclose(car[1], [0.17, 0.41 * 0.2, math.pi / 2, 0.3936], atol=1e-15)
    np.testing.assert_allclose(car[2, 1], 0.082 + 0.3936 * 0.2)
    for t in range(21):
        assert car[t, 3] == pytest.approx(speed(t), rel=1e-12)
    # Straight for five steps: x stays in the right lane, y = 0.2 * sum of speeds.
    assert car[5, 0] == pytest.approx(0.17, abs=1e-15)
    assert car[5, 1] == pytest.approx(0.2 * sum(speed(k) for k in range(5)))
    # Steering +1 for steps 5..10 turns left (towards the middle lane) by v_t * 0.2 each.
    h11 = math.pi / 2 + 0.2 * sum(speed(k) for k in range(5, 11))
    assert car[11, 2] == pytest.approx(h11)
    # Step 6 still moves straight up (heading at step 5 is pi/2), step 7 uses h6.
    assert car[6, 0] == pytest.approx(0.17, abs=1e-15)
    h6 = math.pi / 2 + 0.2 * speed(5)
    assert car[7, 0] == pytest.approx(0.17 + 0.2 * speed(6) * math.cos(h6))
    # Steering -1 for steps 11..16, then straight: heading frozen from t = 17 on.
    h17 = h11 - 0.2 * sum(speed(k) for k in range(11, 17))
    assert car[17, 2] == pytest.approx(h17)
    assert car[20, 2] == pytest.approx(h17)
    assert car[20, 0] < 0.01  # ends near the middle lane


def test_blocked_cars_stand_still():
    cars = traffic("blocked").trajectories
    assert cars.shape == (3, 21, 4)
    expected = np.array([[-0.17, 0.6, math.pi / 2, 0.0], [0.0, 0.65, math.pi / 2, 0.0], [0.17, 0.7, math.pi / 2, 0.0]])
    for t in (0, 1, 10, 20):
        np.testing.assert_allclose(cars[:, t], expected, atol=1e-15)


def test_agent_start_states():
    np.testing.assert_allclose(environment("changing_lane").agent_start, [0.0, -0.1, math.pi / 2, 0.41])
    np.testing.assert_allclose(environment("blocked").agent_start, [0.0, -0.1, math.pi / 2, 0.1])


def test_named_scenarios():
    assert SCENARIO_NAMES == ("base", "different-reward", "different-environment")
    base, reward, env = (scenario(n) for n in SCENARIO_NAMES)
    np.testing.assert_array_equal(base.theta, np.eye(8)[0])
    np.testing.assert_array_equal(reward.theta, np.eye(8)[1])
    np.testing.assert_array_equal(env.theta, np.eye(8)[0])
    assert base.environment.traffic.name == reward.environment.traffic.name == "changing_lane"
    assert env.environment.traffic.name == "blocked"
    for sc in (base, reward, env):
        np.testing.assert_array_equal(sc.phi, [0, 0, 0.3, 0.05, 0.02, 0.5, 0.3, 0.8])
        assert sc.tau == TAU == 1.0
    np.testing.assert_array_equal(PHI, base.phi)


def test_scenario_arrays_are_read_only():
    sc = scenario("base")
    for a in (sc.theta, sc.phi, sc.environment.agent_start, sc.environment.traffic.trajectories):
        with pytest.raises(ValueError):
            a[0] = 1.0


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="base, different-reward, different-environment"):
        scenario("nope")
    with pytest.raises(CbaiError):
        scenario("nope")
    with pytest.raises(UnknownScenarioError, match="changing_lane, blocked"):
        traffic("jam")
