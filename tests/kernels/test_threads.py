"""The passes over the arm matrix split across numba's threads give bitwise the serial
passes' numbers and choices, and a whole run does not depend on whether they are split
(``threads_from`` forced to 0 on small arm sets, so that the threaded code runs)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numba
import numpy as np
import pytest

from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.numerics.kernels.batch import run_compiled
from cbai_cli.numerics.kernels.codes import STREAM_ENTRIES, STREAM_MIN_DIM, streams
from cbai_cli.numerics.kernels.elimination import apply_bounds, interval_bounds
from cbai_cli.numerics.kernels.threads import NEVER, THREADS_FROM, absorb_pass, greedy_pass, pair_products, threads_from
from cbai_cli.kinds.cbai.noise import GaussianNoise
from cbai_cli.run.simulate import RunRequest, prepare, run_streams

SPLIT = 0  # threads_from that splits every pass


def arm_set(k, d, seed=0):
    """Unit arms with rows 5, k − 70 and k − 3 equal, so that gains tie across blocks."""
    rng = np.random.default_rng(seed)
    arms = rng.standard_normal((k, d))
    arms /= np.linalg.norm(arms, axis=1, keepdims=True)
    arms[k - 3] = arms[k - 70] = arms[5]
    return arms, rng


def update(arms, u, shrink, residual, norms2, predictions, direction, companion, both, block, limit):
    """:func:`absorb_pass` without the elimination update; returns its greedy arm."""
    nothing, none = np.empty(0), np.empty(0, dtype=bool)
    return absorb_pass(arms, u, shrink, residual, norms2, predictions, direction, companion, both, block, limit,
                       False, 0.0, nothing, 0.0, none, none, nothing, nothing, -np.inf)[0]


@pytest.mark.parametrize("both", [False, True])
def test_the_split_update_pass_equals_the_serial_one_bitwise(both):
    arms, rng = arm_set(300, 7)
    u, direction = rng.standard_normal(7), rng.standard_normal(7)
    norms2, predictions = rng.random(300) + 1.0, rng.standard_normal(300)
    results = []
    for limit in (NEVER, SPLIT):
        caches = (norms2.copy(), predictions.copy(), np.zeros(300))
        update(arms, u, 0.3, -1.7, *caches[:2], direction, caches[2], both, 64, limit)
        results.append(caches)
    for serial, split in zip(*results):
        np.testing.assert_array_equal(split, serial)


@pytest.mark.parametrize("fused", [False, True])
def test_the_split_gain_argmax_is_the_serial_one_first_among_ties(fused):
    # fused: the argmax the update's pass takes from the companion; else the gain pass's own
    arms, rng = arm_set(300, 7)
    towards = arms[5] * 4.0  # arm 5 and its copies 230 and 297 tie at the largest gain
    for blocked, expected in ((False, 5), (True, 230)):  # without arm 5: rows 230 and 297, blocks 3 and 4
        chosen = []
        for limit in (NEVER, SPLIT):
            norms2 = np.full(300, 2.0)
            if blocked:
                norms2[5] = 1e9
            if fused:
                # u = 0 leaves the caches alone: the argmax is over the norms2 set here
                chosen.append(update(arms, np.zeros(7), 0.3, -1.7, norms2, np.zeros(300), towards, np.zeros(300),
                                     True, 64, limit))
            else:
                chosen.append(greedy_pass(arms, towards, norms2, 64, limit))
        assert chosen == [expected, expected]


@pytest.mark.parametrize("limit", [NEVER, SPLIT])
@pytest.mark.parametrize("raised", [False, True])
def test_the_elimination_in_the_pass_is_the_elimination_after_it(limit, raised):
    # raised: arm 290 (last block) becomes certainly feasible with the largest reward, so
    # r̄ rises after the earlier blocks pruned with the old one
    arms, rng = arm_set(300, 7)
    u = rng.standard_normal(7)
    norms2, predictions = rng.random(300) + 1.0, rng.standard_normal(300) * 3.0
    rewards = rng.standard_normal(300)
    if raised:
        predictions[290], norms2[290], rewards[290] = -50.0, 1.0, 10.0
    caches, after = (norms2.copy(), predictions.copy()), (norms2.copy(), predictions.copy())
    update(arms, u, 0.3, -1.7, *after, u, np.zeros(300), False, 64, NEVER)
    lower, upper = np.empty(300), np.empty(300)
    interval_bounds(0.8, *after, lower, upper)
    uncertain, feasible = rng.random(300) < 0.8, rng.random(300) < 0.1
    expected = (uncertain.copy(), feasible.copy())
    best, empty = apply_bounds(lower, upper, rewards, 0.5, *expected, 0.3)
    fused = (uncertain.copy(), feasible.copy(), np.empty(300), np.empty(300))
    _, fused_best, fused_empty = absorb_pass(arms, u, 0.3, -1.7, *caches, u, np.zeros(300), False, 64, limit, True,
                                             0.8, rewards, 0.5, *fused, 0.3)
    assert (best == 10.0) == raised
    assert (fused_best, fused_empty) == (best, empty)
    for mine, theirs in zip(fused, (*expected, lower, upper)):
        np.testing.assert_array_equal(mine, theirs)


def paired(arms, u, v, block):
    """:func:`pair_products` over ``arms`` block by block, as a pass calls it."""
    k = arms.shape[0]
    first, second = np.empty(k), np.empty(k)
    for start in range(0, k, block):
        stop = min(start + block, k)
        pair_products(arms, start, stop, u, v, first[start:stop], second[start:stop])
    return first, second


def test_pair_products_are_the_dot_products_up_to_the_roundoff_of_a_sum():
    rng = np.random.default_rng(11)
    arms, u, v = rng.standard_normal((201, 37)), rng.standard_normal(37), rng.standard_normal(37)
    first, second = paired(arms, u, v, 64)
    for products, w in ((first, u), (second, v)):
        # any order of a sum of d terms is within (d − 1)·ε·Σ|terms| of the exact sum
        bound = 36 * np.finfo(float).eps * (np.abs(arms) @ np.abs(w))
        assert np.all(np.abs(products - arms @ w) <= bound)


def test_a_pair_products_row_does_not_depend_on_the_other_vector():
    rng = np.random.default_rng(12)
    arms, u, v = rng.standard_normal((99, 40)), rng.standard_normal(40), rng.standard_normal(40)
    np.testing.assert_array_equal(paired(arms, u, v, 64)[1], paired(arms, -3.0 * v, v, 64)[1])
    np.testing.assert_array_equal(paired(arms, u, v, 64)[0], paired(arms, u, np.zeros(40), 64)[0])


@pytest.mark.parametrize("block", [1, 2, 7, 64, 128, 1000])
def test_pair_products_do_not_depend_on_the_block_size(block):
    rng = np.random.default_rng(13)
    arms, u, v = rng.standard_normal((301, 33)), rng.standard_normal(33), rng.standard_normal(33)
    whole = paired(arms, u, v, 302)
    for products, reference in zip(paired(arms, u, v, block), whole):
        np.testing.assert_array_equal(products, reference)


def test_matrices_stream_from_the_entries_and_dimension_of_the_rule():
    assert streams(STREAM_ENTRIES // STREAM_MIN_DIM, STREAM_MIN_DIM)
    assert not streams(STREAM_ENTRIES // STREAM_MIN_DIM - 1, STREAM_MIN_DIM)
    assert not streams(STREAM_ENTRIES, STREAM_MIN_DIM - 1)


@pytest.mark.parametrize("limit", [NEVER, SPLIT])
def test_on_a_streaming_matrix_the_gain_pass_computes_the_companions_bits(limit):
    # 8300 × 32 streams: the update's second product and the gain pass's own product both
    # come from pair_products, so the gain does not depend on whether the product was fused
    arms, rng = arm_set(8300, 32, seed=3)
    u, towards = rng.standard_normal(32), rng.standard_normal(32)
    norms2, predictions, companion = rng.random(8300) + 1.0, rng.standard_normal(8300), np.zeros(8300)
    fused = update(arms, u, 0.3, -1.7, norms2, predictions, towards, companion, True, 2048, limit)
    np.testing.assert_array_equal(companion, paired(arms, towards, towards, 2048)[1])
    gains = companion**2 / (1.0 + norms2)
    chosen = greedy_pass(arms, towards, norms2, 2048, limit)
    assert chosen == int(np.argmax(gains))
    assert chosen == fused


def started_runs(instance, algorithm, seeds, block):
    prepared = prepare(RunRequest.of(algorithm, "det", budget=300), instance)
    runs = []
    for seed in seeds:
        noise_rng, algorithm_rng, _ = run_streams(seed)
        learner = prepared.make_algorithm(algorithm_rng)
        if block is not None:
            learner.design.block = block
        runs.append((learner, prepared.kind.environment(instance, noise_rng)))
    return runs, prepared.budget


def final_state(learner) -> list:
    """Every array of the run's state row: the ridge design and the elimination state."""
    state, b = learner.run
    return [array[b] for array in state.arrays()]


def random_instance(k, d, seed):
    rng = np.random.default_rng(seed)
    return Instance(name="random", arms=rng.standard_normal((k, d)), reward=rng.standard_normal(d),
                    constraint=rng.standard_normal(d) * 0.3, threshold=0.1, noise=GaussianNoise(1.0))


@pytest.mark.parametrize("algorithm, k, d, block", [("g-acol", 300, 6, 64), ("greedy-maxvar", 300, 6, 64),
                                                    ("g-acol", 8300, 32, None)])
def test_a_run_with_split_passes_equals_the_serial_run_bitwise(algorithm, k, d, block):
    # 8300 × 32: the fused pass of large arm sets (one pass, both products), 5 blocks of 2048 rows
    instance = random_instance(k, d, seed=4)
    outcomes, states = [], []
    for limit in (NEVER, SPLIT):
        runs, budget = started_runs(instance, algorithm, [0, 1], block)
        outcomes.append(run_compiled([learner for learner, _ in runs], [env for _, env in runs], budget, limit))
        states.append([final_state(learner) for learner, _ in runs])
    assert outcomes[0] == outcomes[1]
    for serial, split in zip(*states):
        for a, b in zip(serial, split):
            np.testing.assert_array_equal(b, a)


def test_passes_are_split_only_on_large_arm_sets_from_the_main_thread():
    large, small = np.empty((THREADS_FROM // 8, 8)), np.empty((100, 8))
    assert threads_from(small) == NEVER
    assert threads_from(large) == (THREADS_FROM if numba.get_num_threads() > 1 else NEVER)
    seen = []
    worker = threading.Thread(target=lambda: seen.append(threads_from(large)))
    worker.start()
    worker.join()
    assert seen == [NEVER]


def test_one_numba_thread_never_splits_a_pass():
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert threads_from(np.empty((THREADS_FROM // 8, 8))) == NEVER
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("chosen, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_openmp_threads_sleep_while_they_wait_unless_the_user_chose(chosen, expected):
    env = {name: value for name, value in os.environ.items() if name != "OMP_WAIT_POLICY"}
    if chosen is not None:
        env["OMP_WAIT_POLICY"] = chosen
    code = "import os, cbai_cli.numerics.kernels.loader as l; l.numba_ready(); print(os.environ['OMP_WAIT_POLICY'])"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == expected
