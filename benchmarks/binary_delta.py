"""How the default's factor over the Theorem 1 bound changes with δ on the yes/no driver instances
(docs/binary.md, "The factor against δ").

Theorem 1 grows like log(1/(2.4δ)) at a fixed instance, so a rule's queries n(δ) against it
separate into what grows with log(1/δ) and what does not. For each instance file, each rule
(``track-and-stop``, the default, and ``maxrew-u``, both with ``ols``) and each δ of ``--deltas``:
the queries of seeds 0 … ``--seeds``−1 through :func:`cbai_cli.run.simulate.run_many` (seed s is
``cbai solve FILE --algo RULE --delta δ --seed s``), the runs right, and the bounds at that δ:
Theorem 1 at R = 1 and its kl form (docs/lower-bound.md).

``--render`` prints two tables: the median queries with their ratios to the bound and to its kl
form, per instance and δ; and per instance and rule the least-squares line through the medians,
median ≈ a + b·log(1/δ), with its slope b over the bound's, 2·H_CLB per nat (the factor a rule
approaches as δ → 0), and its intercept a, the queries that do not grow with log(1/δ), also as a
multiple of the bound at the first δ.

    cbai driver-arms --n 200 --seed 7 -o driver-n200-seed7.yaml   # likewise seeds 12 and 5
    python benchmarks/binary_delta.py driver-n200-seed7.yaml driver-n200-seed12.yaml driver-n200-seed5.yaml \\
        --seeds 200 --json benchmarks/results/binary_delta.json
    python benchmarks/binary_delta.py --render benchmarks/results/binary_delta.json
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from cbai_cli.kinds import load
from cbai_cli.kinds.cbai.bounds import compute_bounds
from cbai_cli.run.simulate import RunRequest, prepare, run_many
from report import measure_each, queries_cell, render_files, results_parser  # benchmarks/report.py, beside this script

RULES = ("track-and-stop", "maxrew-u")
DELTAS = (0.05, 0.01, 1e-4, 1e-8, 1e-16)


def measure(path: str, deltas: list[float], seeds: int) -> dict:
    """Per δ: the bounds and, per rule of :data:`RULES`, the queries of every seed and the runs right."""
    instance = load(path)
    rows = []
    for delta in deltas:
        bounds = compute_bounds(instance, delta=delta)
        row = {"delta": delta, "bound": bounds.lower_bound, "kl_bound": bounds.lower_bound_kl, "rules": {}}
        for name in RULES:
            results = run_many(prepare(RunRequest.of(name, "ols", delta=delta), instance), range(seeds))
            queries = [result.iterations for result in results]
            row["rules"][name] = {"queries": queries, "right": sum(bool(result.correct) for result in results)}
            print(f"{path} δ={delta:g} {name}: median {np.median(queries):.0f} "
                  f"({np.median(queries) / bounds.lower_bound:.2f}×)", file=sys.stderr, flush=True)
        rows.append(row)
    return {"source": path, "deltas": rows}


def line(deltas: list[dict], name: str) -> tuple[float, float]:
    """(a, b): the least-squares line median ≈ a + b·log(1/δ) through the medians of rule ``name``."""
    x = np.array([math.log(1.0 / row["delta"]) for row in deltas])
    y = np.array([float(np.median(row["rules"][name]["queries"])) for row in deltas])
    slope, intercept = np.polyfit(x, y, 1)
    return float(intercept), float(slope)


def render(results: dict) -> str:
    lines = [f"`{results['command']}` ({results['date']}; R = 1; median queries, their ratios to Theorem 1 / to "
             "its kl form, runs right)", "",
             "| instance | δ | Theorem 1 (R = 1) | kl form | " + " | ".join(RULES) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(RULES)]
    for item in results["instances"]:
        for row in item["deltas"]:
            cells = [queries_cell(row["rules"][name]["queries"], row["rules"][name]["right"], row["bound"],
                                  row["kl_bound"]) for name in RULES]
            lines.append(f"| {Path(item['source']).name} | {row['delta']:g} | {row['bound']:,.1f} | "
                         f"{row['kl_bound']:,.1f} | " + " | ".join(cells) + " |")
    lines += ["", "The medians against log(1/δ), a least-squares line each (median ≈ a + b·log(1/δ); the bound's "
              "slope is 2·H_CLB per nat):", "",
              "| instance | rule | slope b / the bound's | intercept a (queries) | a / Theorem 1 at δ = "
              f"{results['instances'][0]['deltas'][0]['delta']:g} |",
              "|---|---|---:|---:|---:|"]
    for item in results["instances"]:
        first = item["deltas"][0]
        for name in RULES:
            intercept, slope = line(item["deltas"], name)
            per_nat = first["bound"] / math.log(1.0 / (2.4 * first["delta"]))  # 2·H_CLB
            lines.append(f"| {Path(item['source']).name} | {name} | {slope / per_nat:.2f} | "
                         f"{intercept:,.0f} | {intercept / first['bound']:.2f}× |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = results_parser(__doc__)
    parser.add_argument("--deltas", type=float, nargs="+", default=list(DELTAS))
    args = parser.parse_args(argv)
    if args.render is not None:
        render_files(args.render, render)
        return
    if not all(0.0 < delta < 0.5 for delta in args.deltas) or len(set(args.deltas)) < 2:
        parser.error("--deltas must be at least two values in (0, 0.5), the points of the line")
    measure_each("binary_delta.py", argv, args.sources, lambda source: measure(source, args.deltas, args.seeds),
                 render, args.json, seeds=args.seeds)


if __name__ == "__main__":
    main()
