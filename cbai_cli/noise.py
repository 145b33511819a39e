"""Noise models of the constraint feedback (Lindner et al. 2022, §2 and Appendix C).

Each model draws the *sum* of n observations of one arm in a single call, so a
round of a round-based algorithm costs the same whatever its length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np


@dataclass(frozen=True)
class GaussianNoise:
    """y = φᵀx + N(0, σ²); the sum of n pulls is N(n φᵀx, n σ²)."""

    sigma: float
    kind: ClassVar[str] = "gaussian"

    @property
    def subgaussian(self) -> float:
        """The sub-Gaussian scale R of one observation."""
        return self.sigma

    @property
    def variance(self) -> float:
        return self.sigma**2

    def sample_sums(self, rng: np.random.Generator, means: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Sums of ``counts[i]`` observations of mean ``means[i]``; all shapes (m,)."""
        counts = np.asarray(counts, dtype=float)
        return rng.normal(counts * means, np.sqrt(counts) * self.sigma)

    def split_sums(self, rng: np.random.Generator, sums: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
        """Individual observations drawn from their exact conditional law given their sum.

        For n i.i.d. N(m, σ²) draws with sum s, the draws are s/n + σ(z − z̄) with
        z ~ N(0, I_n). Used only for per-query traces, from a separate stream, so a
        traced run gives the same result as an untraced one.
        """
        parts = []
        for total, n in zip(np.asarray(sums), np.asarray(counts, dtype=int)):
            z = rng.standard_normal(n)
            parts.append(total / n + self.sigma * (z - z.mean()))
        return parts

    def to_mapping(self) -> dict:
        return {"kind": self.kind, "sigma": self.sigma}


@dataclass(frozen=True)
class BinaryNoise:
    """y ∈ {−1, +1} with P(y = +1) = (φᵀx + 1)/2 (paper Appendix C); R = 1.

    The sum of n pulls is 2·Binomial(n, p) − n.
    """

    kind: ClassVar[str] = "binary"

    @property
    def subgaussian(self) -> float:
        return 1.0

    @property
    def variance(self) -> float:
        # Bounded in [−1, 1]: the variance 1 − m² is at most 1, the scale used by the bounds.
        return 1.0

    def sample_sums(self, rng: np.random.Generator, means: np.ndarray, counts: np.ndarray) -> np.ndarray:
        counts = np.asarray(counts, dtype=np.int64)
        p = np.clip((np.asarray(means) + 1.0) / 2.0, 0.0, 1.0)
        return (2 * rng.binomial(counts, p) - counts).astype(float)

    def split_sums(self, rng: np.random.Generator, sums: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
        """Individual ±1 observations given their sum: a random arrangement of the successes."""
        parts = []
        for total, n in zip(np.asarray(sums), np.asarray(counts, dtype=int)):
            successes = int(round((total + n) / 2))
            values = -np.ones(n)
            values[:successes] = 1.0
            parts.append(rng.permutation(values))
        return parts

    def to_mapping(self) -> dict:
        return {"kind": self.kind}


NoiseModel = GaussianNoise | BinaryNoise
