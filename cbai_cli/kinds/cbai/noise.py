"""Noise models of the constraint feedback (Lindner et al. 2022, §2 and Appendix C).

Each model draws the *sum* of n observations of one arm in a single call, so a
round of a round-based algorithm costs the same whatever its length. Traces split a sum
back into its observations (:meth:`GaussianNoise.split_sum`), a piece of at most
:data:`TRACE_CHUNK` of them at a time, so that a round of 10¹² pulls is traced in bounded
memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from cbai_cli.io.files import instance_errors
from cbai_cli.contracts.validation import moderate, positive, replace_field

#: Observations of one arm split from their sum and handed to a trace at a time: 512 KiB of
#: float64, and as many trace rows, whatever the length of the round.
TRACE_CHUNK = 1 << 16
#: Up to this many ±1 observations of one arm are arranged by one shuffle of an int8 array
#: (128 MiB at most), the draws of every trace written before traces were streamed; beyond
#: it, in pieces by sequential selection (:meth:`BinaryNoise.split_sum`).
BINARY_SHUFFLE_LIMIT = 1 << 27
#: numpy sums at most this many float64 values in one unrolled block, and splits longer runs
#: in two (its ``PW_BLOCKSIZE``); :func:`_pairwise_sum` splits only where numpy does.
PAIRWISE_BLOCK = 128


@dataclass(frozen=True)
class GaussianNoise:
    """y = φᵀx + N(0, σ²); the sum of n pulls is N(n φᵀx, n σ²).

    ``sigma`` is checked as an instance file's ``noise.sigma`` is (a number > 0 within
    ±1e100): a bad one is an :class:`~cbai_cli.contracts.errors.InstanceError` ``noise.sigma: RULE``.
    """

    sigma: float
    kind: ClassVar[str] = "gaussian"

    def __post_init__(self) -> None:
        with instance_errors():
            replace_field(self, "sigma", moderate(positive(self.sigma, "noise.sigma"), "noise.sigma"))

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
        """Individual observations of each arm, drawn from their exact conditional law given
        their sum (:meth:`split_sum`, arm after arm); all shapes (m,)."""
        return _split_all(self.split_sum, rng, sums, counts)

    def split_sum(self, rng: np.random.Generator, total: float, count: int,
                  chunk: int | None = None) -> Iterator[np.ndarray]:
        """The ``count`` observations of one arm whose sum is ``total``, in order, in pieces of
        at most ``chunk`` (default :data:`TRACE_CHUNK`).

        For n i.i.d. N(m, σ²) draws with sum s, the draws are s/n + σ(z − z̄) with
        z ~ N(0, I_n). Used only for per-query traces, from a separate stream, so a
        traced run gives the same result as an untraced one. Beyond ``chunk`` draws, z̄ is
        summed over the pieces in numpy's own pairwise order, then the stream is rewound and
        the same z drawn again piece by piece: the bits of one ``standard_normal(n)`` call
        and its ``mean()``, in O(chunk) memory.
        """
        n = int(count)
        chunk = TRACE_CHUNK if chunk is None else chunk
        if n <= 0:
            return
        if n <= chunk:
            z = rng.standard_normal(n)
            yield total / n + self.sigma * (z - z.mean())
            return
        start = rng.bit_generator.state
        mean = _pairwise_sum(rng.standard_normal, n, max(chunk, PAIRWISE_BLOCK)) / n
        rng.bit_generator.state = start
        for done in range(0, n, chunk):
            z = rng.standard_normal(min(chunk, n - done))
            yield total / n + self.sigma * (z - mean)

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
        """Individual ±1 observations of each arm given their sum (:meth:`split_sum`, arm
        after arm); all shapes (m,)."""
        return _split_all(self.split_sum, rng, sums, counts)

    def split_sum(self, rng: np.random.Generator, total: float, count: int, chunk: int | None = None,
                  shuffle_limit: int | None = None) -> Iterator[np.ndarray]:
        """The ``count`` ±1 observations of one arm whose sum is ``total``, in order, in pieces
        of at most ``chunk`` (default :data:`TRACE_CHUNK`): a uniformly random arrangement of
        the successes.

        Up to ``shuffle_limit`` (default :data:`BINARY_SHUFFLE_LIMIT`) observations, one
        shuffle of them all (one byte each); beyond, sequential selection (Knuth's Algorithm
        S): the i-th of n observations is a success when an integer uniform below n − i is
        below the successes still to place, which gives the same law piece by piece, in
        O(chunk) memory.
        """
        n = int(count)
        chunk = TRACE_CHUNK if chunk is None else chunk
        shuffle_limit = BINARY_SHUFFLE_LIMIT if shuffle_limit is None else shuffle_limit
        if n <= 0:
            return
        successes = int(round((total + n) / 2))
        if n <= shuffle_limit:
            values = np.full(n, -1, dtype=np.int8)
            values[:successes] = 1
            rng.shuffle(values)  # the draws of rng.permutation of the same values as float
            for done in range(0, n, chunk):
                yield values[done:done + chunk].astype(float)
            return
        left = successes
        for done in range(0, n, chunk):
            size = min(chunk, n - done)
            draws = rng.integers(0, np.arange(n - done, n - done - size, -1, dtype=np.int64))
            piece = np.empty(size)
            for index, draw in enumerate(draws.tolist()):
                success = draw < left
                piece[index] = 1.0 if success else -1.0
                left -= success
            yield piece

    def to_mapping(self) -> dict:
        return {"kind": self.kind}


NoiseModel = GaussianNoise | BinaryNoise


def _split_all(split_sum, rng: np.random.Generator, sums: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """``split_sum`` of each arm, arm after arm, each arm's pieces joined."""
    parts = []
    for total, n in zip(np.asarray(sums), np.asarray(counts, dtype=int)):
        pieces = list(split_sum(rng, total, n))
        parts.append(np.concatenate(pieces) if pieces else np.empty(0))
    return parts


def _pairwise_sum(draw: Callable[[int], np.ndarray], n: int, leaf: int) -> np.float64:
    """The sum of the next ``n`` values of ``draw`` as ``np.add.reduce`` of them all would give
    it, drawing at most ``leaf`` (≥ :data:`PAIRWISE_BLOCK`) at a time: numpy sums a contiguous
    float64 array pairwise, splitting n at ⌊n/2⌋ rounded down to a multiple of 8 until a part
    has at most :data:`PAIRWISE_BLOCK` values; a part of at most ``leaf`` values is summed by
    numpy itself, which splits it as it would have inside the whole array."""
    if n <= leaf:
        return np.add.reduce(draw(n))
    half = n // 2
    half -= half % 8
    return _pairwise_sum(draw, half, leaf) + _pairwise_sum(draw, n - half, leaf)
