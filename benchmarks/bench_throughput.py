"""Sweep throughput of every CBAI algorithm on the paper's instances, and the cost of one
adaptive step against K and d, as README-ready Markdown (not run by CI).

Usage:
    python benchmarks/bench_throughput.py [--seeds 10] [--budget 2000000] [--budget-no-stop 20000]
                                          [--algos g-acol:theory,acol:static] [--json FILE]
    python benchmarks/bench_throughput.py --per-step [--K 100 1000 10000 100000] [--d 5 10 20 50 100 200]
                                          [--steps 500] [--repeats 3] [--memory-cap-mb 4096] [--json FILE]

Sweeps (default). For every CBAI algorithm of the registry (``cbai algorithms``), in its
default regime and, where it accepts one, the ``ols`` regime, on the four instances of
README "Guaranteed methods against the lower bound" (benchmarks/guaranteed.py: irrelevant-dims
d = 10 ε = 0.05 at σ = 1 and σ = 0.05, unit-sphere d = 10 n = 20 seed 0 and regret-1d at σ = 1;
honest noise R = σ, δ = 0.05), runs seeds 0 … N−1 in this one process through
:func:`cbai_cli.run.simulate.run_many` — what ``cbai solve --runs N`` runs (compiled batches
where the compiled step applies, the ask/tell loop elsewhere) — and reports queries per
CPU-second (``time.process_time`` of the N runs: instance loading, the request's
preparation and one warm-up run of at most ``--warm-up`` queries on seed N are left out, so
numba's compile or load is not counted), µs per query, the median queries of a run and how
many runs hit ``--budget`` (an algorithm the registry does not guarantee to stop, maxrew-f,
runs to ``--budget-no-stop``, 20,000 queries by default: its throughput, not its stopping, is
measured). Runs of a few dozen queries measure each run's fixed set-up more than its steps;
a round-based algorithm pulls a round at once, so its µs per query is a round's cost shared.

Per step (``--per-step``). For G-ACOL and the default CBAI algorithm (track-and-stop), each
(K, d) cell draws K standard Gaussian arms in R^d (benchmarks/bench_sweep.py's random arms)
and runs the tuned regime at radius 10 (β = 100), so that nothing is decided and every step
does the full work, through the same :func:`~cbai_cli.run.simulate.run_many` path with a budget of
``--steps`` queries (fewer for large K·d, never fewer than 100); µs per step is the minimum over
``--repeats`` runs (seeds 1 …) of CPU time / queries, after a warm-up run of 20 queries. Blocks
shorter than the exact-refresh period of A⁻¹ (max(200, 20d) pulls) leave that refresh out. A
cell whose arm matrix and working copies (estimated as 4·8·K·d bytes) exceed
``--memory-cap-mb`` is skipped and named under the table.

BLAS is pinned to one thread before numpy loads, as the CLI does. ``--json FILE`` writes
every measured number with the command and the load average (written atomically).

``ols`` runs take the features' coordinates (:func:`report.in_features`), as the results files
were measured.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKING_COPIES = 4  # 667 MB resident at K = 10⁵, d = 200 (GNU time -v), whose arm matrix is 160 MB


def sweep_specs(only: list[str] | None) -> list[tuple[str, str, bool]]:
    """(algorithm, regime, whether it always stops) for every CBAI algorithm of the
    registry: its default regime and ``ols`` where it accepts it, in registry order;
    ``only`` (``NAME:REGIME``) filters."""
    from cbai_cli.algorithms.registry import names_for, resolve

    specs = []
    for name in names_for("cbai"):
        entry, _ = resolve(name)
        regimes = dict.fromkeys([entry.default_regime, *(["ols"] if "ols" in entry.regimes else [])])
        specs += [(name, regime, entry.guaranteed_stop) for regime in regimes]
    if only:
        unknown = sorted(set(only) - {f"{name}:{regime}" for name, regime, _ in specs})
        if unknown:
            raise SystemExit(f"--algos: not a CBAI algorithm:regime of this table: {', '.join(unknown)}")
        specs = [spec for spec in specs if f"{spec[0]}:{spec[1]}" in only]
    return specs


def paper_instances() -> list[tuple[str, str, object]]:
    """(label, compare source, instance) of the four instances of benchmarks/guaranteed.py."""
    from cbai_cli.compare.sources import parse_sources
    from guaranteed import INSTANCES

    groups = parse_sources([source for _, source in INSTANCES])
    return [(label, source, group.instance_for(0)) for (label, source), group in zip(INSTANCES, groups)]


def path_of(prepared) -> str:
    """Which loop ``run_many`` takes for this request: the compiled batch or the ask/tell loop."""
    from cbai_cli.run.simulate import compilable, start_run

    learner, environment, _ = start_run(prepared, 0)
    return "compiled" if compilable(learner, environment) else "ask/tell"


def sweep_cell(name: str, regime: str, instance, seeds: int, budget: int, warm_up: int) -> dict:
    """One algorithm × regime × instance: seeds 0 … seeds−1 through ``run_many``, timed."""
    import numpy as np

    from cbai_cli.run.simulate import RunRequest, prepare, run_many
    from report import in_features  # benchmarks/report.py, beside this script

    options = {"delta": 0.05, **in_features(regime)}
    run_many(prepare(RunRequest.of(name, regime, budget=min(budget, warm_up), **options), instance), [seeds])
    prepared = prepare(RunRequest.of(name, regime, budget=budget, **options), instance)
    started = time.process_time()
    results = run_many(prepared, range(seeds))
    cpu = time.process_time() - started
    queries = sum(result.iterations for result in results)
    return {"path": path_of(prepared), "runs": seeds, "queries": queries, "cpu_s": cpu,
            "queries_per_cpu_s": queries / cpu if cpu > 0 else None,
            "us_per_query": 1e6 * cpu / queries if queries else None,
            "median_queries": float(np.median([result.iterations for result in results])),
            "budget_stops": sum(result.stopped == "budget" for result in results),
            "correct": sum(bool(result.correct) for result in results)}


def sweep_text(cell: dict) -> str:
    """``312k q/s · 3.2 µs · 5,538 q`` with ``≥`` on a median censored by the budget."""
    rate = cell["queries_per_cpu_s"]
    rate_text = "—" if rate is None else (f"{rate / 1e6:.2f}M" if rate >= 1e6 else f"{rate / 1e3:,.0f}k")
    us = "—" if cell["us_per_query"] is None else f"{cell['us_per_query']:,.2f}"
    censored = "≥" if cell["budget_stops"] else ""
    stops = f" ({cell['budget_stops']}/{cell['runs']} at budget)" if cell["budget_stops"] else ""
    return f"{rate_text} · {us} µs · {censored}{cell['median_queries']:,.0f}{stops}"


def sweeps(args) -> dict:
    instances = paper_instances()
    specs = sweep_specs(args.algos.split(",") if args.algos else None)
    print(f"Sweeps of {args.seeds} seeds (0–{args.seeds - 1}) in one process through `run_many` (what "
          f"`cbai solve --runs {args.seeds}` runs), δ = 0.05, R = σ, budget {args.budget:,} queries a run "
          f"({args.budget_no_stop:,} for an algorithm without a stopping guarantee); "
          f"load average {os.getloadavg()[0]:.1f} at start. Each cell: queries per CPU-second · µs per query · "
          f"median queries of a run (≥: some runs hit the budget).")
    print()
    print("| algorithm:regime | path | " + " | ".join(label for label, _, _ in instances) + " |")
    print("|---|---|" + "---:|" * len(instances))
    rows = []
    total = 0.0
    for name, regime, stops in specs:
        cells = []
        budget = args.budget if stops else min(args.budget, args.budget_no_stop)
        for label, source, instance in instances:
            cell = sweep_cell(name, regime, instance, args.seeds, budget, args.warm_up)
            rows.append({"algorithm": name, "regime": regime, "instance": label, "source": source,
                         "budget": budget, **cell})
            cells.append(cell)
            total += cell["cpu_s"]
        paths = "/".join(dict.fromkeys(cell["path"] for cell in cells))
        print(f"| {name}:{regime} | {paths} | " + " | ".join(sweep_text(cell) for cell in cells) + " |", flush=True)
    print()
    print(f"{sum(row['runs'] for row in rows):,} runs, {sum(row['queries'] for row in rows):,} queries in "
          f"{total:,.1f} CPU-seconds of timed runs; load average {os.getloadavg()[0]:.1f} at the end.")
    return {"mode": "sweeps", "seeds": args.seeds, "budget": args.budget, "rows": rows}


def random_arms(k: int, d: int):
    """The random Gaussian instance of benchmarks/bench_sweep.py (seed 0)."""
    from bench_sweep import make_instance

    return make_instance(("random-arms", {"k": k, "d": d}))


def step_cell(name: str, k: int, d: int, steps: int, repeats: int) -> dict:
    """µs per step of ``name`` (tuned regime, radius 10) at K arms in R^d: the minimum over
    ``repeats`` runs of ``steps`` queries through ``run_many``."""
    from cbai_cli.run.simulate import RunRequest, prepare, run_many

    instance = random_arms(k, d)
    run_many(prepare(RunRequest.of(name, "tuned", beta=100.0, budget=20), instance), [0])
    prepared = prepare(RunRequest.of(name, "tuned", beta=100.0, budget=steps), instance)
    best, stopped = float("inf"), 0
    for seed in range(1, repeats + 1):
        started = time.process_time()
        (result,) = run_many(prepared, [seed])
        best = min(best, (time.process_time() - started) / max(result.iterations, 1))
        stopped += result.stopped == "solved"
    return {"path": path_of(prepared), "steps": steps, "us_per_step": 1e6 * best, "stopped_early": stopped}


def per_step(args) -> dict:
    from cbai_cli.algorithms.registry import default_algorithm

    algorithms = args.algorithms or list(dict.fromkeys(["g-acol", default_algorithm("cbai")]))
    print(f"µs per adaptive step (CPU time, minimum over {args.repeats} runs), tuned regime at radius 10 so that "
          f"nothing is decided, random Gaussian arms, through `run_many`; load average "
          f"{os.getloadavg()[0]:.1f} at start.")
    print()
    print("| algorithm (path) | d | " + " | ".join(f"K = {k:,}" for k in args.K) + " |")
    print("|---|---:|" + "---:|" * len(args.K))
    rows, skipped, early = [], [], False
    for name in algorithms:
        for d in args.d:
            texts, paths = [], []
            for k in args.K:
                megabytes = WORKING_COPIES * 8 * k * d / 2**20
                if megabytes > args.memory_cap_mb:
                    skipped.append(f"K = {k:,}, d = {d} ({megabytes:,.0f} MB estimated)")
                    rows.append({"algorithm": name, "K": k, "d": d, "skipped": f"{megabytes:.0f} MB estimated"})
                    texts.append("skipped")
                    continue
                steps = max(100, min(args.steps, args.steps * 200_000 // (k * d)))
                cell = step_cell(name, k, d, steps, args.repeats)
                rows.append({"algorithm": name, "K": k, "d": d, **cell})
                texts.append(f"{cell['us_per_step']:,.1f}" + ("†" if cell["stopped_early"] else ""))
                early = early or bool(cell["stopped_early"])
                paths.append(cell["path"])
            print(f"| {name} ({'/'.join(dict.fromkeys(paths)) or '—'}) | {d} | " + " | ".join(texts) + " |",
                  flush=True)
    if skipped:
        print()
        print(f"Skipped above the memory cap of {args.memory_cap_mb:,} MB (`--memory-cap-mb`): "
              f"{'; '.join(dict.fromkeys(skipped))}.")
    if early:
        print()
        print("†: a timed run stopped before its budget (its set-up weighs more in the cell).")
    print()
    print(f"Load average {os.getloadavg()[0]:.1f} at the end.")
    return {"mode": "per-step", "steps": args.steps, "repeats": args.repeats, "memory_cap_mb": args.memory_cap_mb,
            "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10, help="runs per cell (seeds 0 … N−1)")
    parser.add_argument("--budget", type=int, default=2_000_000, help="query budget of every run")
    parser.add_argument("--budget-no-stop", type=int, default=20_000,
                        help="query budget of an algorithm the registry does not guarantee to stop (maxrew-f)")
    parser.add_argument("--warm-up", type=int, default=10_000, help="query budget of the untimed warm-up run")
    parser.add_argument("--algos", help="only these comma-separated NAME:REGIME rows")
    parser.add_argument("--json", type=Path, help="also write every number to this JSON file")
    parser.add_argument("--per-step", action="store_true", help="µs per adaptive step on a K × d grid instead")
    parser.add_argument("--K", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    parser.add_argument("--d", type=int, nargs="+", default=[5, 10, 20, 50, 100, 200])
    parser.add_argument("--algorithms", nargs="+", help="with --per-step: these algorithms (default: G-ACOL and "
                                                        "the default CBAI algorithm)")
    parser.add_argument("--steps", type=int, default=500, help="with --per-step: queries of a timed run")
    parser.add_argument("--repeats", type=int, default=3, help="with --per-step: timed runs per cell (minimum)")
    parser.add_argument("--memory-cap-mb", type=int, default=4096, help="with --per-step: skip larger cells")
    args = parser.parse_args(argv)
    if min(args.seeds, args.budget, args.budget_no_stop, args.warm_up, args.steps, args.repeats) < 1:
        parser.error("--seeds, --budget, --budget-no-stop, --warm-up, --steps and --repeats must be ≥ 1")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    sys.path[:0] = [str(HERE.parent), str(HERE)]
    result = per_step(args) if args.per_step else sweeps(args)
    if args.json:
        import json

        from cbai_cli.io.atomic import write_atomic

        command = " ".join(["python", "benchmarks/bench_throughput.py", *(sys.argv[1:] if argv is None else argv)])
        data = json.dumps({"command": command, **result}, indent=1).encode()
        write_atomic(args.json, lambda stream: stream.write(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
