"""Wall time of one adaptive step under ``det`` and ``ols`` on the same instance and seed
(docs/ols.md, "Cost").

For each file: ``--steps`` ask/answer/tell steps of the algorithm (seed 0, after 50 steps of
warm-up), alternating ``det`` and ``ols`` runs ``--repeats`` times; the minimum over the
repeats of the mean time per step, since a shared machine only ever adds time. A run that
stops before ``--steps`` is reported with the steps it made.

    python benchmarks/ols_steps.py FILE... [--steps 2000] [--repeats 5] [--algo g-acol] [--parts]

``--parts`` times each part of a step separately instead (the algorithm's ``ask``, the
simulated answer, the ridge design's update, the regime's ``observe`` and ``bounds``, the
elimination update; the parts of :meth:`cbai_cli.algorithms.base.Adaptive.tell` called one
by one), the minimum over the repeats of each part's mean.

``ols`` runs take the features' coordinates (:func:`report.in_features`), as the results files
were measured.
"""

from __future__ import annotations

import argparse
import time

from cbai_cli.kinds import load
from cbai_cli.run.simulate import RunRequest, prepare, run_streams
from report import ask_tell, in_features  # benchmarks/report.py, beside this script


def warmed_run(prepared):
    """(learner, environment) of seed 0 after 50 steps of warm-up."""
    noise_rng, algorithm_rng, _ = run_streams(0)
    learner = prepared.make_algorithm(algorithm_rng)
    environment = prepared.kind.environment(prepared.instance, noise_rng)
    for _ in range(50):
        query = learner.ask()
        learner.tell(query, environment.answer(query))
    return learner, environment


def step_time(prepared, steps: int) -> tuple[float, int]:
    """(mean seconds per step, steps made) of one run of seed 0."""
    learner, environment = warmed_run(prepared)
    start = time.perf_counter()
    made = ask_tell(learner, environment, steps)
    return (time.perf_counter() - start) / max(made, 1), made


PARTS = ("ask", "answer", "design", "observe", "bounds", "elimination")


def part_times(prepared, steps: int) -> dict[str, float]:
    """Mean seconds per step of each part of :data:`PARTS` in one run of seed 0 (after 50
    steps of warm-up), calling the parts of ``Adaptive.tell`` one by one."""
    learner, environment = warmed_run(prepared)
    totals = dict.fromkeys(PARTS, 0.0)
    made = 0
    while made < steps and not learner.done:
        marks = [time.perf_counter()]
        query = learner.ask()
        marks.append(time.perf_counter())
        answer = environment.answer(query)
        marks.append(time.perf_counter())
        arm, count, total = int(query.arms[0]), int(query.counts[0]), float(answer.constraint[0])
        learner.design.update(arm, total, count, learner.lookahead())
        marks.append(time.perf_counter())
        learner.intervals.observe(arm, total, count)
        marks.append(time.perf_counter())
        bounds = learner.intervals.bounds()
        marks.append(time.perf_counter())
        learner.state.update(*bounds)
        marks.append(time.perf_counter())
        for name, start, stop in zip(PARTS, marks, marks[1:]):
            totals[name] += stop - start
        made += 1
    return {name: value / max(made, 1) for name, value in totals.items()}


def print_parts(arguments, regimes: list[str]) -> None:
    print("| instance | regime | " + " | ".join(f"{name} µs" for name in PARTS) + " | sum µs |")
    print("|---|---|" + "---:|" * (len(PARTS) + 1))
    for path in arguments.files:
        instance = load(path)
        for regime in regimes:
            prepared = prepare(RunRequest.of(arguments.algo, regime, **in_features(regime)), instance)
            best = dict.fromkeys(PARTS, float("inf"))
            for _ in range(arguments.repeats):
                for name, seconds in part_times(prepared, arguments.steps).items():
                    best[name] = min(best[name], seconds)
            cells = " | ".join(f"{1e6 * best[name]:.1f}" for name in PARTS)
            print(f"| {path} | {regime} | {cells} | {1e6 * sum(best.values()):.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--algo", default="g-acol")
    parser.add_argument("--regimes", default="det,ols")
    parser.add_argument("--parts", action="store_true", help="time each part of a step separately")
    arguments = parser.parse_args()
    regimes = arguments.regimes.split(",")
    if arguments.parts:
        print_parts(arguments, regimes)
        return
    print("| instance | " + " | ".join(f"`{r}` µs/step" for r in regimes) + " | ratio |")
    print("|---|" + "---:|" * (len(regimes) + 1))
    for path in arguments.files:
        instance = load(path)
        prepared = {regime: prepare(RunRequest.of(arguments.algo, regime, **in_features(regime)), instance)
                    for regime in regimes}
        best = {regime: float("inf") for regime in regimes}
        made = {}
        for _ in range(arguments.repeats):
            for regime in regimes:
                seconds, made[regime] = step_time(prepared[regime], arguments.steps)
                best[regime] = min(best[regime], seconds)
        cells = [f"{1e6 * best[r]:.0f}" + ("" if made[r] == arguments.steps else f" ({made[r]} steps)") for r in regimes]
        print(f"| {path} | " + " | ".join(cells) + f" | {best[regimes[-1]] / best[regimes[0]]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
