"""Check that the compiled adaptive step and the shared design cache change no record:
every CBAI algorithm (adaptive and round-based) × regime × instance × seed gives the same
outcome (queries, answer, stop) and the same trace under this checkout and under a
baseline checkout (the commit before the change). Round-based algorithms also run at
R = 1 (``--subgaussian 1``, the paper's setting, where ACOL's rounds are long).

    git worktree add --detach /tmp/base <commit>
    python benchmarks/check_kernel.py --baseline /tmp/base --seeds 20
    python benchmarks/check_kernel.py --baseline /tmp/base --seeds 20 --threads-from 0

Each checkout runs in its own process (``PYTHONPATH`` = the checkout) through
:func:`cbai_cli.run.solving.solve_instance`, the library call of ``cbai solve``; seed 0 of
every case is also run with a trace (the per-step ask/tell loop with an observer), the
other seeds without (the compiled run where the algorithm has a kernel code). Prints one
line per differing case and a summary; exit code 1 when anything differs.

``--threads-from N`` runs this checkout with every pass over an arm set of K·d ≥ N split
across numba's threads (``cbai_cli.numerics.kernels.threads.THREADS_FROM`` replaced in the emitting
process only; 0: every pass, so that the split code meets every case).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ("instances/irrelevant-dims-d10-eps0.05.yaml", "instances/random-d5-n20-seed0.yaml",
             "instances/unit-sphere-d30-n30-seed0.npz")
#: Options per regime (tuned needs β) and the budget that caps the slow cases.
REGIME_OPTIONS = {"tuned": {"beta": 0.25}}
#: Option variants per style: round-based algorithms at the file's σ and at R = 1, without
#: a budget (their runs are a few rounds; a budget would cut ACOL's first round at R = 1).
STYLE_VARIANTS = {"adaptive": ({},), "round": ({"budget": None}, {"budget": None, "subgaussian": 1.0})}


def large_instance(directory: Path) -> Path:
    """A random instance whose arm matrix takes the streaming path (K·d ≥ 2¹⁸, d ≥ 32)."""
    path = directory / "large.npz"
    subprocess.run([sys.executable, "-m", "cbai_cli", "generate", "random", "--n", "8300", "--d", "32",
                    "--seed", "3", "-o", str(path)], check=True, capture_output=True)
    return path


def emit(instances: list[str], seeds: int, budget: int) -> list[dict]:
    """The outcome of every case under the checkout on ``PYTHONPATH`` (round-based
    algorithms not on the large instance, the streaming path's case, where their design
    solves take seconds)."""
    from cbai_cli.algorithms.registry import entries
    from cbai_cli.kinds import load
    from cbai_cli.run.simulate import RunRequest
    from cbai_cli.run.solving import solve_instance

    rows = []
    for path in instances:
        instance = load(path)
        for name, spec in entries().items():
            if "cbai" not in spec.kinds or (spec.style == "round" and path.endswith("large.npz")):
                continue
            for regime in spec.regimes:
                for variant in STYLE_VARIANTS[spec.style]:
                    options = {**REGIME_OPTIONS.get(regime, {}), "budget": budget, **variant}
                    request = RunRequest.of(name, regime, **options)
                    outcome = solve_instance(instance, request, range(seeds), bound=False)
                    traced = solve_instance(instance, request, [0], trace=True, bound=False)
                    trace = hashlib.sha256(repr(traced.trace_rows).encode()).hexdigest()[:16]
                    rows.append({"instance": Path(path).name, "algorithm": name, "regime": regime,
                                 "options": {key: value for key, value in variant.items() if value is not None},
                                 "trace": trace,
                                 "runs": [(r.seed, r.iterations, r.recommended, r.stopped) for r in outcome.results],
                                 "traced_run": [(r.iterations, r.recommended, r.stopped) for r in traced.results]})
    return rows


def run_checkout(checkout: Path, instances: list[str], seeds: int, budget: int,
                 threads_from: int | None = None) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    command = [sys.executable, __file__, "--emit", "--seeds", str(seeds), "--budget", str(budget), *instances]
    if threads_from is not None:
        command[3:3] = ["--threads-from", str(threads_from)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="checkout to compare with")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--threads-from", type=int, help="split passes from this K·d on (this checkout only)")
    parser.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("instances", nargs="*")
    args = parser.parse_args()
    if args.emit:
        if args.threads_from is not None:
            from cbai_cli.numerics.kernels import threads

            threads.THREADS_FROM = args.threads_from  # this emitting process only
        json.dump(emit(args.instances, args.seeds, args.budget), sys.stdout)
        return 0
    with tempfile.TemporaryDirectory() as directory:
        instances = [str(ROOT / path) for path in INSTANCES] + [str(large_instance(Path(directory)))]
        ours = run_checkout(ROOT, instances, args.seeds, args.budget, args.threads_from)
        theirs = run_checkout(args.baseline, instances, args.seeds, args.budget)
    differing = [(a, b) for a, b in zip(ours, theirs) if a != b]
    for a, b in differing:
        print(f"DIFFERS {a['instance']} {a['algorithm']} {a['regime']}: {a} != {b}")
    runs = sum(len(row["runs"]) + 1 for row in ours)
    threads = "" if args.threads_from is None else f", passes split from K·d = {args.threads_from} on"
    print(f"{len(ours) - len(differing)} of {len(ours)} cases equal ({runs} runs, {args.seeds} seeds + 1 traced each, "
          f"budget {args.budget}{threads}; {len(ours) == len(theirs) and 'same' or 'DIFFERENT'} case lists)")
    return 1 if differing or len(ours) != len(theirs) else 0


if __name__ == "__main__":
    sys.exit(main())
