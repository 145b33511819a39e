"""The elimination state (Lindner et al. 2022, Algorithm 1 lines 14–18), by hand."""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.elimination import EliminationState


def test_update_moves_arms_to_feasible_and_prunes_by_reward():
    state = EliminationState(np.array([1.0, 2.0, 3.0, 0.5]), threshold=0.0)
    state.update(lower=np.array([-2.0, -1.0, -1.0, 0.5]), upper=np.array([-0.5, 0.5, 1.0, 1.0]))
    assert state.feasible.tolist() == [True, False, False, False]
    assert state.uncertain.tolist() == [False, True, True, False]
    assert state.best_feasible_reward == 1.0
    state.update(lower=np.array([-2.0, -1.0, 0.1, 0.5]), upper=np.array([-0.5, -0.1, 1.0, 1.0]))
    assert state.uncertain.tolist() == [False, False, False, False]
    assert state.done
    assert state.recommendation() == 1


def test_uncertain_set_only_shrinks_and_feasible_only_grows():
    state = EliminationState(np.zeros(3), 0.0)
    state.update(np.array([1.0, -1.0, -1.0]), np.array([2.0, -0.5, 1.0]))
    state.update(np.array([-5.0, -5.0, -5.0]), np.array([5.0, 5.0, 5.0]))
    assert state.uncertain.tolist() == [False, False, True]
    assert state.feasible.tolist() == [False, True, False]


def test_anytime_answer_without_feasible_arms_is_lowest_upper_bound():
    state = EliminationState(np.array([1.0, 2.0]), 0.0)
    state.update(np.array([-1.0, -1.0]), np.array([0.7, 0.3]))
    assert state.recommendation() is None
    assert state.anytime_recommendation() == 1


def test_ties_in_reward_keep_the_first_index():
    state = EliminationState(np.array([1.0, 1.0]), 0.0)
    state.update(np.array([-1.0, -1.0]), np.array([-0.5, -0.5]))
    assert state.recommendation() == 0


from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 8).flatmap(lambda k: st.tuples(
    hnp.arrays(np.float64, k, elements=st.floats(-3, 3)),
    st.lists(st.tuples(hnp.arrays(np.float64, k, elements=st.floats(-2, 2)),
                       hnp.arrays(np.float64, k, elements=st.floats(0, 2))), min_size=1, max_size=6))))
def test_invariants_under_any_sequence_of_bounds(case):
    rewards, updates = case
    state = EliminationState(rewards, 0.0)
    for centre, width in updates:
        before_uncertain, before_feasible = state.uncertain.copy(), state.feasible.copy()
        state.update(centre - width, centre + width)
        assert not (state.uncertain & ~before_uncertain).any()  # U only shrinks
        assert not (before_feasible & ~state.feasible).any()  # F only grows
        assert not (state.uncertain & state.feasible).any()
        best = state.recommendation()
        assert best is None or state.feasible[best]
        if best is not None:
            assert rewards[best] == rewards[state.feasible].max()
