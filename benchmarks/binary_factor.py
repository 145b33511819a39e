"""Where the default's factor goes on yes/no answers (docs/binary.md, "Where the factor goes").

For each driver instance (files of ``cbai driver-arms --n 200 --seed S``), δ = 0.05, R = 1, seeds
0 … ``--seeds``−1 of :func:`cbai_cli.run.simulate.run_many` (as ``cbai solve --runs``):

- ``bounds``: Theorem 1 at R = 1 (``lower_bound``), its kl form, and the yes/no bound with each
  answer's Bernoulli relative entropy (``lower_bound_bernoulli``, ``…_kl``; docs/lower-bound.md);
- ``specs``: the median queries of track-and-stop (the default), MaxRew-U and G-ACOL with ``ols``,
  and the runs right;
- ``split``: for each default run, at its stop, the *allocation factor*
  A = n·max_{y ∈ X≥(x*)} yᵀV⁺y/g(y)² / H_CLB (V = Σ_a N_a aaᵀ of its pulls; A ≥ 1, = 1 only at
  the H_CLB design) and the *stopping factor* S = (n/bound)/A, so that n/bound = A·S: S is how
  many times the bound's information 2·log(1/(2.4δ))·g²/‖y‖²_{V⁺} the arm that sets A holds
  when the run stops (the interval's threshold and the noise);
- ``variance``: the answers' variance 1 − m² averaged over the default's pulls and over the
  H_CLB design, against the R² = 1 the intervals assume;
- ``gaussian``: the same arms and φ with Gaussian noise σ = 1 (the noise the intervals and
  Theorem 1 assume), default's median;
- ``mean path``: the default with every observation equal to its mean (Gaussian noise
  σ = 10⁻⁶ read with R = 1, as ``cbai solve --subgaussian 1``), and the H_CLB design and the
  H_Bern design (:mod:`cbai_cli.kinds.cbai.bernoulli_bound`) tracked (argmin_a N_a − (n+1)·w_a) with the
  same ``ols`` intervals and elimination; the H_CLB design also with yes/no noise (median over
  the seeds, streams :func:`numpy.random.default_rng` of 10⁶ + s);
- ``β_eff``: at the end of the H_CLB design's mean path, width²/(2·yᵀV⁺y) of the least-squares
  intervals alone over X≥(x*), against log(1/(2.4δ)) = 2.12;
- ``variants``: the default's median / each variant's own Theorem 1 bound on the same policies
  with the arms rescaled otherwise (every arm of the raw features divided by the larger of the
  paper's two divisors) and with the near-duplicate arms (cosine ≥ 0.999 to an arm kept before
  them) left out, X≥(x*) kept.

Each file's results are written to the ``--json`` document as soon as they are measured, so an
interrupted run keeps the files done; ``--render`` takes several documents (one per process).
About 10–20 minutes per file on a loaded core.

    cbai driver-arms --n 200 --seed 7 -o driver-n200-seed7.yaml   # likewise seeds 12 and 5
    python benchmarks/binary_factor.py driver-n200-seed7.yaml --seeds 200 \\
        --json benchmarks/results/binary_factor_seed7.json
    python benchmarks/binary_factor.py driver-n200-seed12.yaml driver-n200-seed5.yaml --seeds 200 \\
        --json benchmarks/results/binary_factor_seeds12_5.json
    python benchmarks/binary_factor.py --render benchmarks/results/binary_factor_seed7.json \\
        benchmarks/results/binary_factor_seeds12_5.json

The oracle runs are a Python loop (one ``bounds()`` a pull).
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np

from cbai_cli.kinds.cbai.bernoulli_bound import bernoulli_design
from cbai_cli.kinds.cbai.bounds import at_least_set, compute_bounds
from cbai_cli.kinds import load
from cbai_cli.kinds.cbai.noise import GaussianNoise
from cbai_cli.run.simulate import RunRequest, drive, prepare, run_many, run_once, run_streams
from ols_allocation import tracked_run  # a sibling script: python runs benchmarks/ scripts from their folder
from report import measure_each, render_files, results_parser  # benchmarks/report.py, beside this script

DELTA = 0.05
SPECS = (("track-and-stop", "ols"), ("maxrew-u", "ols"), ("g-acol", "ols"))
DUPLICATE_COSINE = 0.999
BUDGET = 10**6


def twin(instance, **changes):
    """``instance`` with ``changes``, without its ``meta`` (a yes/no study's question and answers
    do not fit other noise, and nothing here reads them)."""
    return dataclasses.replace(instance, meta={}, **changes)


def bounds_of(instance) -> dict:
    """The bounds of ``instance`` at δ (R = 1) with H_CLB, H_Bern and the design's weights."""
    report = compute_bounds(instance, delta=DELTA)
    return {"h_clb": report.h_clb.value, "h_bernoulli": report.h_bernoulli, "theorem1": report.lower_bound,
            "theorem1_kl": report.lower_bound_kl, "bernoulli": report.lower_bound_bernoulli,
            "bernoulli_kl": report.lower_bound_bernoulli_kl, "weights": report.h_clb.weights}


def medians(instance, algorithm: str, regime: str, seeds: int, **options) -> dict:
    """Median queries and runs right of ``algorithm`` with ``regime`` over seeds 0 … seeds−1."""
    prepared = prepare(RunRequest.of(algorithm, regime, delta=DELTA, **options), instance)
    results = run_many(prepared, range(seeds))
    return {"median": float(np.median([r.iterations for r in results])),
            "right": sum(bool(r.correct) for r in results), "runs": len(results)}


def split(instance, bound: float, h_clb: float, seeds: int) -> dict:
    """The default's runs: per run the allocation factor A and the stopping factor S (module
    docstring) and the mean variance of its answers; their medians."""
    prepared = prepare(RunRequest.of("track-and-stop", "ols", delta=DELTA), instance)
    arms = instance.problem.arms
    means = instance.truth.means(arms)
    need = at_least_set(instance)
    gaps = instance.gaps[need]
    allocation, stopping, variance = [], [], []
    for seed in range(seeds):
        noise, algorithm, _ = run_streams(seed)
        learner = prepared.make_algorithm(algorithm)
        drive(learner, prepared.kind.environment(instance, noise), None)
        counts = np.asarray(learner.intervals.fit.counts, dtype=float)
        n = counts.sum()
        gram = (arms * counts[:, None]).T @ arms
        targets = arms[need]
        spread = np.einsum("kd,kd->k", targets @ np.linalg.pinv(gram, hermitian=True), targets)
        inside = np.linalg.norm(targets - targets @ np.linalg.pinv(gram, hermitian=True) @ gram, axis=1) < 1e-6
        factor = n * np.max(np.where(inside, spread, math.inf) / gaps**2) / h_clb
        allocation.append(factor)
        stopping.append(n / bound / factor)
        variance.append(float(counts @ (1.0 - means**2) / n))
    return {"allocation": float(np.median(allocation)), "stopping": float(np.median(stopping)),
            "pulled_variance": float(np.median(variance))}


def yes_no_draw(rng: np.random.Generator) -> Callable[[float], float]:
    """Yes/no answers (±1) with mean the arm's: +1 with probability (1 + mean)/2."""
    return lambda mean: 1.0 if rng.random() < (1.0 + mean) / 2.0 else -1.0


def tracked(prepared, weights: np.ndarray, rng: np.random.Generator | None) -> tuple[int, object]:
    """Pulls tracking ``weights`` (K,) with the intervals of a track-and-stop run of ``prepared``
    and the elimination of every algorithm (:func:`ols_allocation.tracked_run`), yes/no answers
    drawn from ``rng`` (None: every answer its mean). Returns (queries, the intervals at the stop)."""
    return tracked_run(prepared, weights, None if rng is None else yes_no_draw(rng))


def effective_beta(instance, intervals) -> tuple[float, float]:
    """(min, max) over X≥(x*) in the span of width²/(2·yᵀV⁺y) of the least-squares intervals alone."""
    fit = intervals.fit
    need = at_least_set(instance) & fit.inside
    lower, upper = intervals.least_squares_bounds()
    beta = ((upper - lower)[need] / 2) ** 2 / (2 * fit.variances[need])
    return float(np.min(beta)), float(np.max(beta))


def mean_paths(instance, bounds: dict, seeds: int) -> dict:
    """The default's mean path and the tracked designs' (module docstring), as queries."""
    quiet = twin(instance, noise=GaussianNoise(1e-6))
    default = run_once(prepare(RunRequest.of("track-and-stop", "ols", delta=DELTA, subgaussian=1.0), quiet), 0)
    prepared = prepare(RunRequest.of("track-and-stop", "ols", delta=DELTA), instance)
    weights = np.asarray(bounds["weights"])
    design_path, intervals = tracked(prepared, weights, None)
    beta = effective_beta(instance, intervals)
    bernoulli = bernoulli_design(instance.problem.arms, instance.truth.constraint, instance.truth.threshold,
                                 at_least_set(instance), weights).weights
    bernoulli_path, _ = tracked(prepared, bernoulli, None)
    noisy = [tracked(prepared, weights, np.random.default_rng(10**6 + seed))[0] for seed in range(seeds)]
    return {"default": default.iterations, "design": design_path, "bernoulli_design": bernoulli_path,
            "design_noisy": float(np.median(noisy)), "beta_min": beta[0], "beta_max": beta[1]}


def variant(instance, arms: np.ndarray, keep: np.ndarray | None = None):
    """``instance`` with ``arms`` (K', d) in place of its own, the rewards of the arms kept (``keep``
    (K,) bool; all when None); no data arrays (they follow the old arms)."""
    rewards = np.asarray(instance.rewards) if keep is None else np.asarray(instance.rewards)[keep]
    return twin(instance, arms=arms, reward=None, reward_values=rewards, data={})


def variants(instance) -> dict:
    """The rescaled and de-duplicated versions (module docstring) by name."""
    raw = instance.arms * np.asarray(instance.data["scales"])[:, None]
    units = instance.arms / np.linalg.norm(instance.arms, axis=1)[:, None]
    cosine = units @ units.T
    need = at_least_set(instance)
    keep = np.ones(instance.n_arms, dtype=bool)
    for arm in range(instance.n_arms):
        earlier = keep.copy()
        earlier[arm:] = False
        if not need[arm] and np.any(cosine[arm, earlier] >= DUPLICATE_COSINE):
            keep[arm] = False
    return {"one divisor for all arms": variant(instance, raw / float(np.max(instance.data["scales"]))),
            f"near-duplicates left out ({DUPLICATE_COSINE})": variant(instance, instance.arms[keep], keep)}


def measure(path: str, seeds: int) -> dict:
    instance = load(path)
    started = time.perf_counter()
    bounds = bounds_of(instance)
    means = instance.truth.means(instance.problem.arms)
    result = {"file": Path(path).name, "arms": instance.n_arms, "dim": instance.dim,
              "at_least": int(at_least_set(instance).sum()),
              "bounds": {key: value for key, value in bounds.items() if key != "weights"},
              "design_variance": float(np.asarray(bounds["weights"]) @ (1.0 - means**2))}
    result["specs"] = {f"{name}:{regime}": medians(instance, name, regime, seeds) for name, regime in SPECS}
    result["gaussian"] = medians(twin(instance, noise=GaussianNoise(1.0)), "track-and-stop", "ols",
                                 seeds)
    result["split"] = split(instance, bounds["theorem1"], bounds["h_clb"], seeds)
    result["mean_path"] = mean_paths(instance, bounds, seeds)
    result["variants"] = {}
    for name, changed in variants(instance).items():
        theirs = bounds_of(changed)
        result["variants"][name] = {"arms": changed.n_arms, "theorem1": theirs["theorem1"],
                                    "bernoulli_kl": theirs["bernoulli_kl"],
                                    **medians(changed, "track-and-stop", "ols", seeds)}
    result["seconds"] = time.perf_counter() - started
    print(f"{path}: {result['seconds']:.0f} s", file=sys.stderr, flush=True)
    return result


def _ratio(queries: float, bound: float | None) -> str:
    return "—" if not bound else f"{queries / bound:.2f}×"


def render(document: dict) -> str:
    """The markdown tables of docs/binary.md from a results document of :func:`measure`."""
    seeds = document["seeds"]
    lines = [f"`{document['command']}` ({document['date']}; {seeds} seeds, δ = {DELTA}, R = 1)", "",
             "Bounds and the guaranteed rules (median queries; ratio to Theorem 1 at R = 1 / to its kl form / to the "
             "yes/no kl bound; runs right):", "",
             "| instance | Theorem 1 (R = 1) | kl form | yes/no (Thm 1 form) | yes/no kl | "
             + " | ".join(spec for spec, _ in SPECS) + " |",
             "|---|---:|---:|---:|---:|" + "---:|" * len(SPECS)]
    for item in document["instances"]:
        b = item["bounds"]
        cells = []
        for name, regime in SPECS:
            spec = item["specs"][f"{name}:{regime}"]
            cells.append(f"{spec['median']:,.0f}: {_ratio(spec['median'], b['theorem1'])} / "
                         f"{_ratio(spec['median'], b['theorem1_kl'])} / {_ratio(spec['median'], b['bernoulli_kl'])}, "
                         f"{spec['right']}/{spec['runs']}")
        lines.append(f"| {item['file']} ({item['at_least']} in X≥(x*)) | {b['theorem1']:,.1f} | {b['theorem1_kl']:,.1f} | "
                     f"{b['bernoulli']:,.1f} | {b['bernoulli_kl']:,.1f} | " + " | ".join(cells) + " |")
    lines += ["", "Where the default's factor goes (ratios to Theorem 1 at R = 1; A, S: medians over the runs; "
              "variances 1 − m²):", "",
              "| instance | default | A (allocation) | S (stopping) | variance, pulls / design | Gaussian σ = 1 | "
              "mean path: default / H_CLB design / H_Bern design | H_CLB design, yes/no noise | β_eff (H_CLB path) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for item in document["instances"]:
        b, s, p = item["bounds"], item["split"], item["mean_path"]
        bound = b["theorem1"]
        default = item["specs"]["track-and-stop:ols"]["median"]
        lines.append(f"| {item['file']} | {_ratio(default, bound)} | {s['allocation']:.2f} | {s['stopping']:.2f} | "
                     f"{s['pulled_variance']:.3f} / {item['design_variance']:.3f} | "
                     f"{_ratio(item['gaussian']['median'], bound)} ({item['gaussian']['right']}/{item['gaussian']['runs']}) | "
                     f"{_ratio(p['default'], bound)} / {_ratio(p['design'], bound)} / {_ratio(p['bernoulli_design'], bound)} | "
                     f"{_ratio(p['design_noisy'], bound)} | {p['beta_min']:.2f}–{p['beta_max']:.2f} |")
    lines += ["", "The same policies with other arms (default's median / the variant's own Theorem 1 bound at R = 1, "
              "and / its yes/no kl bound):", "",
              "| instance | variant | arms | Theorem 1 (R = 1) | default | runs right |", "|---|---|---:|---:|---:|---:|"]
    for item in document["instances"]:
        b = item["bounds"]
        default = item["specs"]["track-and-stop:ols"]
        lines.append(f"| {item['file']} | as built | {item['arms']} | {b['theorem1']:,.1f} | "
                     f"{_ratio(default['median'], b['theorem1'])} / {_ratio(default['median'], b['bernoulli_kl'])} | "
                     f"{default['right']}/{default['runs']} |")
        for name, v in item["variants"].items():
            lines.append(f"| | {name} | {v['arms']} | {v['theorem1']:,.1f} | {_ratio(v['median'], v['theorem1'])} / "
                         f"{_ratio(v['median'], v['bernoulli_kl'])} | {v['right']}/{v['runs']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = results_parser(__doc__, "files")
    args = parser.parse_args(argv)
    if args.render is not None:
        render_files(args.render, render)
        return
    measure_each("binary_factor.py", argv, args.files, lambda path: measure(path, args.seeds), render, args.json,
                 seeds=args.seeds)


if __name__ == "__main__":
    main()
