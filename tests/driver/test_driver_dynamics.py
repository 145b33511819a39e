"""Car dynamics (paper Appendix C): hand-computed steps and batched roll-outs."""

import math

import numpy as np
import pytest

from cbai_cli.driver.dynamics import DEFAULT_DYNAMICS, Dynamics, rollout, step


def test_straight_step_heading_zero():
    # x += v cos(0) dt = 0.5 * 0.2; h += v a1 dt = 0.5 * 1 * 0.2; v += (a2 - v) dt = 0.
    new = step(np.array([1.0, 2.0, 0.0, 0.5]), np.array([1.0, 0.5]))
    np.testing.assert_allclose(new, [1.1, 2.0, 0.1, 0.5], rtol=0, atol=1e-15)


def test_step_at_sixty_degrees_braking_and_steering_right():
    new = step(np.array([0.0, 0.0, math.pi / 3, 0.8]), np.array([-1.0, -1.0]))
    expected = [0.8 * 0.5 * 0.2, 0.8 * math.sqrt(3) / 2 * 0.2, math.pi / 3 - 0.8 * 0.2, 0.8 + (-1 - 0.8) * 0.2]
    np.testing.assert_allclose(new, expected, rtol=0, atol=1e-15)
    assert new[3] == pytest.approx(0.44)


def test_increments_use_pre_step_heading_and_speed():
    # Heading changes 0 -> 0.2 in this step, but the position update must use h = 0
    # (so y stays 0) and v = 1 (so x moves by exactly 0.2).
    new = step(np.array([0.0, 0.0, 0.0, 1.0]), np.array([1.0, 1.0]))
    assert new[0] == pytest.approx(0.2)
    assert new[1] == 0.0
    assert new[2] == pytest.approx(0.2)
    assert new[3] == pytest.approx(1.0)


def test_negative_speed_drives_backwards_and_flips_steering():
    new = step(np.array([0.0, 0.0, 0.0, -0.5]), np.array([1.0, 0.0]))
    # x -= 0.1; h += (-0.5)(1)(0.2) = -0.1; v = -0.5 + (0 + 0.5) 0.2 = -0.4
    np.testing.assert_allclose(new, [-0.1, 0.0, -0.1, -0.4], rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "v, a2, expected",
    [
        (1.5, 1.0, 1.0),  # 1.5 + (1 - 1.5) 0.2 = 1.4 -> clipped to 1
        (0.5, 10.0, 1.0),  # 0.5 + 9.5 * 0.2 = 2.4 -> 1
        (-0.9, -10.0, -1.0),  # -0.9 + (-10 + 0.9) 0.2 = -2.72 -> -1
        (0.9, 1.0, 0.92),  # inside the limits: 0.8 v + 0.2 a2
        (-0.9, -1.0, -0.92),
    ],
)
def test_speed_is_clipped_to_unit_interval(v, a2, expected):
    new = step(np.array([0.0, 0.0, math.pi / 2, v]), np.array([0.0, a2]))
    assert new[3] == pytest.approx(expected)


def test_custom_constants():
    new = step(np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 0.0]), Dynamics(dt=0.5, friction=0.5, speed_limit=2.0))
    np.testing.assert_allclose(new, [0.5, 0.0, 0.0, 0.75])
    with pytest.raises(ValueError):
        Dynamics(dt=0.0)


def test_step_is_vectorised_and_does_not_modify_input():
    rng = np.random.default_rng(0)
    states = rng.normal(size=(7, 4))
    actions = rng.uniform(-1, 1, size=(7, 2))
    before = states.copy()
    batch = step(states, actions)
    np.testing.assert_array_equal(states, before)
    for i in range(7):
        np.testing.assert_array_equal(batch[i], step(states[i], actions[i]))


def test_batched_rollout_equals_one_at_a_time():
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, size=(13, 20, 2))
    start = np.array([0.0, -0.1, math.pi / 2, 0.41])
    batch = rollout(start, actions)
    assert batch.shape == (13, 21, 4)
    for i in range(13):
        single = rollout(start, actions[i : i + 1])[0]
        np.testing.assert_array_equal(batch[i], single)
        # and the same as stepping by hand
        s = start
        for t in range(20):
            s = step(s, actions[i, t], DEFAULT_DYNAMICS)
            np.testing.assert_array_equal(batch[i, t + 1], s)


def test_rollout_accepts_per_sequence_start_states_and_checks_shapes():
    actions = np.zeros((2, 3, 2))
    starts = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, math.pi / 2, 0.0]])
    traj = rollout(starts, actions)
    np.testing.assert_array_equal(traj[:, 0], starts)
    np.testing.assert_allclose(traj[0, 1], [0.2, 0.0, 0.0, 0.8])
    np.testing.assert_allclose(traj[1, 3], starts[1])  # standing car stays put
    with pytest.raises(ValueError):
        rollout(starts, np.zeros((2, 3)))
    with pytest.raises(ValueError):
        rollout(np.zeros(3), actions)
