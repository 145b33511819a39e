"""Width of the ``ols`` regime's mixture bound against a union over a grid of ridge scales
and against Theorem 1 at the best fixed scale (docs/ols.md, "Mixture against union").

For each instance: one G-ACOL run with ``--regime ols`` (seed 0, σ = 1); at its last
design V, for every arm of X≥(x*) that lies in the span, the squared half-width divided
by 2R²·xᵀV⁺x under
- ``fixed``: min over λ of (1 + λ t)·(log(1/δ) + ½ log det(I + V/λ)), t = ‖V⁺x‖²/xᵀV⁺x:
  Theorem 1 at the best λ for the arm, which no prior choice of λ guarantees;
- ``union-7``: a union over 7 scales λ = L²·4^j, j = −1 … 5, each at δ/7;
- ``mixture``: the regime as shipped (:mod:`cbai_cli.ols`).
Queries scale with the squared width, so the ratios to ``fixed`` estimate the price.

    python benchmarks/ols_widths.py instances/irrelevant-dims-d10-eps0.05.yaml ...
"""

from __future__ import annotations

import math
import sys

import numpy as np

from cbai_cli.bounds import at_least_set
from cbai_cli.kinds import load
from cbai_cli.ols import LeastSquaresSpan, ScalePrior, mixture_thresholds
from cbai_cli.simulate import RunRequest, drive, prepare, run_streams


def final_fit(instance, seed: int = 0) -> LeastSquaresSpan:
    """The least-squares fit at the end of one G-ACOL ``ols`` run."""
    prepared = prepare(RunRequest.of("g-acol", "ols"), instance)
    noise_rng, algorithm_rng, _ = run_streams(seed)
    learner = prepared.make_algorithm(algorithm_rng)
    drive(learner, prepared.kind.environment(prepared.instance, noise_rng), None)
    return learner.intervals.fit


def factors(fit: LeastSquaresSpan, arms: np.ndarray, delta: float, prior: ScalePrior) -> dict[str, np.ndarray]:
    """Squared half-width / (2R²·xᵀV⁺x) of each arm under the three bounds."""
    mu = fit.current_eigenvalues()
    a, b = fit.variances[arms], fit.spreads[arms]
    t = b / a
    fine = prior.scale * np.exp(np.linspace(-8, 20, 2000))
    log_det = np.log1p(mu[None, :] / fine[:, None]).sum(axis=1)
    fixed = np.min((1 + fine[None, :] * t[:, None]) * (-math.log(delta) + 0.5 * log_det[None, :]), axis=1)
    grid = prior.scale * 4.0 ** np.arange(-1, 6)
    log_det7 = np.log1p(mu[None, :] / grid[:, None]).sum(axis=1)
    union = np.min((1 + grid[None, :] * t[:, None]) * (-math.log(delta / 7) + 0.5 * log_det7[None, :]), axis=1)
    beta = mixture_thresholds(prior, mu, delta)
    mixture = np.min(beta[None, :] * (1 + prior.window_means[None, :] * t[:, None]), axis=1)
    return {"fixed": fixed, "union-7": union, "mixture": mixture}


def main(paths: list[str], delta: float = 0.05) -> None:
    for path in paths:
        instance = load(path)
        fit = final_fit(instance)
        arms = np.flatnonzero(at_least_set(instance) & fit.inside)
        prior = ScalePrior(float(np.max(np.sum(instance.problem.arms**2, axis=1))))
        values = factors(fit, arms, delta, prior)
        ratios = {name: values[name] / values["fixed"] for name in ("union-7", "mixture")}
        print(f"{path} ({instance.name}): n = {fit.n_samples}, rank {fit.rank}, arms {arms.tolist()}; "
              + "; ".join(f"{name}/fixed {np.median(r):.3f} [{r.min():.3f}, {r.max():.3f}]" for name, r in ratios.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
