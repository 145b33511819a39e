"""Round-based algorithms (ACOL, Oracle, G-Allocation, Uniform): milliseconds per run of a
sweep of seeds, against another checkout with ``--baseline DIR``. Not run by CI.

    python benchmarks/bench_rounds.py [--seeds 10] [--repeats 5] [--baseline DIR]

For every case (instance × algorithm × noise scale R, the file's σ or the paper's R = 1)
and checkout, fresh processes (``PYTHONPATH`` = the checkout, BLAS pinned to one thread)
time, after one warm-up run of the same request (imports, first calls):

- ``sweep``: ``prepare`` once, then ``run_once`` for seeds 0 … N−1, per run: what
  ``cbai compare`` and ``cbai solve --runs N`` do per request (the Oracle's H_CLB design
  and every design the runs solve are in the time);
- ``single``: ``prepare`` and one ``run_once``, as ``cbai solve`` does for one run.

Each time is the minimum over ``--repeats`` processes of three repeats each (the machine
is shared: the minimum is the least disturbed); the processes of the two checkouts
alternate. The outcomes (queries,
answer, stop) of every seed are compared between checkouts: the column ``same``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: (label, instance: a file of instances/ or a generator family with its parameters).
INSTANCES = [
    ("irrelevant-dims d=10", "instances/irrelevant-dims-d10-eps0.05.yaml"),
    ("unit-sphere d=10 n=20", ("unit-sphere", {"d": 10, "n": 20, "seed": 0})),
]
ALGORITHMS = ("acol", "oracle", "g-allocation", "uniform")
#: R: the file's σ (None) or the paper's R = 1.
NOISE = (("σ", None), ("R=1", 1.0))


def load(instance):
    from cbai_cli.kinds.cbai.families import family
    from cbai_cli.kinds import load as load_file

    if isinstance(instance, str):
        return load_file(str(ROOT / instance))
    name, parameters = instance
    return family(name).generate(**parameters)


def measure(instance, algorithm: str, subgaussian: float | None, seeds: int, repeats: int) -> dict:
    """Times of one case in this process (the checkout on ``PYTHONPATH``)."""
    from cbai_cli.run.simulate import RunRequest, prepare, run_once

    loaded = load(instance)
    request = RunRequest.of(algorithm, subgaussian=subgaussian)
    run_once(prepare(request, loaded), 0)  # warm-up: imports and first calls
    sweep = single = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        prepared = prepare(request, loaded)
        results = [run_once(prepared, seed) for seed in range(seeds)]
        sweep = min(sweep, (time.perf_counter() - started) / seeds)
        started = time.perf_counter()
        run_once(prepare(request, loaded), 0)
        single = min(single, time.perf_counter() - started)
    return {"sweep_ms": 1e3 * sweep, "single_ms": 1e3 * single,
            "outcomes": [(r.iterations, r.recommended, r.stopped) for r in results],
            "queries": sum(r.iterations for r in results) / seeds}


def run_case(checkout: Path, case: dict, seeds: int) -> dict:
    """:func:`measure` in a fresh process of ``checkout`` (three repeats inside it)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    command = [sys.executable, __file__, "--emit", json.dumps(case), "--seeds", str(seeds)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="checkout to compare with")
    parser.add_argument("--emit", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit:
        case = json.loads(args.emit)
        instance = case["instance"] if isinstance(case["instance"], str) else tuple(case["instance"])
        json.dump(measure(instance, case["algorithm"], case["subgaussian"], args.seeds, 3), sys.stdout)
        return 0
    print(f"load average {os.getloadavg()[0]:.2f}; {args.seeds} seeds; minimum of {args.repeats} processes")
    print(f"{'case':46s} {'queries':>9s} {'sweep ms/run':>13s} {'single ms':>10s}"
          + (f" {'base sweep':>11s} {'base single':>12s} {'speed-up':>9s} same" if args.baseline else ""))
    for label, instance in INSTANCES:
        for algorithm in ALGORITHMS:
            for noise, subgaussian in NOISE:
                case = {"instance": instance, "algorithm": algorithm, "subgaussian": subgaussian}
                ours, theirs = None, None
                # Alternate the checkouts' processes so that a busy spell hits both alike.
                for _ in range(args.repeats):
                    ours = _merge(ours, run_case(ROOT, case, args.seeds))
                    if args.baseline:
                        theirs = _merge(theirs, run_case(args.baseline, case, args.seeds))
                line = (f"{label + ', ' + algorithm + ', ' + noise:46s} {ours['queries']:9.0f} "
                        f"{ours['sweep_ms']:13.3f} {ours['single_ms']:10.3f}")
                if theirs is not None:
                    line += (f" {theirs['sweep_ms']:11.3f} {theirs['single_ms']:12.3f} "
                             f"{theirs['sweep_ms'] / ours['sweep_ms']:8.1f}x {ours['outcomes'] == theirs['outcomes']}")
                print(line, flush=True)
    return 0


def _merge(best: dict | None, row: dict) -> dict:
    """The row with the smaller of each time."""
    if best is None:
        return row
    return dict(row, sweep_ms=min(best["sweep_ms"], row["sweep_ms"]),
                single_ms=min(best["single_ms"], row["single_ms"]))


if __name__ == "__main__":
    sys.exit(main())
