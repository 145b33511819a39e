"""Speed of the Driver environment: roll-outs, one CEM, building candidate policies.

Not run by CI. Usage (from the repository root)::

    python benchmarks/bench_driver.py                # n = 1000 policies with 2 workers
    python benchmarks/bench_driver.py --n 100 --jobs 2 --extrapolate 1000
    python benchmarks/bench_driver.py --cli-only     # just `cbai driver-arms --n 1000 --jobs 2`

The last row times the whole command in a fresh process (interpreter start,
imports, n CEM runs, evaluation in the scenario, writing the NPZ), as a user
would run it.

Prints a Markdown table. Times are wall-clock medians (``time.perf_counter``).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cbai_cli.driver.bandit import build_bandit  # noqa: E402
from cbai_cli.driver.cem import CEMConfig, Problem, cross_entropy  # noqa: E402
from cbai_cli.driver.duplicates import count_distinct  # noqa: E402
from cbai_cli.driver.dynamics import rollout  # noqa: E402
from cbai_cli.driver.features import policy_features  # noqa: E402
from cbai_cli.driver.policies import build_policies  # noqa: E402
from cbai_cli.driver.scenarios import scenario  # noqa: E402


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its finished worker processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def print_header() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Driver benchmark: Python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} cores, 1-min load average at the end {load:.1f}"
    )


def time_command(n: int, jobs: int, seed: int) -> tuple[str, str, str]:
    """Wall time of ``cbai driver-arms --n N --jobs J`` in a fresh process, end to end."""
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "arms.npz"
        command = [sys.executable, "-m", "cbai_cli", "driver-arms", "--n", str(n), "--seed", str(seed),
                   "--jobs", str(jobs), "-o", str(output), "--quiet"]
        # Run this checkout's package, whatever is installed.
        env = {**os.environ, "PYTHONPATH": str(repo)}
        start, cpu = time.perf_counter(), cpu_seconds()
        subprocess.run(command, check=True, cwd=repo, env=env)
        wall, used = time.perf_counter() - start, cpu_seconds() - cpu
        size = output.stat().st_size
    return (
        f"`cbai driver-arms --n {n} --jobs {jobs}` end to end",
        fmt(wall),
        f"fresh process, writes a {size / 1e6:.1f} MB NPZ; CPU {fmt(used)} incl. workers",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="candidate policies to build (default 1000)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--extrapolate", type=int, default=None, help="also report the time scaled to this n")
    parser.add_argument("--repeat", type=int, default=20, help="repetitions of the small timings")
    parser.add_argument("--serial-n", type=int, default=100, help="policies built with jobs = 1 for comparison (0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-cli", action="store_true", help="skip timing the `cbai driver-arms` command")
    parser.add_argument("--cli-only", action="store_true", help="only time the `cbai driver-arms` command")
    args = parser.parse_args()

    if args.cli_only:
        print_header()
        print()
        print("| what | time | note |")
        print("| --- | --- | --- |")
        print("| " + " | ".join(time_command(args.n, args.jobs, args.seed)) + " |")
        return

    base = scenario("base")
    env = base.environment
    rng = np.random.default_rng(args.seed)
    actions = rng.uniform(-1, 1, size=(50, 20, 2))

    rows: list[tuple[str, str, str]] = []
    t = median_time(lambda: rollout(env.agent_start, actions), args.repeat * 10)
    rows.append(("roll-out, 50 policies x 20 steps", fmt(t), "dynamics only"))
    t = median_time(lambda: policy_features(actions, env), args.repeat * 10)
    rows.append(("roll-out + features, 50 policies", fmt(t), "one CEM iteration's evaluation"))
    big = rng.uniform(-1, 1, size=(1000, 20, 2))
    t = median_time(lambda: policy_features(big, env), args.repeat)
    rows.append(("roll-out + features, 1000 policies", fmt(t), "evaluating an arm set"))

    problem = Problem(base.theta, base.phi, base.tau)
    seeds = iter(range(10**6))
    t_cem = median_time(lambda: cross_entropy(env, problem, np.random.default_rng(next(seeds))), args.repeat)
    rows.append(
        ("one constrained CEM (50 x 50 = 2500 roll-outs)", fmt(t_cem), "base scenario, defaults")
    )

    if args.serial_n:
        start, cpu = time.perf_counter(), cpu_seconds()
        build_policies(args.serial_n, args.seed, jobs=1)
        t_serial, c_serial = time.perf_counter() - start, cpu_seconds() - cpu
        rows.append(
            (
                f"build n = {args.serial_n} policies, jobs = 1",
                fmt(t_serial),
                f"{fmt(t_serial / args.serial_n)} per policy; CPU {fmt(c_serial)}",
            )
        )
    start, cpu = time.perf_counter(), cpu_seconds()
    policies = build_policies(args.n, args.seed, jobs=args.jobs, config=CEMConfig())
    t_build, c_build = time.perf_counter() - start, cpu_seconds() - cpu
    rows.append(
        (
            f"build n = {args.n} policies, jobs = {args.jobs}",
            fmt(t_build),
            f"{fmt(t_build / args.n)} per policy; CPU {fmt(c_build)} incl. workers",
        )
    )
    if args.extrapolate:
        rows.append(
            (
                f"build n = {args.extrapolate} (extrapolated)",
                fmt(t_build / args.n * args.extrapolate),
                f"linear from n = {args.n}",
            )
        )
    start = time.perf_counter()
    bandit = build_bandit(policies.actions, "base")
    rows.append((f"build_bandit, n = {args.n}", fmt(time.perf_counter() - start), "evaluate + fold + rescale"))

    if not args.no_cli:
        rows.append(time_command(args.n, args.jobs, args.seed))

    print_header()
    print()
    print("| what | time | note |")
    print("| --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print(
        f"distinct policies: {count_distinct(policies.actions)} / {args.n}; "
        f"distinct arms (base): {count_distinct(bandit.arms)}; "
        f"feasible in base: {int(bandit.feasible.sum())}; "
        f"CEM solutions feasible for their own problem: {int(policies.feasible.sum())}"
    )


if __name__ == "__main__":
    main()
