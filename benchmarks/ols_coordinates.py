"""The default (track-and-stop with ``ols``) in the arms' D-optimal coordinates against the same
in the features as written (docs/ols.md, "The prior's shape").

For each source (an instance file, or a generator spec of ``cbai compare`` with its seed
fixed) and each value of ``--coordinates`` (``features``, ``d-optimal``, the default): the queries
of seeds 0 … ``--seeds``−1 through :func:`cbai_cli.run.simulate.run_many` (seed s is ``cbai solve
SOURCE --coordinates C --seed s``, δ = 0.05) and the runs right; the Theorem 1 bound at R = σ
(R = 1 for yes/no answers) and its kl form.

``--render`` prints one row per instance: the bounds, each coordinates' median queries with its
ratios to the bound and to its kl form and its runs right, and the D-optimal median over the
features' median with, in brackets, the geometric mean of the per-seed ratios (the same seed
faces the same noise in both).

    cbai driver-arms --n 200 --seed 7 -o driver-n200-seed7.yaml   # likewise seeds 12 and 5
    python benchmarks/ols_coordinates.py driver-n200-seed7.yaml driver-n200-seed12.yaml driver-n200-seed5.yaml \\
        --seeds 200 --json benchmarks/results/ols_coordinates_driver.json
    python benchmarks/ols_coordinates.py --render benchmarks/results/ols_coordinates_driver.json
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from cbai_cli.compare.sources import parse_source
from cbai_cli.run.simulate import RunRequest, prepare
from report import (measure_each, queries_cell, render_files, results_parser, seeds_record,  # benchmarks/report.py
                    theorem_bounds)

COORDINATES = ("features", "d-optimal")
DELTA = 0.05


def measure(source: str, seeds: int) -> dict:
    """The bounds and, per value of :data:`COORDINATES`, the queries of every seed and the runs right."""
    instance = parse_source(source, 0)[0].instance_for(0)
    row = {"source": source, **theorem_bounds(instance, DELTA), "coordinates": {}}
    for coordinates in COORDINATES:
        row["coordinates"][coordinates] = seeds_record(
            prepare(RunRequest.of("track-and-stop", "ols", delta=DELTA, coordinates=coordinates), instance), seeds)
        median = np.median(row["coordinates"][coordinates]["queries"])
        print(f"{source} {coordinates}: median {median:.0f} ({median / row['bound']:.2f}×)", file=sys.stderr, flush=True)
    return row


def render(results: dict) -> str:
    lines = [f"`{results['command']}` ({results['date']}; δ = {DELTA}; median queries, their ratios to Theorem 1 / to "
             "its kl form, runs right)", "",
             "| instance | Theorem 1 | kl form | " + " | ".join(f"`{name}`" for name in COORDINATES)
             + " | d-optimal / features (per seed) |",
             "|---|---:|---:|" + "---:|" * (len(COORDINATES) + 1)]
    for item in results["instances"]:
        cells = [queries_cell(item["coordinates"][name]["queries"], item["coordinates"][name]["right"], item["bound"],
                              item["kl_bound"]) for name in COORDINATES]
        features, optimal = (np.array(item["coordinates"][name]["queries"], dtype=float) for name in COORDINATES)
        paired = float(np.exp(np.mean(np.log(optimal / features))))
        name = Path(item["source"]).name if Path(item["source"]).suffix else item["source"]
        lines.append(f"| {name} | {item['bound']:,.1f} | {item['kl_bound']:,.1f} | " + " | ".join(cells)
                     + f" | {np.median(optimal) / np.median(features):.3f} ({paired:.3f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = results_parser(__doc__).parse_args(argv)
    if args.render is not None:
        render_files(args.render, render)
        return
    measure_each("ols_coordinates.py", argv, args.sources, lambda source: measure(source, args.seeds), render,
                 args.json, seeds=args.seeds)


if __name__ == "__main__":
    main()
