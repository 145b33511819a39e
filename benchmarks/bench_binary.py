"""Yes/no answers: microseconds a query of whole runs, compiled against the ask/tell loop.

Runs each algorithm on a binary-feedback instance (the driver arms by default) for
``--seeds`` seeds both ways in one process: the compiled step (``drive`` without an
observer) and the per-step ask/tell loop (``drive`` with an observer that watches
nothing), after one warm-up run each, and checks that both give the same queries and
answers. Prints a markdown table; nothing is asserted on timings.

    cbai driver-arms --n 200 --seed 7 -o driver.yaml
    python benchmarks/bench_binary.py driver.yaml --seeds 20 --out benchmarks/results/binary.md

``ols`` runs take the features' coordinates (:func:`report.in_features`), as the results files
were measured.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from report import emit, in_features  # benchmarks/report.py, beside this script

from cbai_cli.kinds import load
from cbai_cli.run.simulate import RunRequest, drive, prepare, run_streams

#: the algorithms timed; tuned G-ACOL also at β = 100, whose runs are long (at the paper's β = 1 they
#: stop after about 20 answers, so their figure is mostly a run's set-up)
SPECS = (("track-and-stop", "ols", {}), ("g-acol", "tuned", {"beta": 1.0}), ("g-acol", "tuned", {"beta": 100.0}),
         ("g-acol", "theory", {}), ("maxrew-u", "ols", {}), ("g-acol", "ols", {}))


class Silent:
    """An observer that watches nothing: it keeps ``drive`` on its per-step loop."""

    def asked(self, query, learner) -> None:
        pass

    def told(self, query, answer, learner, used) -> None:
        pass


def timed(prepared, seeds, observer) -> tuple[float, list[tuple[int, int | None]]]:
    """Seconds of the runs' loops alone and (queries, answer) of each."""
    seconds, outcomes = 0.0, []
    for seed in seeds:
        noise_rng, algorithm_rng, _ = run_streams(seed)
        learner = prepared.make_algorithm(algorithm_rng)
        environment = prepared.kind.environment(prepared.instance, noise_rng)
        started = time.perf_counter()
        loop = drive(learner, environment, prepared.budget, observer)
        seconds += time.perf_counter() - started
        outcomes.append((loop.used, learner.recommendation()))
    return seconds, outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("instance")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    instance = load(args.instance)
    seeds = range(1, args.seeds + 1)
    lines = [f"`python benchmarks/bench_binary.py {Path(args.instance).name} --seeds {args.seeds}` "
             f"({instance.n_arms} arms, d = {instance.dim}, {instance.noise.kind} answers)", "",
             "| algorithm | queries (all runs) | compiled µs/query | ask/tell loop µs/query | same runs |",
             "|---|---:|---:|---:|---|"]
    for name, regime, options in SPECS:
        prepared = prepare(RunRequest.of(name, regime, **in_features(regime), **options), instance)
        timed(prepared, [0], None)  # what numba loads on first use, before the clock
        timed(prepared, [0], Silent())
        fast, compiled = timed(prepared, seeds, None)
        slow, stepped = timed(prepared, seeds, Silent())
        queries = sum(used for used, _ in compiled)
        label = ", ".join([regime, *(f"{key} = {value:g}" for key, value in options.items())])
        lines.append(f"| {name} ({label}) | {queries:,} | {fast / queries * 1e6:.1f} | {slow / queries * 1e6:.1f} | "
                     f"{'yes' if compiled == stepped else 'NO'} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
