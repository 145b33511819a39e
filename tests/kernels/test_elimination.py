"""The compiled intervals and elimination update, on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.kernels.elimination import apply_bounds, interval_bounds


def test_intervals_are_the_prediction_plus_minus_radius_times_the_norm():
    lower, upper = np.empty(3), np.empty(3)
    interval_bounds(2.0, np.array([4.0, 0.25, -1e-18]), np.array([1.0, 0.0, 3.0]), lower, upper)
    np.testing.assert_array_equal(lower, [-3.0, -1.0, 3.0])  # a negative round-off norm counts as 0
    np.testing.assert_array_equal(upper, [5.0, 1.0, 3.0])


def test_elimination_grows_the_feasible_set_and_drops_dominated_arms():
    # τ = 0: arm 0 certainly feasible (reward 2), arm 1 certainly infeasible, arm 2
    # uncertain but of reward 1 < r̄ = 2, arm 3 uncertain with reward 3.
    rewards = np.array([2.0, 5.0, 1.0, 3.0])
    lower, upper = np.array([-2.0, 0.5, -1.0, -1.0]), np.array([-0.5, 2.0, 1.0, 1.0])
    uncertain, feasible = np.ones(4, dtype=bool), np.zeros(4, dtype=bool)
    best, empty = apply_bounds(lower, upper, rewards, 0.0, uncertain, feasible, -math.inf)
    assert best == 2.0 and not empty
    np.testing.assert_array_equal(feasible, [True, False, False, False])
    np.testing.assert_array_equal(uncertain, [False, False, False, True])


def test_the_best_feasible_reward_only_grows_and_an_empty_set_is_reported():
    rewards = np.array([1.0, 4.0])
    uncertain, feasible = np.array([False, True]), np.array([False, False])
    best, empty = apply_bounds(np.array([-1.0, -1.0]), np.array([-0.5, -0.5]), rewards, 0.0, uncertain, feasible, 7.0)
    assert best == 7.0 and empty and feasible.all()
