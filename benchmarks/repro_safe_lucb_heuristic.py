"""Safe-LUCB's exploration lengths on the Appendix F instances, including the "modified
heuristic" for an unknown Δ — our rule, heuristic, not the paper's (which mentions such a
heuristic without details) — not run by CI.

Usage (from the repository root)::

    python benchmarks/repro_safe_lucb_heuristic.py                 # T = 10^5, 10 seeds, amani-a and amani-b
    python benchmarks/repro_safe_lucb_heuristic.py --T 20000 --seeds 2 --instances amani-a   # quick look

Per instance and exploration mode (all with the paper's D^w ball, noise N(0, 0.01²), R = 1):

- ``gap``: T' = ⌈T_Δ⌉ from the true Δ (Theorem 2; Δ known — amani-a only, amani-b has Δ = 0);
- ``t23``: T' = ⌈T_0⌉ (Theorem 3);
- ``heuristic``: our stopping rule on the plug-in gap Δ̂_t (needs no Δ).

Prints a Markdown table: median [min, max] over seeds of T' and of the final regret R_T, total
unsafe actions, median fraction of phase-2 rounds with x* in the estimated safe set, wall time.
Seed s draws from the streams that ``numpy.random.default_rng(s)`` spawns
(``cbai_cli.run.simulate.spawned_streams``), so the three modes see the same exploration draws and
the same noise.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, even if another cbai is installed

from cbai_cli.kinds.cbai.families import family  # noqa: E402
from cbai_cli.run.simulate import RunRequest, prepare, run_once, spawned_streams  # noqa: E402


def requests(gap: float) -> list[tuple[str, RunRequest]]:
    """The exploration modes to compare; ``gap`` (which reads the true Δ) only when Δ > 0."""
    out = [("gap (Δ known)", RunRequest.of("safe-lucb", exploration="gap"))] if gap > 0 else []
    return out + [("t23", RunRequest.of("safe-lucb", exploration="t23")),
                  ("heuristic", RunRequest.of("safe-lucb", exploration="heuristic"))]


def summary(values) -> str:
    """``median [min, max]`` with thousands separators."""
    v = np.asarray(values, dtype=float)
    return f"{np.median(v):,.0f} [{v.min():,.0f}, {v.max():,.0f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--instances", nargs="+", default=["amani-a", "amani-b"])
    args = ap.parse_args()

    rows = []
    for name in args.instances:
        instance = family(name).generate(T=args.T)
        gap = instance.truth.safety_gap
        for label, request in requests(gap):
            t0 = time.perf_counter()
            prepared = prepare(request, instance)
            runs = [run_once(prepared, s, streams=spawned_streams(np.random.default_rng(s))) for s in range(args.seeds)]
            wall = time.perf_counter() - t0
            rows.append((name, gap, label, runs, wall))
            print(f"ran {name} {label}: {wall:.1f} s", file=sys.stderr)

    print(f"## Safe-LUCB exploration modes (T = {args.T:,}, {args.seeds} seeds; median [min, max])\n")
    print("| instance | Δ | exploration | T' | R_T | unsafe (all seeds) | x* ∈ D_t^s (phase 2) | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, gap, label, runs, wall in rows:
        fractions = [np.nan if r.x_star_in_safe is None else r.x_star_in_safe for r in runs]
        inside = "—" if np.all(np.isnan(fractions)) else f"{np.nanmedian(fractions):.3f}"
        print(f"| {name} | {gap:.4g} | {label} | {summary([r.exploration_rounds for r in runs])} | "
              f"{summary([r.regret for r in runs])} | {sum(r.violations for r in runs)} | "
              f"{inside} | {wall:.0f} |")


if __name__ == "__main__":
    main()
