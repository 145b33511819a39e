"""Reproduce "Price of Safety" Table 1 (its §5): LinGapE vs Safe-LinGapE — not run by CI.

Usage (from the repository root)::

    python benchmarks/repro_pos_table1.py             # 10 runs per algorithm (the paper's count)
    python benchmarks/repro_pos_table1.py --runs 30

Default instance (the paper's §5 defaults): d = 3, K = 4, ω = 0.1, θ* = (2, 0, 0), μ* = (0, −1, 0), η₀ = −0.5,
ε = 2(1 − cos ω), δ_r = δ'_s = 0.001, σ = 1, σ_safe = 0.1, λ = 1, T_FE = 800, γ_FE = 0.2.
Algorithms: LinGapE (greedy and ratio; full pulls, safety ignored) and Safe-LinGapE
(greedy/ratio × static/dynamic). Stopping times count every pull (T_FE and the K initial
pulls included). Prints a Markdown table and writes ``docs/img/pos_table1.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, even if another cbai is installed

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cbai_cli.kinds.safe.files import SafeBaiInstance  # noqa: E402
from cbai_cli.kinds.safe.paper_instances import TABLE1_RUNS, price_of_safety_instance  # noqa: E402
from cbai_cli.run.simulate import RunRequest, prepare, run_once, spawned_streams  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "pos_table1.png"))
    args = ap.parse_args()
    instance = SafeBaiInstance(price_of_safety_instance())
    requests = [RunRequest.of(algorithm, **options) for algorithm, options in TABLE1_RUNS]
    print(f"## Price of Safety, Table 1 ({args.runs} runs, mean ± sd)\n")
    print("| algorithm | stopping time τ | unsafe pulls | unsafe fraction | k̂ = k* | ε-correct "
          "| γ̄₂ after FE | γ̄₂ at stop | wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    names, taus = [], []
    for request in requests:
        t0 = time.perf_counter()
        prepared = prepare(request, instance)
        rs = [run_once(prepared, seed, streams=spawned_streams(np.random.default_rng(seed))) for seed in range(args.runs)]
        wall = time.perf_counter() - t0
        tau = np.array([r.iterations for r in rs])
        uns = np.array([r.violations for r in rs])
        frac = uns / tau
        g_fe = [r.gamma_bar_fe[1] for r in rs if r.gamma_bar_fe is not None]
        g_st = [r.gamma_bar[1] for r in rs if r.gamma_bar is not None]
        fmt = lambda v: f"{np.mean(v):.3f} ± {np.std(v):.3f}" if v else "—"  # noqa: E731
        print(f"| {rs[0].variant} | {tau.mean():.0f} ± {tau.std():.0f} | {uns.mean():.0f} ± {uns.std():.0f} "
              f"| {frac.mean():.2f} | {sum(r.optimal for r in rs)}/{args.runs} "
              f"| {sum(r.correct for r in rs)}/{args.runs} | {fmt(g_fe)} | {fmt(g_st)} | {wall:.1f} |")
        names.append(rs[0].variant)
        taus.append(tau)
    print("\n(true γ₂ = 0.5; every run stopped; τ counts T_FE = 800 and the initial pulls)")

    fig, ax = plt.subplots(figsize=(9, 4))
    ax.bar(range(len(names)), [t.mean() for t in taus], yerr=[t.std() for t in taus], capsize=4,
           color=["tab:red", "tab:red", "tab:blue", "tab:green", "tab:blue", "tab:green"])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([n.replace("Safe-LinGapE-", "Safe-\n") for n in names], fontsize=8)
    ax.set_ylabel("stopping time τ (mean ± sd)")
    ax.set_title(f"Price of Safety Table 1 instance (d = 3, ω = 0.1), {args.runs} runs")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    out = Path(args.out).resolve()
    print(f"\nFigure: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
