"""Check that the random adaptive rules (adaptive-uniform, g-acol-uniform, maxrew-f) give
the same record whichever loop runs them: for every instance × regime × seed, the run
through the ask/tell loop (``cbai solve --trace``'s path: one seed at a time, with a trace),
the compiled single run (``run_once``) and the compiled batches of ``cbai solve --runs``
(``run_many``, up to :data:`cbai_cli.run.simulate.BATCH_RUNS` runs a batch) give equal results
(queries, answer, correctness, stop; ``wall_s`` left out).

    python benchmarks/check_random_rules.py [--seeds 20] [--budget 4000]

The instances are benchmarks/check_kernel.py's three files and the four of
benchmarks/guaranteed.py; the regimes theory, det, tuned (β = 1/4) and ols. Prints one line
per differing case and a summary; exit code 1 when anything differs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_kernel import INSTANCES as FILES  # noqa: E402
from guaranteed import INSTANCES as PAPER  # noqa: E402

RULES = ("adaptive-uniform", "g-acol-uniform", "maxrew-f")
REGIMES = {"theory": {}, "det": {}, "tuned": {"beta": 0.25}, "ols": {}}


def instances() -> list[tuple[str, object]]:
    """(label, instance) of every instance checked."""
    from cbai_cli.compare.sources import parse_sources
    from cbai_cli.kinds import load

    groups = parse_sources([source for _, source in PAPER])
    return ([(path, load(ROOT / path)) for path in FILES]
            + [(label, group.instance_for(0)) for (label, _), group in zip(PAPER, groups)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=4000)
    args = parser.parse_args()
    from cbai_cli.run.simulate import RunRequest, compilable, prepare, run_many, run_once, start_run

    seeds = list(range(args.seeds))
    cases = differing = runs = 0
    for label, instance in instances():
        for name in RULES:
            for regime, options in REGIMES.items():
                prepared = prepare(RunRequest.of(name, regime, budget=args.budget, **options), instance)
                learner, environment, _ = start_run(prepared, 0)
                if not compilable(learner, environment):
                    print(f"NOT COMPILED {label} {name}:{regime}")
                    differing += 1
                    continue
                stepped = [run_once(prepared, seed, tracer_rows=[]) for seed in seeds]
                single = [run_once(prepared, seed) for seed in seeds]
                batched = run_many(prepared, seeds)
                records = [[replace(result, wall_s=0.0) for result in path] for path in (stepped, single, batched)]
                cases += 1
                runs += 3 * len(seeds)
                if not records[0] == records[1] == records[2]:
                    differing += 1
                    print(f"DIFFERS {label} {name}:{regime}: {records}")
    print(f"{cases - differing} of {cases} cases equal ({runs} runs: {args.seeds} seeds through the ask/tell loop, "
          f"compiled one by one and compiled in batches; budget {args.budget})")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
