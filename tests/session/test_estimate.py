"""The answers a study still needs, extrapolated from its intervals: hand-computed cases."""

from __future__ import annotations

import numpy as np

from cbai_cli.session.estimate import Estimate, answers_needed

REWARDS = np.array([3.0, 2.0, 1.0])


def _estimate(lower, upper, uncertain, feasible, answered=100):
    return answers_needed(np.array(lower), np.array(upper), REWARDS, 0.0, np.array(uncertain), np.array(feasible),
                          answered)


def test_the_slowest_arm_to_decide_sets_the_total():
    # arm 1 looks feasible (centre −0.5) and is the best such arm: it must be certified (factor (1/0.5)² = 4);
    # arm 0, of larger reward, must be shown infeasible (centre 0.75, factor (1/0.75)² ≈ 1.78); arm 2 is in F
    estimate = _estimate([-0.25, -1.5, -2.0], [1.75, 0.5, -1.0], [True, True, False], [False, False, True])
    assert estimate == Estimate(remaining=300, total=400, arm=1)


def test_arms_below_the_predicted_answer_are_left_to_domination():
    # arm 0 looks feasible and has the largest reward: arms 1 and 2, however slow, will be dominated
    estimate = _estimate([-1.0, -3.0, -3.0], [0.5, 3.0, 3.0], [True, True, True], [False, False, False])
    assert estimate == Estimate(remaining=800, total=900, arm=0)  # (0.75 / 0.25)² = 9


def test_with_no_arm_looking_feasible_every_uncertain_arm_must_be_shown_infeasible():
    # arm 0: centre 0.5, half-width 1 (factor 4); arm 1: centre 0.25, half-width 0.75 (factor 9)
    estimate = _estimate([-0.5, -0.5, 0.5], [1.5, 1.0, 1.0], [True, True, False], [False, False, False])
    assert estimate == Estimate(remaining=800, total=900, arm=1)


def test_no_estimate_before_any_answer_or_with_an_unbounded_interval():
    assert _estimate([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0], [True] * 3, [False] * 3, answered=0) is None
    assert _estimate([-np.inf, -1.0, -1.0], [np.inf, 1.0, 1.0], [True] * 3, [False] * 3) is None


def test_a_study_with_no_uncertain_arm_needs_nothing_more():
    assert _estimate([-2.0, 1.0, 1.0], [-1.0, 2.0, 2.0], [False] * 3, [True, False, False]) == Estimate(0, 100, -1)


def test_the_rate_each_interval_shrank_at_sets_how_fast_it_is_decided():
    lower, upper = [-0.25, -1.5, -2.0], [1.75, 0.5, -1.0]
    # four times wider after 25 answers than after 100: w ∝ t^(−1), so arm 1 is decided at 100·(1/0.5) = 200
    wider = (25, np.array([-3.25, -4.5, -3.0]), np.array([4.75, 3.5, 0.0]))
    estimate = answers_needed(np.array(lower), np.array(upper), REWARDS, 0.0, np.array([True, True, False]),
                              np.array([False, False, True]), 100, wider)
    assert estimate == Estimate(remaining=100, total=200, arm=1)
    # no earlier point, or one after half the answers: the rate of a fixed allocation, 1/2
    assert _estimate(lower, upper, [True, True, False], [False, False, True]).total == 400
    late = (60, wider[1], wider[2])
    assert answers_needed(np.array(lower), np.array(upper), REWARDS, 0.0, np.array([True, True, False]),
                          np.array([False, False, True]), 100, late).total == 400
