"""The compiled design update: its BLAS products are numpy's bitwise, and its formulas are
the Sherman–Morrison update written out in numpy (the guard of docs/sweeps.md: if
numba's BLAS and numpy's ever round differently, records would depend on the path)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from cbai_cli.numerics.kernels.design import absorb, greedy_arm, predict_contender, watch_largest
from cbai_cli.numerics.kernels.threads import NEVER
from cbai_cli.numerics.linalg import DesignState

#: (K, d) of the test and shipped instances, the benchmarks' and one of several blocks.
SHAPES = [(11, 10), (20, 5), (30, 30), (41, 40), (50, 30), (2, 1), (3000, 32), (8300, 32)]


@numba.njit
def compiled_products(arms, inverse, x, block):
    """What the kernels compute: gemv with A⁻¹, dot, and gemv over blocks of arm rows."""
    u = np.dot(inverse, x)
    q = np.dot(x, u)
    out = np.empty(arms.shape[0])
    for start in range(0, arms.shape[0], block):
        out[start:start + block] = np.dot(arms[start:start + block], u)
    return u, q, out


def design_of(shape, seed=0):
    rng = np.random.default_rng(seed)
    arms = rng.standard_normal(shape)
    state = DesignState(arms, 0.7)
    for arm in rng.integers(shape[0], size=12):
        state.update(int(arm), float(rng.standard_normal()))
    return state, rng


@pytest.mark.parametrize("shape", SHAPES)
def test_compiled_products_equal_numpy_matmul_bitwise(shape):
    state, rng = design_of(shape)
    x = state.arms[int(rng.integers(shape[0]))]
    u, q, projected = compiled_products(state.arms, state.inverse, x, state.block)
    expected_u = state.inverse @ x
    np.testing.assert_array_equal(u, expected_u)
    assert q == x @ expected_u
    np.testing.assert_array_equal(projected, state.arms @ expected_u)


@pytest.mark.parametrize("block", [64, 128, 10_000])
def test_blocked_products_do_not_depend_on_the_block(block):
    state, rng = design_of((3000, 32))
    x = state.arms[5]
    reference = compiled_products(state.arms, state.inverse, x, 3000)[2]
    np.testing.assert_array_equal(compiled_products(state.arms, state.inverse, x, block)[2], reference)


def test_absorb_is_the_sherman_morrison_update_written_in_numpy():
    state, rng = design_of((40, 6), seed=2)
    arms, x, total, count = state.arms, state.arms[7], 1.25, 3
    inverse, gram, target = state.inverse.copy(), state.gram.copy(), state.targets[0].copy()
    estimate, norms2, predictions = state._estimate.copy(), state.norms2.copy(), state.predictions.copy()
    u = inverse @ x
    q = x @ u
    shrink = count / (1.0 + count * q)
    residual = (total - count * (x @ estimate)) / (1.0 + count * q)
    logdet, contender_arm = absorb(arms, state.inverse, state.gram, state.targets[0], state._estimate,
                                   state.norms2, state.predictions, state.logdet, x, total, count, -1,
                                   state.companion, state.block, NEVER)
    assert contender_arm == -1
    assert logdet == state.logdet + math.log1p(count * q)
    np.testing.assert_array_equal(state.inverse, inverse - shrink * (u[:, None] * u))
    np.testing.assert_array_equal(state.gram, gram + count * (x[:, None] * x))
    np.testing.assert_array_equal(state.targets[0], target + total * x)
    np.testing.assert_array_equal(state.norms2, norms2 - shrink * (arms @ u) ** 2)
    np.testing.assert_array_equal(state.predictions, predictions + residual * (arms @ u))
    np.testing.assert_array_equal(state._estimate, estimate + residual * u)


def test_absorb_keeps_the_inverse_of_the_gram_matrix():
    state, rng = design_of((25, 4), seed=3)
    np.testing.assert_allclose(state.inverse @ state.gram, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(state.logdet, np.linalg.slogdet(state.gram)[1], rtol=1e-12)


def test_the_companion_product_is_the_gain_product_of_the_new_inverse():
    state, rng = design_of((300, 5), seed=4)
    _, contender_arm = absorb(state.arms, state.inverse, state.gram, state.targets[0], state._estimate,
                              state.norms2, state.predictions, state.logdet, state.arms[3], 0.5, 1, 17,
                              state.companion, 64, NEVER)
    np.testing.assert_array_equal(state.companion, state.arms @ (state.inverse @ state.arms[17]))
    assert contender_arm == greedy_arm(state.arms, state.inverse, state.norms2, 17, -1, -1, 64, NEVER)


def test_greedy_arm_takes_the_largest_reduction_first_among_ties():
    # y = e1 with A = I: the reduction of arm a is (a·e1)²/(1 + ‖a‖²): arms 1 and 2 tie at 2.
    arms = np.array([[1.0, 0.0], [2.0, 1.0], [2.0, -1.0], [0.0, 3.0]])
    norms2 = np.einsum("kd,kd->k", arms, arms)
    assert greedy_arm(arms, np.eye(2), norms2, 0, -1, -1, 64, NEVER) == 1


def test_a_kept_watch_predicts_the_largest_new_variance_and_is_refilled_only_when_it_cannot():
    rng = np.random.default_rng(4)
    arms = rng.standard_normal((400, 6))
    inverse = np.eye(6)
    norms2 = np.einsum("kd,kd->k", arms, arms)
    candidates = rng.random(400) < 0.7
    watch, bound = np.full(8, -1, dtype=np.int64), np.full(1, -np.inf)
    filled, hits = [], 0
    for step in range(40):
        x = arms[rng.integers(400)]
        predicted = predict_contender(arms, inverse, norms2, candidates, False, x, 1, watch, bound)
        filled.append(watch.copy())
        u = inverse @ x
        inverse -= np.outer(u, u) / (1.0 + x @ u)
        norms2 = np.einsum("kd,de,ke->k", arms, inverse, arms)
        largest = int(np.flatnonzero(candidates)[np.argmax(norms2[candidates])])
        assert predicted in (-1, largest)
        hits += predicted == largest
        candidates[rng.integers(400)] = False  # candidates only leave
    refills = sum(not np.array_equal(a, b) for a, b in zip(filled, filled[1:]))
    assert 0 < refills < 39 and hits > 30


def test_watch_largest_keeps_the_top_candidates_and_bounds_the_rest():
    norms2 = np.array([5.0, 9.0, 1.0, 7.0, 8.0, 3.0])
    candidates = np.array([True, True, True, True, False, True])
    watch, bound = np.full(2, -1, dtype=np.int64), np.full(1, -np.inf)
    watch_largest(norms2, candidates, False, watch, bound)
    assert sorted(watch) == [1, 3] and bound[0] == 5.0  # arm 4 (8.0) is no candidate
    watch = np.full(9, -1, dtype=np.int64)
    watch_largest(norms2, candidates, True, watch, bound)
    assert sorted(watch[:6]) == list(range(6)) and (watch[6:] == -1).all() and bound[0] == -np.inf
