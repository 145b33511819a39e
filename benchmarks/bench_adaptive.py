"""Time per adaptive step as K and d grow, for this code or another checkout (not run by CI).

Usage:
    python benchmarks/bench_adaptive.py [--steps 1000] [--repeats 5] [--code DIR] [--save FILE] [--against FILE]
    python benchmarks/bench_adaptive.py --baseline-code DIR [--rounds 3]   # interleaved before/after

Each cell runs an adaptive algorithm with the tuned regime at radius 10, so that
nothing is decided and every step does the full work, on random Gaussian arms, and
reports the wall time of one ask/answer/tell step: the minimum over ``--repeats``
timed blocks of ``--steps`` steps (the machine is shared: the minimum is the least
disturbed block). At K = 10⁵ the blocks have a tenth of the steps.

``--code DIR`` imports cbai_cli from DIR (for example a ``git worktree`` of an older
commit), ``--save FILE`` writes the table as JSON, ``--against FILE`` adds a column
with the saved times and the speed-up. ``--baseline-code DIR`` times every cell in
fresh processes, alternating this code and DIR ``--rounds`` times and keeping each
one's minimum, so that both see the same load on a shared machine. BLAS is pinned to
one thread before numpy loads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

GRID = ([("g-acol", k, 10) for k in (100, 1000, 10_000, 100_000)]
        + [("g-acol", 1000, d) for d in (5, 20, 50, 100, 200)]
        + [("g-acol", 100_000, 100)]
        + [(name, 1000, 10) for name in ("greedy-maxvar", "adaptive-uniform", "g-acol-uniform", "maxrew-u")])


def step_time(k: int, d: int, steps: int, repeats: int, algorithm: str = "g-acol") -> float:
    import numpy as np

    from cbai_cli.kinds.cbai.instance import Instance
    from cbai_cli.kinds.cbai.kind import Environment
    from cbai_cli.kinds.cbai.noise import GaussianNoise
    from cbai_cli.run.simulate import RunRequest, prepare

    rng = np.random.default_rng(0)
    arms = rng.standard_normal((k, d))
    instance = Instance(name="bench", arms=arms, reward=rng.standard_normal(d), constraint=rng.standard_normal(d) * 0.01,
                        threshold=0.0, noise=GaussianNoise(1.0))
    prepared = prepare(RunRequest.of(algorithm, "tuned", beta=100.0), instance)
    algo = prepared.make_algorithm(np.random.default_rng(1))
    env = Environment(instance.problem.arms, instance.truth, np.random.default_rng(2))
    for _ in range(20):  # warm-up
        query = algo.ask()
        algo.tell(query, env.answer(query))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            query = algo.ask()
            algo.tell(query, env.answer(query))
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--code", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--save")
    parser.add_argument("--against")
    parser.add_argument("--baseline-code")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cells", nargs="+", metavar="ALGORITHM,K,D", help="only these cells of the grid")
    parser.add_argument("--cell", help=argparse.SUPPRESS)  # ALGORITHM,K,D: print one cell's µs (internal)
    args = parser.parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    if args.baseline_code:
        return interleaved(args)
    sys.path.insert(0, os.path.abspath(args.code))
    if args.cell:
        name, k, d = args.cell.split(",")
        steps = args.steps if int(k) < 100_000 else max(1, args.steps // 10)
        print(1e6 * step_time(int(k), int(d), steps, args.repeats, name))
        return 0
    before = {}
    if args.against:
        with open(args.against) as stream:
            before = {(row["algorithm"], row["K"], row["d"]): row["us"] for row in json.load(stream)["rows"]}
    rows = []
    print(f"code: {os.path.abspath(args.code)}; µs per step, minimum over {args.repeats} blocks of {args.steps} steps")
    print()
    print("| algorithm | K | d | µs per step |" + (" before | speed-up |" if before else ""))
    print("|---|---:|---:|---:|" + ("---:|---:|" if before else ""))
    for name, k, d in GRID:
        us = 1e6 * step_time(k, d, args.steps if k < 100_000 else max(1, args.steps // 10), args.repeats, name)
        rows.append({"algorithm": name, "K": k, "d": d, "us": round(us, 1)})
        line = f"| {name} | {k} | {d} | {us:,.1f} |"
        if before:
            old = before.get((name, k, d))
            line += f" {old:,.1f} | {old / us:.2f}× |" if old else " — | — |"
        print(line, flush=True)
    if args.save:
        with open(args.save, "w") as stream:
            json.dump({"command": " ".join(["python", "benchmarks/bench_adaptive.py", *(argv or sys.argv[1:])]),
                       "rows": rows}, stream, indent=1)
    return 0


def interleaved(args) -> int:
    """Each cell in fresh processes, this code and the baseline alternately, ``rounds`` times."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

    def cell(code: str, name: str, k: int, d: int) -> float:
        command = [sys.executable, os.path.abspath(__file__), "--code", code, "--cell", f"{name},{k},{d}",
                   "--steps", str(args.steps), "--repeats", str(args.repeats)]
        return float(subprocess.run(command, capture_output=True, text=True, check=True).stdout)

    print(f"this code against {os.path.abspath(args.baseline_code)}: µs per step, minimum over {args.rounds} "
          f"alternating processes × {args.repeats} blocks of {args.steps} steps")
    print()
    print("| algorithm | K | d | before µs | after µs | speed-up |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = []
    grid = [(name, int(k), int(d)) for name, k, d in (cell.split(",") for cell in args.cells)] if args.cells else GRID
    for name, k, d in grid:
        before = after = float("inf")
        for _ in range(args.rounds):
            before = min(before, cell(os.path.abspath(args.baseline_code), name, k, d))
            after = min(after, cell(os.path.abspath(here), name, k, d))
        rows.append({"algorithm": name, "K": k, "d": d, "before_us": round(before, 1), "after_us": round(after, 1)})
        print(f"| {name} | {k} | {d} | {before:,.1f} | {after:,.1f} | {before / after:.2f}× |", flush=True)
    if args.save:
        with open(args.save, "w") as stream:
            json.dump({"command": " ".join(["python", "benchmarks/bench_adaptive.py", *sys.argv[1:]]), "rows": rows},
                      stream, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
