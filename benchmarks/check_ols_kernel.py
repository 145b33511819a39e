"""Check that the compiled ``ols`` step (cbai_cli/numerics/kernels/ols.py) changes no record: every
``ALGO:ols`` spec of benchmarks/guaranteed.py on its four instances gives the same queries,
answer and stop for every seed under this checkout and under a baseline checkout, and
says how far the intervals drift apart in the last bits.

    git worktree add --detach /tmp/base-olsjit <commit before the kernel>
    python benchmarks/check_ols_kernel.py --baseline /tmp/base-olsjit [--seeds 20] [--fresh]

``--fresh``: guaranteed.py's ``--fresh`` instances (nobody tuned on them) instead of the four.

Each checkout runs in its own process (``PYTHONPATH`` = the checkout): the seeds through
:func:`cbai_cli.run.solving.solve_instance` (the library call of ``cbai solve``), and for
``--traced`` specs seed 0 once more with ``--trace`` (rows compared exactly) and once
step by step, keeping l(x) and u(x) of every arm after every step (at most ``--steps``):
the largest difference between the checkouts relative to the interval's width
max(u − l, |l|, |u|) is printed per traced run. Exit code 1 when a record or trace differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from guaranteed import INSTANCES, fresh_instances, guaranteed_specs  # noqa: E402


def ols_specs() -> list[str]:
    """Every guaranteed ``ALGO:ols`` spec, in registry order."""
    return [spec for spec in guaranteed_specs() if spec.endswith(":ols")]


def bounds_path(directory: Path, index: int, spec: str) -> Path:
    return directory / f"{index}-{spec.replace(':', '-')}.npz"


def step_bounds(prepared, steps: int) -> np.ndarray:
    """(n, 2, K) l and u after each of the first n ≤ ``steps`` steps of seed 0."""
    from cbai_cli.run.simulate import run_streams

    noise_rng, algorithm_rng, _ = run_streams(0)
    learner = prepared.make_algorithm(algorithm_rng)
    environment = prepared.kind.environment(prepared.instance, noise_rng)
    rows = []
    while len(rows) < steps and not learner.done:
        query = learner.ask()
        learner.tell(query, environment.answer(query))
        rows.append((learner.state.last_lower.copy(), learner.state.last_upper.copy()))
    return np.array(rows)


def instances(fresh: bool) -> list[tuple[str, str]]:
    """(label, compare source) of the instances checked."""
    return [(source, source) for source in fresh_instances()] if fresh else list(INSTANCES)


def emit(seeds: int, budget: int, traced: list[str], steps: int, directory: Path, fresh: bool) -> list[dict]:
    """The records of every case under the checkout on ``PYTHONPATH``; the traced runs'
    bounds go to ``directory``."""
    from cbai_cli.compare.sources import parse_source
    from cbai_cli.run.simulate import RunRequest, prepare
    from cbai_cli.run.solving import solve_instance

    rows = []
    for index, (label, source) in enumerate(instances(fresh)):
        instance = parse_source(source, 0)[0].instance_for(0)
        for spec in ols_specs():
            name, regime = spec.split(":")
            request = RunRequest.of(name, regime, budget=budget, delta=0.05)
            outcome = solve_instance(instance, request, range(seeds), bound=False)
            row = {"instance": label, "spec": spec,
                   "runs": [(r.seed, r.iterations, r.recommended, r.stopped) for r in outcome.results]}
            if spec in traced:
                row["trace"] = repr(solve_instance(instance, request, [0], trace=True, bound=False).trace_rows)
                np.savez(bounds_path(directory, index, spec), bounds=step_bounds(prepare(request, instance), steps))
            rows.append(row)
    return rows


def run_checkout(checkout: Path, args, directory: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    command = [sys.executable, __file__, "--emit", str(directory), "--seeds", str(args.seeds), "--budget",
               str(args.budget), "--traced", args.traced, "--steps", str(args.steps)] + ["--fresh"] * args.fresh
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def collect(process: subprocess.Popen, checkout: Path) -> list[dict]:
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{checkout}: {err.strip().splitlines()[-1]}")
    return json.loads(out)


def relative_difference(ours: np.ndarray, theirs: np.ndarray) -> float:
    """max |ours − theirs| / max(u − l, |l|, |u|) over the finite bounds (infinite ones must agree)."""
    if ours.shape != theirs.shape:
        return float("inf")
    finite = np.isfinite(ours) & np.isfinite(theirs)
    if not np.array_equal(np.isfinite(ours), np.isfinite(theirs)) or not np.array_equal(ours[~finite], theirs[~finite]):
        return float("inf")
    scale = np.maximum(np.abs(ours), np.abs(theirs))
    width = np.where(np.isfinite(ours[:, 1] - ours[:, 0]), ours[:, 1] - ours[:, 0], 0.0)[:, None, :]
    scale = np.maximum(scale, width)
    gap = np.abs(np.subtract(ours, theirs, out=np.zeros_like(ours), where=finite))
    return float(np.max(np.divide(gap, scale, out=np.zeros_like(gap), where=scale > 0), initial=0.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="checkout to compare with")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=2_000_000)
    parser.add_argument("--traced", default="track-and-stop:ols,g-acol:ols,maxrew-u:ols",
                        help="specs whose seed 0 is also traced and compared step by step")
    parser.add_argument("--steps", type=int, default=20_000, help="steps of the step-by-step comparison")
    parser.add_argument("--fresh", action="store_true", help="guaranteed.py's --fresh instances instead of the four")
    parser.add_argument("--emit", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit:
        json.dump(emit(args.seeds, args.budget, args.traced.split(","), args.steps, args.emit, args.fresh), sys.stdout)
        return 0
    labels = [label for label, _ in instances(args.fresh)]
    with tempfile.TemporaryDirectory() as ours_dir, tempfile.TemporaryDirectory() as theirs_dir:
        running = [run_checkout(ROOT, args, Path(ours_dir)), run_checkout(args.baseline, args, Path(theirs_dir))]
        ours, theirs = collect(running[0], ROOT), collect(running[1], args.baseline)
        differing = 0
        for index, (a, b) in enumerate(zip(ours, theirs)):
            same = a == b
            differing += not same
            line = f"{'same' if same else 'DIFFERS'} {a['instance']} {a['spec']}: {len(a['runs'])} runs"
            if "trace" in a:
                position = labels.index(a["instance"])
                mine = np.load(bounds_path(Path(ours_dir), position, a["spec"]))["bounds"]
                base = np.load(bounds_path(Path(theirs_dir), position, a["spec"]))["bounds"]
                line += (f", trace {'equal' if a['trace'] == b['trace'] else 'DIFFERENT'}; l, u over "
                         f"{len(mine)} steps: max difference {relative_difference(mine, base):.1e} of the width")
            print(line, flush=True)
    print(f"{len(ours) - differing} of {len(ours)} cases equal ({args.seeds} seeds each, budget {args.budget:,}); "
          f"{'same' if len(ours) == len(theirs) else 'DIFFERENT'} case lists")
    return 1 if differing or len(ours) != len(theirs) else 0


if __name__ == "__main__":
    sys.exit(main())
