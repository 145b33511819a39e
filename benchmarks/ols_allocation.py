"""Whether track-and-stop's remaining factor is its sampling or the ``ols`` intervals: the
queries of track-and-stop with ``ols`` against the lower bound's own allocation, tracked
with the same intervals and the same stopping rule (docs/track-and-stop.md, "What the
allocation of the bound would need").

For each instance, δ = 0.05, R = σ:

- ``track-and-stop``: the median of queries / the Theorem 1 bound over seeds 0 … n−1
  (:func:`cbai_cli.run.simulate.run_many`, as ``cbai solve --runs``);
- ``oracle allocation``: the H_CLB design λ* of the true φ (Definition 2; the Oracle's
  allocation, :func:`cbai_cli.kinds.cbai.bounds.oracle_design`), followed by tracking — pull
  argmin_a N_a − (n + 1)·λ*_a — with the ``ols`` intervals the regime gives a
  track-and-stop run (:class:`cbai_cli.numerics.ols.MixtureIntervals`, τ and the rewards included) and the elimination of every algorithm
  (:class:`cbai_cli.algorithms.elimination.EliminationState`), the median over n noise
  seeds (their own streams, :func:`numpy.random.default_rng` of 10⁶ + s);
- ``mean path``: the same allocation with every observation equal to its mean, one run;
- ``β_eff``: at the end of the mean path, the least and the largest over the arms of
  X≥(x*) in the span of width²/(2R²·xᵀV⁺x) of the least-squares intervals alone, the
  factor by which an arm's squared width exceeds 2R²·xᵀV⁺x: the bound's allocation makes
  n·xᵀV⁺x/g(x)² at most H_CLB for every arm it needs (equal for the arms that set H_CLB),
  so such an arm, certified by least squares, holds the run to about β_eff/log(1/(2.4δ))
  times the bound (log(1/(2.4δ)) = 2.12 here);
- ``rank``: the rank of the design at that point.

The oracle runs are a Python loop (one ``bounds()`` a pull): the default instances at
200 seeds take about 6 minutes on one core.

    python benchmarks/ols_allocation.py [SOURCE ...] [--seeds 40]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from cbai_cli.algorithms.elimination import EliminationState
from cbai_cli.kinds.cbai.bounds import at_least_set, compute_bounds, oracle_design
from cbai_cli.compare.sources import parse_source
from cbai_cli.numerics.ols import MixtureIntervals
from cbai_cli.run.simulate import RunRequest, prepare, run_many

DELTA = 0.05
DEFAULT_SOURCES = (
    "irrelevant-dims:d=10,eps=0.05,sigma=1",
    "unit-sphere:d=10,n=20,seed=0,sigma=1",
    "regret-1d:sigma=1",
    "unit-sphere:d=5,n=20,seed=44,sigma=1",
    "random:d=10,n=20,seed=32,sigma=1",
    "unit-sphere:d=5,n=20,seed=26,sigma=1",
    "random:d=20,n=40,seed=24,sigma=1",
)
BUDGET = 10**6


def default_runs(source: str, seeds: int):
    """(the instance of ``source``, its Theorem 1 bound at δ (at R = σ, or R = 1 for yes/no answers),
    the prepared track-and-stop run with ``ols``, the median of its queries / the bound over seeds
    0 … seeds−1 of ``run_many``)."""
    instance = parse_source(source, 0)[0].instance_for(0)
    bounds = compute_bounds(instance, delta=DELTA)
    bound = bounds.lower_bound_noise if bounds.lower_bound_noise is not None else bounds.lower_bound
    prepared = prepare(RunRequest.of("track-and-stop", "ols", delta=DELTA), instance)
    median = float(np.median([result.iterations for result in run_many(prepared, range(seeds))]))
    return instance, bound, prepared, median / bound


def tracked_run(prepared, weights: np.ndarray, draw: Callable[[float], float] | None,
                intervals: MixtureIntervals | None = None):
    """Pulls that track ``weights`` (K,) until the elimination stops, with ``intervals`` (fresh,
    nothing observed), by default those the regime gives a run of ``prepared``; ``draw`` gives
    an observation from the pulled arm's mean (None: the mean path). Returns (queries, the
    intervals at the end)."""
    problem, truth = prepared.instance.problem, prepared.instance.truth
    means = truth.means(problem.arms)
    if intervals is None:
        intervals = prepared.make_algorithm(np.random.default_rng(0)).intervals
    state = EliminationState(problem.rewards, problem.threshold)
    counts = np.zeros(problem.arms.shape[0])
    pulls = 0
    while not state.done and pulls < BUDGET:
        arm = int(np.argmin(counts - (pulls + 1) * weights))
        intervals.observe(arm, means[arm] if draw is None else draw(means[arm]), 1)
        counts[arm] += 1
        pulls += 1
        state.update(*intervals.bounds())
    return pulls, intervals


def gaussian_draw(sigma: float, rng: np.random.Generator) -> Callable[[float], float]:
    """Observations of Gaussian noise σ around the mean."""
    return lambda mean: mean + sigma * rng.standard_normal()


def least_squares_beta(instance, intervals: MixtureIntervals) -> tuple[float, float, int]:
    """(min and max over X≥(x*) in the span of width²/(2R²·xᵀV⁺x) of the least-squares intervals, the design's rank)."""
    fit = intervals.fit
    need = at_least_set(instance) & fit.inside
    lower, upper = intervals.least_squares_bounds()
    half = (upper - lower)[need] / 2
    beta = half**2 / (2 * instance.noise.sigma**2 * fit.variances[need])
    return float(np.min(beta)), float(np.max(beta)), fit.rank


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=list(DEFAULT_SOURCES))
    parser.add_argument("--seeds", type=int, default=40)
    args = parser.parse_args(argv)
    print("| instance | bound | track-and-stop | oracle allocation | mean path | β_eff | rank |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for source in args.sources:
        instance, bound, prepared, ours = default_runs(source, args.seeds)
        weights = np.array(oracle_design(instance))
        oracle = np.median([tracked_run(prepared, weights, gaussian_draw(instance.noise.sigma, np.random.default_rng(10**6 + seed)))[0]
                            for seed in range(args.seeds)])
        path, intervals = tracked_run(prepared, weights, None)
        least, largest, rank = least_squares_beta(instance, intervals)
        print(f"| {source} | {bound:,.1f} | {ours:.2f}× | {oracle / bound:.2f}× | {path / bound:.2f}× | "
              f"{least:.2f}–{largest:.2f} | {rank} |", flush=True)


if __name__ == "__main__":
    main()
