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
    KL(ρ‖π) = log(M/w). Everything that does not depend on the data is computed here,
    once per run: the per-step work is then a few products with these tables.

    Attributes:
        scale: L², the squared largest arm norm (eigenvalues of V are in its units).
        low, high: log(λ/L²) of the smallest and largest scale.
        step: spacing of the scales in log λ.
        windows: the window lengths w.
        scales: (M,) λ_i.
        ratios: (M + 1,) the grid of t = ‖V⁺x‖²/xᵀV⁺x: 0, then 1/λ_i increasing.
        window_weights: (m, M) ρ_j(λ_i): row j averages over window j.
        window_means: (m,) λ̄_ρ.
        window_divergences: (m,) KL(ρ‖π).
        table: (M + 2, m) 1 + λ̄_ρ·t for t on the grid ``ratios``, then a row λ̄_ρ (t → ∞):
            row g times β gives the factor of every window at grid point g.
        candidates: (M, 3) for t between grid points p and p + 1: the rows p, p + 1 and
            M + 1 of ``table`` whose best windows an arm there takes.
    """

    scale: float
    low: float = -2.0
    high: float = 12.0
    step: float = 0.25
    windows: tuple[int, ...] = (8, 16, 24)
    scales: np.ndarray = field(init=False, repr=False, compare=False)
    ratios: np.ndarray = field(init=False, repr=False, compare=False)
    window_weights: np.ndarray = field(init=False, repr=False, compare=False)
    window_means: np.ndarray = field(init=False, repr=False, compare=False)
    window_divergences: np.ndarray = field(init=False, repr=False, compare=False)
    table: np.ndarray = field(init=False, repr=False, compare=False)
    candidates: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.scale > 0:
            raise ValueError(f"scale must be > 0, got {self.scale}")
        count = int(round((self.high - self.low) / self.step)) + 1
        if not all(1 <= width <= count for width in self.windows):
            raise ValueError(f"windows {self.windows} must lie in 1..{count}")
        scales = self.scale * np.exp(self.low + self.step * np.arange(count))
        # Window [i, i + w) of the scales, for every w and i.
        starts = np.concatenate([np.arange(count - width + 1) for width in self.windows])
        lengths = np.concatenate([np.full(count - width + 1, width) for width in self.windows])
        index = np.arange(count)
        weights = ((index >= starts[:, None]) & (index < (starts + lengths)[:, None])) / lengths[:, None]
        means = weights @ scales
        ratios = np.concatenate(([0.0], 1.0 / scales[::-1]))
        table = np.vstack((1.0 + means[None, :] * ratios[:, None], means))
        rows = np.arange(count)
        self._set(scales=scales, ratios=ratios, window_weights=weights, window_means=means,
                  window_divergences=np.log(count / lengths), table=table,
                  candidates=np.stack((rows, rows + 1, np.full(count, count + 1)), axis=1))

    def _set(self, **values: np.ndarray) -> None:
        for name, value in values.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def log_dets(self, eigenvalues: np.ndarray) -> np.ndarray:
        """(M,) log det(I + V/λ_i) = Σ_k log(1 + μ_k/λ_i) for every scale.

        Args:
            eigenvalues: (r,) eigenvalues μ_k ≥ 0 of V (zeros add nothing).
        """
        return np.add.reduce(np.log1p(eigenvalues[:, None] / self.scales), axis=0)

    def window_log_dets(self, eigenvalues: np.ndarray) -> np.ndarray:
        """(m,) mean over each window ρ of log det(I + V/λ)."""
        return self.window_weights @ self.log_dets(eigenvalues)


def mixture_thresholds(prior: ScalePrior, eigenvalues: np.ndarray, delta: float) -> np.ndarray:
    """(m,) β_ρ = log(1/δ) + KL(ρ‖π) + (1/2)·mean_ρ log det(I + V/λ) for every window ρ.

    ``eigenvalues``: (r,) eigenvalues μ_k ≥ 0 of V (zeros add nothing).
    """
    return (prior.window_divergences - math.log(delta)) + 0.5 * prior.window_log_dets(eigenvalues)


def mixture_widths(variances: np.ndarray, spreads: np.ndarray, thresholds: np.ndarray, prior: ScalePrior,
                   subgaussian: float) -> np.ndarray:
    """Half-widths R·sqrt(2·β_ρ·(a + λ̄_ρ·b)) of arms with a = xᵀV⁺x and b = ‖V⁺x‖², for a
    window ρ chosen per arm.

    Every window gives a valid width (the Theorem holds for all ρ at once). Window j
    gives a·β_j·(1 + λ̄_j·t) with t = b/a, a line in t; the best window is found at the
    grid points t = 0 and t = 1/λ_i of the prior and as t → ∞ (one (M + 2, m) table
    product), and an arm with t between grid points p and p + 1 takes the best of the
    windows found at p, p + 1 and ∞: O(M·m) per step for the table and O(K) for the arms,
    instead of O(K·m).

    Args:
        variances: (K,) a ≥ 0.
        spreads: (K,) b ≥ 0.
        thresholds: (m,) β_ρ, in the order of ``prior.window_means``.
        prior: the scales and windows.
        subgaussian: R.

    Returns:
        (K,) half-widths.
    """
    ratio = np.divide(spreads, variances, out=np.zeros_like(variances), where=variances > 0)
    chosen = np.argmin(thresholds * prior.table, axis=1)[prior.candidates]
    # Window j as the line β_j + β_j·λ̄_j·t, for the three candidates of every interval.
    intercepts, slopes = thresholds[chosen], (thresholds * prior.window_means)[chosen]
    interval = np.searchsorted(prior.ratios[1:-1], ratio)
    factor = np.minimum.reduce(intercepts[interval] + slopes[interval] * ratio[:, None], axis=1)
    return np.sqrt((2.0 * subgaussian**2) * np.maximum(variances, 0.0) * factor)


class LeastSquaresSpan:
    """Ordinary least squares on the span of the pulled arms, for a fixed arm matrix.

    V = Σ c_s x_s x_sᵀ, b = Σ y_s x_s, φ̂ = V⁺b. While a pull stays in the span of V, V⁺
    restricted to the span is an ordinary inverse and takes the Sherman–Morrison update,
    and the per-arm caches follow from one product of the arm matrix with (V⁺x, V⁺V⁺x):
    O(K·d + d²). A pull of an arm outside the span (at most d such steps grow it) and every
    ``refresh_every`` updates recompute everything from V and b.

    Args:
        arms: (K, d) arm features.
        refresh_every: updates between exact recomputations (None: max(200, 20·d)).

    Attributes:
        arms: (K, d).
        gram: (d, d) V.
        pinv: (d, d) V⁺.
        basis: (d, r) orthonormal basis of the span of V.
        eigenvalues: (r,) the eigenvalues of V on the span at the last recomputation.
        inside: (K,) whether each arm lies in the span (at the last recomputation; pulls
            in between stay in it).
        n_samples: Σ c_s.
    """

    def __init__(self, arms: np.ndarray, refresh_every: int | None = None) -> None:
        self.arms = np.ascontiguousarray(arms, dtype=float)
        k, d = self.arms.shape
        self.dim = d
        self.refresh_every = refresh_every or max(200, 20 * d)
        self.gram = np.zeros((d, d))
        self.n_samples = 0
        self._arms_t = np.ascontiguousarray(self.arms.T)
        self._arm_norms2 = np.einsum("kd,kd->k", self.arms, self.arms)
        self._sums = np.zeros(k)  # Σ y_s per arm: b = armsᵀ·sums
        self._directions = np.zeros((2, d))  # V⁺x and V⁺V⁺x of the pulled arm
        self._since_refresh = 0
        self._eigenvalues_current = True
        self.refresh()

    @property
    def rank(self) -> int:
        return self.basis.shape[1]

    @property
    def targets(self) -> np.ndarray:
        """(d,) b = Σ y_s x_s."""
        return self._sums @ self.arms

    @property
    def variances(self) -> np.ndarray:
        """(K,) xᵀV⁺x."""
        return self._caches[0]

    @property
    def spreads(self) -> np.ndarray:
        """(K,) ‖V⁺x‖²."""
        return self._caches[1]

    @property
    def predictions(self) -> np.ndarray:
        """(K,) xᵀφ̂."""
        return self._caches[2]

    def update(self, arm: int, total: float, count: int = 1) -> None:
        """Add ``count`` pulls of arm ``arm`` whose observations sum to ``total``.

        With u = V⁺x, q = xᵀu and s = c/(1 + c·q): V⁺ −= s·uuᵀ, and for every arm a with
        p = aᵀu and p' = aᵀV⁺u: aᵀV⁺a −= s·p², ‖V⁺a‖² += s²·‖u‖²·p² − 2s·p·p', and
        aᵀφ̂ += p·(y − c·xᵀφ̂)/(1 + c·q).
        """
        x = self.arms[arm]
        self.gram += (count * x)[:, None] * x
        self._sums[arm] += total
        self.n_samples += count
        self._eigenvalues_current = False
        self._since_refresh += 1
        if not self.inside[arm] or self._since_refresh >= self.refresh_every:
            self.refresh()
            return
        u, twice = self._directions
        np.matmul(self.pinv, x, out=u)
        np.matmul(self.pinv, u, out=twice)
        projected = self._directions @ self._arms_t  # (2, K): the one pass over the arm matrix
        q = float(projected[0, arm])
        shrink = count / (1.0 + count * q)
        residual = (total - count * float(self._caches[2, arm])) / (1.0 + count * q)
        coefficients = np.array([[-shrink, 0.0], [shrink * shrink * float(u @ u), -2.0 * shrink]])
        self._caches[:2] += coefficients @ (projected[0] * projected)
        self._caches[2] += residual * projected[0]
        self.pinv -= (shrink * u)[:, None] * u

    def refresh(self) -> None:
        """Recompute the span, V⁺ and the per-arm caches from V and b: O(K·d·r + d³)."""
        eigenvalues, vectors = np.linalg.eigh(self.gram)
        top = float(eigenvalues[-1]) if eigenvalues.size else 0.0
        keep = eigenvalues > SPAN_TOLERANCE * top if top > 0 else np.zeros(self.dim, dtype=bool)
        self.eigenvalues = eigenvalues[keep]
        self._all_eigenvalues = np.maximum(eigenvalues, 0.0)
        self.basis = vectors[:, keep]
        coordinates = self.arms @ self.basis
        scaled = coordinates / self.eigenvalues
        self.pinv = (self.basis / self.eigenvalues) @ self.basis.T
        self._caches = np.stack((np.einsum("kr,kr->k", scaled, coordinates), np.einsum("kr,kr->k", scaled, scaled),
                                 self.arms @ self.estimate()))
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
        return self.pinv @ self.targets


def ols_intervals(fit: LeastSquaresSpan, prior: ScalePrior, delta: float,
                  subgaussian: float) -> tuple[np.ndarray, np.ndarray]:
    """(lower (K,), upper (K,)) of the ``ols`` regime: xᵀφ̂ ∓ the mixture width for arms in
    the span, (−∞, ∞) for the others (docs/ols.md, Theorem)."""
    if fit.rank == 0:
        return np.full(fit.arms.shape[0], -np.inf), np.full(fit.arms.shape[0], np.inf)
    thresholds = mixture_thresholds(prior, fit.current_eigenvalues(), delta)
    widths = np.where(fit.inside, mixture_widths(fit.variances, fit.spreads, thresholds, prior, subgaussian), np.inf)
    predictions = fit.predictions
    return predictions - widths, predictions + widths
