"""The random rules' choice of an arm from a uniform u ∈ [0, 1) (one formula for the
compiled run and the ask/tell step), and the rules of :func:`cbai_cli.numerics.kernels.select.select`
that read it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cbai_cli.numerics.kernels.codes import ADAPTIVE_UNIFORM, G_ACOL_UNIFORM, MAXREW_F
from cbai_cli.numerics.kernels.select import select, uniform_choice, uniform_index

JUST_BELOW_ONE = float(np.nextafter(1.0, 0.0))


@pytest.mark.parametrize("u, m, index", [(0.0, 1, 0), (0.0, 7, 0), (JUST_BELOW_ONE, 1, 0), (JUST_BELOW_ONE, 7, 6),
                                         (JUST_BELOW_ONE, 2**40 + 3, 2**40 + 2), (0.5, 4, 2), (0.4999, 4, 1),
                                         (0.75, 4, 3), (0.999, 1, 0)])
def test_uniform_index_is_the_floor_of_u_times_m(u, m, index):
    assert uniform_index(u, m) == index


def test_uniform_index_never_reaches_m_even_when_the_product_does():
    assert uniform_index(1.0, 5) == 4  # u·m = m: only a product rounded up could get there


@given(st.floats(0.0, 1.0, exclude_max=True), st.integers(1, 10**6))
def test_uniform_index_is_a_valid_index(u, m):
    assert 0 <= uniform_index(u, m) < m


def test_each_index_takes_a_share_one_over_m_of_the_unit_interval():
    u = (np.arange(12) + 0.5) / 12  # midpoints of twelve equal cells
    assert [uniform_index(value, 3) for value in u] == [0] * 4 + [1] * 4 + [2] * 4


def test_uniform_choice_counts_only_the_candidates_in_index_order():
    candidates = np.array([False, True, False, True, True, False])
    assert [uniform_choice(u, candidates, False) for u in (0.0, 0.34, 0.67, JUST_BELOW_ONE)] == [1, 3, 4, 4]


def test_uniform_choice_everywhere_ignores_the_candidates():
    candidates = np.array([False, True, False, False])
    assert [uniform_choice(u, candidates, True) for u in (0.0, 0.3, 0.6, JUST_BELOW_ONE)] == [0, 1, 2, 3]


def test_uniform_choice_of_a_single_candidate_is_it():
    candidates = np.zeros(9, dtype=bool)
    candidates[5] = True
    assert uniform_choice(0.0, candidates, False) == uniform_choice(JUST_BELOW_ONE, candidates, False) == 5


def test_uniform_choice_without_candidates_is_minus_one():
    assert uniform_choice(0.5, np.zeros(4, dtype=bool), False) == -1


def random_rule(code, uncertain, feasible, u, rewards=None):
    k = uncertain.shape[0]
    arms = np.eye(k)
    rewards = np.arange(k, dtype=float) if rewards is None else rewards
    return select(code, arms, np.eye(k), np.ones(k), rewards, uncertain, feasible, u, np.int64(-1), np.int64(-1),
                  64, 1 << 60)


def test_adaptive_uniform_draws_over_all_arms():
    uncertain = np.array([True, False, False, False])
    assert random_rule(ADAPTIVE_UNIFORM, uncertain, uncertain, 0.8) == 3


def test_g_acol_uniform_draws_over_the_uncertain_arms():
    uncertain = np.array([True, False, True, False])
    assert random_rule(G_ACOL_UNIFORM, uncertain, np.zeros(4, dtype=bool), 0.8) == 2


def test_maxrew_f_pulls_the_best_feasible_arm_first_among_ties_whatever_u():
    feasible = np.array([True, True, False, True])
    rewards = np.array([0.0, 2.0, 5.0, 2.0])
    assert {random_rule(MAXREW_F, np.ones(4, dtype=bool), feasible, u, rewards) for u in (0.0, 0.9)} == {1}


def test_maxrew_f_draws_over_all_arms_when_nothing_is_feasible():
    nothing = np.zeros(5, dtype=bool)
    assert [random_rule(MAXREW_F, nothing, nothing, u) for u in (0.0, 0.5, JUST_BELOW_ONE)] == [0, 2, 4]
