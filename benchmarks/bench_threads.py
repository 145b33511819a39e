"""Time per adaptive step on one thread and on numba's threads (not run by CI).

Usage:
    python benchmarks/bench_threads.py [--cells ALGORITHM,K,D ...] [--steps 200] [--repeats 5] [--rounds 3]
        [--threads-from ENTRIES]

Every cell is one G-ACOL ask/answer/tell step as timed by ``bench_adaptive.py --cell``
(tuned radius 10, nothing decided, BLAS pinned to one thread; the minimum over
``--repeats`` blocks), in fresh processes alternating ``NUMBA_NUM_THREADS=1`` (every
pass serial) and numba's default (the passes of arm sets with K·d ≥
``cbai_cli.kernels.threads.THREADS_FROM`` split across the cores), ``--rounds`` times,
keeping each one's minimum. ``--threads-from`` overrides the threshold (through the
benchmark's own environment variable, read by this script's child only) to find where
threads start to pay.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = ["g-acol,100000,100", "g-acol,10000,100", "g-acol,100000,10", "g-acol,100000,32", "g-acol,20000,32",
         "g-acol,8300,32", "g-acol,4000,32", "g-acol,5000,100", "g-acol,2000,100"]


def cell(spec: str, threads: int | None, args) -> float:
    env = dict(os.environ)
    env.pop("NUMBA_NUM_THREADS", None)
    if threads is not None:
        env["NUMBA_NUM_THREADS"] = str(threads)
    if args.threads_from is not None:
        env["CBAI_BENCH_THREADS_FROM"] = str(args.threads_from)
    command = [sys.executable, os.path.join(HERE, "bench_threads.py"), "--cell", spec, "--steps", str(args.steps),
               "--repeats", str(args.repeats)]
    return float(subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout)


def one_cell(spec: str, steps: int, repeats: int) -> float:
    """µs per step of ``spec`` in this process (the threshold patched if asked)."""
    sys.path.insert(0, os.path.dirname(HERE))
    sys.path.insert(0, HERE)
    override = os.environ.get("CBAI_BENCH_THREADS_FROM")
    if override is not None:
        from cbai_cli.kernels import threads

        threads.THREADS_FROM = int(override)  # this benchmark process only
    from bench_adaptive import step_time

    name, k, d = spec.split(",")
    return 1e6 * step_time(int(k), int(d), steps if int(k) < 100_000 else max(1, steps // 10), repeats, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", nargs="+", default=CELLS, metavar="ALGORITHM,K,D")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads-from", type=int)
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    if args.cell:
        print(one_cell(args.cell, args.steps, args.repeats))
        return 0
    print(f"µs per step, minimum over {args.rounds} alternating processes × {args.repeats} blocks of {args.steps} "
          f"steps (K = 10⁵: a tenth); load average {os.getloadavg()[0]:.2f} at start"
          + (f"; threads from K·d = {args.threads_from}" if args.threads_from is not None else ""))
    print()
    print("| algorithm | K | d | one thread µs | numba's threads µs | speed-up |")
    print("|---|---:|---:|---:|---:|---:|")
    for spec in args.cells:
        serial = threaded = float("inf")
        for _ in range(args.rounds):
            serial = min(serial, cell(spec, 1, args))
            threaded = min(threaded, cell(spec, None, args))
        name, k, d = spec.split(",")
        print(f"| {name} | {int(k)} | {int(d)} | {serial:,.1f} | {threaded:,.1f} | {serial / threaded:.2f}× |",
              flush=True)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
