"""Queries of track-and-stop with ``ols`` over many seeds, as ratios to the Theorem 1 bound,
on the paper's instances and on the held-out instances where it does worst
(docs/ols.md, "Which κ"; measurements of earlier versions: benchmarks/results/ols_history.md).

Seeds 0 … ``--seeds``−1 through :func:`cbai_cli.run.simulate.run_many` (the compiled batches of
``cbai solve --runs``: seed s is ``cbai solve … --seed s``), δ = ``--delta`` (0.05), R = σ (R = 1
for yes/no answers); the bound is Theorem 1's at that δ. For each
instance: the median of queries / bound and / the bound's kl form (Theorem 1 without its
last step, docs/lower-bound.md), the mean of queries / bound, the runs above three times the
median, and the runs right. To compare versions of the regime, run the script once per
version with that version's checkout first on ``PYTHONPATH``. ``--mean-share κ`` runs the
regime with another share of δ for the arms' own means than its default
(``ConfidenceSettings.mean_share``; docs/ols.md, "Which κ"). ``--optimism κ …`` runs
track-and-stop once per κ with that κ in its answer rule instead of
:data:`~cbai_cli.algorithms.track_and_stop.OPTIMISM` (:class:`AnswerOptimism`), and the table
gains a first column κ (docs/track-and-stop.md, "Why the answer is optimistic").

    python benchmarks/ols_versions.py [SOURCE ...] [--seeds 200] [--delta 0.05] [--mean-share 0.3]
        [--optimism 0 0.5 1]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

import numpy as np

from cbai_cli.algorithms.track_and_stop import TrackAndStop
from cbai_cli.compare.sources import parse_source
from cbai_cli.kinds.cbai.bounds import compute_bounds
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


class AnswerOptimism(TrackAndStop):
    """Track-and-stop whose answer rule counts an arm as predicted feasible while
    φ̂ᵀx − κ·w(x) ≤ τ with κ = ``optimism`` (docs/track-and-stop.md, "Why the answer is
    optimistic"). The instance's attribute shadows the class's :data:`OPTIMISM`; both the
    interpreted rule and the compiled step read κ from the learner, so the runs stay compiled."""

    def __init__(self, problem, config, rng, optimism: float) -> None:
        super().__init__(problem, config, rng)
        self.optimism = optimism


def with_optimism(prepared: PreparedRun, optimism: float | None) -> PreparedRun:
    """``prepared`` (a track-and-stop run) made with :class:`AnswerOptimism` at κ = ``optimism``
    (unchanged for None): the registry entry is pointed at that class and ``optimism`` passed
    to its constructor."""
    if optimism is None:
        return prepared
    spec = replace(prepared.spec, module=AnswerOptimism.__module__, cls=AnswerOptimism.__name__)
    configured = replace(prepared.configured, init={**prepared.configured.init, "optimism": optimism})
    return replace(prepared, spec=spec, configured=configured)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=list(DEFAULT_SOURCES))
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--algo", default="track-and-stop")
    parser.add_argument("--delta", type=float, default=0.05, help="δ of the runs and of the bound (default: 0.05)")
    parser.add_argument("--mean-share", type=float, default=None, help="κ of the ols regime (default: the regime's)")
    parser.add_argument("--optimism", type=float, nargs="+", default=None, metavar="κ",
                        help="κ of track-and-stop's answer rule, one pass over the sources per κ "
                             "(default: one pass with the algorithm's own)")
    args = parser.parse_args(argv)
    if args.mean_share is not None and not 0.0 <= args.mean_share < 1.0:
        parser.error(f"--mean-share must lie in [0, 1), got {args.mean_share:g}")
    if not 0.0 < args.delta < 1.0:
        parser.error(f"--delta must lie in (0, 1), got {args.delta:g}")
    if args.optimism is not None and args.algo != "track-and-stop":
        parser.error(f"--optimism is the answer rule's κ of track-and-stop, not of {args.algo}")
    if args.optimism is not None and not all(math.isfinite(k) and k >= 0.0 for k in args.optimism):
        parser.error(f"--optimism must be finite and at least 0, got {' '.join(f'{k:g}' for k in args.optimism)}")
    optimism_column = ("| κ ", "|---") if args.optimism is not None else ("", "")
    print(f"{optimism_column[0]}| instance | bound | median / bound | median / kl bound | mean / bound | runs > 3 × median "
          "| right | seconds |")
    print(f"{optimism_column[1]}|---|---:|---:|---:|---:|---:|---:|---:|")
    for optimism in args.optimism or [None]:
        for source in args.sources:
            instance = parse_source(source, 0)[0].instance_for(0)
            bounds = compute_bounds(instance, delta=args.delta)
            bound, kl_bound = bounds.lower_bound_noise, bounds.lower_bound_kl_noise
            if bound is None:  # yes/no answers: Theorem 1 at R = 1 (docs/binary.md)
                bound, kl_bound = bounds.lower_bound, bounds.lower_bound_kl
            prepared = with_mean_share(prepare(RunRequest.of(args.algo, "ols", delta=args.delta), instance), args.mean_share)
            prepared = with_optimism(prepared, optimism)
            started = time.perf_counter()
            results = run_many(prepared, range(args.seeds))
            queries = np.array([result.iterations for result in results])
            right = sum(bool(result.correct) for result in results)
            median = float(np.median(queries))
            kappa = "" if optimism is None else f"| {optimism:g} "
            print(f"{kappa}| {source} | {bound:,.1f} | {median / bound:.3f} | {median / kl_bound:.3f} | "
                  f"{queries.mean() / bound:.3f} | "
                  f"{int(np.sum(queries > 3 * median))} | {right}/{args.seeds} | {time.perf_counter() - started:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
