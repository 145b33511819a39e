"""Reproduce Safe-LUCB's Appendix F simulations (Amani et al. 2019, as set in the authors'
MATLAB code ``CLBwithD_0.m`` and ``intersectCLB.m``) — not run by CI.

Usage (from the repository root)::

    python benchmarks/repro_safe_lucb_appendix_f.py              # T = 10^5, 1 realisation (as the authors)
    python benchmarks/repro_safe_lucb_appendix_f.py --seeds 3    # average over 3 seeds
    python benchmarks/repro_safe_lucb_appendix_f.py --T 20000    # quick look

Runs, on the 2-D box with noise N(0, 0.01²) and R = 1 (the authors' settings):

- instance A (Δ > 0): T' = 10^4 (authors' script) and T' = 0 (no exploration; Fig. 1(b) claim);
- instance B (Δ = 0): T' = 0 with the confidence-set intersection (authors' ``intersectCLB.m``),
  T' = 0 without it, and T' = ⌈T_0⌉ (Theorem 3's exploration length).

Writes ``docs/img/safe_lucb_appendix_f.png`` and prints Markdown tables: cumulative regret at the
checkpoints, unsafe actions, log-log slopes, λ_min after exploration against T'λ_−/2 and the
fraction of phase-2 rounds with x* in the estimated safe set.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, even if another cbai is installed

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cbai_cli.kinds.safe.files import SafeRegretInstance  # noqa: E402
from cbai_cli.kinds.safe.paper_instances import instance_a, instance_b  # noqa: E402
from cbai_cli.run.simulate import RunRequest, drive, prepare, spawned_streams, start_run  # noqa: E402

#: Rounds of the regret table (T is added).
CHECKPOINTS = (1_000, 10_000, 20_000, 50_000, 100_000)


def run(prepared, seed: int):
    """One run of ``prepared`` seeded by ``numpy.random.default_rng(seed)``
    (:func:`cbai_cli.run.simulate.spawned_streams`): its score and its cumulative regret after
    every round, (T,), which the kind's score keeps at a few points only."""
    learner, environment, observer = start_run(prepared, seed, streams=spawned_streams(np.random.default_rng(seed)))
    loop = drive(learner, environment, prepared.budget, observer)
    return prepared.kind.score(prepared, seed, learner, environment, observer, loop), observer.curve


def slope(t: np.ndarray, r: np.ndarray) -> float:
    """Least-squares log-log slope of r against t (points with r > 0)."""
    ok = r > 0
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(t[ok]), np.log(r[ok]), 1)[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "safe_lucb_appendix_f.png"))
    args = ap.parse_args()
    T = args.T
    a, b = SafeRegretInstance(instance_a(T=T)), SafeRegretInstance(instance_b(T=T))
    runs = [
        ("A", "T'=10^4 (authors)", a, RunRequest.of("safe-lucb", exploration=str(min(10_000, T)), dw="ellipsoid")),
        ("A", "T'=0", a, RunRequest.of("safe-lucb", exploration="0")),
        ("B", "T'=0 + intersection (authors)", b, RunRequest.of("safe-lucb", exploration="0", intersect=True)),
        ("B", "T'=0", b, RunRequest.of("safe-lucb", exploration="0")),
        ("B", "T'=⌈T_0⌉ (Thm 3)", b, RunRequest.of("safe-lucb", exploration="t23", dw="ellipsoid")),
    ]
    results = []
    for inst, label, instance, request in runs:
        t0 = time.perf_counter()
        prepared = prepare(request, instance)
        rs = [run(prepared, s) for s in range(args.seeds)]
        wall = time.perf_counter() - t0
        results.append((inst, label, rs, wall))
        print(f"ran {inst} {label}: {wall:.1f} s", file=sys.stderr)

    cps = np.array(sorted({c for c in CHECKPOINTS if c <= T} | {T}))
    print(f"## Safe-LUCB, Appendix F instances (T = {T}, {args.seeds} seed(s), mean over seeds)\n")
    print("| instance | run | T' | " + " | ".join(f"R({c})" for c in cps) + " | unsafe | wall s |")
    print("|---|---|---|" + "---|" * len(cps) + "---|---|")
    for inst, label, rs, wall in results:
        reg = np.mean([curve[cps - 1] for _, curve in rs], axis=0)
        print(f"| {inst} | {label} | {rs[0][0].exploration_rounds} | " + " | ".join(f"{v:.0f}" for v in reg)
              + f" | {sum(r.violations for r, _ in rs)} | {wall:.1f} |")

    print("\n## Shape diagnostics\n")
    print("| instance | run | slope of R_t (t ≥ 10^4) | post-exploration regret R_T − R_T' | slope of R_t − R_T' "
          "| λ_min(Σxxᵀ) after T' | T'λ_−/2 | x* ∈ D_t^s (phase 2) |")
    print("|---|---|---|---|---|---|---|---|")
    for inst, label, rs, wall in results:
        r = rs[0][0]
        Tp = r.exploration_rounds
        curve = np.mean([x for _, x in rs], axis=0)
        t = np.unique(np.geomspace(10_000, T, 12).astype(int)) if T > 10_000 else np.array([T // 2, T])
        s_all = slope(t, curve[t - 1])
        base = curve[Tp - 1] if Tp > 0 else 0.0
        post = curve[-1] - base
        s_post_t = np.unique(np.geomspace(max(1, min(10_000, (T - Tp) // 4)), T - Tp, 10).astype(int)) if T > Tp else np.array([])
        s_post = slope(s_post_t, curve[Tp + s_post_t - 1] - base) if s_post_t.size else float("nan")
        print(f"| {inst} | {label} | {s_all:.2f} | {post:.0f} | {s_post:.2f} | {r.lambda_min_design:.1f} | "
              f"{r.lambda_min_target:.1f} | {math.nan if r.x_star_in_safe is None else r.x_star_in_safe:.3f} |")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, inst in zip(axes, ("A", "B")):
        for i2, label, rs, wall in results:
            if i2 != inst:
                continue
            curve = np.mean([x for _, x in rs], axis=0)
            ax.plot(np.arange(1, T + 1), curve, label=label)
        gap = "Δ > 0" if inst == "A" else "Δ = 0"
        ax.set_title(f"Safe-LUCB, instance {inst} ({gap}), T = {T}")
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative regret R_t")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"\nFigure: {Path(args.out).relative_to(ROOT) if Path(args.out).is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
