"""Wall time of the safe-bandit algorithms (not run by CI).

Usage (from the repository root)::

    python benchmarks/bench_safe.py              # full sizes: T = 10^5, 5 BAI runs each
    python benchmarks/bench_safe.py --quick      # T = 2·10^4, 2 BAI runs each

Times, as a Markdown table:

- Safe-LUCB on the 2-D box: full runs of instance A (T' = 10^4) and instance B (T' = 0,
  with and without the confidence-set intersection), wall and CPU time (runs through
  ``cbai_cli.run.simulate.run_once``, so they include the kind's scoring: the regret curve and
  whether x* lies in the estimated safe set each round); and the CPU cost of
  one phase-2 round for each optimistic-step method (square clipping, vectorised vertex
  enumeration, qhull, HiGHS LPs). CPU time is reported because wall time on a shared
  machine depends on the load;
- LinGapE and Safe-LinGapE (static/dynamic, greedy/ratio) on the default Price-of-Safety
  instance (d = 3, ω = 0.1).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

# Use this checkout's package even when another cbai is installed in the environment.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cbai_cli.contracts.protocol import Answer
from cbai_cli.kinds.safe.files import SafeBaiInstance, SafeRegretInstance
from cbai_cli.kinds.safe.paper_instances import TABLE1_RUNS, instance_a, instance_b, price_of_safety_instance
from cbai_cli.algorithms.safe.safe_lucb import SafeLUCB, SafeLUCBConfig
from cbai_cli.run.simulate import RunRequest, prepare, run_once, spawned_streams


def with_vertex_method(prepared, method: str):
    """``prepared`` with Safe-LUCB's optimistic step computed by ``method`` (a library
    setting that no run option exposes)."""
    config = dataclasses.replace(prepared.config, vertex_method=method)
    return dataclasses.replace(prepared, configured=dataclasses.replace(prepared.configured, config=config))


def timed_run(prepared, seed=0):
    """Wall and CPU seconds of one :func:`cbai_cli.run.simulate.run_once`, seeded by
    ``numpy.random.default_rng(seed)``, and its result."""
    w0, c0 = time.perf_counter(), time.process_time()
    r = run_once(prepared, seed, streams=spawned_streams(np.random.default_rng(seed)))
    return time.perf_counter() - w0, time.process_time() - c0, r


def phase2_cpu_per_round(problem, config, rounds, seed=0):
    """CPU µs per phase-2 round (ask + tell), timing only the phase-2 loop."""
    alg = SafeLUCB(problem.learner_view(), config, np.random.default_rng(seed))
    noise = np.random.default_rng(seed + 1).standard_normal(problem.setting.T) * problem.noise_sd
    t = 0
    while alg.phase == 1:
        query = alg.ask()
        alg.tell(query, Answer(np.array([float(problem.mu_star @ query.action + noise[t])])))
        t += 1
    c0 = time.process_time()
    for _ in range(rounds):
        query = alg.ask()
        alg.tell(query, Answer(np.array([float(problem.mu_star @ query.action + noise[t])])))
        t += 1
    return (time.process_time() - c0) / rounds * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    T = 20_000 if args.quick else 100_000
    runs = 2 if args.quick else 5

    print("## Safe-LUCB, instance A (2-D box), full runs\n")
    print("| instance | T | T' | vertex method | wall s | CPU s | unsafe |")
    print("|---|---|---|---|---|---|---|")
    for name, p, Tp, method, inter in [
        ("A", instance_a(T=T), 10_000, "auto (clip)", False),
        ("A", instance_a(T=T), 10_000, "enumerate", False),
        ("B", instance_b(T=T), 0, "auto (clip)", False),
        ("B", instance_b(T=T), 0, "auto (clip) + intersect", True),
    ]:
        request = RunRequest.of("safe-lucb", exploration=str(Tp), dw="ellipsoid", intersect=inter)
        wall, cpu, r = timed_run(with_vertex_method(prepare(request, SafeRegretInstance(p)), method.split()[0]))
        print(f"| {name} | {p.setting.T} | {Tp} | {method} | {wall:.1f} | {cpu:.1f} | {r.violations} |")
    print("\n### CPU µs per phase-2 round (instance A, T' = 10^4)\n")
    print("| vertex method | rounds timed | CPU µs / round |")
    print("|---|---|---|")
    pa = instance_a(T=T)
    for method, n in [("clip", 5000), ("enumerate", 5000), ("qhull", 2000), ("lp", 300)]:
        us = phase2_cpu_per_round(pa, SafeLUCBConfig(exploration=10_000, dw="ellipsoid", vertex_method=method), n)
        print(f"| {method} | {n} | {us:.0f} |")
    print()

    print("## LinGapE / Safe-LinGapE (Price-of-Safety instance, d = 3, ω = 0.1)\n")
    print("| algorithm | runs | mean τ | mean wall s | CPU µs / pull |")
    print("|---|---|---|---|---|")
    instance = SafeBaiInstance(price_of_safety_instance())
    requests = [RunRequest.of(algorithm, **options) for algorithm, options in TABLE1_RUNS]
    for request in requests:
        prepared = prepare(request, instance)
        taus, walls, cpus = [], [], []
        for seed in range(runs):
            wall, cpu, r = timed_run(prepared, seed)
            walls.append(wall)
            cpus.append(cpu)
            taus.append(r.iterations)
        print(f"| {r.variant} | {runs} | {np.mean(taus):.0f} | {np.mean(walls):.2f} | "
              f"{np.sum(cpus) / np.sum(taus) * 1e6:.0f} |")


if __name__ == "__main__":
    main()
