"""Error rates of every guaranteed algorithm × regime on the hard instances of the
statistical test (tests/algorithms/test_guarantee.py), with their 95 % Clopper–Pearson
intervals, median queries and CPU seconds; and the same for the radii scaled down (the
test's power). Not run by CI.

    PYTHONPATH=. python benchmarks/guarantee_rates.py [--scales 0.5,0.35,0.25,0.15]

Prints a Markdown table. CPU seconds are ``time.process_time`` of the 1000 runs of a case
in this process (on a shared machine, take the minimum of repeats).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cbai_cli.algorithms.registry import entries
from cbai_cli.numerics.binomial import clopper_pearson
from cbai_cli.numerics.confidence import REGIMES
from tests.algorithms.test_guarantee import (ALLOWED_ERRORS, HARD, POWER_ALGORITHM, RUNS, guarantee_runs,
                                             guaranteed_cases, scaled_regime)


def row(algorithm: str, regime: str, label: str, **options) -> str:
    started = time.process_time()
    results = list(guarantee_runs(algorithm, regime, **options))
    seconds = time.process_time() - started
    errors = sum(not result.correct for result in results)
    low, high = clopper_pearson(errors, len(results))
    queries = np.median([result.iterations for result in results])
    verdict = "pass" if errors <= ALLOWED_ERRORS else "FAIL"
    gap = HARD[entries()[algorithm].style].gap
    return (f"| {algorithm} | {label} | {gap:g}σ | {len(results)} | {queries:,.0f} | {errors} | "
            f"{100 * low:.2f}–{100 * high:.2f}% | {verdict} | {seconds:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="", help="radius scales for the power rows, e.g. 0.5,0.25")
    parser.add_argument("--no-cases", action="store_true", help="only the power rows")
    arguments = parser.parse_args()
    print(f"{RUNS} runs per row, δ = 0.1, allowed errors {ALLOWED_ERRORS}\n")
    print("| algorithm | regime | gap | runs | median queries | errors | 95% CI of the error rate | test | CPU s |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    if not arguments.no_cases:
        for algorithm, regime in guaranteed_cases():
            print(row(algorithm, regime, regime), flush=True)
    for scale in [float(value) for value in arguments.scales.split(",") if value]:
        for name, regime in list(REGIMES.items()):
            if not regime.guaranteed:
                continue
            scaled = scaled_regime(name, scale)
            REGIMES[scaled.name] = scaled
            algorithm = POWER_ALGORITHM["adaptive" if regime.adaptive else "round"]
            print(row(algorithm, scaled.name, f"{name} × {scale:g}"), flush=True)
            del REGIMES[scaled.name]
    print(row("g-acol", "tuned", "tuned β = 0.25", beta=0.25), flush=True)


if __name__ == "__main__":
    main()
