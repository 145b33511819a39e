"""Time per adaptive step as K and d grow (not run by CI).

Usage: python benchmarks/bench_adaptive.py [--steps 2000]

Each cell runs an adaptive algorithm with the tuned regime at radius 10, so that
nothing is decided and every step does the full work, on random Gaussian arms, and
reports the mean wall time of one ask/answer/tell step.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cbai_cli.instance import Instance
from cbai_cli.noise import GaussianNoise
from cbai_cli.kinds.cbai import Environment
from cbai_cli.simulate import RunRequest, prepare


def step_time(k: int, d: int, steps: int, algorithm: str = "g-acol") -> float:
    rng = np.random.default_rng(0)
    arms = rng.standard_normal((k, d))
    instance = Instance(name="bench", arms=arms, reward=rng.standard_normal(d), constraint=rng.standard_normal(d) * 0.01,
                        threshold=0.0, noise=GaussianNoise(1.0))
    prepared = prepare(RunRequest.of(algorithm, "tuned", beta=100.0), instance)
    algo = prepared.make_algorithm(np.random.default_rng(1))
    env = Environment(instance.problem.arms, instance.truth, np.random.default_rng(2))
    for _ in range(50):  # warm-up
        query = algo.ask()
        algo.tell(query, env.answer(query))
    start = time.perf_counter()
    for _ in range(steps):
        query = algo.ask()
        algo.tell(query, env.answer(query))
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    print("| algorithm | K | d | µs per step |")
    print("|---|---:|---:|---:|")
    for k in (100, 1000, 10_000, 100_000):
        print(f"| g-acol | {k} | 10 | {1e6 * step_time(k, 10, args.steps if k < 100_000 else args.steps // 10):.1f} |")
    for d in (5, 20, 50, 100, 200):
        print(f"| g-acol | 1000 | {d} | {1e6 * step_time(1000, d, args.steps):.1f} |")
    for name in ("greedy-maxvar", "adaptive-uniform", "g-acol-uniform", "maxrew-u"):
        print(f"| {name} | 1000 | 10 | {1e6 * step_time(1000, 10, args.steps, name):.1f} |")


if __name__ == "__main__":
    main()
