"""Time ``cbai bound`` (compute_bounds: the H_CLB and H̄_CLB designs) on random instances
and report the certified gaps (not run by CI).

The instances are ``cbai generate random --d D --n N --seed S``. Few arms are at least
as rewarding as x* there, so the H_CLB design has few targets and is often singular:
the case the conic column generation of cbai_cli/design.py exists for.

    python benchmarks/bench_bound.py                       # d = 30, n = 10^4, seeds 0-3
    python benchmarks/bench_bound.py --d 30 --n 10000 --seeds 0
    python benchmarks/bench_bound.py --grid [--repeats 3]  # seed 0 over K = 10²…10⁵ and d = 5…200
    python benchmarks/bench_bound.py --grid --cells 1000:200 100000:100   # some cells only
    python benchmarks/bench_bound.py --d 100 --n 100000 --seeds 0 --time-limits 10 30 60   # gap against the cap

BLAS threads are pinned to one before numpy is imported, as the CLI does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


GRID = [(100, 10), (1000, 10), (10_000, 10), (100_000, 10), (10_000, 5), (10_000, 30), (10_000, 100),
        (1000, 200), (100_000, 100)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", type=int, default=30)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--grid", action="store_true", help="time seed 0 on a grid of K and d instead")
    ap.add_argument("--repeats", type=int, default=1, help="with --grid: minimum over this many solves")
    ap.add_argument("--cells", nargs="+", metavar="K:D", help="with --grid: only these cells (for example 1000:200)")
    ap.add_argument("--time-limits", nargs="+", type=float, metavar="SECONDS",
                    help="solve each seed once per cap (compute_bounds(time_limit=...)) and report the certified gaps")
    args = ap.parse_args(argv)

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from cbai_cli.bounds import compute_bounds
    from cbai_cli.generators import generate_instance

    compute_bounds(generate_instance("regret-1d"))  # warm-up: imports, LAPACK
    if args.grid:
        print(f"cbai generate random --d D --n K --seed 0; cbai bound (solver auto, target gap 1e-6); seconds: the "
              f"minimum over {args.repeats} solve(s)")
        print()
        print("| K | d | K·d | seconds | H_CLB gap | H̄_CLB gap |")
        print("|---:|---:|---:|---:|---:|---:|")
        cells = GRID if not args.cells else [tuple(int(part) for part in cell.split(":")) for cell in args.cells]
        for k, d in cells:
            instance = generate_instance("random", d=d, n=k, seed=0)
            best = float("inf")
            for _ in range(args.repeats if k * d <= 10**6 else 1):
                started = time.perf_counter()
                report = compute_bounds(instance)
                best = min(best, time.perf_counter() - started)
            print(f"| {k} | {d} | {k * d:,} | {best:.2f} | {report.h_clb.gap:.1e} | {report.h_clb_bar.gap:.1e} |",
                  flush=True)
        return 0
    if args.time_limits:
        print(f"cbai generate random --d {args.d} --n {args.n} --seed S; cbai bound --time-limit SECONDS (target gap 1e-6); "
              "seconds: the whole compute_bounds call (both designs share the cap)")
        print()
        print("| seed | cap s | seconds | reached | H_CLB gap | H̄_CLB gap | H̄_CLB interval |")
        print("|---:|---:|---:|:---:|---:|---:|---|")
        for seed in args.seeds:
            instance = generate_instance("random", d=args.d, n=args.n, seed=seed)
            for cap in args.time_limits:
                started = time.perf_counter()
                report = compute_bounds(instance, time_limit=cap)
                seconds = time.perf_counter() - started
                low, high = report.h_clb_bar.interval
                print(f"| {seed} | {cap:g} | {seconds:.1f} | {'yes' if report.time_limited else 'no'} | "
                      f"{report.h_clb.gap:.1e} | {report.h_clb_bar.gap:.1e} | [{low:.7g}, {high:.7g}] |", flush=True)
        return 0
    print(f"cbai generate random --d {args.d} --n {args.n} --seed S; cbai bound (solver auto, target gap 1e-6)")
    print()
    print("| seed | X≥ targets | seconds | H_CLB | H_CLB gap | H̄_CLB gap | notes on gaps |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for seed in args.seeds:
        instance = generate_instance("random", d=args.d, n=args.n, seed=seed)
        started = time.perf_counter()
        report = compute_bounds(instance)
        seconds = time.perf_counter() - started
        gap_notes = sum("stopped at a relative gap" in note for note in report.notes)
        print(f"| {seed} | {report.n_at_least} | {seconds:.2f} | {report.h_clb.value:.8g} | {report.h_clb.gap:.1e} "
              f"| {report.h_clb_bar.gap:.1e} | {gap_notes} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
