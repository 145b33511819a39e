"""Sweeps of many seeds: µs per query of today's single-run path against the two
measurement prototypes of benchmarks/sweep_prototypes/ (issue 13, part 1). Not run by CI.

    python benchmarks/bench_sweep.py [--repeats 3] [--seeds 100] [--only small|large] [--numba-path DIR]
    python benchmarks/bench_sweep.py --check        # prototypes against `cbai solve --json`

Rows, for every case:

- ``current``: ``run_once`` per seed, what ``cbai compare`` and ``solve --runs`` do today;
- ``lockstep B``: :mod:`sweep_prototypes.lockstep`, the seeds in batches of B runs;
- ``numba single``, ``numba batch B``: :mod:`sweep_prototypes.compiled`, one run or B runs
  per compiled call (needs numba: ``pip install --target DIR numba llvmlite`` and
  ``--numba-path DIR``; cbai does not depend on it);
- ``numba … plain loops``: the products as loops summed left to right instead of BLAS
  calls (cheaper on tiny arrays, slower on wide ones; rounds differently, not exact);
- ``lockstep gemm B`` (large cases): one (B, d) × (d, K) product per step instead of B
  gemv; reads the arm matrix once for all runs but rounds differently (not exact).

µs per query = wall seconds of the whole sweep / queries of all its runs, the minimum
over ``--repeats`` rounds in which the rows run interleaved (the machine is shared:
the minimum is the least disturbed round). Every row's outcomes (queries, answer, how
it stopped) are compared with the current path's: the column ``same`` says whether all
agree. BLAS is pinned to one thread before numpy loads. Numba's import and compile
times are measured in fresh processes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

#: (label, generator family and parameters or a random arm set, algorithm, regime, options, budget of the
#: timed runs or None). The long cases are timed on their first queries (the cost of a query does not
#: depend on how long a run goes on); ``--check`` runs them to the end.
SMALL = [
    ("irrelevant-dims d=10, G-ACOL theory", ("irrelevant-dims", {"d": 10, "eps": 0.05}), "g-acol", "theory", {},
     None),
    ("irrelevant-dims d=10, G-ACOL det", ("irrelevant-dims", {"d": 10, "eps": 0.05}), "g-acol", "det", {}, None),
    ("irrelevant-dims d=10, G-ACOL tuned", ("irrelevant-dims", {"d": 10, "eps": 0.05}), "g-acol", "tuned",
     {"beta": 0.25}, None),
    ("irrelevant-dims d=10, G-ACOL theory R=1", ("irrelevant-dims", {"d": 10, "eps": 0.05}), "g-acol", "theory",
     {"subgaussian": 1.0}, 2000),
    ("unit-sphere d=10 n=20, G-ACOL theory", ("unit-sphere", {"d": 10, "n": 20, "seed": 0}), "g-acol", "theory", {},
     None),
    ("irrelevant-dims d=40, Greedy MaxVar theory", ("irrelevant-dims", {"d": 40, "eps": 0.05}), "greedy-maxvar",
     "theory", {}, 2000),
    ("unit-sphere d=30 n=50, G-ACOL theory", ("unit-sphere", {"d": 30, "n": 50, "seed": 0}), "g-acol", "theory", {},
     2000),
]
#: Random Gaussian arms, tuned radius 10 so that nothing is decided: every step does the full work.
LARGE = [
    ("random K=10^4 d=30, G-ACOL", ("random-arms", {"k": 10_000, "d": 30}), "g-acol", "tuned",
     {"beta": 100.0}, 300),
    ("random K=10^4 d=100, G-ACOL", ("random-arms", {"k": 10_000, "d": 100}), "g-acol", "tuned",
     {"beta": 100.0}, 100),
    ("random K=10^5 d=100, G-ACOL", ("random-arms", {"k": 100_000, "d": 100}), "g-acol", "tuned",
     {"beta": 100.0}, 20),
]


def make_instance(source):
    import numpy as np

    from cbai_cli.generators import generate_instance
    from cbai_cli.instance import Instance
    from cbai_cli.noise import GaussianNoise

    family, params = source
    if family != "random-arms":
        return generate_instance(family, **params)
    rng = np.random.default_rng(0)
    k, d = params["k"], params["d"]
    return Instance(name=f"random-arms-k{k}-d{d}", arms=rng.standard_normal((k, d)), reward=rng.standard_normal(d),
                    constraint=rng.standard_normal(d) * 0.01, threshold=0.0, noise=GaussianNoise(1.0))


def rows_for(large: bool, seeds: int, have_numba: bool):
    """(row name, function of (prepared, setup, seeds) → outcomes)."""
    from sweep_prototypes.common import Outcome
    from sweep_prototypes.lockstep import run_lockstep

    from cbai_cli.simulate import run_once

    def current(prepared, setup, seed_list):
        return [Outcome(r.seed, r.iterations, r.recommended, r.stopped) for r in
                (run_once(prepared, seed) for seed in seed_list)]

    rows = [("current (run_once per seed)", current)]
    batches = (1, 10) if large else (1, 10, 100)
    rows += [(f"lockstep B={b}", lambda p, s, seed_list, b=b: run_lockstep(s, seed_list, batch=b))
             for b in batches if b <= seeds]
    if large:
        rows += [("lockstep gemm B=10 (not exact)",
                  lambda p, s, seed_list: run_lockstep(s, seed_list, batch=10, products="gemm"))]
    if have_numba:
        from sweep_prototypes.compiled import run_compiled

        rows += [("numba single", lambda p, s, seed_list: run_compiled(s, seed_list, batch=1))]
        rows += [(f"numba batch B={b}", lambda p, s, seed_list, b=b: run_compiled(s, seed_list, batch=b))
                 for b in batches[1:] if b <= seeds]
        rows += [("numba batch B=10, plain loops (not exact)",
                  lambda p, s, seed_list: run_compiled(s, seed_list, batch=10, exact=False))]
    return rows


def sweep_table(cases, large: bool, args, have_numba: bool) -> None:
    from sweep_prototypes.common import Setup

    from cbai_cli.simulate import RunRequest, prepare

    seeds = min(args.seeds, 10) if large else args.seeds
    for label, source, algorithm, regime, options, budget in cases:
        instance = make_instance(source)
        prepared = prepare(RunRequest.of(algorithm, regime, budget=budget, **options), instance)
        setup = Setup.from_prepared(prepared)
        seed_list = list(range(seeds))
        rows = rows_for(large, seeds, have_numba)
        for name, function in rows[1:]:  # warm-up: numba loads or compiles, caches fill
            function(prepared, setup, seed_list[:2])
        best = {name: float("inf") for name, _ in rows}
        outcomes = {}
        for _ in range(args.repeats):
            for name, function in rows:
                started = time.perf_counter()
                outcomes[name] = function(prepared, setup, seed_list)
                best[name] = min(best[name], time.perf_counter() - started)
        reference = outcomes[rows[0][0]]
        queries = sum(outcome.iterations for outcome in reference)
        capped = f", runs capped at {budget} queries" if budget else ""
        print(f"\n{label}{capped}: K = {setup.n_arms}, d = {setup.dim}, {seeds} seeds, {queries:,} queries "
              f"(median {sorted(o.iterations for o in reference)[seeds // 2]:,} a run)")
        print("| path | µs per query | speed-up | same outcomes |")
        print("|---|---:|---:|---|")
        base = best[rows[0][0]]
        for name, _ in rows:
            same = "yes" if outcomes[name] == reference else "NO"
            print(f"| {name} | {1e6 * best[name] / queries:,.2f} | {base / best[name]:.1f}× | {same} |", flush=True)


def numba_costs(numba_path: str | None) -> None:
    """Import, first-call (compile) and cached-load times of the compiled prototype, each in a fresh process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [numba_path, HERE, os.path.dirname(HERE),
                                                                      os.environ.get("PYTHONPATH")])))

    def seconds(code: str, extra_env=None) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env={**env, **(extra_env or {})})
        return time.perf_counter() - started

    first_run = ("from sweep_prototypes.common import Setup; from sweep_prototypes.compiled import run_compiled;"
                 "from cbai_cli.generators import generate_instance; from cbai_cli.simulate import RunRequest, prepare;"
                 "p = prepare(RunRequest.of('g-acol', 'tuned', beta=0.25), generate_instance('irrelevant-dims', d=3, "
                 "eps=0.1)); run_compiled(Setup.from_prepared(p), [0])")
    baseline = ("from sweep_prototypes.common import Setup; from cbai_cli.generators import generate_instance;"
                "from cbai_cli.simulate import RunRequest, prepare; import numpy")
    python = min(seconds("pass") for _ in range(3))
    with_numpy = min(seconds(baseline) for _ in range(3))
    imported = min(seconds("import numba") for _ in range(3))
    with tempfile.TemporaryDirectory() as cache:
        cold = [seconds(first_run, {"NUMBA_CACHE_DIR": cache + f"/{i}"}) for i in range(2)]
        warm = [seconds(first_run, {"NUMBA_CACHE_DIR": cache + "/0"}) for _ in range(3)]
    print("\nnumba, fresh processes, minimum of repeats:")
    print("| what | seconds |")
    print("|---|---:|")
    print(f"| `import numba` (beyond starting Python) | {imported - python:.2f} |")
    print(f"| first compiled run, empty cache (beyond importing cbai and numpy) | {min(cold) - with_numpy:.2f} |")
    print(f"| first compiled run, cache on disk (beyond importing cbai and numpy) | {min(warm) - with_numpy:.2f} |")


def check(seeds: int, have_numba: bool) -> int:
    """Prototypes against `cbai solve --json` in a subprocess, for every small case."""
    import json

    from sweep_prototypes.common import Setup
    from sweep_prototypes.lockstep import run_lockstep

    from cbai_cli.kinds import save
    from cbai_cli.simulate import RunRequest, prepare

    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        for label, source, algorithm, regime, options, _ in SMALL:
            instance = make_instance(source)
            path = os.path.join(folder, "instance.npz")
            save(instance, path)
            flags = {"beta": "--beta", "subgaussian": "--subgaussian"}
            command = [sys.executable, "-m", "cbai_cli", "solve", path, "--algo", algorithm, "--regime", regime,
                       "--runs", str(seeds), "--json", "--no-bound"]
            for name, value in options.items():
                command += [flags[name], str(value)]
            runs = json.loads(subprocess.run(command, capture_output=True, text=True, env=dict(os.environ)).stdout)
            expected = [(r["seed"], r["iterations"], r["recommended"], r["stopped"]) for r in runs["runs"]]
            setup = Setup.from_prepared(prepare(RunRequest.of(algorithm, regime, **options), instance))
            candidates = {f"lockstep B={b}": run_lockstep(setup, range(seeds), batch=b) for b in (1, 7, seeds)}
            if have_numba:
                from sweep_prototypes.compiled import run_compiled

                candidates.update({f"numba B={b}": run_compiled(setup, range(seeds), batch=b) for b in (1, seeds)})
            for name, outcomes in candidates.items():
                got = [(o.seed, o.iterations, o.recommended, o.stopped) for o in outcomes]
                failures += got != expected
                print(f"{label} | {name}: {'same as cbai solve --json' if got == expected else 'DIFFERENT'} "
                      f"({seeds} seeds, queries {min(e[1] for e in expected)}–{max(e[1] for e in expected)})",
                      flush=True)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=100, help="seeds of a small case (large cases: at most 10)")
    parser.add_argument("--only", choices=("small", "large"))
    parser.add_argument("--numba-path", help="a folder holding numba (pip install --target)")
    parser.add_argument("--check", action="store_true", help="compare the prototypes with `cbai solve --json`")
    args = parser.parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    if args.numba_path:
        sys.path.insert(0, os.path.abspath(args.numba_path))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.abspath(args.numba_path),
                                                                 os.environ.get("PYTHONPATH")]))
    sys.path.insert(0, HERE)
    try:
        import numba  # noqa: F401

        have_numba = True
    except ImportError:
        have_numba = False
        print("numba not importable: numba rows left out (give --numba-path)")
    if args.check:
        return check(min(args.seeds, 20), have_numba)
    print(f"µs per query in a sweep, minimum over {args.repeats} interleaved rounds; shared machine, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    if args.only != "large":
        sweep_table(SMALL, False, args, have_numba)
    if args.only != "small":
        sweep_table(LARGE, True, args, have_numba)
    if have_numba:
        numba_costs(args.numba_path and os.path.abspath(args.numba_path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
