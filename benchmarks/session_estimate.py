"""How well a study's "answers still needed" (cbai_cli/session/estimate.py) predicts the
answers a run really needs.

For each seed, an algorithm runs through the ask/tell protocol against simulated answers of
the instance's hidden truth (what a session does with real ones). Whenever the answers
told reach a checkpoint (a fraction of the run's final length, known once it ends), the
estimate's predicted total is recorded; the table gives, per checkpoint, the quantiles of
predicted total / true total over the seeds, and how often no estimate could be made yet.

    python benchmarks/session_estimate.py instances/irrelevant-dims-d10-eps0.05.yaml --seeds 200
    cbai driver-arms --n 200 --seed 7 -o driver.yaml
    python benchmarks/session_estimate.py driver.yaml --seeds 200 --out benchmarks/results/session_estimate_driver.md
"""

from __future__ import annotations

import argparse
import bisect
import time
from pathlib import Path

import numpy as np

from report import emit  # benchmarks/report.py, beside this script

from cbai_cli.kinds import load
from cbai_cli.contracts.protocol import Answer
from cbai_cli.session.estimate import answers_needed
from cbai_cli.run.simulate import RunRequest, prepare

FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9)


def one_run(prepared, instance, seed: int) -> tuple[int, list[tuple[int, int | None]]]:
    """The run's length and (answers, predicted total) after every answer."""
    rng = np.random.default_rng([seed, 1])
    noise = np.random.default_rng([seed, 2])
    learner = prepared.make_algorithm(rng)
    means = instance.truth.means(instance.problem.arms)
    answered, predictions, history, counts = 0, [], [], []
    while not learner.done:
        query = learner.ask()
        sums = instance.noise.sample_sums(noise, means[query.arms], query.counts)
        learner.tell(query, Answer(sums))
        answered += query.total
        state = learner.state
        history.append((answered, state.last_lower.copy(), state.last_upper.copy()))
        counts.append(answered)
        # the earlier point a study's history gives: the last one at or before half the answers
        position = bisect.bisect_right(counts, answered / 2)
        earlier = history[position - 1] if position else None
        estimate = answers_needed(state.last_lower, state.last_upper, state.rewards, state.threshold,
                                  state.uncertain, state.feasible, answered, earlier)
        predictions.append((answered, None if estimate is None else estimate.total))
    return answered, predictions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("instance")
    parser.add_argument("--algo", default=None, help="algorithm (default: cbai's default)")
    parser.add_argument("--regime", default=None)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    parser.add_argument("--made-by", default=None, help="how the instance file was made (a command), for the table")
    args = parser.parse_args()
    instance = load(args.instance)
    prepared = prepare(RunRequest.of(args.algo, args.regime), instance)
    started = time.perf_counter()
    ratios = {fraction: [] for fraction in FRACTIONS}
    missing = {fraction: 0 for fraction in FRACTIONS}
    lengths = []
    for seed in range(args.seeds):
        length, predictions = one_run(prepared, instance, seed)
        lengths.append(length)
        for fraction in FRACTIONS:
            target = fraction * length
            answered, total = next((point for point in predictions if point[0] >= target), predictions[-1])
            if total is None:
                missing[fraction] += 1
            else:
                ratios[fraction].append(total / length)
    lines = [f"`python benchmarks/session_estimate.py {Path(args.instance).name} --seeds {args.seeds}"
             + (f" --algo {args.algo}" if args.algo else "") + (f" --regime {args.regime}" if args.regime else "")
             + f"`: {prepared.algorithm} ({prepared.regime}), runs of {int(np.median(lengths)):,} answers "
             f"(median; quartiles {int(np.quantile(lengths, 0.25)):,}–{int(np.quantile(lengths, 0.75)):,}), "
             f"{time.perf_counter() - started:.0f} s"
             + (f"; the instance: `{args.made_by}`" if args.made_by else ""), "",
             "| after this share of the run | predicted total / true total: median | 10 % | 90 % | no estimate yet |",
             "|---:|---:|---:|---:|---:|"]
    for fraction in FRACTIONS:
        values = np.array(ratios[fraction])
        cells = ([f"{np.median(values):.2f}", f"{np.quantile(values, 0.1):.2f}", f"{np.quantile(values, 0.9):.2f}"]
                 if values.size else ["—"] * 3)
        lines.append(f"| {fraction:.0%} | " + " | ".join(cells) + f" | {missing[fraction]} of {args.seeds} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()
