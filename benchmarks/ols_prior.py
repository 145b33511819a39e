"""The ``ols`` prior over ridge scales and the own means' split by reward rank, before and as
shipped (docs/ols.md, "Which core and which split").

Four variants of the default (track-and-stop with ``ols``, δ = 0.05), each on seeds 0 …
``--seeds``−1 of :func:`cbai_cli.run.simulate.run_many` (seed s is ``cbai solve SOURCE --seed s``):

- ``before``: the prior's core u ∈ [0, 10] with weight 0.8, and the upper sides of the own
  means sharing ½ by 1/(2r·H_K) (H_K = Σ_{r≤K} 1/r);
- ``split``: that prior, and the shipped split 1/(2r(r + 1));
- ``prior``: the shipped prior (core [1, 9], weight 0.9, for least squares and for the own
  means), and the old split;
- ``shipped``: both as shipped.

The variants are installed by replacing ``ScalePrior``'s core and ``upper_spent`` in
:mod:`cbai_cli.numerics.ols` for the run (every run reads them from there). Sources are instance
files or ``cbai compare`` generator specs given on the command line ("given"), and ``--fresh
START …``: the seeded instances of ``benchmarks/guaranteed.py --fresh --fresh-start START`` (and
its four irrelevant-dims shapes, once).

``--render`` prints the given instances one per row (the bound at R = σ, R = 1 for yes/no
answers; each variant's median and its ratio to the bound; runs right; the geometric mean over
seeds of shipped/before, the same seed facing the same noise) and one row per ``--fresh`` draw: its
instances, the geometric mean over them of that per-instance ratio, how many moved by more than
4 % either way, and the largest median/bound before and as shipped.

    cbai driver-arms --n 200 --seed 7 -o driver-n200-seed7.yaml   # likewise seeds 12 and 5
    python benchmarks/ols_prior.py driver-n200-seed7.yaml driver-n200-seed12.yaml driver-n200-seed5.yaml \\
        --fresh 1 21 41 141 161 --seeds 200 --json benchmarks/results/ols_prior.json
    python benchmarks/ols_prior.py --render benchmarks/results/ols_prior.json
"""

from __future__ import annotations

import functools
import sys
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import numpy as np
from guaranteed import FRESH_FIXED, fresh_instances  # benchmarks/guaranteed.py, beside this script
from report import (measure_each, queries_cell, render_files, results_parser, seeds_record,  # benchmarks/report.py
                    theorem_bounds)

import cbai_cli.numerics.ols as ols
from cbai_cli.compare.sources import parse_source
from cbai_cli.run.simulate import RunRequest, prepare

DELTA = 0.05
BEFORE_PRIOR = {"core": (0.0, 10.0), "core_weight": 0.8}
VARIANTS = ("before", "split", "prior", "shipped")
MOVED = 0.04


def harmonic_spent(positions: np.ndarray) -> np.ndarray:
    """The old split: the first c positions' upper shares together, ½·H_c/H_K (K = the largest position)."""
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1.0, positions[-1] + 1.0))])
    return ols.UPPER_SHARE * harmonic[positions.astype(int)] / harmonic[-1]


def variant(name: str) -> ExitStack:
    """A context in which runs use variant ``name``'s prior and split (:data:`VARIANTS`)."""
    stack = ExitStack()
    if name in ("before", "split"):
        stack.enter_context(mock.patch.object(ols, "ScalePrior", functools.partial(ols.ScalePrior, **BEFORE_PRIOR)))
    if name in ("before", "prior"):
        stack.enter_context(mock.patch.object(ols, "upper_spent", harmonic_spent))
    return stack


def measure(source: str, group: str, seeds: int, variants: list[str]) -> dict:
    """The Theorem 1 bound at R = σ and its kl form and, per variant, the queries of every seed and the runs right."""
    instance = parse_source(source, 0)[0].instance_for(0)
    row = {"source": source, "group": group, **theorem_bounds(instance, DELTA), "variants": {}}
    for name in variants:
        with variant(name):
            row["variants"][name] = seeds_record(prepare(RunRequest.of("track-and-stop", "ols", delta=DELTA), instance),
                                                 seeds)
        median = np.median(row["variants"][name]["queries"])
        print(f"{source} {name}: median {median:.1f} ({median / row['bound']:.3f}×)", file=sys.stderr, flush=True)
    return row


def paired(item: dict) -> float:
    """The geometric mean over seeds of shipped/before queries."""
    shipped, before = (np.array(item["variants"][name]["queries"], dtype=float) for name in ("shipped", "before"))
    return float(np.exp(np.mean(np.log(shipped / before))))


def factor(item: dict, name: str, bound: str = "bound") -> float:
    """Variant ``name``'s median queries over ``item``'s ``bound`` (Theorem 1, or ``kl_bound`` its kl form)."""
    return float(np.median(item["variants"][name]["queries"]) / item[bound])


def label(source: str) -> str:
    return Path(source).name if Path(source).suffix else source


def given_table(items: list[dict]) -> list[str]:
    """One row per given instance: the bounds, each variant's median, and shipped / before per seed."""
    names = [name for name in VARIANTS if any(name in item["variants"] for item in items)]
    lines = ["| instance | Theorem 1 | kl form | " + " | ".join(f"`{name}`" for name in names)
             + " | shipped / before (per seed) |", "|---|---:|---:|" + "---:|" * (len(names) + 1)]
    for item in items:
        cells = [queries_cell(item["variants"][name]["queries"], item["variants"][name]["right"], item["bound"],
                              item["kl_bound"]) if name in item["variants"] else "" for name in names]
        lines.append(f"| {label(item['source'])} | {item['bound']:,.1f} | {item['kl_bound']:,.1f} | "
                     + " | ".join(cells) + f" | {paired(item):.3f} |")
    return lines


def draws_table(groups: dict[str, list[dict]]) -> list[str]:
    """One row per draw: its instances, the mean shipped / before, how many moved, the largest ratios."""
    lines = ["| draw | instances | shipped / before (geometric mean over instances of the per-seed one) | "
             f"lower by > {MOVED * 100:.0f} % | higher by > {MOVED * 100:.0f} % | largest before | largest shipped | "
             "runs right |",
             "|---|---:|---:|---:|---:|---|---|---:|"]
    for group, items in groups.items():
        ratios = np.array([paired(item) for item in items])
        medians = np.array([factor(item, "shipped") / factor(item, "before") for item in items])
        worst = {name: max(items, key=lambda item: factor(item, name)) for name in ("before", "shipped")}
        right = sum(item["variants"][name]["right"] for item in items for name in ("before", "shipped"))
        total = sum(len(item["variants"][name]["queries"]) for item in items for name in ("before", "shipped"))
        cells = [f"{factor(worst[name], name):.2f}× / {factor(worst[name], name, 'kl_bound'):.2f}× "
                 f"({label(worst[name]['source'])})" for name in ("before", "shipped")]
        lines.append(f"| {group} | {len(items)} | {np.exp(np.mean(np.log(ratios))):.3f} | "
                     f"{int(np.sum(medians < 1 - MOVED))} | {int(np.sum(medians > 1 + MOVED))} | "
                     + " | ".join(cells) + f" | {right}/{total} |")
    return lines


def render(results: dict) -> str:
    by_source: dict[str, dict[str, dict]] = {}
    for item in results["instances"]:  # every document with --fresh holds the fixed shapes: count them once
        by_source.setdefault(item["group"], {}).setdefault(item["source"], item)
    groups = {group: list(items.values()) for group, items in by_source.items()}
    given = groups.pop("given", [])
    tables = ([given_table(given)] if given else []) + ([draws_table(groups)] if groups else [])
    caption = (f"`{results['command']}` ({results['date']}; δ = {DELTA}; track-and-stop with `ols`; median queries, "
               "their ratios to Theorem 1 / to its kl form, runs right)")
    return "\n\n".join([caption] + ["\n".join(table) for table in tables])


def main(argv: list[str] | None = None) -> None:
    parser = results_parser(__doc__)
    parser.add_argument("--fresh", type=int, nargs="*", default=[], help="first seeds of --fresh draws")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from " + ", ".join(VARIANTS))
    args = parser.parse_args(argv)
    if args.render is not None:
        render_files(args.render, render)
        return
    variants = args.variants.split(",")
    if set(variants) - set(VARIANTS) or not {"before", "shipped"} <= set(variants):
        parser.error(f"--variants must name before and shipped among {', '.join(VARIANTS)}")
    sources = [(source, "given") for source in args.sources]
    fixed = list(FRESH_FIXED) if args.fresh else []
    sources += [(source, "fresh irrelevant-dims") for source in fixed]
    sources += [(source, f"fresh {start}") for start in args.fresh
                for source in fresh_instances(start) if source not in FRESH_FIXED]
    measure_each("ols_prior.py", argv, sources, lambda pair: measure(*pair, args.seeds, variants), render, args.json,
                 seeds=args.seeds)


if __name__ == "__main__":
    main()
