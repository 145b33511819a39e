"""Width of the ``ols`` regime's mixture bound against unions over grids of ridge scales
and against Theorem 1 at the best fixed scale (docs/ols.md, "Mixture against union").

For each instance: one G-ACOL run with ``--regime ols`` (seed 0, in the features' coordinates,
:func:`report.in_features`); at its last design V,
for every arm of X≥(x*) that lies in the span, the squared half-width divided by
2R²·xᵀV⁺x (queries scale with it) under
- ``fixed``: min over λ of (1 + λ t)·(log(1/δ) + ½ log det(I + V/λ)), t = ‖V⁺x‖²/xᵀV⁺x:
  Theorem 1 at the best λ for the arm, which no choice of λ made in advance guarantees;
- ``union-7``: a union over 7 scales λ = L²·4^j, j = −1 … 5, each at δ/7;
- ``windows``: the first version of the regime: π uniform over 57 scales L²·e^{−2+i/4},
  ρ uniform over 8, 16 or 24 consecutive scales, the best window per arm;
- ``gibbs``: the second version: the regime's prior, ρ from the family ρ_γ ∝ π·exp(−ℓ/2 − γλ)
  (γ = 0 and e^v/L², v = −18 … 10), Jensen's bound β_ρ·(1 + λ̄_ρ t), exact log-determinants;
- ``tangent``: the regime now: the tangent lines (docs/ols.md), exact log-determinants;
- ``shipped``: the same with the epoch's slack (ℓ + margin), as the regime runs.
Each column is the median over the arms of its ratio to ``fixed``.

    python benchmarks/ols_widths.py FILE...
"""

from __future__ import annotations

import math
import sys

import numpy as np

from cbai_cli.kinds.cbai.bounds import at_least_set
from cbai_cli.kinds import load
from cbai_cli.numerics.ols import LeastSquaresSpan, MixtureIntervals, ScalePrior, mixture_envelope, mixture_widths, points_in_use
from cbai_cli.run.simulate import RunRequest, drive, prepare, run_streams
from report import in_features  # benchmarks/report.py, beside this script


def final_intervals(instance, seed: int = 0) -> MixtureIntervals:
    """The ``ols`` intervals at the end of one G-ACOL run."""
    prepared = prepare(RunRequest.of("g-acol", "ols", **in_features("ols")), instance)
    noise_rng, algorithm_rng, _ = run_streams(seed)
    learner = prepared.make_algorithm(algorithm_rng)
    drive(learner, prepared.kind.environment(prepared.instance, noise_rng), None)
    return learner.intervals


def windows(mu: np.ndarray, t: np.ndarray, scale: float, delta: float) -> np.ndarray:
    """The first version's factor: min over windows ρ of β_ρ(1 + λ̄_ρ t)."""
    scales = scale * np.exp(-2.0 + 0.25 * np.arange(57))
    log_det = np.log1p(mu[None, :] / scales[:, None]).sum(axis=1)
    rows = []
    for width in (8, 16, 24):
        for start in range(57 - width + 1):
            part = slice(start, start + width)
            rows.append((-math.log(delta) + math.log(57 / width) + 0.5 * log_det[part].mean(), scales[part].mean()))
    beta, mean = np.array(rows).T
    return np.min(beta[None, :] * (1 + mean[None, :] * t[:, None]), axis=1)


def factors(fit: LeastSquaresSpan, arms: np.ndarray, delta: float, prior: ScalePrior, margin: float) -> dict[str, np.ndarray]:
    """Squared half-width / (2R²·xᵀV⁺x) of each arm under each bound."""
    mu = np.maximum(np.linalg.eigvalsh(fit.gram), 0.0)
    a, b = fit.variances[arms], fit.spreads[arms]
    t = b / a
    fine = prior.scale * np.exp(np.linspace(-8, 20, 3000))
    log_det = np.log1p(mu[None, :] / fine[:, None]).sum(axis=1)
    fixed = np.min((1 + fine[None, :] * t[:, None]) * (-math.log(delta) + 0.5 * log_det[None, :]), axis=1)
    grid = prior.scale * 4.0 ** np.arange(-1, 6)
    log_det7 = np.log1p(mu[None, :] / grid[:, None]).sum(axis=1)
    union = np.min((1 + grid[None, :] * t[:, None]) * (-math.log(delta / 7) + 0.5 * log_det7[None, :]), axis=1)
    values = {"fixed": fixed, "union-7": union, "windows": windows(mu, t, prior.scale, delta)}
    values["gibbs"] = jensen_family(prior.log_weights, prior.scales, prior.log_dets(mu), t, delta)
    for name, slack in (("tangent", 0.0), ("shipped", margin)):
        envelope = mixture_envelope(prior, prior.log_dets(mu) + slack, delta, points_in_use(prior, a, b))
        values[name] = mixture_widths(a, b, envelope, 1.0) ** 2 / (2 * a)
    return values


def jensen_family(log_weights: np.ndarray, scales: np.ndarray, log_dets: np.ndarray, t: np.ndarray,
                  delta: float) -> np.ndarray:
    """The second version's factor: min over γ of β_γ(1 + λ̄_γ t), ρ_γ ∝ π·exp(−ℓ/2 − γλ)."""
    gammas = np.concatenate(([0.0], np.exp(np.arange(-18.0, 11.0)) / scales[4]))
    exponents = log_weights[None, :] - 0.5 * log_dets[None, :] - gammas[:, None] * scales[None, :]
    top = exponents.max(axis=1)
    weights = np.exp(exponents - top[:, None])
    normaliser = weights.sum(axis=1)
    means = weights @ scales / normaliser
    beta = -math.log(delta) - (top + np.log(normaliser) + gammas * means)
    return np.min(beta[None, :] * (1 + means[None, :] * t[:, None]), axis=1)


def main(paths: list[str], delta: float = 0.05) -> None:
    columns = ("union-7", "windows", "gibbs", "tangent", "shipped")
    print("| instance | n at stop | rank | " + " | ".join(f"{name} / fixed" for name in columns) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for path in paths:
        instance = load(path)
        intervals = final_intervals(instance)
        fit = intervals.fit
        arms = np.flatnonzero(at_least_set(instance) & fit.inside)
        values = factors(fit, arms, delta, intervals.prior, intervals.margin)
        cells = [f"{np.median(values[name] / values['fixed']):.3f}" for name in columns]
        print(f"| {path} | {fit.n_samples} | {fit.rank} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
