"""What an arm's own yes/no answers could certify with their Bernoulli likelihood instead of a
sub-Gaussian bound (docs/binary.md, "Intervals that use what yes/no answers tell").

Two anytime one-sided tests of "the arm's mean m is at most τ" (certifying it infeasible;
the other side is the mirror image) from n answers y_s ∈ {−1, +1} with k answers +1, both
mixtures over one discrete prior w_j on shifts μ_j ∈ (0, 1 − τ) of the mean: the mass near μ_j
of the half-normal N(0, 1/λ_i) on μ > 0 mixed over the ridge scales λ_i of the ``ols``
regime's own means (:class:`cbai_cli.numerics.ols.ScalePrior` with L² = 1, in units of pulls),
normalised to total mass at most 1:

- sub-Gaussian (R = 1): M_n = Σ_j w_j exp(μ_j·S_n − n μ_j²/2), S_n = Σ_s (y_s − τ);
- Bernoulli: M_n = Σ_j w_j (q_j/p_τ)^k ((1 − q_j)/(1 − p_τ))^(n − k), the likelihood ratio of
  P(+1) = q_j = p_τ + μ_j/2 (mean τ + μ_j) against p_τ = (1 + τ)/2.

Under any m ≤ τ both are nonnegative supermartingales with M_0 ≤ 1 (docs/binary.md, the
theorem), so "reject when M_n ≥ 1/α" errs with probability at most α at any time (Ville).

The script prints, for each arm of X≥(x*) of the driver files given and for a few illustrative
means, the number of pulls at which each test first rejects on the mean path (k = n·(1 + m)/2,
every answer its expectation), at α = ``--alpha``; and a coverage check of the Bernoulli test:
``--runs`` runs of ``--horizon`` answers at m = τ (the hardest null), how many reject at some
time, against α and the binomial upper limit α + 3·sqrt(α(1 − α)/runs); and the same with the
threshold 1/α lowered tenfold, which must fail that limit (so the check has power).

    python benchmarks/binary_own_mean.py driver-n200-seed7.yaml driver-n200-seed12.yaml \\
        driver-n200-seed5.yaml --json benchmarks/results/binary_own_mean.json
    python benchmarks/binary_own_mean.py --render benchmarks/results/binary_own_mean.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

from cbai_cli.kinds.cbai.bounds import at_least_set
from cbai_cli.kinds import load
from cbai_cli.numerics.ols import ScalePrior
from report import document, write_document  # benchmarks/report.py, beside this script

#: Points of the discrete prior over the shift μ, log-spaced from 10⁻⁶ to 1 − τ.
POINTS = 300
ILLUSTRATIVE = (0.05, 0.2, 0.5, 0.8, 0.95)


class Tests:
    """Both tests' log M_n at τ for answer counts (k, n), with the discrete prior of the module
    docstring: the half-normal mixture's mass on a log-spaced grid of shifts, normalised to sum
    to at most 1 (a discrete prior of total mass ≤ 1 keeps each mixture a supermartingale)."""

    def __init__(self, threshold: float) -> None:
        prior = ScalePrior(1.0)
        self.threshold = threshold
        self.p = (1.0 + threshold) / 2.0
        edges = np.geomspace(1e-6, 1.0 - threshold, POINTS + 1)
        self.shifts = np.sqrt(edges[1:] * edges[:-1])
        # log Σ_i π_i·(half-normal density of scale λ_i at μ)·dμ over the scales, (P,)
        log_mass = logsumexp(prior.log_weights[:, None] + 0.5 * np.log(2.0 * prior.scales[:, None] / math.pi)
                             - 0.5 * prior.scales[:, None] * self.shifts**2, axis=0) + np.log(np.diff(edges))
        self.log_mass = log_mass - max(0.0, float(logsumexp(log_mass)))
        q = self.p + self.shifts / 2.0
        self.log_up = np.log(q / self.p)
        self.log_down = np.log1p(-q) - np.log1p(-self.p)

    def log_subgaussian(self, ones: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """log M_n of the sub-Gaussian mixture Σ_j w_j exp(μ_j S_n − n μ_j²/2), shapes (T,)."""
        total = (2.0 * ones - counts) - counts * self.threshold
        exponent = total[:, None] * self.shifts - counts[:, None] * self.shifts**2 / 2.0
        return logsumexp(exponent + self.log_mass, axis=1)

    def log_bernoulli(self, ones: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """log M_n of the Bernoulli mixture Σ_j w_j (q_j/p_τ)^k ((1 − q_j)/(1 − p_τ))^(n − k), shapes (T,)."""
        exponent = ones[:, None] * self.log_up + (counts - ones)[:, None] * self.log_down
        return logsumexp(exponent + self.log_mass, axis=1)


def first_rejection(tests: Tests, mean: float, alpha: float, limit: int = 10**7) -> dict:
    """Pulls at which each test first rejects m ≤ τ on the mean path of an arm of mean ``mean`` > τ."""
    level = math.log(1.0 / alpha)
    found = {}
    for name, log_m in (("subgaussian", tests.log_subgaussian), ("bernoulli", tests.log_bernoulli)):
        low, high = 1, 1
        while high < limit and log_m(np.array([high * (1 + mean) / 2]), np.array([float(high)]))[0] < level:
            low, high = high, high * 2
        while high - low > 1:  # log M_n grows with n on the mean path: bisect to the first n
            middle = (low + high) // 2
            if log_m(np.array([middle * (1 + mean) / 2]), np.array([float(middle)]))[0] >= level:
                high = middle
            else:
                low = middle
        found[name] = high
    return found


def coverage(alpha: float, runs: int, horizon: int, seed: int) -> dict:
    """Runs (of ``horizon`` fair ±1 answers, τ = 0) whose Bernoulli test rejects at some time,
    at 1/α and at 1/(10α)."""
    tests = Tests(0.0)
    rng = np.random.default_rng(seed)
    counts = np.arange(1, horizon + 1, dtype=float)
    wrong, loose = 0, 0
    for _ in range(runs):
        ones = np.cumsum(rng.random(horizon) < 0.5).astype(float)
        peak = float(np.max(tests.log_bernoulli(ones, counts)))
        wrong += peak >= math.log(1.0 / alpha)
        loose += peak >= math.log(1.0 / (10 * alpha))
    limit = alpha + 3.0 * math.sqrt(alpha * (1 - alpha) / runs)
    return {"alpha": alpha, "runs": runs, "horizon": horizon, "seed": seed, "rejected": wrong,
            "rejected_tenfold": loose, "limit": limit}


def measure(files: list[str], alpha: float, runs: int, horizon: int) -> dict:
    arms = []
    for path in files:
        instance = load(path)
        means = instance.truth.means(instance.problem.arms)
        threshold = instance.truth.threshold
        tests = Tests(threshold)
        for arm in np.flatnonzero(at_least_set(instance)).tolist():
            # the side that certifies the arm: m > τ (infeasible) or, mirrored, m < τ (feasible)
            shift = abs(float(means[arm]) - threshold)
            found = first_rejection(tests, threshold + shift, alpha)
            arms.append({"file": Path(path).name, "arm": arm, "mean": float(means[arm]), **found})
    illustrative = []
    tests = Tests(0.0)
    for mean in ILLUSTRATIVE:
        illustrative.append({"mean": mean, **first_rejection(tests, mean, alpha)})
    return {"alpha": alpha, "arms": arms, "illustrative": illustrative,
            "coverage": coverage(0.1, runs, horizon, 20261205)}


def information_ratio(mean: float, threshold: float = 0.0) -> float:
    """kl((1 + m)/2, (1 + τ)/2)/((m − τ)²/2): a Bernoulli pull's information over a unit sub-Gaussian one's."""
    p, q = (1 + mean) / 2, (1 + threshold) / 2
    kl = p * math.log(p / q) + ((1 - p) * math.log((1 - p) / (1 - q)) if p < 1 else 0.0)
    return kl / ((mean - threshold) ** 2 / 2)


def render(document: dict) -> str:
    lines = [f"`{document['command']}` ({document['date']}; α = {document['alpha']:g}, mean path)", "",
             "| instance | arm | mean m | pulls, sub-Gaussian (R = 1) | pulls, Bernoulli | ratio | kl/((m − τ)²/2) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for row in document["arms"]:
        lines.append(f"| {row['file']} | {row['arm']} | {row['mean']:+.3f} | {row['subgaussian']:,} | "
                     f"{row['bernoulli']:,} | {row['bernoulli'] / row['subgaussian']:.3f} | "
                     f"{information_ratio(abs(row['mean'])):.3f} |")
    for row in document["illustrative"]:
        lines.append(f"| (τ = 0) | — | {row['mean']:+.3f} | {row['subgaussian']:,} | {row['bernoulli']:,} | "
                     f"{row['bernoulli'] / row['subgaussian']:.3f} | {information_ratio(row['mean']):.3f} |")
    c = document["coverage"]
    lines += ["", f"Coverage of the Bernoulli test at m = τ = 0, α = {c['alpha']:g}: {c['rejected']} of {c['runs']} runs of "
              f"{c['horizon']:,} answers rejected at some time (limit α + 3 standard deviations: "
              f"{c['limit'] * c['runs']:.0f}); with the threshold lowered tenfold, {c['rejected_tenfold']} (seed {c['seed']})."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--alpha", type=float, default=0.05 * 0.3 / 2)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--horizon", type=int, default=4000)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--render", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.render is not None:
        print(render(json.loads(args.render.read_text())))
        return
    results = document("binary_own_mean.py", argv, **measure(args.files, args.alpha, args.runs, args.horizon))
    write_document(results, args.json)
    print(render(results))


if __name__ == "__main__":
    main()
