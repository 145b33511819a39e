"""The design-matrix state shared by the adaptive algorithms.

A = λI + Σ n_s x_s x_sᵀ over all pulls, b = Σ x_s y_s, φ̂ = A⁻¹b (regularised least
squares, paper Proposition 3). A⁻¹ is kept by Sherman–Morrison, and so are, for every
arm at once, ‖x‖²_{A⁻¹} and xᵀφ̂: one update costs one matrix–vector product with the
arm matrix, O(K·d + d²). The exact quantities are recomputed every ``refresh_every``
updates so that round-off cannot drift.
"""

from __future__ import annotations

import numpy as np


class DesignState:
    """Regularised least squares over a fixed arm set, updated one arm at a time.

    Args:
        arms: (K, d) arm features.
        ridge: λ > 0 of A = λI + Σ x xᵀ.
        refresh_every: updates between exact recomputations (None: d-dependent default).
    """

    def __init__(self, arms: np.ndarray, ridge: float, refresh_every: int | None = None) -> None:
        if ridge <= 0:
            raise ValueError("ridge must be > 0")
        self.arms = np.ascontiguousarray(arms, dtype=float)
        k, d = self.arms.shape
        self.ridge = float(ridge)
        self.refresh_every = refresh_every or max(200, 20 * d)
        self.gram = ridge * np.eye(d)  # A, kept exactly (rank-one additions are exact enough)
        self.inverse = np.eye(d) / ridge  # A⁻¹
        self.target = np.zeros(d)  # b
        self.estimate = np.zeros(d)  # φ̂
        self.norms2 = np.einsum("kd,kd->k", self.arms, self.arms) / ridge  # ‖x‖²_{A⁻¹}, (K,)
        self.predictions = np.zeros(k)  # xᵀφ̂, (K,)
        self.logdet = d * np.log(ridge)  # log det A
        self.n_samples = 0
        self._since_refresh = 0

    @property
    def dim(self) -> int:
        return self.arms.shape[1]

    def update(self, arm: int, total: float, count: int = 1) -> None:
        """Add ``count`` pulls of arm ``arm`` whose observations sum to ``total``.

        With u = A⁻¹x and q = xᵀu, the rank-``count`` update A += c·xxᵀ gives
        A⁻¹ −= c·uuᵀ/(1 + c q) and φ̂ += u (s − c xᵀφ̂)/(1 + c q).
        """
        x = self.arms[arm]
        u = self.inverse @ x
        q = float(x @ u)
        scale = count / (1.0 + count * q)
        projected = self.arms @ u  # xᵢᵀA⁻¹x for every arm: the one O(K·d) product
        residual = (total - count * float(x @ self.estimate)) / (1.0 + count * q)
        self.inverse -= scale * np.outer(u, u)
        self.norms2 -= scale * projected**2
        self.estimate += residual * u
        self.predictions += residual * projected
        self.gram += count * np.outer(x, x)
        self.target += total * x
        self.logdet += np.log1p(count * q)
        self.n_samples += count
        self._since_refresh += 1
        if self._since_refresh >= self.refresh_every:
            self.refresh()

    def refresh(self) -> None:
        """Recompute A⁻¹, φ̂, ‖x‖²_{A⁻¹}, xᵀφ̂ and log det A from A and b directly."""
        factor = np.linalg.cholesky(self.gram)
        identity = np.eye(self.dim)
        lower_inverse = np.linalg.solve(factor, identity)
        self.inverse = lower_inverse.T @ lower_inverse
        self.estimate = self.inverse @ self.target
        half = self.arms @ lower_inverse.T
        self.norms2 = np.einsum("kd,kd->k", half, half)
        self.predictions = self.arms @ self.estimate
        self.logdet = 2.0 * float(np.sum(np.log(np.diag(factor))))
        self._since_refresh = 0

    def widths(self, radius: float) -> np.ndarray:
        """(K,) confidence half-widths r·‖x‖_{A⁻¹}."""
        return radius * np.sqrt(np.maximum(self.norms2, 0.0))

    def gain(self, direction: np.ndarray) -> np.ndarray:
        """(K,) reduction of ‖y‖²_{A⁻¹} from one more pull of each arm:
        (yᵀA⁻¹a)² / (1 + ‖a‖²_{A⁻¹}) (Sherman–Morrison), for y = ``direction``."""
        projected = self.arms @ (self.inverse @ direction)
        return projected**2 / (1.0 + self.norms2)


def least_squares_widths(arms: np.ndarray, counts: np.ndarray, sums: np.ndarray, tolerance: float = 1e-10):
    """Ordinary least squares on one round's data (paper Proposition 2).

    Args:
        arms: (K, d) arm features.
        counts: (K,) pulls of each arm in the round.
        sums: (K,) sum of the observations of each arm.

    Returns:
        predictions (K,) xᵀφ̂ and norms (K,) ‖x‖_{A⁺}, where A = Σ nᵢxᵢxᵢᵀ. φ is only
        identified on span{xᵢ : nᵢ > 0}; arms with a component outside it get an
        infinite norm, so they are never decided by this round.
    """
    pulled = counts > 0
    basis = arms[pulled]
    weights = counts[pulled].astype(float)
    gram = (basis * weights[:, None]).T @ basis
    eigenvalues, eigenvectors = np.linalg.eigh(gram)
    keep = eigenvalues > tolerance * max(float(eigenvalues.max(initial=0.0)), 1.0)
    vectors = eigenvectors[:, keep]
    coordinates = arms @ vectors  # arms in the identified subspace
    estimate = vectors @ ((vectors.T @ (basis.T @ sums[pulled])) / eigenvalues[keep])
    norms2 = np.sum(coordinates**2 / eigenvalues[keep], axis=1)
    outside = np.sum(arms**2, axis=1) - np.sum(coordinates**2, axis=1)
    scale = np.maximum(np.sum(arms**2, axis=1), 1.0)
    norms = np.sqrt(norms2)
    norms[outside > 1e-9 * scale] = np.inf
    return arms @ estimate, norms
