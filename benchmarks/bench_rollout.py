"""CPU time a query of track-and-stop's ``rollout`` step (the default under ``ols``, in the arms'
D-optimal coordinates) against ``--step vertex-or-target``, and with ``--baseline-code DIR`` the
default of another checkout: whole runs of seeds 0 … N−1 through
:func:`cbai_cli.run.simulate.run_many` (what ``cbai solve --runs`` and ``cbai compare`` run).
Not run by CI.

    python benchmarks/bench_rollout.py driver-n200-seed7.yaml random:d=5,n=20,seed=193,sigma=1 \\
        [--seeds 200] [--baseline-code DIR] [--out FILE]

Each cell (source × path) runs in its own process with one BLAS thread and ``PYTHONPATH`` the
checkout it times, after one warm-up run on seed N (numba's load is not counted); µs per query
is the process time (``time.process_time``) of the N runs over their queries, so a shared
machine's load moves it less than wall time would. Nothing is asserted on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the steps timed in this checkout
STEPS = ("rollout", "vertex-or-target")


def cell(source: str, step: str, seeds: int) -> dict:
    """Process seconds and queries of seeds 0 … seeds−1 of track-and-stop with ``ols`` and ``step``
    (the checkout's default when ``step`` is ``default``) on ``source``, after one warm-up run."""
    import numpy as np

    from cbai_cli.compare.sources import parse_source
    from cbai_cli.run.simulate import RunRequest, prepare, run_many

    instance = parse_source(source, 0)[0].instance_for(0)
    options = {} if step == "default" else {"step": step}
    prepared = prepare(RunRequest.of("track-and-stop", "ols", delta=0.05, **options), instance)
    run_many(prepared, [seeds])
    started = time.process_time()
    results = run_many(prepared, range(seeds))
    seconds = time.process_time() - started
    queries = [result.iterations for result in results]
    return {"seconds": seconds, "queries": sum(queries), "median": float(np.median(queries)),
            "right": sum(bool(result.correct) for result in results)}


def timed(code: Path, source: str, step: str, seeds: int) -> dict:
    """:func:`cell` in a fresh process with ``code`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(code), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    command = [sys.executable, str(Path(__file__).resolve()), "--cell", source, step, "--seeds", str(seeds)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=os.getcwd())
    if done.returncode != 0:
        raise SystemExit(f"{code} {source} {step}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", help="instance files or generator specs")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--baseline-code", type=Path, default=None,
                        help="another checkout, whose default (track-and-stop with ols) is timed too")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cell", nargs=2, metavar=("SOURCE", "STEP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        print(json.dumps(cell(*args.cell, args.seeds)))
        return
    if not args.sources:
        parser.error("name at least one instance file or generator spec")
    from report import emit  # benchmarks/report.py, beside this script

    paths = [(step, ROOT, step) for step in STEPS]
    command, checkout = " ".join(sys.argv[1:]), ""
    if args.baseline_code is not None:
        commit = subprocess.run(["git", "-C", str(args.baseline_code), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or args.baseline_code.name
        paths.append((f"default at {commit}", args.baseline_code.resolve(), "default"))
        # the results file names no path of this machine: DIR and the commit it holds
        command, checkout = command.replace(str(args.baseline_code), "DIR"), f"DIR a checkout of {commit}; "
    lines = [f"`python benchmarks/bench_rollout.py {command}` ({checkout}{time.strftime('%Y-%m-%d')}; "
             f"track-and-stop with `ols`, δ = 0.05, seeds 0–{args.seeds - 1}; process time per query)", "",
             "| instance | path | queries (all runs) | median queries | runs right | µs per query |",
             "|---|---|---:|---:|---:|---:|"]
    for source in args.sources:
        for label, code, step in paths:
            found = timed(code, source, step, args.seeds)
            lines.append(f"| {Path(source).name} | {label} | {found['queries']:,} | {found['median']:,.1f} "
                         f"| {found['right']}/{args.seeds} | {1e6 * found['seconds'] / found['queries']:.1f} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
