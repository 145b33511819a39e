"""Per-query time of track-and-stop:ols, through the compiled loop or through ask/tell (not run by CI).

    PYTHONPATH=CHECKOUT python -P benchmarks/bench_ols_tell.py loop|asktell [SOURCE]

Runs seeds 0–3 of ``track-and-stop:ols`` with a budget of 3,000 queries on SOURCE (a
``compare`` source; default ``irrelevant-dims:d=10,eps=0.05,sigma=1``) after one run that
loads the compiled code, and prints (µs per query, queries) per seed: ``loop`` times
:func:`cbai_cli.run.simulate.run_once` (the whole run compiled), ``asktell`` the
ask/answer/tell loop of a session (each tell one compiled update). Run it in fresh
processes alternating two checkouts, with BLAS on one thread, to compare them
(benchmarks/results/observe_fit_speed.md).

``ols`` runs take the features' coordinates (:func:`report.in_features`), as the results files
were measured.
"""

from __future__ import annotations

import sys
import time

from cbai_cli.compare.sources import parse_source
from cbai_cli.numerics.kernels import jit
from cbai_cli.run.simulate import RunRequest, prepare, run_once, run_streams
from report import ask_tell, in_features  # benchmarks/report.py, beside this script

BUDGET = 3000


def main() -> None:
    mode = sys.argv[1]
    source = sys.argv[2] if len(sys.argv) > 2 else "irrelevant-dims:d=10,eps=0.05,sigma=1"
    jit.load()
    prepared = prepare(RunRequest.of("track-and-stop", "ols", budget=BUDGET, **in_features("ols")),
                       parse_source(source, 0)[0].instance_for(0))
    run_once(prepared, seed=99)
    times = []
    for seed in range(4):
        if mode == "loop":
            started = time.perf_counter()
            pulls = run_once(prepared, seed=seed).iterations
            spent = time.perf_counter() - started
        else:
            noise_rng, algorithm_rng, _ = run_streams(seed)
            learner = prepared.make_algorithm(algorithm_rng)
            environment = prepared.kind.environment(prepared.instance, noise_rng)
            started = time.perf_counter()
            pulls = ask_tell(learner, environment, BUDGET)
            spent = time.perf_counter() - started
        times.append((round(1e6 * spent / pulls, 2), pulls))
    print(mode, times)


if __name__ == "__main__":
    main()
