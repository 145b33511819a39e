"""`cbai bound` as K grows and ACOL on irrelevant dimensions as d grows (not run by CI).

Usage: python benchmarks/bench_scaling.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

from cbai_cli.kinds.cbai.bounds import compute_bounds  # noqa: E402
from cbai_cli.kinds.cbai.families import family  # noqa: E402
from cbai_cli.run.simulate import RunRequest, prepare, run_once  # noqa: E402


def main() -> None:
    print("| K | d | `bound` seconds | H_CLB | gap |")
    print("|---:|---:|---:|---:|---:|")
    for k, d in ((100, 10), (1000, 10), (1000, 30), (10_000, 10)):
        instance = family("random").generate(d=d, n=k, seed=0)
        start = time.perf_counter()
        report = compute_bounds(instance)
        print(f"| {k} | {d} | {time.perf_counter() - start:.2f} | {report.h_clb.value:.4g} | {report.gap:.1e} |")
    print()
    print("| d | ACOL queries (R = 1) | seconds | rounds |")
    print("|---:|---:|---:|---:|")
    for d in (5, 10, 20, 50):
        instance = family("irrelevant-dims").generate(d=d, eps=0.05)
        prepared = prepare(RunRequest.of("acol", subgaussian=1.0), instance)
        result = run_once(prepared, seed=0)
        print(f"| {d} | {result.iterations:,} | {result.wall_s:.2f} | {result.rounds} |")


if __name__ == "__main__":
    main()
