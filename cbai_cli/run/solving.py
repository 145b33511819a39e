"""``cbai solve`` as a library call: run seeds of one request, score them, and let the
instance kind assemble the outcome (with the instance's bounds for a ``cbai`` file).

A trace file is written while its run goes (:class:`TraceWriter`), into a temporary file
beside it that is renamed into place only once the run is over and its result shown
(:func:`solving`): memory stays bounded however many observations a run makes, an
interrupted run leaves no half file, and a trace that cannot be written loses no result.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from cbai_cli.contracts.errors import OptionError, OutputError
from cbai_cli.contracts.options import SOLVE_RUN_BYTES, check_seed, memory_limit, memory_limit_text
from cbai_cli.io.outputs import check_writable, reason, write_errors
from cbai_cli.run.simulate import RunRequest, RunTally, prepare, run_many, run_once

TRACE_COLUMNS = ("step", "arm", "observation", "uncertain", "feasible", "recommendation")
#: Characters of trace rows gathered before they are written to the file.
TRACE_FLUSH_CHARS = 1 << 20


class TraceWriter:
    """Trace rows written as they come, CSV or JSON Lines by the extension of ``path``, to the
    open temporary file of ``target`` (:class:`cbai_cli.io.atomic.AtomicFile`), in pieces of
    about :data:`TRACE_FLUSH_CHARS`; the text is that of writing all rows at once.

    A write that fails (a full disk) is not raised where the run is: the temporary file is
    removed at once (giving its space back), ``writing`` turns False so that the run stops
    splitting observations for it, ``warn`` (when given) is told at once that the run goes on
    without its trace, and :meth:`commit`, called once the run's result has been shown, raises
    the one line ``--trace PATH: cannot write: REASON``.
    """

    def __init__(self, path: Path, target: Any, warn: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._target = target
        self._warn = warn
        self._text = io.StringIO()
        self._jsonl = path.suffix.lower() != ".csv"
        self._csv = csv.writer(self._text, lineterminator="\n")
        self.failure: str | None = None
        if not self._jsonl:
            self._csv.writerow(TRACE_COLUMNS)

    @property
    def writing(self) -> bool:
        """Whether rows are still written (no write has failed)."""
        return self.failure is None

    def extend(self, rows: Iterable[tuple]) -> None:
        """Write ``rows`` (tuples in the order of :data:`TRACE_COLUMNS`)."""
        if self.failure is not None:
            return
        if self._jsonl:
            self._text.write("".join(json.dumps(dict(zip(TRACE_COLUMNS, row))) + "\n" for row in rows))
        else:
            self._csv.writerows(rows)
        if self._text.tell() >= TRACE_FLUSH_CHARS:
            self._flush()

    def _flush(self) -> None:
        data = self._text.getvalue().encode()
        self._text.seek(0)
        self._text.truncate()
        try:
            self._target.stream.write(data)
        except OSError as error:
            self.failure = reason(error)
            self._target.discard()
            if self._warn is not None:
                self._warn(f"--trace {self.path}: cannot write: {self.failure}; the run goes on without its trace, "
                           "and its result will be shown")

    def commit(self) -> None:
        """Write what is left and rename the file into place.

        Raises:
            OptionError: ``--trace PATH: cannot write: REASON`` when a write failed during the
                run or now, or the rename failed (the target then keeps its old content).
        """
        if self.failure is None:
            self._flush()
        if self.failure is None:
            try:
                self._target.commit()
            except OSError as error:
                self.failure = reason(error)
        if self.failure is not None:
            raise OptionError(f"--trace {self.path}: cannot write: {self.failure}", "trace")


def solve_instance(instance: Any, request: RunRequest, seeds: Iterable[int], trace: Any = False,
                   key: tuple[int, ...] = (), bound: bool | None = None,
                   warn: Callable[[str], None] | None = None, progress: Any = None) -> Any:
    """Run ``request`` on ``instance`` once per seed; each seed gives the same result as a
    single run with that seed. With ``trace`` True, one row per observation is kept in the
    outcome's ``trace_rows``; a :class:`TraceWriter` (anything with ``extend(rows)``) gets
    them instead as the runs go (instance kinds that keep traces only). ``bound``: compute
    the instance's bounds after the runs (True), not (False), or only when cheap (None; see
    :func:`cbai_cli.kinds.cbai.bounds.bound_skip_reason`). ``warn`` gets the prepared run's warnings
    (:attr:`cbai_cli.run.simulate.PreparedRun.warnings`: a run that will take very long) before
    any run starts. ``progress`` (a :class:`cbai_cli.run.progress.Progress`, or anything with its
    ``update``) is told the runs finished and the queries spent as they go, then how the
    bounds' design solves go; it changes nothing else. A request without an algorithm runs
    the default of the instance's kind (:func:`cbai_cli.algorithms.registry.default_algorithm`)."""
    prepared = prepare(request, instance)
    rows = [] if trace is True else (None if trace is False or trace is None else trace)
    if rows is not None and not prepared.kind.traces:
        raise OptionError(f"--trace does not apply to {prepared.algorithm} (no trace on {instance.kind} instances)",
                          "trace")
    for text in prepared.warnings if warn is not None else ():
        warn(text)
    prepared.kind.bound_skip_reason(prepared.instance, bound)  # bounds that cannot fit are refused before the runs
    tally = None if progress is None else RunTally(progress)
    if rows is not None:
        results = tuple(_traced_run(prepared, seed, key, rows, tally) for seed in seeds)
    else:
        results = tuple(run_many(prepared, seeds, key, tally))
    return prepared.kind.solve(prepared, results, tuple(rows) if trace is True else (), bound=bound, progress=progress)


def _traced_run(prepared: Any, seed: int, key: tuple[int, ...], rows: Any, tally: RunTally | None) -> Any:
    """One run of :func:`solve_instance` that hands its trace rows to ``rows``."""
    result = run_once(prepared, seed, key, tracer_rows=rows, progress=None if tally is None else tally.spent)
    if tally is not None:
        tally.finished(1)
    return result


def solve_file(path: str | Path, request: RunRequest, seed: int = 0, runs: int = 1, trace: str | Path | None = None,
               bound: bool | None = None, warn: Callable[[str], None] | None = None, guess: Any = None,
               progress: Any = None) -> Any:
    """``cbai solve FILE`` (:func:`solving`), the trace written before it returns."""
    with solving(path, request, seed, runs, trace, bound, warn, guess, progress) as outcome:
        return outcome


@contextmanager
def solving(path: str | Path, request: RunRequest, seed: int = 0, runs: int = 1, trace: str | Path | None = None,
            bound: bool | None = None, warn: Callable[[str], None] | None = None,
            guess: Any = None, progress: Any = None) -> Iterator[Any]:
    """``cbai solve FILE`` as a block: load the instance, run seeds ``seed … seed + runs − 1``
    and yield the outcome, keeping the trace of a single run when ``trace`` (.csv or .jsonl)
    is given. With ``guess``, the runs answer from that guessed constraint instead of the
    file's (:func:`cbai_cli.kinds.guess_constraint`, whose warnings go to ``warn``).

    Every option and the trace's path are checked before anything runs. The trace is
    streamed to a temporary file beside it while the run goes (:class:`TraceWriter`) and
    renamed into place when the block ends without an error, after the caller has shown
    the outcome, so a trace that cannot be written (``--trace PATH: cannot write: REASON``,
    also for a disk that filled during the run) loses no result; a result that cannot be
    shown (:class:`~cbai_cli.contracts.errors.OutputError`) loses no trace either. Any other error in
    the block, Ctrl-C or SIGTERM removes the temporary file. ``warn`` gets the warnings of
    the prepared run before it starts (:func:`solve_instance`), and a failed trace write
    when it happens; ``progress`` how the runs go (:func:`solve_instance`)."""
    from cbai_cli.kinds import guess_constraint, load

    if runs < 1:
        raise OptionError(f"--runs must be ≥ 1, got {runs}", "runs")
    if runs * SOLVE_RUN_BYTES > memory_limit():
        from cbai_cli.contracts.options import bytes_text

        raise OptionError(f"--runs {runs} would keep about {bytes_text(runs * SOLVE_RUN_BYTES)} of results in memory, "
                          f"more than {memory_limit_text(memory_limit())}: at most {memory_limit() // SOLVE_RUN_BYTES:,} "
                          "runs fit", "runs")
    seed = check_seed(seed)
    if trace is not None:
        if runs != 1:
            raise OptionError("--trace records one run; use it without --runs", "trace")
        if Path(trace).suffix.lower() not in (".csv", ".jsonl") and not Path(trace).is_dir():
            raise OptionError(f"--trace must end in .csv or .jsonl, got {Path(trace).name!r}", "trace")
        check_writable(trace, "--trace")
    instance = load(path, warn)
    if guess is not None:
        instance = guess_constraint(instance, guess, warn)
    seeds = range(seed, seed + runs)
    if trace is None:
        yield solve_instance(instance, request, seeds, bound=bound, warn=warn, progress=progress)
        return
    from cbai_cli.io.atomic import atomic_file

    with ExitStack() as stack:
        with write_errors(trace, "--trace"):
            target = stack.enter_context(atomic_file(trace))
        writer = TraceWriter(Path(trace), target, warn)
        try:
            yield solve_instance(instance, request, seeds, trace=writer, bound=bound, warn=warn, progress=progress)
        except OutputError:
            # the run is over and its trace complete; only showing the result failed (a full
            # disk under stdout, a reader gone): the trace is kept, the stdout error reported
            with contextlib.suppress(OptionError):
                writer.commit()
            raise
        writer.commit()
