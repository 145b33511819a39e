"""Time cbai_cli.numerics.design.solver.optimal_design on random instances (not run by CI).

For K in {100, 1000, 10000} and d in {5, 10, 30, 100}: K arms with i.i.d. standard
normal coordinates (``--arms sphere``: normalised to the unit sphere, the paper's
"unit sphere" family, whose G-optimal designs are very degenerate), targets either
all arms (G-optimal design) or a random 10% of them.  Prints a Markdown table.

    python benchmarks/bench_design.py                 # full grid, 1 BLAS thread
    python benchmarks/bench_design.py --K 1000 --d 30 --blas-threads default

BLAS threads are pinned (default 1) before numpy is imported: the solver works on
small dense blocks, and on a busy machine multi-threaded OpenBLAS slows those down
by orders of magnitude.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--K", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--d", type=int, nargs="+", default=[5, 10, 30, 100])
    ap.add_argument("--targets", choices=["all", "10pct", "both"], default="both")
    ap.add_argument("--arms", choices=["gauss", "sphere"], default="gauss")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--blas-threads", default="1", help="an integer, or 'default' to leave BLAS alone")
    args = ap.parse_args(argv)

    if args.blas_threads != "default":
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = args.blas_threads
    import numpy as np

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from cbai_cli.numerics.design.solver import optimal_design

    # warm-up (imports, LAPACK initialisation) so the first row is not penalised
    optimal_design(np.eye(3), np.eye(3))

    kinds = ["all", "10pct"] if args.targets == "both" else [args.targets]
    print(f"arms: {args.arms}, tol = {args.tol:g}, seed = {args.seed}, BLAS threads: {args.blas_threads}")
    print()
    print("| K | d | m | seconds | iterations | gap | support | value |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for K in args.K:
        for d in args.d:
            for kind in kinds:
                rng = np.random.default_rng([args.seed, K, d])
                X = rng.standard_normal((K, d))
                if args.arms == "sphere":
                    X /= np.linalg.norm(X, axis=1, keepdims=True)
                if kind == "all":
                    Y = X
                else:
                    Y = X[rng.choice(K, size=max(1, K // 10), replace=False)]
                t0 = time.perf_counter()
                D = optimal_design(X, Y, tol=args.tol)
                dt = time.perf_counter() - t0
                print(
                    f"| {K} | {d} | {Y.shape[0]} | {dt:.3f} | {D.iterations} | {D.gap:.1e} "
                    f"| {D.support.size} | {D.value:.6g} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
