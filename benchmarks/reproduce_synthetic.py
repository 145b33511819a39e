"""Reproduce the claims of Lindner et al. (ICML 2022) on its synthetic instances (§4.1–4.2).

Usage: python benchmarks/reproduce_synthetic.py [--seeds 10] [--jobs 2] [--budget 2000000]

For each instance (irrelevant dimensions d = 10, ε = 0.05; unit sphere d = 30,
n = 30 with a fresh instance per seed; the 1-D regret comparison) and each
algorithm/regime of Figure 2, Figure 3 and Table D.2, runs the seeds with the paper's
intervals (R = 1) and again with R = σ = 0.05, and prints a Markdown table of median
queries [quartiles] and the fraction of correct answers. Runs that hit the budget
are counted as not correct and marked with ≥.
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

ALGORITHMS = [
    ("oracle", "static", None), ("acol", "static", None), ("g-allocation", "static", None), ("uniform", "static", None),
    ("g-acol", "theory", None), ("greedy-maxvar", "theory", None), ("adaptive-uniform", "theory", None),
    ("g-acol-uniform", "theory", None), ("maxrew-u", "theory", None),
    ("g-acol", "tuned", 0.25), ("greedy-maxvar", "tuned", 0.25), ("adaptive-uniform", "tuned", 0.25),
    ("g-acol-uniform", "tuned", 0.25), ("maxrew-u", "tuned", 0.25), ("maxrew-f", "tuned", 0.25),
]
INSTANCES = {
    "irrelevant-dims d=10 ε=0.05": ("irrelevant-dims", {"d": 10, "eps": 0.05}),
    "unit-sphere d=30 n=30": ("unit-sphere", {"d": 30, "n": 30}),
    "regret-1d": ("regret-1d", {}),
}


def one_run(task):
    from cbai_cli.kinds.cbai.families import family
    from cbai_cli.run.simulate import RunRequest, prepare, run_once

    label, (name, params), (algorithm, regime, beta), subgaussian, seed, budget = task
    chosen = family(name)
    instance = chosen.generate(**params, **({"seed": seed} if chosen.seeded else {}))
    prepared = prepare(RunRequest.of(algorithm, regime=regime, beta=beta, subgaussian=subgaussian, budget=budget), instance)
    result = run_once(prepared, seed)
    return (label, algorithm, regime, subgaussian), (result.iterations, result.correct and result.stopped == "solved",
                                                     result.stopped == "budget")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--budget", type=int, default=2_000_000)
    args = parser.parse_args()
    tasks = [(label, spec, algorithm, subgaussian, seed, args.budget)
             for label, spec in INSTANCES.items()
             for algorithm in ALGORITHMS
             for subgaussian in (1.0, None)
             for seed in range(args.seeds)
             if not (algorithm[0] == "maxrew-f" and spec[0] != "regret-1d")]
    results: dict = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        for key, value in pool.map(one_run, tasks, chunksize=4):
            results.setdefault(key, []).append(value)
    for label in INSTANCES:
        print(f"\n### {label}\n")
        print("| algorithm | regime | R = 1: median [q25, q75] | correct | R = σ: median [q25, q75] | correct |")
        print("|---|---|---:|---:|---:|---:|")
        for algorithm, regime, _ in ALGORITHMS:
            cells = []
            for subgaussian in (1.0, None):
                runs = results.get((label, algorithm, regime, subgaussian))
                if not runs:
                    cells += ["—", "—"]
                    continue
                queries = np.array([r[0] for r in runs])
                censored = "≥" if any(r[2] for r in runs) else ""
                q25, q50, q75 = np.percentile(queries, [25, 50, 75])
                cells += [f"{censored}{q50:,.0f} [{q25:,.0f}, {q75:,.0f}]", f"{np.mean([r[1] for r in runs]):.0%}"]
            name = algorithm + (" (tuned)" if regime == "tuned" else "")
            print(f"| {name} | {regime} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
