"""The passes over the arm matrix of one adaptive step, block by block, on one thread or
split across numba's threads for large arm sets.

A pass cuts the K arms into blocks of ``block`` rows (``DesignState.block``) and does the
same work on every block: the same BLAS call on the same rows, the same per-arm
operations. Split across threads, each block is still one job, done by one thread with
the same calls as the serial loop, so every arm's numbers are bitwise those of the serial
pass; the d-sum of a product is never split. A reduction across arms (the greedy gain's
argmax) keeps one result per block and combines them in block order with the serial
comparison, so ties still go to the lowest index. Records therefore do not depend on the
number of threads (tests/kernels/test_threads.py).

Whether a pass is split is a parameter of the kernels, ``threads_from``: the K·d from
which they split it, :func:`threads_from` in a normal run.

How a pass computes its products depends on the arm matrix's shape only
(:func:`cbai_cli.numerics.kernels.codes.streams`): on small ones, numpy's BLAS gemv on each block
(bitwise ``arms @ u``); on large ones, where the update needs two products (its own and
the next greedy gain's) and a pass is bound by reading the matrix from memory,
:func:`pair_products` reads each row once for both. Every product of one matrix, in the
update or in the gain, therefore comes from the same code and rounds the same way.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from cbai_cli.numerics.kernels.blas import dot
from cbai_cli.numerics.kernels.codes import block_rows as block_rows_rule
from cbai_cli.numerics.kernels.codes import streams as streams_rule
from cbai_cli.numerics.kernels.elimination import admit, interval_rows, prune
from cbai_cli.numerics.kernels.jit import njit, njit_reassociating, njit_threaded, prange

#: K·d from which a pass is split across threads: 10⁶ entries, an 8 MB arm matrix.
#: Measured on 2 cores (``python benchmarks/bench_threads.py --threads-from 0``, the least
#: disturbed G-ACOL steps of a shared machine; docs/sweeps.md): splitting gained 1.5–1.8×
#: from 3·10⁶ entries on (K = 3·10⁴ to 10⁵ at d = 100, 2·10⁵ at d = 32, 5·10⁵ at d = 10),
#: 1.2× and 0.9–1.4× at 10⁶ (K = 10⁴, d = 100; K = 10⁵, d = 10), and 0.55–1.15× below
#: (2·10⁵ to 6.4·10⁵ entries), where a pass takes about 0.1 ms or less and the launches
#: of the threads (8–13 µs each with OpenMP, one or two a step) eat the gain.
THREADS_FROM = 1_000_000
#: ``threads_from`` that never splits a pass. None rather than a large number: numba then
#: compiles the kernels without the threaded passes (it prunes a branch on an argument's
#: ``is None``), so the first run on an arm set too small to split does not compile them.
NEVER = None


def threads_from(arms: np.ndarray) -> int | None:
    """The ``threads_from`` of the kernels for passes over ``arms``: :data:`THREADS_FROM`,
    or :data:`NEVER` when the arm set is smaller, numba may use one thread only
    (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``), or the caller is not the main
    thread.

    Only the main thread launches numba's threads: the default threading layer where no
    OpenMP or TBB is found (workqueue) must not be entered by two threads at once, and a
    thread of a pool (a Dask worker runs its tasks in threads) already has its share of
    the cores.
    """
    if arms.size < THREADS_FROM or threading.current_thread() is not threading.main_thread():
        return NEVER
    from cbai_cli.numerics.kernels.loader import numba_ready

    return THREADS_FROM if numba_ready().get_num_threads() > 1 else NEVER


#: :func:`cbai_cli.numerics.kernels.codes.streams` and :func:`~cbai_cli.numerics.kernels.codes.block_rows`
#: for the kernels.
streams = njit(streams_rule)
block_rows = njit(block_rows_rule)


def _pair_products(arms, start, stop, u, v, first, second):
    """first[i] = aᵀu and second[i] = aᵀv for the rows a = start + i of ``arms[start:stop]``,
    each row read once.

    Row by row, two sums in flight: every row is computed by the same code whatever the
    block it falls in, and aᵀv rounds the same whatever u is. :func:`pair_products` sums
    each in vector partial sums (reassociated), :func:`ordered_pair_products` in index
    order. Memory-bound on a large matrix: both products cost about what
    one read costs (``python benchmarks/bench_threads.py``, docs/sweeps.md). Not two rows
    at a time (four sums in flight): on an AMD EPYC that took 10.8 ms at K = 10⁵, d = 100
    against 3.5 ms row by row and 2.6 ms for a plain read, one thread (docs/sweeps.md,
    "Row by row").

    Shapes: arms (K, d); u, v (d,); first, second (stop − start,), written.
    """
    for a in range(start, stop):
        p = q = 0.0
        for j in range(arms.shape[1]):
            p += arms[a, j] * u[j]
            q += arms[a, j] * v[j]
        first[a - start] = p
        second[a - start] = q


#: :func:`_pair_products` on the matrices that stream (:func:`cbai_cli.numerics.kernels.codes.streams`).
pair_products = njit_reassociating(_pair_products, "pair_products")
#: :func:`_pair_products` on the others, in index order: the same bits interpreted.
ordered_pair_products = njit(_pair_products, "ordered_pair_products")


@njit
def _block_argmax(products, norms2, start):
    """(arm, gain) of the largest gain (aᵀt)²/(1 + ‖a‖²_{A⁻¹}) among the rows a = start + i
    whose products aᵀt are ``products[i]``, first among ties; (start, −∞) when no gain
    exceeds −∞. Shapes: products (n,); norms2 (K,)."""
    chosen = start
    best_gain = -math.inf
    variances = norms2[start:start + products.shape[0]]  # indexed from 0: see absorb_rows
    for i in range(products.shape[0]):
        gain = products[i] * products[i] / (1.0 + variances[i])
        if gain > best_gain:
            chosen, best_gain = start + i, gain
    return chosen, best_gain


@njit
def combine_gains(winners, gains):
    """The blocks' (arm, gain) combined in block order with the serial scan's strict
    comparison: the arm of largest gain, first among ties; 0 when no gain exceeds −∞."""
    chosen, best_gain = 0, -math.inf
    for i in range(winners.shape[0]):
        if gains[i] > best_gain:
            chosen, best_gain = winners[i], gains[i]
    return chosen


@njit
def absorb_rows(arms, start, stop, u, shrink, residual, norms2, predictions, direction, companion, both, paired,
                 eliminating, radius, rewards, threshold, uncertain, feasible, lower, upper, best):
    """Rows ``start:stop`` of :func:`absorb_pass`; ``paired``: the products by
    :func:`pair_products` (the second into ``companion`` when ``both``, else discarded).
    Returns the block's (arm, gain) of the greedy gain towards ``direction`` from the
    updated caches when ``both`` (:func:`_block_argmax`), else (start, −∞); and, when
    ``eliminating``, the block's r̄ and whether an arm of the block is still in U after the
    elimination update with r̄ = ``best`` (:mod:`cbai_cli.numerics.kernels.elimination`), else
    (``best``, False)."""
    if paired:
        projected = np.empty(stop - start)
        pair_products(arms, start, stop, u, direction, projected,
                      companion[start:stop] if both else np.empty(stop - start))
    else:
        projected = dot(arms[start:stop], u)
        if both:
            companion[start:stop] = dot(arms[start:stop], direction)
    # slices indexed from 0: numba then knows no index is negative and vectorises the loops
    variances, centres = norms2[start:stop], predictions[start:stop]
    for a in range(stop - start):
        variances[a] -= shrink * (projected[a] * projected[a])
        centres[a] += residual * projected[a]
    arm, gain = (start, -math.inf)
    if both:
        arm, gain = _block_argmax(companion[start:stop], norms2, start)
    left = False
    block_best = best
    if eliminating:
        interval_rows(radius, norms2, predictions, lower, upper, start, stop)
        block_best = admit(upper, rewards, threshold, feasible, best, start, stop)
        left = prune(lower, upper, rewards, threshold, uncertain, best, start, stop)
    return arm, gain, block_best, left


@njit_threaded
def _absorb_blocks_threaded(arms, u, shrink, residual, norms2, predictions, direction, companion, both, block,
                            paired, eliminating, radius, rewards, threshold, uncertain, feasible, lower, upper, best,
                            winners, gains, bests, lefts):
    """:func:`absorb_pass`, its blocks split across numba's threads; block i's results
    (:func:`absorb_rows`) into ``winners[i]``, ``gains[i]``, ``bests[i]``, ``lefts[i]``."""
    k = arms.shape[0]
    for i in prange(winners.shape[0]):
        start = i * block
        winners[i], gains[i], bests[i], lefts[i] = absorb_rows(
            arms, start, min(start + block, k), u, shrink, residual, norms2, predictions, direction, companion,
            both, paired, eliminating, radius, rewards, threshold, uncertain, feasible, lower, upper, best)


@njit
def absorb_pass(arms, u, shrink, residual, norms2, predictions, direction, companion, both, block, threads_from,
                eliminating, radius, rewards, threshold, uncertain, feasible, lower, upper, best):
    """For every arm a: ‖a‖²_{A⁻¹} −= shrink·(aᵀu)², aᵀφ̂ += residual·aᵀu, and when
    ``both``, companion[a] = aᵀ``direction`` (:func:`cbai_cli.numerics.kernels.design.absorb`'s
    pass), block by block, split across threads when K·d ≥ ``threads_from``; the products
    by :func:`pair_products` on matrices that stream (module docstring).

    When ``eliminating``, the same pass also writes every arm's interval of radius
    ``radius`` from the updated caches into ``lower``, ``upper`` and applies the elimination
    update to ``feasible``, ``uncertain`` (r̄ = ``best`` before it;
    :func:`cbai_cli.numerics.kernels.elimination.apply_bounds`, whose every arm's decision it
    reproduces: a block prunes with the old r̄, and when some block raised r̄ one more scan
    prunes with the new one).

    Returns (the greedy arm, the new r̄, whether U is empty): the arm is, when ``both``,
    argmax_a (aᵀt)²/(1 + ‖a‖²_{A⁻¹}) for t = ``direction`` from the updated caches, first
    among ties — :func:`greedy_pass`'s answer, taken while each block is in cache — and −1
    otherwise; without ``eliminating``, r̄ is ``best`` and U is not reported empty.

    Shapes: arms (K, d); u, direction (d,); norms2, predictions, companion (K,), updated
    in place; rewards, uncertain, feasible, lower, upper (K,) when ``eliminating``.
    """
    k, d = arms.shape
    paired = streams(k, d)
    blocks = (k + block - 1) // block
    winners = np.empty(blocks, dtype=np.int64)
    gains = np.empty(blocks)
    bests = np.empty(blocks)
    lefts = np.empty(blocks, dtype=np.bool_)
    if threads_from is not None and k * d >= threads_from:
        _absorb_blocks_threaded(arms, u, shrink, residual, norms2, predictions, direction, companion, both, block,
                                paired, eliminating, radius, rewards, threshold, uncertain, feasible, lower, upper,
                                best, winners, gains, bests, lefts)
    else:
        for i in range(blocks):
            start = i * block
            winners[i], gains[i], bests[i], lefts[i] = absorb_rows(
                arms, start, min(start + block, k), u, shrink, residual, norms2, predictions, direction, companion,
                both, paired, eliminating, radius, rewards, threshold, uncertain, feasible, lower, upper, best)
    arm = combine_gains(winners, gains) if both else -1
    if not eliminating:
        return arm, best, False
    raised = max(best, bests.max())
    if raised > best:
        return arm, raised, not prune(lower, upper, rewards, threshold, uncertain, raised, np.int64(0), k)
    return arm, best, not lefts.any()


@njit
def _gain_rows(arms, start, stop, towards, norms2, paired):
    """(arm, gain) of the largest gain among rows ``start:stop`` of :func:`greedy_pass`
    (:func:`_block_argmax`). ``paired``: the products by :func:`pair_products`, read from
    the slot in which the update's pass writes the companion, so that they are its bits."""
    if paired:
        products = np.empty(stop - start)
        pair_products(arms, start, stop, towards, towards, np.empty(stop - start), products)
    else:
        products = dot(arms[start:stop], towards)
    return _block_argmax(products, norms2, start)


@njit_threaded
def _gain_blocks_threaded(arms, towards, norms2, block, chosen, gains, paired):
    """:func:`_gain_rows` of every block into ``chosen``, ``gains``, split across threads."""
    k = arms.shape[0]
    for i in prange(chosen.shape[0]):
        start = i * block
        chosen[i], gains[i] = _gain_rows(arms, start, min(start + block, k), towards, norms2, paired)


@njit
def greedy_pass(arms, towards, norms2, block, threads_from):
    """argmax_a (aᵀt)²/(1 + ‖a‖²_{A⁻¹}) for t = ``towards``, first among ties; 0 when no
    gain exceeds −∞ (:func:`cbai_cli.numerics.kernels.design.greedy_arm`'s pass when the update's
    pass did not compute it). Split across threads when K·d ≥ ``threads_from``: the
    blocks' maxima are combined in block order with the same strict comparison, which is
    the serial scan's result.

    Shapes: arms (K, d); towards (d,); norms2 (K,).
    """
    k, d = arms.shape
    paired = streams(k, d)
    blocks = (k + block - 1) // block
    winners = np.empty(blocks, dtype=np.int64)
    gains = np.empty(blocks)
    if threads_from is not None and k * d >= threads_from:
        _gain_blocks_threaded(arms, towards, norms2, block, winners, gains, paired)
    else:
        for i in range(blocks):
            start = i * block
            winners[i], gains[i] = _gain_rows(arms, start, min(start + block, k), towards, norms2, paired)
    return combine_gains(winners, gains)
