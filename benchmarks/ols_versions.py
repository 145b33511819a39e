"""Queries of track-and-stop with ``ols`` over many seeds, as ratios to the Theorem 1 bound,
on the paper's instances and on the held-out instances where it does worst
(docs/ols.md, "Which κ"; measurements of earlier versions: benchmarks/results/ols_history.md).

Seeds 0 … ``--seeds``−1 through :func:`cbai_cli.run.simulate.run_many` (the compiled batches of
``cbai solve --runs``: seed s is ``cbai solve … --seed s``), δ = 0.05, R = σ. For each
instance: the median and the mean of queries / bound, the runs above three times the
median, and the runs right. To compare versions of the regime, run the script once per
version with that version's checkout first on ``PYTHONPATH``. ``--mean-share κ`` runs the
regime with another share of δ for the arms' own means than its default
(``ConfidenceSettings.mean_share``; docs/ols.md, "Which κ").

    python benchmarks/ols_versions.py [SOURCE ...] [--seeds 200] [--mean-share 0.3]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from cbai_cli.kinds.cbai.bounds import compute_bounds
from cbai_cli.compare.sources import parse_source
from cbai_cli.run.simulate import PreparedRun, RunRequest, prepare, run_many

DEFAULT_SOURCES = (
    "irrelevant-dims:d=10,eps=0.05,sigma=1",
    "unit-sphere:d=10,n=20,seed=0,sigma=1",
    "regret-1d:sigma=1",
    "irrelevant-dims:d=10,eps=0.05,sigma=0.05",
    "random:d=20,n=40,seed=24,sigma=1",
    "random:d=10,n=20,seed=32,sigma=1",
    "unit-sphere:d=10,n=20,seed=21,sigma=1",
    "unit-sphere:d=5,n=20,seed=26,sigma=1",
    "random:d=5,n=20,seed=26,sigma=1",
    "random:d=5,n=20,seed=1,sigma=1",
)


def with_mean_share(prepared: PreparedRun, mean_share: float | None) -> PreparedRun:
    """``prepared`` with the ols regime's κ set to ``mean_share`` (unchanged for None)."""
    if mean_share is None:
        return prepared
    config = prepared.config
    config = replace(config, confidence=replace(config.confidence, mean_share=mean_share))
    return replace(prepared, configured=replace(prepared.configured, config=config))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=list(DEFAULT_SOURCES))
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--algo", default="track-and-stop")
    parser.add_argument("--mean-share", type=float, default=None, help="κ of the ols regime (default: the regime's)")
    args = parser.parse_args(argv)
    if args.mean_share is not None and not 0.0 <= args.mean_share < 1.0:
        parser.error(f"--mean-share must lie in [0, 1), got {args.mean_share:g}")
    print("| instance | bound | median / bound | mean / bound | runs > 3 × median | right | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for source in args.sources:
        instance = parse_source(source, 0)[0].instance_for(0)
        bound = compute_bounds(instance, delta=0.05).lower_bound_noise
        prepared = with_mean_share(prepare(RunRequest.of(args.algo, "ols", delta=0.05), instance), args.mean_share)
        started = time.perf_counter()
        results = run_many(prepared, range(args.seeds))
        queries = np.array([result.iterations for result in results])
        right = sum(bool(result.correct) for result in results)
        median = float(np.median(queries))
        print(f"| {source} | {bound:,.1f} | {median / bound:.3f} | {queries.mean() / bound:.3f} | "
              f"{int(np.sum(queries > 3 * median))} | {right}/{args.seeds} | {time.perf_counter() - started:.0f} |",
              flush=True)


if __name__ == "__main__":
    main()
