"""Time ``cbai bound`` (compute_bounds: the H_CLB and H̄_CLB designs) on random instances
and report the certified gaps (not run by CI).

The instances are ``cbai generate random --d D --n N --seed S``. Few arms are at least
as rewarding as x* there, so the H_CLB design has few targets and is often singular:
the case the conic column generation of cbai_cli/numerics/design/solver.py exists for.

    python benchmarks/bench_bound.py                       # d = 30, n = 10^4, seeds 0-3
    python benchmarks/bench_bound.py --d 30 --n 10000 --seeds 0
    python benchmarks/bench_bound.py --grid [--repeats 3] [--time-limit 60]   # seed 0, K = 10²…10⁵ × d = 5…100
    python benchmarks/bench_bound.py --grid --K 1000 10000 --d 30 200         # another K × d grid
    python benchmarks/bench_bound.py --grid --cells 1000:200 100000:100      # some cells only
    python benchmarks/bench_bound.py --d 100 --n 100000 --seeds 0 --time-limits 10 30 60   # gap against the cap

``--grid`` prints one Markdown table, a row per (K, d) of ``--K`` × ``--d`` (or ``--cells``):
wall and CPU seconds of one ``compute_bounds`` call (the minimum over ``--repeats`` for
K·d ≤ 10⁶, else one) and the certified relative gaps of H_CLB and H̄_CLB. With
``--time-limit SECONDS`` every cell is capped (``cbai bound --time-limit``) and the column
``cap reached`` says which cells stopped there (their gaps are then what the cap certified).

BLAS threads are pinned to one before numpy is imported, as the CLI does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


GRID_K = [100, 1000, 10_000, 100_000]
GRID_D = [5, 10, 20, 50, 100]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", type=int, nargs="+", help="dimension (default 30); with --grid: dimensions (default "
                                                      "5 10 20 50 100)")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--grid", action="store_true", help="time seed 0 on a grid of K and d instead")
    ap.add_argument("--K", type=int, nargs="+", default=GRID_K, help="with --grid: numbers of arms")
    ap.add_argument("--time-limit", type=float, metavar="SECONDS", help="with --grid: cap every cell's solve")
    ap.add_argument("--repeats", type=int, default=1, help="with --grid: minimum over this many solves")
    ap.add_argument("--cells", nargs="+", metavar="K:D", help="with --grid: only these cells (for example 1000:200)")
    ap.add_argument("--time-limits", nargs="+", type=float, metavar="SECONDS",
                    help="solve each seed once per cap (compute_bounds(time_limit=...)) and report the certified gaps")
    args = ap.parse_args(argv)

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from cbai_cli.kinds.cbai.bounds import compute_bounds
    from cbai_cli.kinds.cbai.families import generate_instance

    compute_bounds(generate_instance("regret-1d"))  # warm-up: imports, LAPACK
    if args.grid:
        grid(args, compute_bounds, generate_instance)
        return 0
    if args.d is not None and len(args.d) > 1:
        ap.error("--d takes several dimensions only with --grid")
    args.d = args.d[0] if args.d else 30
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


def grid(args, compute_bounds, generate_instance) -> None:
    """The ``--grid`` table: one row per (K, d), wall and CPU seconds and certified gaps."""
    cap = args.time_limit
    print(f"`cbai generate random --d D --n K --seed 0`, then `cbai bound` (solver auto, target gap 1e-6"
          f"{f', --time-limit {cap:g}' if cap is not None else ''}); seconds: the minimum over {args.repeats} "
          f"solve(s) for K·d ≤ 10⁶, else one; one BLAS thread; load average {os.getloadavg()[0]:.1f} at start")
    print()
    print("| K | d | K·d | seconds | CPU s | H_CLB gap | H̄_CLB gap |" + (" cap reached |" if cap is not None else ""))
    print("|---:|---:|---:|---:|---:|---:|---:|" + ("---|" if cap is not None else ""))
    if args.cells:
        cells = [tuple(int(part) for part in cell.split(":")) for cell in args.cells]
    else:
        cells = [(k, d) for d in (args.d or GRID_D) for k in args.K]
    for k, d in cells:
        instance = generate_instance("random", d=d, n=k, seed=0)
        best, best_cpu = float("inf"), float("inf")
        for _ in range(args.repeats if k * d <= 10**6 else 1):
            started, started_cpu = time.perf_counter(), time.process_time()
            report = compute_bounds(instance, time_limit=cap)
            best, best_cpu = min(best, time.perf_counter() - started), min(best_cpu, time.process_time() - started_cpu)
        reached = (" yes |" if report.time_limited else " no |") if cap is not None else ""
        print(f"| {k:,} | {d} | {k * d:,} | {best:.2f} | {best_cpu:.2f} | {report.h_clb.gap:.1e} | "
              f"{report.h_clb_bar.gap:.1e} |{reached}", flush=True)
    print()
    print(f"Load average {os.getloadavg()[0]:.1f} at the end.")


if __name__ == "__main__":
    raise SystemExit(main())
