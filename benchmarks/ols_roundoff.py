"""How much roundoff one rank-one step of the ``ols`` fit adds to the spreads ‖V⁺x‖², and
how close the spreads stay to a fit from scratch under the fit's own rules (docs/ols.md,
"Cost").

1. One step: random designs (d = 1…6, K = d+1…d+7, every arm pulled 1–3 times; in half of
   them two arms nearly parallel, 10⁻¹…10⁻⁴ apart), V⁺ from scratch, then one step of
   :func:`cbai_cli.numerics.kernels.ols.rank_one_step` and the same formulas in numpy (BLAS order),
   both against the formulas in extended precision (``numpy.longdouble``) on the same
   float64 V⁺. Prints the error in units of ulp·(|Δ| + b') (the unit of the fit's
   roundoff bound, STEP_ROUNDOFF = 4 of them): quantiles and maximum.
2. Whole runs: ``--designs`` random designs (3d arms, two nearly parallel) pulled once
   each, then 300 random pulls through :class:`cbai_cli.numerics.ols.LeastSquaresSpan` with its
   refresh rules; the largest relative error of a spread against V⁻¹ from scratch after
   any pull. Runs under any checkout (``PYTHONPATH``), so the numpy version can be
   measured too.

    python benchmarks/ols_roundoff.py [--cases 3000] [--designs 200]
"""

from __future__ import annotations

import argparse

import numpy as np

from cbai_cli.numerics.ols import LeastSquaresSpan

EPS = float(np.finfo(float).eps)


def random_design(rng: np.random.Generator, d: int, k: int, near: bool):
    arms = rng.standard_normal((k, d))
    if near:
        arms[1] = arms[0] + 10.0 ** -float(rng.integers(1, 5)) * rng.standard_normal(d)
    counts = rng.integers(1, 4, size=k).astype(float)
    pinv = np.linalg.inv(arms.T @ (counts[:, None] * arms))
    pinv = np.ascontiguousarray(0.5 * (pinv + pinv.T))
    spreads = np.sum((arms @ pinv) ** 2, axis=1)
    return arms, pinv, spreads


def spread_change(arms, pinv, arm: int, count: int):
    """Δ‖V⁺a‖² = s²‖u‖²p² − 2s·p·p' of every arm, in the arrays' own precision (numpy's order)."""
    u = pinv @ arms[arm]
    shrink = count / (1 + count * (arms[arm] @ u))
    p, p_twice = arms @ u, arms @ (pinv @ u)
    return shrink * shrink * (u @ u) * p * p - 2 * shrink * p * p_twice


def one_step_errors(cases: int) -> dict[str, np.ndarray]:
    from cbai_cli.numerics.kernels.ols import rank_one_step
    from cbai_cli.numerics.kernels.threads import NEVER

    errors = {"kernel (pair products)": [], "numpy (BLAS order)": []}
    for seed in range(cases):
        rng = np.random.default_rng(seed)
        d = 1 + seed % 6
        k = d + 1 + seed % 7
        arms, pinv, spreads = random_design(rng, d, k, near=bool(seed % 2))
        arm, count = int(rng.integers(k)), int(rng.integers(1, 4))
        change = spread_change(arms.astype(np.longdouble), pinv.astype(np.longdouble), arm, count)
        exact = spreads.astype(np.longdouble) + change
        unit = EPS * (np.abs(change) + np.abs(exact))
        caches = np.stack((np.zeros(k), spreads, np.zeros(k)))
        rank_one_step(arms, pinv.copy(), caches, np.zeros(k), np.empty((2, d)), np.zeros(k), arm, count, 0.0, 0.0,
                      np.inf, np.inf, NEVER)
        errors["kernel (pair products)"].append(np.max(np.abs(caches[1] - exact) / unit))
        numpy_spreads = spreads + spread_change(arms, pinv, arm, count)
        errors["numpy (BLAS order)"].append(np.max(np.abs(numpy_spreads - exact) / unit))
    return {name: np.array(values, dtype=float) for name, values in errors.items()}


def run_drift(designs: int, pulls: int = 300) -> np.ndarray:
    """Per design: the largest relative error of a spread after any pull."""
    worst = []
    for seed in range(designs):
        rng = np.random.default_rng(seed)
        d = 2 + seed % 5
        k = 3 * d
        arms = rng.standard_normal((k, d))
        arms[1] = arms[0] * (1 + 1e-3 * rng.standard_normal()) + 1e-3 * rng.standard_normal(d)
        fit = LeastSquaresSpan(arms)
        for arm in range(k):
            fit.update(arm, float(rng.standard_normal()), 1)
        largest = 0.0
        for _ in range(pulls):
            fit.update(int(rng.integers(k)), float(rng.standard_normal()), int(rng.integers(1, 4)))
            exact = np.sum((arms @ np.linalg.inv(fit.gram)) ** 2, axis=1)
            largest = max(largest, float(np.max(np.abs(fit.spreads - exact) / exact)))
        worst.append(largest)
    return np.array(worst)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--designs", type=int, default=200)
    parser.add_argument("--no-steps", action="store_true", help="only the whole runs (for a checkout without the kernel)")
    args = parser.parse_args()
    if not args.no_steps:
        print(f"One step, {args.cases} random designs: error of ‖V⁺a‖² in ulp·(|Δ| + b')\n")
        print("| order | median | 99 % | 99.9 % | max |")
        print("|---|---:|---:|---:|---:|")
        for name, values in one_step_errors(args.cases).items():
            q = np.quantile(values, [0.5, 0.99, 0.999])
            print(f"| {name} | {q[0]:.2f} | {q[1]:.1f} | {q[2]:.0f} | {values.max():.0f} |")
    worst = run_drift(args.designs)
    print(f"\nWhole runs, {args.designs} designs × 300 pulls with the refresh rules: largest relative error of a "
          f"spread {worst.max():.1e} (median over designs {np.median(worst):.1e})")


if __name__ == "__main__":
    main()
