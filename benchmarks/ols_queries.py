"""Median queries of adaptive algorithms under ``det`` and ``ols`` and their ratio to the
Theorem 1 bound at the instance's noise level (docs/ols.md, "Measured queries").

Each cell is ``cbai solve FILE --algo A --regime R --runs 20 --json``: seeds 0–19, δ = 0.05,
R = the instance's noise scale; ``ols`` cells in the features' coordinates (``--coordinates
features``, :func:`report.in_features`), as the results file was measured.

    python benchmarks/ols_queries.py FILE... [--runs 20] [--algos g-acol,greedy-maxvar,maxrew-u]
"""

from __future__ import annotations

import argparse
import statistics

from cbai_cli.kinds.cbai.bounds import compute_bounds
from cbai_cli.kinds import load
from cbai_cli.run.simulate import RunRequest, prepare, run_once
from report import in_features  # benchmarks/report.py, beside this script


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--algos", default="g-acol,greedy-maxvar,maxrew-u")
    parser.add_argument("--regimes", default="det,ols")
    arguments = parser.parse_args()
    regimes = arguments.regimes.split(",")
    print("| instance | Theorem 1 bound (σ²) | algorithm | " + " | ".join(f"`{r}` median (ratio), right" for r in regimes)
          + " |")
    print("|---|---:|---|" + "---:|" * len(regimes))
    for path in arguments.files:
        instance = load(path)
        bound = compute_bounds(instance, delta=0.05).lower_bound_noise
        for algorithm in arguments.algos.split(","):
            cells = []
            for regime in regimes:
                prepared = prepare(RunRequest.of(algorithm, regime, **in_features(regime)), instance)
                results = [run_once(prepared, seed) for seed in range(arguments.runs)]
                median = statistics.median(result.iterations for result in results)
                right = sum(bool(result.correct) and result.stopped == "solved" for result in results)
                cells.append(f"{median:,g} ({median / bound:.1f}×), {right}/{len(results)}")
            print(f"| {path} | {bound:.4g} | {algorithm} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
