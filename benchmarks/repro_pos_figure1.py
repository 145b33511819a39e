"""Reproduce "Price of Safety" Figure 1 (its §5 experiments) — not run by CI.

Usage (from the repository root)::

    python benchmarks/repro_pos_figure1.py                 # 10 runs per point (the paper's count)
    python benchmarks/repro_pos_figure1.py --runs 5 --dims 2 3 4

Panels (one parameter varied at a time, others at the paper's §5 defaults):

- (a) γ̄ of the risky arm e_2 right after forced exploration vs the FE length T_FE;
- (b) the same vs the safety threshold η₀ (true γ₂ = |η₀|), with γ_FE = 0.4|η₀| so that FE
  stays safe (our choice; γ_FE = 0.2 would be unsafe on e_2 for |η₀| < 0.2); plotted as
  γ̄₂/γ₂ against T_FE for three thresholds;
- (c) stopping time vs dimension d for LinGapE and Safe-LinGapE (static, dynamic; greedy);
- (d) safety in growing dimension: fraction of unsafe pulls vs d.

T_FE = 200·K in (c)/(d) (our reading of the paper's 4 × 200 as 200 per arm). Writes
``docs/img/pos_figure1.png`` and prints the numbers as Markdown tables.
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
from cbai_cli.kinds.safe.paper_instances import price_of_safety_instance  # noqa: E402
from cbai_cli.run.simulate import RunRequest, prepare, run_once, spawned_streams  # noqa: E402


def run(problem, request: RunRequest, seed: int):
    """One run of ``request`` on ``problem`` (a library problem), seeded by
    ``numpy.random.default_rng(seed)`` (:func:`cbai_cli.run.simulate.spawned_streams`)."""
    prepared = prepare(request, SafeBaiInstance(problem))
    return run_once(prepared, seed, streams=spawned_streams(np.random.default_rng(seed)))


def gamma_after_fe(problem, seed: int) -> tuple[float, ...]:
    """Run only the forced-exploration phase (a pull cap of T_FE) and return γ̄ right after it, (K,)."""
    return run(problem, RunRequest.of("safe-lingape", budget=problem.setting.T_FE), seed).gamma_bar_fe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--dims", type=int, nargs="+", default=[2, 3, 4, 5, 6])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "pos_figure1.png"))
    args = ap.parse_args()
    R = args.runs
    base = price_of_safety_instance()

    # (a) γ̄₂ after FE vs T_FE.
    per_arm = [25, 50, 100, 200, 400, 800, 1600]
    fe_len = [base.K * n for n in per_arm]
    ga = np.array([[gamma_after_fe(base.with_setting(T_FE=n), s)[1] for s in range(R)] for n in fe_len])
    print(f"## Fig. 1(a): γ̄ of the risky arm e_2 after FE vs T_FE (η₀ = −0.5, true γ₂ = 0.5; {R} runs)\n")
    print("| T_FE | " + " | ".join(map(str, fe_len)) + " |")
    print("|---|" + "---|" * len(fe_len))
    print("| γ̄₂ mean ± sd | " + " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in zip(ga.mean(1), ga.std(1))) + " |")

    # (b) γ̄₂ after FE vs η₀. γ_FE = 0.2 is unsafe for e_2 when |η₀| < 0.2, so the known-safe
    # FE scale follows the threshold: γ_FE = 0.4 |η₀| (= 0.2 at the default η₀ = −0.5; our choice).
    etas = [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.8, -1.0]

    def pos(eta, **kw):
        return price_of_safety_instance(eta0=eta, gamma_FE=0.4 * abs(eta), **kw)

    gb = np.array([[gamma_after_fe(pos(e), s)[1] for s in range(R)] for e in etas])
    print(f"\n## Fig. 1(b): γ̄ of e_2 after FE (T_FE = 800, γ_FE = 0.4|η₀|) vs η₀ ({R} runs)\n")
    print("| η₀ | " + " | ".join(map(str, etas)) + " |")
    print("|---|" + "---|" * len(etas))
    print("| γ_FE | " + " | ".join(f"{0.4 * abs(e):.2f}" for e in etas) + " |")
    print("| true γ₂ | " + " | ".join(f"{min(1, abs(e)):.2f}" for e in etas) + " |")
    print("| γ̄₂ mean ± sd | " + " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in zip(gb.mean(1), gb.std(1))) + " |")
    print("| γ̄₂ / γ₂ | " + " | ".join(f"{m / min(1, abs(e)):.2f}" for m, e in zip(gb.mean(1), etas)) + " |")
    # ... and the FE-length effect for several thresholds ("confirms this intuition for various η₀").
    etas_b = [-0.2, -0.5, -0.8]
    gbt = {e: np.array([[gamma_after_fe(pos(e, T_FE=n), s)[1] / min(1, abs(e)) for s in range(R)] for n in fe_len])
           for e in etas_b}
    print("\n| γ̄₂ / γ₂ vs T_FE | " + " | ".join(map(str, fe_len)) + " |")
    print("|---|" + "---|" * len(fe_len))
    for e in etas_b:
        print(f"| η₀ = {e} | " + " | ".join(f"{m:.3f}" for m in gbt[e].mean(1)) + " |")

    # (c), (d) stopping time and safety vs d.
    algs = [
        ("LinGapE", RunRequest.of("lingape")),
        ("Safe-LinGapE static", RunRequest.of("safe-lingape")),
        ("Safe-LinGapE dynamic", RunRequest.of("safe-lingape", updates="dynamic")),
    ]
    tau = {name: [] for name, _ in algs}
    unsafe = {name: [] for name, _ in algs}
    correct = {name: [] for name, _ in algs}
    for d in args.dims:
        p = price_of_safety_instance(d=d)
        for name, request in algs:
            t0 = time.perf_counter()
            rs = [run(p, request, s) for s in range(R)]
            assert all(r.optimal_arm == 0 for r in rs)
            tau[name].append([r.iterations for r in rs])
            unsafe[name].append([r.violations / r.iterations for r in rs])
            correct[name].append(sum(r.optimal for r in rs))
            print(f"d={d} {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(f"\n## Fig. 1(c)/(d): stopping time and unsafe fraction vs d (T_FE = 200·K, {R} runs)\n")
    print("| algorithm | " + " | ".join(f"d={d}" for d in args.dims) + " |")
    print("|---|" + "---|" * len(args.dims))
    for name, _ in algs:
        t = np.array(tau[name])
        print(f"| {name}: τ | " + " | ".join(f"{m:.0f} ± {s:.0f}" for m, s in zip(t.mean(1), t.std(1))) + " |")
    for name, _ in algs:
        u = np.array(unsafe[name])
        print(f"| {name}: unsafe fraction | " + " | ".join(f"{m:.3f}" for m in u.mean(1)) + " |")
    for name, _ in algs:
        print(f"| {name}: k̂ = k* | " + " | ".join(f"{c}/{R}" for c in correct[name]) + " |")

    fig, ax = plt.subplots(2, 2, figsize=(11, 8))
    a, b, c, dd = ax.ravel()
    a.errorbar(fe_len, ga.mean(1), yerr=ga.std(1), marker="o", capsize=3, label="γ̄₂ after FE")
    a.axhline(0.5, color="k", ls="--", label="true γ₂ = 0.5")
    a.set_xscale("log")
    a.set_xlabel("forced-exploration length T_FE")
    a.set_ylabel("γ̄ of risky arm e_2")
    a.set_title("(a) safety estimate vs FE length")
    a.legend()
    for e in etas_b:
        g = gbt[e]
        b.errorbar(fe_len, g.mean(1), yerr=g.std(1), marker="o", capsize=3, label=f"η₀ = {e}")
    b.axhline(1.0, color="k", ls="--", label="γ̄₂ = γ₂")
    b.set_xscale("log")
    b.set_xlabel("forced-exploration length T_FE (γ_FE = 0.4|η₀|)")
    b.set_ylabel("γ̄₂ / γ₂")
    b.set_title("(b) relative safety estimate for several η₀")
    b.legend()
    for name, _ in algs:
        t = np.array(tau[name])
        c.errorbar(args.dims, t.mean(1), yerr=t.std(1), marker="o", capsize=3, label=name)
        u = np.array(unsafe[name])
        dd.plot(args.dims, u.mean(1), marker="o", label=name)
    c.set_xlabel("dimension d")
    c.set_ylabel("stopping time τ")
    c.set_title("(c) stopping time vs d")
    c.legend()
    dd.set_xlabel("dimension d")
    dd.set_ylabel("fraction of unsafe pulls")
    dd.set_title("(d) safety vs d")
    dd.legend()
    for x in (a, b, c, dd):
        x.grid(alpha=0.3)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"\nFigure: {Path(args.out).relative_to(ROOT) if Path(args.out).is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
