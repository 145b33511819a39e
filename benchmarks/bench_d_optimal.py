"""Time to map the arms into their D-optimal coordinates (:func:`d_optimal_arms`, once per request of
an ``ols`` run; docs/ols.md, "The prior's shape"), on instance files and on Gaussian arm sets whose
features have scales drawn log-uniformly from 0.1 to 10 (K arms in d dimensions, seed 0).

For each: the best of ``--repeat`` wall-clock times, the design's support and its largest leverage
over the rank (at most 1 + LEVERAGE_SLACK).

    cbai driver-arms --n 200 --seed 7 -o driver-n200-seed7.yaml
    python benchmarks/bench_d_optimal.py driver-n200-seed7.yaml --random 1000x20 10000x50 100000x20 \\
        --out benchmarks/results/bench_d_optimal.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from cbai_cli.kinds import load
from cbai_cli.numerics.design.d_optimal import d_optimal_arms, d_optimal_weights, span_coordinates
from report import emit  # benchmarks/report.py, beside this script


def arm_sets(files: list[str], shapes: list[str]) -> list[tuple[str, np.ndarray]]:
    """(name, arms (K, d)) of every instance file and every ``KxD`` random shape."""
    found = [(Path(name).name, load(name).problem.arms) for name in files]
    rng = np.random.default_rng(0)
    for shape in shapes:
        k, d = (int(part) for part in shape.split("x"))
        found.append((f"Gaussian {k:,} × {d}", rng.standard_normal((k, d)) * np.exp(rng.uniform(np.log(0.1), np.log(10.0), d))))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--random", nargs="*", default=[], metavar="KxD")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    lines = ["| arms | K | d | time (best of %d) | support | max leverage / r |" % args.repeat, "|---|---:|---:|---:|---:|---:|"]
    for name, arms in arm_sets(args.files, args.random):
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            d_optimal_arms(arms)
            times.append(time.perf_counter() - start)
        weights = d_optimal_weights(arms)
        z = span_coordinates(arms)
        leverages = np.einsum("kr,rs,ks->k", z, np.linalg.inv(z.T @ (weights[:, None] * z)), z)
        lines.append(f"| {name} | {arms.shape[0]:,} | {arms.shape[1]} | {min(times) * 1e3:,.0f} ms | "
                     f"{int((weights > 0).sum())} | {leverages.max() / z.shape[1]:.4f} |")
    emit([f"`python benchmarks/bench_d_optimal.py {' '.join(args.files)} --random {' '.join(args.random)}`", "", *lines],
         args.out)


if __name__ == "__main__":
    main()
