"""Every guaranteed CBAI method against the Theorem 1 lower bound.

Usage:
    python benchmarks/guaranteed.py [--seeds 20] [--jobs 2] [--budget 2000000]
                                    [--algos track-and-stop:det,acol,g-acol:det,...] [--out runs.sqlite]
                                    [--fresh [--fresh-start 1]]

For every algorithm of the registry that always stops, in every guaranteed confidence
regime it accepts (``cbai algorithms``; track-and-stop included), runs ``--seeds`` seeds
through :mod:`cbai_cli.compare` on the paper's instances with honest noise (R = σ):

- irrelevant-dims d = 10, ε = 0.05, σ = 1;
- unit-sphere d = 10, n = 20, seed 0 (one fixed instance), σ = 1;
- regret-1d, σ = 1;
- irrelevant-dims d = 10, ε = 0.05, σ = 0.05;

and prints a Markdown table per instance: median queries [quartiles], the ratio to the
Theorem 1 bound scaled by σ² (``lower_bound_noise`` of ``cbai bound --json``) and to its
unrelaxed kl form (``lower_bound_kl_noise``, 1.25 times higher at δ = 0.05), the
fraction of runs that stopped with the right answer, budget stops and the median
microseconds per query. A last table gives the fraction correct of the tuned G-ACOL
(β = 1/4, the paper's intervals) at σ = 1. ``--algos`` restricts the specs (compare's
syntax); ``--out`` keeps every record in a compare store, so an interrupted run resumes.

``--fresh`` replaces the paper's instances by instances nobody tuned on, all at σ = 1 (R = σ):
irrelevant-dims at four other (d, ε), and for unit-sphere and random at three shapes
each the first three seeds from ``--fresh-start`` (1) upwards whose Theorem 1 bound lies in
[``FRESH_LOW``, ``FRESH_HIGH``] queries (the selection reads only the bound, never a run:
below 50 queries the d pulls that span the space decide, above 5,000 a run is too long
for a benchmark). It prints the same tables and, last, the worst ratio of each spec.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

INSTANCES = (
    ("irrelevant-dims d=10 ε=0.05, σ = 1", "irrelevant-dims:d=10,eps=0.05,sigma=1"),
    ("unit-sphere d=10 n=20 seed 0, σ = 1", "unit-sphere:d=10,n=20,seed=0,sigma=1"),
    ("regret-1d, σ = 1", "regret-1d:sigma=1"),
    ("irrelevant-dims d=10 ε=0.05, σ = 0.05", "irrelevant-dims:d=10,eps=0.05,sigma=0.05"),
)
TUNED_SPEC = "g-acol:tuned:beta=0.25"
FRESH_FIXED = ("irrelevant-dims:d=5,eps=0.1,sigma=1", "irrelevant-dims:d=20,eps=0.1,sigma=1",
               "irrelevant-dims:d=20,eps=0.2,sigma=1", "irrelevant-dims:d=5,eps=0.05,sigma=1")
FRESH_SEEDED = (("unit-sphere", "d=5,n=20"), ("unit-sphere", "d=10,n=20"), ("unit-sphere", "d=20,n=40"),
                ("random", "d=5,n=20"), ("random", "d=10,n=20"), ("random", "d=20,n=40"))
FRESH_LOW, FRESH_HIGH, FRESH_PER_SHAPE = 50.0, 5000.0, 3
DELTA = 0.05


def fresh_instances(first_seed: int = 1) -> list[str]:
    """Compare sources of the ``--fresh`` instances (the module docstring's selection rule),
    the seeded ones drawn from ``first_seed`` upwards."""
    from cbai_cli.kinds.cbai.bounds import compute_bounds
    from cbai_cli.kinds.cbai.families import generate_instance

    sources = list(FRESH_FIXED)
    for name, shape in FRESH_SEEDED:
        params = {key: int(value) for key, value in (item.split("=") for item in shape.split(","))}
        chosen, seed = 0, first_seed - 1
        while chosen < FRESH_PER_SHAPE:
            seed += 1
            instance = generate_instance(name, sigma=1.0, seed=seed, **params)
            bound = compute_bounds(instance, delta=0.05).lower_bound_noise
            if FRESH_LOW <= bound <= FRESH_HIGH:
                sources.append(f"{name}:{shape},seed={seed},sigma=1")
                chosen += 1
    return sources


def guaranteed_specs() -> list[str]:
    """``NAME:REGIME`` for every CBAI algorithm that always stops × every guaranteed
    regime it accepts, in registry order (track-and-stop is registered like any other)."""
    from cbai_cli.algorithms.registry import names_for, resolve
    from cbai_cli.numerics.confidence import REGIMES

    specs = []
    for name in names_for("cbai"):
        entry, _ = resolve(name)
        if entry.guaranteed_stop:
            specs += [f"{name}:{regime}" for regime in entry.regimes if REGIMES[regime].guaranteed]
    return specs


def run(sources: list[str], specs: list[str], seeds: int, jobs: int, budget: int, out: Path | None) -> list:
    from cbai_cli.compare.study import CompareSettings, compare
    from cbai_cli.compare.summary import summarize

    settings = CompareSettings(sources=tuple(sources), algorithms=tuple(specs), seeds=seeds, jobs=jobs,
                               options={"budget": budget, "delta": DELTA}, out=out)
    result = compare(settings)
    return list(summarize(result.records))


#: Theorem 1's bound over its unrelaxed kl form at δ = 0.05, log(1/(2.4δ))/kl(δ, 1 − δ) = 0.800:
#: a ratio to Theorem 1 times this is the ratio to the kl form (docs/lower-bound.md).
KL_SCALE = math.log(1 / (2.4 * DELTA)) / ((1 - 2 * DELTA) * math.log((1 - DELTA) / DELTA))


def cell(row) -> tuple[str, str, str, str, str, str]:
    """(queries, ratio to Theorem 1, ratio to its kl form, correct, budget stops, µs/query) of a summary row."""
    censored = "≥" if row.budget_stops else ""
    queries = f"{censored}{row.median:,.0f} [{row.q25:,.0f}, {row.q75:,.0f}]"
    ratio = f"{censored}{row.ratio_to_lower_bound:.2f}×" if row.ratio_to_lower_bound else "—"
    kl_ratio = f"{censored}{row.ratio_to_lower_bound * KL_SCALE:.2f}×" if row.ratio_to_lower_bound else "—"
    correct = "—" if row.fraction_correct is None else f"{row.fraction_correct:.0%}"
    per_query = 1e6 * row.median_wall_s / max(row.median, 1.0)
    return queries, ratio, kl_ratio, correct, str(row.budget_stops), f"{per_query:,.0f}"


def print_tables(rows: list, labels: dict[str, str]) -> None:
    for source, label in labels.items():
        mine = [row for row in rows if row.source == source]
        if not mine:
            continue
        bound = mine[0].lower_bound
        print(f"\n#### {label} (Theorem 1 bound, σ²-scaled: {bound:,.4g})\n")
        print("| algorithm | regime | median queries [q25, q75] | ratio to bound | ratio to kl bound | correct | "
              "budget stops | µs/query |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for row in sorted(mine, key=lambda row: row.ratio_to_lower_bound or math.inf):
            name = row.algorithm.split(":")[0]
            print(f"| {name} | {row.regime} | " + " | ".join(cell(row)) + " |")


def print_worst(rows: list, labels: dict[str, str]) -> None:
    """Per spec: the largest ratio to the bound over the instances, and where."""
    print("\n#### Worst ratio per algorithm\n")
    print("| algorithm | regime | worst ratio | to the kl bound | instance | all runs right |")
    print("|---|---|---:|---:|---|---:|")
    for spec in dict.fromkeys(row.algorithm for row in rows):
        mine = [row for row in rows if row.algorithm == spec]
        worst = max(mine, key=lambda row: row.ratio_to_lower_bound or math.inf)
        right = all(row.fraction_correct == 1.0 and not row.budget_stops for row in mine)
        print(f"| {spec.split(':')[0]} | {worst.regime} | {cell(worst)[1]} | {cell(worst)[2]} | {labels[worst.source]} | "
              f"{'yes' if right else 'no'} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget", type=int, default=2_000_000)
    parser.add_argument("--algos", default=None, help="comma-separated compare specs (default: every guaranteed one)")
    parser.add_argument("--no-tuned", action="store_true", help="skip the tuned G-ACOL correctness table")
    parser.add_argument("--out", type=Path, default=None, help="a compare store (.jsonl or .sqlite) to resume from")
    parser.add_argument("--fresh", action="store_true", help="instances nobody tuned on instead of the paper's")
    parser.add_argument("--fresh-start", type=int, default=1, help="first seed of the seeded --fresh instances")
    args = parser.parse_args(argv)
    specs = args.algos.split(",") if args.algos else guaranteed_specs()
    if args.fresh:
        labels = {source: source.replace(",sigma=1", ", σ = 1") for source in fresh_instances(args.fresh_start)}
    else:
        labels = {source: label for label, source in INSTANCES}
    print(f"`python benchmarks/guaranteed.py {' '.join(sys.argv[1:] if argv is None else argv)}`: "
          f"{args.seeds} seeds, δ = 0.05, R = σ, budget {args.budget:,}")
    rows = run(list(labels), specs, args.seeds, args.jobs, args.budget, args.out)
    print_tables(rows, labels)
    if args.fresh:
        print_worst(rows, labels)
    if not args.no_tuned and not args.fresh:
        sigma_one = [source for label, source in INSTANCES if source.endswith("sigma=1")]
        tuned_out = None if args.out is None else args.out.with_name(args.out.stem + "-tuned" + args.out.suffix)
        rows = run(sigma_one, [TUNED_SPEC], args.seeds, args.jobs, args.budget, tuned_out)
        print("\n#### Tuned G-ACOL (β = 0.25, radius 0.5; no guarantee) at σ = 1\n")
        print("| instance | median queries | ratio to bound | ratio to kl bound | correct |")
        print("|---|---:|---:|---:|---:|")
        for row in rows:
            queries, ratio, kl_ratio, correct, _, _ = cell(row)
            print(f"| {labels[row.source]} | {queries} | {ratio} | {kl_ratio} | {correct} |")


if __name__ == "__main__":
    main()
