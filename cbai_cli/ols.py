"""Least squares on the span of the design, and the mixture-of-ridge-scales bound on its error.

The ``ols`` confidence regime (docs/ols.md). After pulls x_1 … x_n with observations
y_s = φᵀx_s + η_s (η_s conditionally R-sub-Gaussian), let V = Σ x_s x_sᵀ (no ridge),
b = Σ y_s x_s and V⁺ the pseudo-inverse. For x in the span of V the estimate xᵀV⁺b is
unbiased and its error is xᵀV⁺S with S = Σ η_s x_s. With probability ≥ 1 − δ, for every
time, every arm x in the span and every window ρ of the prior over ridge scales λ,

    |xᵀV⁺b − xᵀφ| ≤ R·sqrt(2·β_ρ·(xᵀV⁺x + λ̄_ρ‖V⁺x‖²)),
    β_ρ = log(1/δ) + log(M/w) + (1/2)·mean_{λ∈ρ} log det(I + V/λ),

where the prior π is uniform over M ridge scales λ_i = L²·exp(u_lo + i·h), ρ is uniform
over w consecutive scales and λ̄_ρ their mean (docs/ols.md, Theorem; it rests on
Abbasi-Yadkori, Pál, Szepesvári 2011, Theorem 1 and Lemma 9, mixed over λ by
Donsker–Varadhan). Arms with a component outside the span stay uncertain (infinite width).

- :class:`ScalePrior`: π and its windows ρ.
- :class:`LeastSquaresSpan`: V⁺, xᵀV⁺b, xᵀV⁺x and ‖V⁺x‖² of every arm, kept by rank-one
  updates at O(K·d + d²) per pull; an exact recomputation when the span grows.
- :func:`mixture_thresholds`, :func:`mixture_widths`: β_ρ for every window and the per-arm
  half-widths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# Relative size below which an eigenvalue of V, or the part of an arm outside the span,
# counts as zero: least squares identifies φ only on the span (Lindner et al. 2022,
# Proposition 2 makes the same cut for one round's design).
SPAN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class ScalePrior:
    """The prior π over ridge scales: uniform over λ_i = scale·exp(low + i·step), i < M.

    The windows ρ are uniform over w consecutive scales for every w in ``windows``;
    KL(ρ‖π) = log(M/w).

    Attributes:
        scale: L², the squared largest arm norm (eigenvalues of V are in its units).
        low, high: log(λ/L²) of the smallest and largest scale.
        step: spacing of the scales in log λ.
        windows: the window lengths w.
    """

    scale: float
    low: float = -2.0
    high: float = 12.0
    step: float = 0.25
    windows: tuple[int, ...] = (8, 16, 24)
    scales: np.ndarray = field(init=False, repr=False, compare=False)
    ratios: np.ndarray = field(init=False, repr=False, compare=False)
    window_starts: np.ndarray = field(init=False, repr=False, compare=False)
    window_ends: np.ndarray = field(init=False, repr=False, compare=False)
    window_lengths: np.ndarray = field(init=False, repr=False, compare=False)
    window_means: np.ndarray = field(init=False, repr=False, compare=False)
    window_divergences: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.scale > 0:
            raise ValueError(f"scale must be > 0, got {self.scale}")
        count = int(round((self.high - self.low) / self.step)) + 1
        if not all(1 <= width <= count for width in self.windows):
            raise ValueError(f"windows {self.windows} must lie in 1..{count}")
        scales = self.scale * np.exp(self.low + self.step * np.arange(count))
        # Window [i, i + w) of the scales, for every w and i, as indices into cumulative sums.
        starts = np.concatenate([np.arange(count - width + 1) for width in self.windows])
        lengths = np.concatenate([np.full(count - width + 1, width) for width in self.windows])
        ends = starts + lengths
        sums = np.concatenate(([0.0], np.cumsum(scales)))
        object.__setattr__(self, "scales", scales)
        object.__setattr__(self, "ratios", np.concatenate(([0.0], 1.0 / scales[::-1])))
        object.__setattr__(self, "window_starts", starts)
        object.__setattr__(self, "window_ends", ends)
        object.__setattr__(self, "window_lengths", lengths.astype(float))
        object.__setattr__(self, "window_means", (sums[ends] - sums[starts]) / lengths)
        object.__setattr__(self, "window_divergences", np.log(count / lengths))

    def window_log_dets(self, eigenvalues: np.ndarray) -> np.ndarray:
        """(m,) mean over each window ρ of log det(I + V/λ) = Σ_k log(1 + μ_k/λ).

        Args:
            eigenvalues: (r,) eigenvalues μ_k ≥ 0 of V (zeros add nothing).
        """
        log_dets = np.log1p(eigenvalues[None, :] / self.scales[:, None]).sum(axis=1)
        sums = np.concatenate(([0.0], np.cumsum(log_dets)))
        return (sums[self.window_ends] - sums[self.window_starts]) / self.window_lengths


def mixture_thresholds(prior: ScalePrior, eigenvalues: np.ndarray, delta: float) -> np.ndarray:
    """(m,) β_ρ = log(1/δ) + KL(ρ‖π) + (1/2)·mean_ρ log det(I + V/λ) for every window ρ.

    ``eigenvalues``: (r,) eigenvalues μ_k ≥ 0 of V (zeros add nothing).
    """
    return -math.log(delta) + prior.window_divergences + 0.5 * prior.window_log_dets(eigenvalues)


def mixture_widths(variances: np.ndarray, spreads: np.ndarray, thresholds: np.ndarray, prior: ScalePrior,
                   subgaussian: float) -> np.ndarray:
    """Half-widths R·sqrt(2·β_ρ·(a + λ̄_ρ·b)) of arms with a = xᵀV⁺x and b = ‖V⁺x‖², for a
    window ρ chosen per arm.

    Every window gives a valid width (the Theorem holds for all ρ at once). Window j
    gives a·β_j·(1 + λ̄_j·t) with t = b/a; the best window is found for t = 0 and for
    t = 1/λ_i at every scale λ_i of the prior (rows of an (M + 1, m) table, only those
    some arm needs), and each arm takes the best of the windows found for the two grid
    values of t around its own and of the window best as t → ∞: O(M·m) per step for the
    table and O(K) for the arms, instead of O(K·m).

    Args:
        variances: (K,) a ≥ 0.
        spreads: (K,) b ≥ 0.
        thresholds: (m,) β_ρ, in the order of ``prior.window_means``.
        prior: the scales and windows.
        subgaussian: R.

    Returns:
        (K,) half-widths.
    """
    means = prior.window_means
    grid = prior.ratios
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(variances > 0, spreads / variances, 0.0)
    position = np.clip(np.searchsorted(grid, ratio), 1, grid.size - 1)
    # Only the rows of the table that some arm reads: the arms' ratios usually span a few scales.
    first, last = int(position.min()) - 1, int(position.max()) + 1
    best = np.argmin(thresholds[None, :] * (1.0 + means[None, :] * grid[first:last, None]), axis=1)
    steepest = int(np.argmin(thresholds * means))
    factor = thresholds[steepest] * (1.0 + means[steepest] * ratio)
    for chosen in (best[position - first], best[position - 1 - first]):
        factor = np.minimum(factor, thresholds[chosen] * (1.0 + means[chosen] * ratio))
    return subgaussian * np.sqrt(2.0 * np.maximum(variances, 0.0) * factor)


class LeastSquaresSpan:
    """Ordinary least squares on the span of the pulled arms, for a fixed arm matrix.

    V = Σ c_s x_s x_sᵀ, b = Σ y_s x_s, φ̂ = V⁺b. While a pull stays in the span of V, V⁺
    restricted to the span is an ordinary inverse and takes the Sherman–Morrison update,
    and the per-arm caches follow at O(K·d + d²); a pull that leaves the span (at most d
    of them) and every ``refresh_every`` updates recompute everything from V and b.

    Args:
        arms: (K, d) arm features.
        refresh_every: updates between exact recomputations (None: max(200, 20·d)).

    Attributes:
        arms: (K, d).
        gram: (d, d) V.
        targets: (d,) b.
        pinv: (d, d) V⁺.
        basis: (d, r) orthonormal basis of the span of V.
        eigenvalues: (r,) the eigenvalues of V on the span at the last recomputation.
        inside: (K,) whether each arm lies in the span.
        predictions: (K,) xᵀφ̂.
        variances: (K,) xᵀV⁺x.
        spreads: (K,) ‖V⁺x‖².
        n_samples: Σ c_s.
    """

    def __init__(self, arms: np.ndarray, refresh_every: int | None = None) -> None:
        self.arms = np.ascontiguousarray(arms, dtype=float)
        k, d = self.arms.shape
        self.dim = d
        self.refresh_every = refresh_every or max(200, 20 * d)
        self.gram = np.zeros((d, d))
        self.targets = np.zeros(d)
        self.n_samples = 0
        self._arm_norms2 = np.einsum("kd,kd->k", self.arms, self.arms)
        self._since_refresh = 0
        self._eigenvalues_current = True
        self.refresh()

    @property
    def rank(self) -> int:
        return self.basis.shape[1]

    def update(self, arm: int, total: float, count: int = 1) -> None:
        """Add ``count`` pulls of arm ``arm`` whose observations sum to ``total``."""
        x = self.arms[arm]
        self.gram += count * np.outer(x, x)
        self.targets += total * x
        self.n_samples += count
        self._eigenvalues_current = False
        outside = x - self.basis @ (self.basis.T @ x)
        self._since_refresh += 1
        if float(outside @ outside) > SPAN_TOLERANCE * max(float(x @ x), np.finfo(float).tiny) \
                or self._since_refresh >= self.refresh_every:
            self.refresh()
            return
        u = self.pinv @ x
        q = float(x @ u)
        denominator = 1.0 + count * q
        projected = self.arms @ u  # xᵀV⁺x_t for every arm: the first O(K·d) product
        twice = self.arms @ (self.pinv @ u)  # xᵀV⁺V⁺x_t: the second
        residual = (total - count * float(x @ self._estimate)) / denominator
        shrink = count / denominator
        self.variances -= shrink * projected**2
        self.spreads += shrink * projected * (shrink * float(u @ u) * projected - 2.0 * twice)
        self._estimate += residual * u
        self.predictions += residual * projected
        self.pinv -= shrink * np.outer(u, u)

    def refresh(self) -> None:
        """Recompute the span, V⁺, φ̂ and the per-arm caches from V and b: O(K·d·r + d³)."""
        eigenvalues, vectors = np.linalg.eigh(self.gram)
        top = float(eigenvalues[-1]) if eigenvalues.size else 0.0
        keep = eigenvalues > SPAN_TOLERANCE * top if top > 0 else np.zeros(self.dim, dtype=bool)
        self.eigenvalues = eigenvalues[keep]
        self._all_eigenvalues = np.maximum(eigenvalues, 0.0)
        self.basis = vectors[:, keep]
        coordinates = self.arms @ self.basis
        scaled = coordinates / self.eigenvalues
        self.pinv = (self.basis / self.eigenvalues) @ self.basis.T
        self._estimate = self.pinv @ self.targets
        self.predictions = self.arms @ self._estimate
        self.variances = np.einsum("kr,kr->k", scaled, coordinates)
        self.spreads = np.einsum("kr,kr->k", scaled, scaled)
        outside = self._arm_norms2 - np.einsum("kr,kr->k", coordinates, coordinates)
        self.inside = outside <= SPAN_TOLERANCE * np.maximum(self._arm_norms2, np.finfo(float).tiny)
        self._since_refresh = 0
        self._eigenvalues_current = True

    def current_eigenvalues(self) -> np.ndarray:
        """(d,) all eigenvalues of V now, round-off below 0 set to 0: the log-determinants
        of the bound take every one, also those below the span's cut (one symmetric
        eigenvalue solve, O(d³), if V changed since the last one)."""
        if not self._eigenvalues_current:
            self._all_eigenvalues = np.maximum(np.linalg.eigvalsh(self.gram), 0.0)
            self._eigenvalues_current = True
        return self._all_eigenvalues

    def estimate(self) -> np.ndarray:
        """(d,) φ̂ = V⁺b (zero outside the span)."""
        return self._estimate.copy()


def ols_intervals(fit: LeastSquaresSpan, prior: ScalePrior, delta: float,
                  subgaussian: float) -> tuple[np.ndarray, np.ndarray]:
    """(lower (K,), upper (K,)) of the ``ols`` regime: xᵀφ̂ ∓ the mixture width for arms in
    the span, (−∞, ∞) for the others (docs/ols.md, Theorem)."""
    if fit.rank == 0:
        return np.full(fit.arms.shape[0], -np.inf), np.full(fit.arms.shape[0], np.inf)
    thresholds = mixture_thresholds(prior, fit.current_eigenvalues(), delta)
    widths = mixture_widths(fit.variances, fit.spreads, thresholds, prior, subgaussian)
    widths = np.where(fit.inside, widths, np.inf)
    return fit.predictions - widths, fit.predictions + widths
