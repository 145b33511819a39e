"""Wall time of the safe-bandit algorithms (not run by CI).

Usage (from the repository root)::

    python benchmarks/bench_safe.py              # full sizes: T = 10^5, 5 BAI runs each
    python benchmarks/bench_safe.py --quick      # T = 2·10^4, 2 BAI runs each

Times, as a Markdown table:

- Safe-LUCB on the 2-D box, instance A, T' = 10^4 (phase 2 with every optimistic-step
  method: vectorised vertex enumeration, qhull, HiGHS LPs — the last two on a shorter run),
  and instance B with T' = 0 with and without the confidence-set intersection;
- LinGapE and Safe-LinGapE (static/dynamic, greedy/ratio) on the default Price-of-Safety
  instance (d = 3, ω = 0.1).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# Use this checkout's package even when another cbai is installed in the environment.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cbai_cli.safe.environment import run_safe_bai, run_safe_regret
from cbai_cli.safe.lingape import LinGapEConfig
from cbai_cli.safe.problems import instance_a, instance_b, price_of_safety_instance
from cbai_cli.safe.safe_lingape import SafeLinGapEConfig
from cbai_cli.safe.safe_lucb import SafeLUCBConfig


def time_regret(problem, config, seed=0):
    t0 = time.perf_counter()
    r = run_safe_regret(problem, config, np.random.default_rng(seed), track_x_star=False)
    return time.perf_counter() - t0, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    T = 20_000 if args.quick else 100_000
    runs = 2 if args.quick else 5

    print("## Safe-LUCB (2-D box)\n")
    print("| instance | T | T' | method | wall s | µs / round | µs / phase-2 round | unsafe |")
    print("|---|---|---|---|---|---|---|---|")
    # Phase-1 cost alone, to separate it from the optimistic step.
    t_explore, _ = time_regret(instance_a(T=10_000), SafeLUCBConfig(exploration=10_000, dw="ellipsoid"))
    cases = [
        ("A", instance_a(T=T), 10_000, "enumerate", False),
        ("A", instance_a(T=min(T, 20_000)), 10_000, "qhull", False),
        ("A", instance_a(T=min(T, 12_000)), 10_000, "lp", False),
        ("B", instance_b(T=T), 0, "enumerate", False),
        ("B", instance_b(T=T), 0, "enumerate + intersect", True),
    ]
    for name, p, Tp, method, inter in cases:
        cfg = SafeLUCBConfig(exploration=Tp, dw="ellipsoid", vertex_method=method.split()[0], intersect=inter)
        wall, r = time_regret(p, cfg)
        phase2 = p.T - Tp
        per2 = (wall - (t_explore if Tp == 10_000 else 0.0)) / phase2 * 1e6
        print(f"| {name} | {p.T} | {Tp} | {method} | {wall:.1f} | {wall / p.T * 1e6:.0f} | {per2:.0f} | {r.n_unsafe} |")
    print(f"\n(phase 1 alone: {t_explore:.2f} s for 10^4 rounds)\n")

    print("## LinGapE / Safe-LinGapE (Price-of-Safety instance, d = 3, ω = 0.1)\n")
    print("| algorithm | runs | mean τ | mean wall s | µs / pull |")
    print("|---|---|---|---|---|")
    p = price_of_safety_instance()
    configs = [
        LinGapEConfig.from_safe_setting(p.learner_view()),
        LinGapEConfig.from_safe_setting(p.learner_view(), rule="ratio"),
        SafeLinGapEConfig(),
        SafeLinGapEConfig(update="dynamic"),
        SafeLinGapEConfig(rule="ratio"),
        SafeLinGapEConfig(rule="ratio", update="dynamic"),
    ]
    for cfg in configs:
        taus, walls = [], []
        for seed in range(runs):
            t0 = time.perf_counter()
            r = run_safe_bai(p, cfg, np.random.default_rng(seed))
            walls.append(time.perf_counter() - t0)
            taus.append(r.stopping_time)
        print(f"| {r.algorithm} | {runs} | {np.mean(taus):.0f} | {np.mean(walls):.2f} | "
              f"{np.sum(walls) / np.sum(taus) * 1e6:.0f} |")


if __name__ == "__main__":
    main()
