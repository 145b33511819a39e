"""Reproduce Figure 4 of Lindner et al. (ICML 2022): constraint versus reward penalty.

For each driver scenario (paper Figure 1 and Section 4.3; docs/driver.md) and each
penalty weight lambda on the authors' grid 0, 0.1, ..., 2, the unconstrained CEM
maximises ``(theta - lambda phi)^T f``; the plot shows the task reward
``theta^T f`` and the constraint value ``phi^T f`` of that policy, against the
reward of the constrained CEM solution (dashed lines). Each problem keeps the
best of ``--restarts`` independent CEM runs, as in the authors' experiment.

Usage (from the repository root; about 3 * 22 * restarts CEM runs, ~15 ms each)::

    python benchmarks/figure4_penalty.py --seed 0 --restarts 10 --png docs/img/figure4_penalty.png

Prints a Markdown table: per scenario the constrained solution, the smallest
lambda whose penalised optimum is feasible and what that policy loses.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cbai_cli.driver.penalty import DEFAULT_PENALTIES, penalty_study  # noqa: E402
from cbai_cli.driver.plot import plot_penalty_study  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--restarts", type=int, default=10, help="CEM restarts per problem (default 10, the authors')")
    parser.add_argument("--png", type=Path, default=Path("docs/img/figure4_penalty.png"), help="output picture")
    args = parser.parse_args()

    start = time.perf_counter()
    study = penalty_study(args.seed, penalties=DEFAULT_PENALTIES, n_restarts=args.restarts)
    elapsed = time.perf_counter() - start
    plot_penalty_study(args.png, study.penalties, study.penalised_reward, study.penalised_constraint,
                       study.constrained_reward, study.scenarios, threshold=study.threshold)

    print(f"Figure 4: seed {args.seed}, {args.restarts} CEM restarts per problem, "
          f"lambda in {study.penalties[0]:g}..{study.penalties[-1]:g} step 0.1; {elapsed:.1f} s; wrote {args.png}")
    print()
    print("| scenario | constrained: reward | constrained: φᵀf | smallest feasible λ | penalised at that λ: reward | φᵀf | reward lost |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    smallest = study.smallest_feasible_penalty
    for s, name in enumerate(study.scenarios):
        reward, constraint = study.constrained_reward[s], study.constrained_constraint[s]
        if np.isnan(smallest[s]):
            print(f"| {name} | {reward:.4f} | {constraint:.3f} | none on the grid | — | — | — |")
            continue
        l = int(np.flatnonzero(study.penalties == smallest[s])[0])
        pen_reward, pen_constraint = study.penalised_reward[s, l], study.penalised_constraint[s, l]
        print(f"| {name} | {reward:.4f} | {constraint:.3f} | {smallest[s]:g} | {pen_reward:.4f} | "
              f"{pen_constraint:.3f} | {reward - pen_reward:.4f} |")


if __name__ == "__main__":
    main()
