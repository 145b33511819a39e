"""Sweeps of many seeds: µs per query of the compiled adaptive step against the per-step
ask/tell loop and, with ``--baseline-code DIR``, against another checkout (the code
before the compiled step). Not run by CI.

    python benchmarks/bench_sweep.py [--seeds 10] [--repeats 3] [--only small|large] [--baseline-code DIR]
    python benchmarks/bench_sweep.py --cold-start       # compiling the kernels once, then loading them
    python benchmarks/bench_sweep.py --authors-code DIR [--seeds 10] [--repeats 2]

``--authors-code DIR`` (DIR: the ``src`` folder of the authors' code, Lindner et al.'s
constrained_bai package, which needs numpy and scipy only for this case) times whole
processes instead, process start included on both sides, alternating ``--repeats`` times:
the authors' G-ACOL with their theory intervals (``CLBAdaptiveGreedyAlgorithm(delta=0.05,
tuned_ci=False, selection="adaptive")``, their experiment.py's method ``adaptive``) on their
irrelevant-dimensions instance (``get_toy_instance_3(0.05, 10)``), seeds 0, 1, … in one
Python process, against ``cbai compare "irrelevant-dims:d=10,eps=0.05" --algos g-acol:theory
--subgaussian 1 --seeds N --jobs 1 --no-bounds``. Both with one BLAS thread; wall and CPU
(user + system) seconds, medians over the repeats.

Rows, for every case, each timed in its own fresh process, the processes of all rows
alternating ``--repeats`` times (the machine is shared: the minimum is the least
disturbed run):

- ``baseline run_once``: ``run_once`` per seed in DIR (what ``cbai solve --runs`` and
  ``cbai compare`` did per run before);
- ``ask/tell loop``: ``run_once`` per seed with an observer that watches nothing, so
  ``drive`` takes its per-step loop (each step calls the kernels from Python);
- ``run_once``: ``run_once`` per seed, the whole run compiled (``drive``'s fast path);
- ``batch B``: the seeds in batches of B runs advanced together
  (:func:`cbai_cli.numerics.kernels.batch.run_compiled`).

µs per query = wall seconds of all runs / queries of all runs, after one warm-up run in
the process (numba's load is the cold-start cost, measured apart). Every row's outcomes
(queries, answer, how it stopped) are compared with the first row's: the column ``same``.
BLAS is pinned to one thread before numpy loads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: (label, generator family and parameters or a random arm set, algorithm, regime, options, budget of the
#: timed runs or None). The long cases are timed on their first queries (a query costs the same later in a
#: run).
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
CASES = {label: case for label, *case in SMALL + LARGE}


def make_instance(source):
    import numpy as np

    from cbai_cli.kinds.cbai.families import generate_instance
    from cbai_cli.kinds.cbai.instance import Instance
    from cbai_cli.kinds.cbai.noise import GaussianNoise

    family, params = source
    if family != "random-arms":
        return generate_instance(family, **params)
    rng = np.random.default_rng(0)
    k, d = params["k"], params["d"]
    return Instance(name=f"random-arms-k{k}-d{d}", arms=rng.standard_normal((k, d)), reward=rng.standard_normal(d),
                    constraint=rng.standard_normal(d) * 0.01, threshold=0.0, noise=GaussianNoise(1.0))


class Silent:
    """An observer that watches nothing: ``drive`` keeps its per-step loop."""

    def asked(self, query, learner) -> None:
        pass

    def told(self, query, answer, learner, used) -> None:
        pass


def cell(label: str, mode: str, seeds: int) -> dict:
    """Time one row of one case in this process: µs per query and the outcomes."""
    source, algorithm, regime, options, budget = CASES[label]
    from cbai_cli.run.simulate import RunRequest, drive, prepare, run_once, run_streams

    prepared = prepare(RunRequest.of(algorithm, regime, budget=budget, **options), make_instance(source))

    def stepped(seed):
        noise_rng, algorithm_rng, _ = run_streams(seed)
        learner = prepared.make_algorithm(algorithm_rng)
        loop = drive(learner, prepared.kind.environment(prepared.instance, noise_rng), prepared.budget, Silent())
        return seed, loop.used, learner.recommendation(), loop.stopped

    def once(seed):
        result = run_once(prepared, seed)
        return result.seed, result.iterations, result.recommended, result.stopped

    def batch(seed_list, size):
        from cbai_cli.numerics.kernels.batch import run_compiled

        outcomes = []
        for start in range(0, len(seed_list), size):
            streams = [run_streams(seed) for seed in seed_list[start:start + size]]
            learners = [prepared.make_algorithm(algorithm_rng) for _, algorithm_rng, _ in streams]
            environments = [prepared.kind.environment(prepared.instance, noise_rng) for noise_rng, _, _ in streams]
            for seed, learner, (used, solved) in zip(seed_list[start:], learners,
                                                     run_compiled(learners, environments, prepared.budget)):
                outcomes.append((seed, used, learner.recommendation(), "solved" if solved else "budget"))
        return outcomes

    if mode.startswith("batch"):
        size = int(mode.split()[1])
        run = lambda seed_list: batch(seed_list, size)  # noqa: E731
    else:
        single = stepped if mode == "ask/tell loop" else once
        run = lambda seed_list: [single(seed) for seed in seed_list]  # noqa: E731
    run([seeds])  # warm-up on another seed: imports, numba's cached code, caches
    started = time.perf_counter()
    outcomes = run(list(range(seeds)))
    seconds = time.perf_counter() - started
    return {"us": 1e6 * seconds / sum(outcome[1] for outcome in outcomes), "outcomes": outcomes}


def timed(code: str, label: str, mode: str, seeds: int) -> dict:
    env = dict(os.environ, PYTHONPATH=code, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    command = [sys.executable, os.path.abspath(__file__), "--cell", label, mode, "--seeds", str(seeds)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{code} {label} {mode}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout)


def table(cases, args) -> None:
    rows = ([("baseline run_once", os.path.abspath(args.baseline_code), "run_once")] if args.baseline_code else [])
    rows += [("ask/tell loop", ROOT, "ask/tell loop"), ("run_once", ROOT, "run_once"),
             (f"batch {args.seeds}", ROOT, f"batch {args.seeds}")]
    for label, *_ in cases:
        best: dict[str, dict] = {}
        for _ in range(args.repeats):
            for name, code, mode in rows:
                result = timed(code, label, mode, args.seeds)
                if name not in best or result["us"] < best[name]["us"]:
                    best[name] = result
        reference = best[rows[0][0]]
        queries = sum(outcome[1] for outcome in reference["outcomes"])
        print(f"\n{label}: {args.seeds} seeds, {queries:,} queries")
        print("| path | µs per query | speed-up | same outcomes |")
        print("|---|---:|---:|---|")
        for name, _, _ in rows:
            same = "yes" if best[name]["outcomes"] == reference["outcomes"] else "NO"
            print(f"| {name} | {best[name]['us']:,.2f} | {reference['us'] / best[name]['us']:.1f}× | {same} |",
                  flush=True)


#: The authors' sweep, run by ``python -c`` with their ``src`` folder and the seeds as arguments:
#: what their experiment.py does for method ``adaptive`` on ``toy_3``, without sacred's bookkeeping.
AUTHORS_SWEEP = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from constrained_bai.bandit import get_toy_instance_3
from constrained_bai.algorithms.adaptive_greedy import CLBAdaptiveGreedyAlgorithm
queries = correct = 0
for seed in range(int(sys.argv[2])):
    np.random.seed(seed)
    bandit = get_toy_instance_3(0.05, 10)
    used, arm = CLBAdaptiveGreedyAlgorithm(delta=0.05, tuned_ci=False, selection="adaptive", debug=False).run(bandit)
    queries, correct = queries + used, correct + int(arm == bandit.best_arm_i)
print("QUERIES", queries, correct, file=sys.stderr)
"""


def against_authors(src: str, seeds: int, repeats: int) -> None:
    """The whole-process sweeps of ``--authors-code`` (the module docstring), as a table."""
    import resource
    import statistics

    cbai = [sys.executable, "-P", "-m", "cbai_cli", "compare", "irrelevant-dims:d=10,eps=0.05", "--algos",
            "g-acol:theory", "--subgaussian", "1", "--seeds", str(seeds), "--jobs", "1", "--no-bounds", "--json",
            "--quiet"]
    authors = [sys.executable, "-P", "-c", AUTHORS_SWEEP, os.path.abspath(src), str(seeds)]
    times: dict[str, list[tuple[float, float]]] = {"authors": [], "cbai": []}
    queries = {}
    for _ in range(repeats):
        for name, command in (("authors", authors), ("cbai", cbai)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=dict(
                os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                raise SystemExit(f"{name}: {done.stderr.strip().splitlines()[-1]}")
            times[name].append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
            if name == "authors":
                line = next(line for line in done.stderr.splitlines() if line.startswith("QUERIES"))
                queries[name] = tuple(int(value) for value in line.split()[1:])
            else:
                records = json.loads(done.stdout)["records"]
                queries[name] = (sum(record["iterations"] for record in records),
                                 sum(bool(record["correct"]) for record in records))
    print(f"Whole-process sweeps of {seeds} seeds, G-ACOL with theory intervals on irrelevant-dims d = 10, "
          f"ε = 0.05, R = 1; medians of {repeats} alternating processes, load average {os.getloadavg()[0]:.1f} "
          "at the end\n")
    print("| code | queries (correct runs) | wall s | CPU s | wall µs a query | CPU µs a query |")
    print("|---|---:|---:|---:|---:|---:|")
    medians = {}
    for name in ("authors", "cbai"):
        wall = statistics.median(w for w, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        medians[name] = (wall, cpu)
        used, correct = queries[name]
        print(f"| {name} | {used:,} ({correct}/{seeds}) | {wall:.2f} | {cpu:.2f} | {1e6 * wall / used:.2f} | "
              f"{1e6 * cpu / used:.2f} |")
    (aw, ac), (cw, cc) = medians["authors"], medians["cbai"]
    print(f"\ncbai against the authors, whole processes: {aw / cw:.1f}× wall, {ac / cc:.1f}× CPU; per query "
          f"{(aw / queries['authors'][0]) / (cw / queries['cbai'][0]):.1f}× wall")


def cold_start() -> None:
    """Seconds of a first adaptive ``cbai solve`` in fresh processes: with an empty kernel
    cache (compiling), then with the cache on disk, and numba's import alone."""
    instance = os.path.join(ROOT, "instances", "irrelevant-dims-d10-eps0.05.yaml")
    solve = [sys.executable, "-m", "cbai_cli", "solve", instance, "--algo", "g-acol", "--no-bound"]

    def seconds(command, cache) -> float:
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=ROOT,
                                                                          NUMBA_CACHE_DIR=cache))
        return time.perf_counter() - started

    with tempfile.TemporaryDirectory() as folder:
        python = min(seconds([sys.executable, "-c", "pass"], folder) for _ in range(3))
        numba = min(seconds([sys.executable, "-c", "import numba"], folder) for _ in range(3))
        cold = min(seconds(solve, os.path.join(folder, str(i))) for i in range(2))
        warm = min(seconds(solve, os.path.join(folder, "0")) for _ in range(3))
    print("| what (fresh processes, minimum of 2–3) | seconds |")
    print("|---|---:|")
    print(f"| `import numba`, beyond starting Python | {numba - python:.2f} |")
    print(f"| first `cbai solve --algo g-acol`, empty kernel cache (compiles) | {cold:.2f} |")
    print(f"| the same, kernels cached on disk | {warm:.2f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--only", choices=("small", "large"))
    parser.add_argument("--case", help="only the case of this label")
    parser.add_argument("--baseline-code", help="a checkout of the code before the compiled step")
    parser.add_argument("--cold-start", action="store_true")
    parser.add_argument("--authors-code", metavar="DIR", help="the src folder of the authors' code: whole-process "
                        "sweeps against it")
    parser.add_argument("--cell", nargs=2, help=argparse.SUPPRESS)  # LABEL MODE: one row of one case (internal)
    args = parser.parse_args(argv)
    if args.cell:
        print(json.dumps(cell(args.cell[0], args.cell[1], args.seeds)))
        return 0
    if args.cold_start:
        cold_start()
        return 0
    if args.authors_code:
        against_authors(args.authors_code, args.seeds, args.repeats)
        return 0
    print(f"µs per query in a sweep, minimum over {args.repeats} alternating processes; shared machine, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    if args.case:
        table([case for case in SMALL + LARGE if case[0] == args.case], args)
        return 0
    if args.only != "large":
        table(SMALL, args)
    if args.only != "small":
        table(LARGE, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
