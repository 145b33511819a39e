"""``cbai solve`` as a library call: run seeds of one request, score them, and let the
instance kind assemble the outcome (with the instance's bounds for a ``cbai`` file)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cbai_cli.algorithms.registry import default_algorithm
from cbai_cli.errors import OptionError
from cbai_cli.options import MEMORY_LIMIT, SOLVE_RUN_BYTES
from cbai_cli.fileio import write_atomic
from cbai_cli.outputs import check_writable, write_errors
from cbai_cli.simulate import RunRequest, prepare, run_many, run_once

TRACE_COLUMNS = ("step", "arm", "observation", "uncertain", "feasible", "recommendation")


def solve_instance(instance: Any, request: RunRequest, seeds: Iterable[int], trace: bool = False,
                   key: tuple[int, ...] = (), bound: bool | None = None) -> Any:
    """Run ``request`` on ``instance`` once per seed; each seed gives the same result as a
    single run with that seed. With ``trace``, one row per observation is kept
    (instance kinds that keep traces only). ``bound``: compute the instance's bounds
    after the runs (True), not (False), or only when cheap (None; see
    :func:`cbai_cli.bounds.bound_skip_reason`). A request without an algorithm runs the
    default of the instance's kind (:func:`cbai_cli.algorithms.registry.default_algorithm`)."""
    if request.algorithm is None:
        request = replace(request, algorithm=default_algorithm(instance.kind))
    prepared = prepare(request, instance)
    if trace and not prepared.kind.traces:
        raise OptionError(f"--trace does not apply to {prepared.algorithm} (no trace on {instance.kind} instances)",
                          "trace")
    rows: list[tuple] | None = [] if trace else None
    if trace:
        results = tuple(run_once(prepared, seed, key, tracer_rows=rows) for seed in seeds)
    else:
        results = tuple(run_many(prepared, seeds, key))
    return prepared.kind.solve(prepared, results, tuple(rows or ()), bound=bound)


def solve_file(path: str | Path, request: RunRequest, seed: int = 0, runs: int = 1, trace: str | Path | None = None,
               bound: bool | None = None) -> Any:
    """``cbai solve FILE``: load the instance and run seeds ``seed … seed + runs − 1``,
    keeping the trace of a single run when ``trace`` (.csv or .jsonl) is given; the
    trace's path is checked before anything runs, and written by the caller with
    :func:`write_trace` once the results are shown (a failing write loses nothing)."""
    from cbai_cli.kinds import load

    if runs < 1:
        raise OptionError(f"--runs must be ≥ 1, got {runs}", "runs")
    if runs * SOLVE_RUN_BYTES > MEMORY_LIMIT:
        from cbai_cli.generators import bytes_text

        raise OptionError(f"--runs {runs} would keep about {bytes_text(runs * SOLVE_RUN_BYTES)} of results in memory, "
                          f"more than the limit of {bytes_text(MEMORY_LIMIT)}: at most {MEMORY_LIMIT // SOLVE_RUN_BYTES:,} "
                          "runs fit", "runs")
    if seed < 0:
        raise OptionError(f"--seed must be ≥ 0, got {seed}", "seed")
    if trace is not None:
        if runs != 1:
            raise OptionError("--trace records one run; use it without --runs", "trace")
        if Path(trace).suffix.lower() not in (".csv", ".jsonl") and not Path(trace).is_dir():
            raise OptionError(f"--trace must end in .csv or .jsonl, got {Path(trace).name!r}", "trace")
        check_writable(trace, "--trace")
    return solve_instance(load(path), request, range(seed, seed + runs), trace=trace is not None, bound=bound)


def write_trace(path: Path, rows: Sequence[tuple]) -> None:
    """One line per query, CSV or JSON Lines by extension, written atomically; an OS
    failure (a full disk) is one line naming the file."""
    text = io.StringIO()
    if path.suffix.lower() == ".csv":
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(TRACE_COLUMNS)
        writer.writerows(rows)
    else:
        for row in rows:
            text.write(json.dumps(dict(zip(TRACE_COLUMNS, row))) + "\n")
    data = text.getvalue().encode()
    with write_errors(path, "--trace"):
        write_atomic(path, lambda stream: stream.write(data))
