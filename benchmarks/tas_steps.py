"""Wall time per step of track-and-stop against G-ACOL, same instance, regime and step count
(docs/track-and-stop.md, "Cost per step").

For each instance (compare's source syntax) and seeds 0 … ``--seeds``−1: track-and-stop runs
to its stop, n_s queries for seed s; G-ACOL then runs the same seed with a budget of n_s, so
both algorithms make the same number of steps from the same start (the early steps of a run
are the dear ones: the ``ols`` fit starts its epochs often while n is small). Each algorithm's
time is the whole of its runs over all seeds (``run_once``, the per-run preparation
included) divided by the steps made; the minimum over ``--repeats`` repeats is reported,
since a shared machine only ever adds time.

``--step`` chooses track-and-stop's step (``--step rollout``: its rollout step, with ``ols``).

    python benchmarks/tas_steps.py [SOURCE ...] [--seeds 10] [--repeats 3] [--regime ols] [--step STEP]

``ols`` runs take the features' coordinates (:func:`report.in_features`), as the results files
were measured.
"""

from __future__ import annotations

import argparse
import os
import time

from cbai_cli.compare.sources import parse_source
from cbai_cli.run.simulate import RunRequest, prepare, run_once
from report import in_features  # benchmarks/report.py, beside this script

DEFAULT_SOURCES = (
    "irrelevant-dims:d=10,eps=0.05,sigma=1",
    "unit-sphere:d=10,n=20,seed=0,sigma=1",
    "regret-1d:sigma=1",
    "irrelevant-dims:d=10,eps=0.05,sigma=0.05",
    "random:d=5,n=20,seed=4,sigma=1",
)


def timed(prepared_of, budgets: list[int]) -> tuple[float, int]:
    """(seconds, steps) of one run per seed, seed s with budget ``budgets[s]``."""
    start, steps = time.perf_counter(), 0
    for seed, budget in enumerate(budgets):
        steps += run_once(prepared_of(budget), seed).iterations
    return time.perf_counter() - start, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=list(DEFAULT_SOURCES))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--regime", default="ols")
    parser.add_argument("--step", default=None, help="track-and-stop's --step (default: its default)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at the start; {args.seeds} seeds, "
          f"minimum of {args.repeats} repeats; track-and-stop's step: {args.step or 'the default'}\n")
    print("| instance | steps | track-and-stop µs/step | g-acol µs/step | ratio |")
    print("|---|---:|---:|---:|---:|")
    for source in args.sources:
        instance = parse_source(source, 0)[0].instance_for(0)
        tas = prepare(RunRequest.of("track-and-stop", args.regime, step=args.step, **in_features(args.regime)), instance)
        stops = [run_once(tas, seed).iterations for seed in range(args.seeds)]
        prepared = {}

        def g_acol(budget: int):
            if budget not in prepared:
                prepared[budget] = prepare(RunRequest.of("g-acol", args.regime, budget=budget, **in_features(args.regime)),
                                           instance)
            return prepared[budget]

        best = {"tas": float("inf"), "g-acol": float("inf")}
        for _ in range(args.repeats):
            seconds, steps = timed(lambda budget: tas, stops)
            best["tas"] = min(best["tas"], 1e6 * seconds / steps)
            seconds, steps = timed(g_acol, stops)
            best["g-acol"] = min(best["g-acol"], 1e6 * seconds / steps)
        print(f"| {source} | {sum(stops):,} | {best['tas']:,.1f} | {best['g-acol']:,.1f} | "
              f"{best['tas'] / best['g-acol']:.2f} |", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
