"""Adaptive runs of one instance and one request advanced together by the compiled step.

:func:`run_compiled` lays B learners (B = 1 for a single run) over one stack of run states:
their ridge designs and elimination states are rows of one
:class:`~cbai_cli.numerics.kernels.state.RunState` (:class:`BatchState`; for the ``ols`` regime
their fits rows of one :class:`~cbai_cli.numerics.kernels.state.SpanState` too) — a single
run's own state, or the learners' rows stacked once —, lets
:func:`cbai_cli.numerics.kernels.advance.advance` (radius regimes) or
:func:`cbai_cli.numerics.kernels.advance.advance_fit` (``ols``, recomputations and epochs included)
run them in place, and serves what they return for: the next chunk of a run's noise, drawn
from that run's own stream (and for the random rules the same number of uniforms from the
run's algorithm stream), or the ridge design's exact refresh, by the learner's own
:meth:`~cbai_cli.numerics.linalg.DesignState.refresh` (numpy) on its row. Nothing is copied
back: the learners' views hold the runs' final state. Every run keeps its own noise stream,
its own BLAS calls and its own refreshes, so its record does not depend on B.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cbai_cli.numerics.kernels import jit
from cbai_cli.numerics.kernels.codes import (BUDGET, G_ACOL, GREEDY_MAXVAR, NEED_NOISE, NEED_REFRESH, RUNNING, SOLVED,
                                    UNIFORM_RULES)
from cbai_cli.numerics.kernels.state import PULLS, UPDATES, RunState, SpanState

#: Standard normals (and a random rule's uniforms) drawn ahead per run and chunk: a refill
#: costs about as much as a few steps of a small instance, and a run wastes at most one
#: chunk's draws.
NOISE_CHUNK = 256
#: Seconds of one piece of an interpreted run (:func:`run_compiled`), between which it may
#: turn to compiled code.
INTERPRETED_CALL_SECONDS = 0.05


@dataclass(frozen=True)
class BatchState:
    """B adaptive runs on one arm matrix, row b being run b: their ridge designs and
    elimination states as one :class:`~cbai_cli.numerics.kernels.state.RunState`, of which each
    learner's design and elimination state are views, and the loop's control.

    Attributes:
        run: the runs' state (B rows).
        limit: (B,) int, the pulls at which the budget stops each run (−1: no budget).
        pending, status: (B,) int, see :func:`cbai_cli.numerics.kernels.advance.advance`.
    """

    run: RunState
    limit: np.ndarray
    pending: np.ndarray
    status: np.ndarray

    @classmethod
    def stack(cls, learners: Sequence, budget: int | None) -> BatchState:
        """The runs of ``learners`` (:class:`~cbai_cli.algorithms.base.Adaptive`): a single
        learner's own state, or the learners' rows copied into one state, each learner then
        laid over its row."""
        run = _stacked([learner.run for learner in learners])
        if run is None:
            run = RunState.stack([learner.run for learner in learners])
            for b, learner in enumerate(learners):
                learner.attach((run, b))
        steps = run.counters[:, PULLS]
        return cls(run=run, limit=steps + budget if budget is not None else np.full(len(learners), -1, dtype=np.int64),
                   pending=np.zeros(len(learners), dtype=np.int64),
                   status=np.where(run.uncertain.any(axis=1), NEED_NOISE, SOLVED).astype(np.int64))

    @property
    def steps(self) -> np.ndarray:
        """(B,) int, each run's pulls so far (a view)."""
        return self.run.counters[:, PULLS]

    @property
    def since(self) -> np.ndarray:
        """(B,) int, each run's design updates since its last exact refresh (a view)."""
        return self.run.counters[:, UPDATES]


def _stacked(rows: Sequence[tuple]):
    """The state that ``rows`` (state, b) already are, in order — one run's state of one row —,
    or None: they are then stacked."""
    state, b = rows[0]
    return state if len(rows) == 1 and b == 0 and state.counters.shape[0] == 1 else None


def run_compiled(learners: Sequence, environments: Sequence, budget: int | None,
                 threads_from: int | None = None, interpret: bool | None = None,
                 load: Callable[[], None] = jit.load,
                 progress: Callable[[int], None] | None = None) -> list[tuple[int, bool]]:
    """Run every learner against its environment until it stops or its next pull would
    exceed ``budget`` pulls; returns (pulls, solved) per run.

    The learners share one problem, one rule and one regime (one prepared request, as
    :meth:`~cbai_cli.algorithms.base.Adaptive.compiled` allows); each environment answers
    from its own stream (``environment.compiled_noise()``): Gaussian noise from standard
    normals drawn ahead, binary answers drawn in the step from the environment's generator
    itself (runs of binary answers advance one at a time: a batch would make numba compile
    for each batch size); a random rule
    (:data:`~cbai_cli.numerics.kernels.codes.UNIFORM_RULES`) reads its uniforms from chunks of the
    learner's own ``rng.random`` (the doubles that the learner's ``select`` draws one per
    pull, so the same ones; the learner's generator ends up ahead by the unused rest of the
    last chunk). ``threads_from``:
    the K·d from which a pass over the arms is split across threads (None:
    :func:`cbai_cli.numerics.kernels.threads.threads_from`); the records do not depend on it.

    ``interpret``: True runs the kernels' interpreted views throughout, False the compiled
    ones; None (the default) starts interpreted where :func:`cbai_cli.numerics.kernels.jit.interpreting`
    says so and calls ``load`` (:func:`cbai_cli.numerics.kernels.jit.load`, or a caller's function that
    also times it) once the process has spent its interpreted seconds. Interpreted calls are
    cut into pieces of about :data:`INTERPRETED_CALL_SECONDS` (a budget of a few steps ahead,
    lifted after the call), and a piece that raises (Python's float arithmetic raises
    where numpy's gives ±∞ or NaN) is undone and run compiled. The records do not depend on
    ``interpret`` (``tests/kernels/test_interpreted.py``).

    ``progress`` is told the pulls of all the runs so far each time the step hands back
    control (every few hundred pulls of a run, and once at the end); it only watches.
    """
    from cbai_cli.numerics import ols
    from cbai_cli.numerics.kernels.advance import advance, advance_fit
    from cbai_cli.numerics.kernels.threads import threads_from as default_threads_from

    first = learners[0]
    problem, design = first.problem, first.design
    fitting = isinstance(first.intervals, ols.MixtureIntervals)
    if fitting:  # the runs' fits are the rows of one stack, which the loop updates in place
        span = _stacked([learner.intervals.fit.state for learner in learners])
        if span is None:
            span = SpanState.stack([learner.intervals.fit.state for learner in learners])
            for b, learner in enumerate(learners):
                learner.intervals.fit.attach(span, b)
    noise = [environment.compiled_noise() for environment in environments]
    means, sigma = np.ascontiguousarray(noise[0][0], dtype=float), noise[0][1]
    if sigma is None and len(learners) > 1:
        outcomes: list[tuple[int, bool]] = []
        for learner, environment in zip(learners, environments):
            before = sum(used for used, _ in outcomes)
            watch = None if progress is None else (lambda pulls, before=before: progress(before + pulls))
            outcomes.append(run_compiled([learner], [environment], budget, threads_from, interpret, load, watch)[0])
        return outcomes
    # binary answers: the one run's generator, read in the step; Gaussian noise: normals drawn ahead
    stream = noise[0][2] if sigma is None else None
    rewards = np.ascontiguousarray(problem.rewards, dtype=float)
    batch = BatchState.stack(learners, budget)
    start = batch.steps.copy()
    normals = np.empty((len(learners), NOISE_CHUNK))
    uniforms = np.zeros((len(learners), NOISE_CHUNK))
    draws = first.kernel_code in UNIFORM_RULES
    used_normals = np.full(len(learners), NOISE_CHUNK, dtype=np.int64)
    companion = np.zeros(problem.n_arms)
    if threads_from is None:
        threads_from = default_threads_from(design.arms)
    interpreting = jit.interpreting(design.arms.size) if interpret is None else interpret
    step_seconds = None  # an interpreted step's time, measured
    # the greedy direction is predicted only where a pass computes both products
    contenders = (design.MAX_CONTENDERS if design._streaming and first.kernel_code in (G_ACOL, GREEDY_MAXVAR)
                  else None)
    shared = ((design.arms, rewards, float(problem.threshold)),
              (first.kernel_code, float(getattr(first, "optimism", 0.0)), design.block))
    loop = (batch.run.arrays(), (batch.limit, batch.pending, batch.status),
            (means, 0.0 if sigma is None else sigma, normals, uniforms, used_normals), companion, contenders,
            threads_from)
    if not fitting:
        code, params = first.regime.kernel(problem.dim)
        kernel, arguments = advance, (*shared, (code, np.array(params), design.refresh_every), *loop, stream)
    else:
        constants = first.intervals.kernel(design.refresh_every)
        kernel, arguments = advance_fit, (*shared, constants, *loop, span.arrays(), stream)
    while True:
        if progress is not None:
            progress(int((batch.steps - start).sum()))
        for b in np.flatnonzero(batch.status == NEED_NOISE):
            if stream is None:
                normals[b] = noise[b][2].standard_normal(NOISE_CHUNK)
            if draws:
                uniforms[b] = learners[b].rng.random(NOISE_CHUNK)
            used_normals[b] = 0
            batch.status[b] = RUNNING
        for b in np.flatnonzero(batch.status == NEED_REFRESH):
            if batch.since[b] >= design.refresh_every:
                learners[b].design.refresh()  # in place, on the batch's row
            batch.status[b] = RUNNING
        if not (batch.status == RUNNING).any():
            break
        if not interpreting:
            kernel.compiled(*arguments)
            continue
        running = int((batch.status == RUNNING).sum())
        ahead = 1 if step_seconds is None else max(1, int(INTERPRETED_CALL_SECONDS / (step_seconds * running)))
        before = int(batch.steps.sum())
        started = time.perf_counter()
        if not _interpret_piece(kernel, arguments, batch, ahead):
            load()
            interpreting = False
            continue
        spent = time.perf_counter() - started
        done = int(batch.steps.sum()) - before
        step_seconds = spent / done if done else step_seconds
        if not jit.interpreted_for(spent) and interpret is None:
            load()
            interpreting = False
    for learner in learners:
        learner.design.contender = -1  # the companion products are the batch's, not the design's
    return [(int(batch.steps[b] - start[b]), bool(batch.status[b] == SOLVED)) for b in range(len(learners))]


def _interpret_piece(kernel, arguments: tuple, batch: BatchState, ahead: int) -> bool:
    """Run ``kernel``'s interpreted view on ``arguments`` (whose runs row ``batch``
    holds) for at most ``ahead`` more pulls per run; returns False, with every array and
    generator of ``arguments`` as it was, if Python's arithmetic raised (:func:`cbai_cli.numerics.kernels.jit.interpret`)."""
    limit = batch.limit.copy()
    ceiling = batch.steps + ahead
    batch.limit[:] = np.where(limit < 0, ceiling, np.minimum(limit, ceiling))
    try:
        done, _ = jit.interpret(kernel, arguments)
    finally:
        batch.limit[:] = limit
    if done:  # a run stopped by the piece's ceiling, not by its own budget, goes on
        batch.status[(batch.status == BUDGET) & ((limit < 0) | (batch.steps < limit))] = RUNNING
    return done
