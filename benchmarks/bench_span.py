"""What a pull outside the ``ols`` fit's span costs: the exact recomputation
(:meth:`cbai_cli.numerics.ols.LeastSquaresSpan.refresh`, O(K·d·r)) against the one-direction
extension (:meth:`~cbai_cli.numerics.ols.LeastSquaresSpan.extend`, one pass over the arm matrix), and
what that does to a whole run that starts on a large arm set (not run by CI).

    python benchmarks/bench_span.py [--repeats 5] [--runs-K 100000] [--runs-d 100] [--budget 300]

BLAS runs on one thread, as in ``cbai`` (:func:`cbai_cli.numerics.blas_threads.pin_blas_threads_by_default`).
Part 1: random Gaussian arms, rank d/2 pulled, then one new arm pulled; minimum over
``--repeats`` of each way on copies of the same fit. Part 2: ``cbai solve``'s library call
(:func:`cbai_cli.kinds.solving.solve_instance`, compiled runs) of G-ACOL with ``ols`` on ``cbai
generate random --d D --n K --seed 3 --sigma 1`` with a budget, once with ``EXTEND_ENTRIES``
at its value and once with it above K·d (every new direction recomputed), alternating, wall
seconds of each run (the first run also pays numba's cache load, so each way runs twice and
the second is shown). (Track-and-stop answers that instance after one query.)

``ols`` runs take the features' coordinates (:func:`report.in_features`), as the results files
were measured.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cbai_cli.numerics.blas_threads import pin_blas_threads_by_default  # noqa: E402  (before numpy loads

pin_blas_threads_by_default()

import numpy as np  # noqa: E402

from report import in_features  # noqa: E402  (benchmarks/report.py, beside this script)

SIZES = [(100, 10), (1000, 10), (1000, 50), (10_000, 10), (10_000, 50), (100_000, 10), (20_000, 100), (100_000, 100)]


def step_costs(repeats: int) -> list[tuple[int, int, float, float]]:
    from cbai_cli.numerics import ols

    rows = []
    for k, d in SIZES:
        arms = np.random.default_rng(0).standard_normal((k, d))
        fit = ols.LeastSquaresSpan(arms)
        for arm in range(d // 2):
            fit.update(arm, 0.1)
        fit.counts[d // 2] += 1  # the pull both ways absorb
        fit.sums[d // 2] += 0.1
        times = {"refresh": [], "extend": []}
        saved = ols.EXTEND_ENTRIES
        ols.EXTEND_ENTRIES = 0
        try:
            for _ in range(repeats):
                for way in times:
                    copied = copy.deepcopy(fit)
                    start = time.perf_counter()
                    copied.refresh() if way == "refresh" else copied.extend(d // 2, 1)
                    times[way].append(time.perf_counter() - start)
        finally:
            ols.EXTEND_ENTRIES = saved
        rows.append((k, d, min(times["refresh"]) * 1e3, min(times["extend"]) * 1e3))
    return rows


def run_times(k: int, d: int, budget: int) -> list[tuple[str, str, float, int]]:
    from cbai_cli.numerics import ols
    from cbai_cli.kinds.cbai.families import family, make_noise
    from cbai_cli.run.simulate import RunRequest
    from cbai_cli.run.solving import solve_instance

    instance = family("random").generate(make_noise("gaussian", None, 1.0), d=d, n=k, seed=3)
    saved = ols.EXTEND_ENTRIES
    rows = []
    try:
        for _ in range(2):
            for way, entries in (("extend", saved), ("recompute", math.inf)):
                ols.EXTEND_ENTRIES = entries
                start = time.perf_counter()
                request = RunRequest.of("g-acol", "ols", budget=budget, **in_features("ols"))
                result = solve_instance(instance, request, [0], bound=False)
                rows.append(("g-acol", way, time.perf_counter() - start, result.results[0].iterations))
    finally:
        ols.EXTEND_ENTRIES = saved
    return rows[2:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs-K", type=int, default=100_000)
    parser.add_argument("--runs-d", type=int, default=100)
    parser.add_argument("--budget", type=int, default=300)
    args = parser.parse_args()
    print("| K | d | recompute (ms) | extend (ms) |\n|---:|---:|---:|---:|")
    for k, d, refresh, extend in step_costs(args.repeats):
        print(f"| {k:,} | {d} | {refresh:.3f} | {extend:.3f} |")
    print(f"\nruns on random K = {args.runs_K:,}, d = {args.runs_d}, σ = 1, budget {args.budget}:\n")
    print("| algorithm | new directions | wall (s) | queries |\n|---|---|---:|---:|")
    for algorithm, way, seconds, queries in run_times(args.runs_K, args.runs_d, args.budget):
        print(f"| {algorithm}:ols | {way} | {seconds:.2f} | {queries:,} |")


if __name__ == "__main__":
    main()
