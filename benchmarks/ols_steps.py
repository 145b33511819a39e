"""Wall time of one adaptive step under ``det`` and ``ols`` on the same instance and seed
(docs/ols.md, "Cost").

For each file: ``--steps`` ask/answer/tell steps of the algorithm (seed 0, after 50 steps of
warm-up), alternating ``det`` and ``ols`` runs ``--repeats`` times; the minimum over the
repeats of the mean time per step, since a shared machine only ever adds time. A run that
stops before ``--steps`` is reported with the steps it made.

    python benchmarks/ols_steps.py FILE... [--steps 2000] [--repeats 5] [--algo g-acol]
"""

from __future__ import annotations

import argparse
import time

from cbai_cli.kinds import load
from cbai_cli.simulate import RunRequest, prepare, run_streams


def step_time(prepared, steps: int) -> tuple[float, int]:
    """(mean seconds per step, steps made) of one run of seed 0."""
    noise_rng, algorithm_rng, _ = run_streams(0)
    learner = prepared.make_algorithm(algorithm_rng)
    environment = prepared.kind.environment(prepared.instance, noise_rng)
    for _ in range(50):
        query = learner.ask()
        learner.tell(query, environment.answer(query))
    made = 0
    start = time.perf_counter()
    while made < steps and not learner.done:
        query = learner.ask()
        learner.tell(query, environment.answer(query))
        made += 1
    return (time.perf_counter() - start) / max(made, 1), made


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--algo", default="g-acol")
    parser.add_argument("--regimes", default="det,ols")
    arguments = parser.parse_args()
    regimes = arguments.regimes.split(",")
    print("| instance | " + " | ".join(f"`{r}` µs/step" for r in regimes) + " | ratio |")
    print("|---|" + "---:|" * (len(regimes) + 1))
    for path in arguments.files:
        instance = load(path)
        prepared = {regime: prepare(RunRequest.of(arguments.algo, regime), instance) for regime in regimes}
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
