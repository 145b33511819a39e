"""How few queries the ``ols`` intervals allow any fixed allocation, and what their prior
over ridge scales costs (docs/track-and-stop.md, "The floor of these intervals").

Everything is on the mean path (every observation equal to its mean, δ = 0.05, R = σ),
pulls that track an allocation (argmin_a N_a − (n + 1)·w_a) until the elimination of every
algorithm stops, with the intervals the regime gives a track-and-stop run
(:func:`ols_allocation.tracked_run`). For each instance, as ratios to the Theorem 1 bound:

- ``track-and-stop``: its median over seeds 0 … ``--seeds``−1 (with noise, as ``cbai solve
  --runs``);
- ``H_CLB design``: the mean path of the lower bound's allocation (Definition 2, true φ);
- ``best allocation``: the lowest mean path that Nelder–Mead finds over the logits of an
  allocation on the arms that the design, track-and-stop's average allocation over its runs
  of seeds 0 … ``--average-runs``−1, or X≥(x*) use, ``--evaluations`` evaluations from each of
  those two allocations, or the design itself when it is lower; a local search, so an upper
  bound on the best fixed allocation;
- ``scale known``: the best allocation's mean path when the least-squares intervals use one
  ridge scale of the prior's grid instead of the mixture over all of them, the best scale for
  that path (listed as log(λ/L²)). Chosen knowing the path, so not a valid regime: the gap
  to ``best allocation`` is what the regime pays for not knowing the scale in advance
  (the prior's −log π_i and the mixture's spread, docs/ols.md, "Tangent lines").

About a minute per instance for a few hundred queries per path, up to ten for ten thousand.

    python benchmarks/ols_floor.py [SOURCE ...] [--seeds 200] [--average-runs 10] [--evaluations 250]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np
from ols_allocation import default_runs, tracked_run
from scipy.optimize import minimize

from cbai_cli.kinds.cbai.bounds import at_least_set, oracle_design
from cbai_cli.numerics.ols import LeastSquaresSpan, MixtureIntervals
from cbai_cli.run.simulate import drive, run_streams

DEFAULT_SOURCES = (
    "unit-sphere:d=5,n=20,seed=44,sigma=1",
    "unit-sphere:d=5,n=20,seed=26,sigma=1",
    "random:d=5,n=20,seed=107,sigma=1",
    "unit-sphere:d=5,n=20,seed=125,sigma=1",
)


def average_allocation(prepared, runs: int) -> np.ndarray:
    """(K,) the mean over seeds 0 … runs−1 of a track-and-stop run's share of pulls per arm at its stop."""
    shares = []
    for seed in range(runs):
        noise, algorithm, _ = run_streams(seed)
        learner = prepared.make_algorithm(algorithm)
        drive(learner, prepared.kind.environment(prepared.instance, noise), None)
        counts = learner.intervals.fit.counts
        shares.append(counts / counts.sum())
    return np.mean(shares, axis=0)


def best_allocation(prepared, starts: list[np.ndarray], support: np.ndarray, evaluations: int,
                    bound: float) -> tuple[float, np.ndarray]:
    """(the lowest mean path / bound found, its allocation (K,)) by Nelder–Mead over the logits on ``support``."""
    arms = prepared.instance.problem.arms.shape[0]

    def allocation(logits: np.ndarray) -> np.ndarray:
        weights = np.zeros(arms)
        weights[support] = np.exp(logits - logits.max())
        return weights / weights.sum()

    def ratio(logits: np.ndarray) -> float:
        return tracked_run(prepared, allocation(logits), None)[0] / bound

    best = None
    for start in starts:
        found = minimize(ratio, np.log(np.maximum(start[support], 1e-3)), method="Nelder-Mead",
                         options={"maxfev": evaluations, "xatol": 1e-2, "fatol": 1e-3})
        if best is None or found.fun < best.fun:
            best = found
    return float(best.fun), allocation(best.x)


def known_scale(prepared, weights: np.ndarray, bound: float) -> tuple[float, float]:
    """(the lowest mean path / bound over single scales of the prior's grid, that scale's log(λ/L²))."""
    regime = prepared.make_algorithm(np.random.default_rng(0)).intervals
    results = []
    for log_scale in np.log(regime.prior.scales / regime.prior.scale):
        prior = replace(regime.prior, low=float(log_scale), high=float(log_scale), core=(log_scale, log_scale))
        intervals: MixtureIntervals = replace(regime, fit=LeastSquaresSpan(regime.fit.arms), prior=prior)
        results.append((tracked_run(prepared, weights, None, intervals)[0] / bound, float(log_scale)))
    return min(results)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=list(DEFAULT_SOURCES))
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--average-runs", type=int, default=10)
    parser.add_argument("--evaluations", type=int, default=250)
    args = parser.parse_args(argv)
    for name in ("seeds", "average_runs", "evaluations"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    print("| instance | bound | track-and-stop | H_CLB design | best allocation | scale known (log λ/L²) |")
    print("|---|---:|---:|---:|---:|---:|")
    for source in args.sources:
        instance, bound, prepared, ours = default_runs(source, args.seeds)
        design = np.array(oracle_design(instance), dtype=float)
        average = average_allocation(prepared, args.average_runs)
        support = np.flatnonzero((design > 1e-3) | (average > 0.01) | at_least_set(instance))
        design_path = tracked_run(prepared, design, None)[0] / bound
        best, weights = best_allocation(prepared, [average, design], support, args.evaluations, bound)
        if design_path < best:  # the search starts near the design, not at it (weights floored at 10⁻³)
            best, weights = design_path, design
        scale_ratio, log_scale = known_scale(prepared, weights, bound)
        print(f"| {source} | {bound:,.1f} | {ours:.2f}× | {design_path:.2f}× | {best:.2f}× | "
              f"{scale_ratio:.2f}× ({log_scale:+.0f}) |", flush=True)


if __name__ == "__main__":
    main()
