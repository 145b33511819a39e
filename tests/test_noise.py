"""Noise models: sums drawn in one call, exact conditional splits for traces."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cbai_cli.contracts.errors import InstanceError
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise


def test_gaussian_sums_have_the_right_mean_and_variance():
    rng = np.random.default_rng(0)
    sums = GaussianNoise(0.5).sample_sums(rng, np.full(20000, 0.3), np.full(20000, 16))
    assert abs(sums.mean() - 16 * 0.3) < 0.05
    assert abs(sums.var() - 16 * 0.25) < 0.15


def test_binary_sums_are_two_binomial_minus_n():
    rng = np.random.default_rng(1)
    sums = BinaryNoise().sample_sums(rng, np.full(20000, 0.5), np.full(20000, 10))
    assert set(np.unique((sums + 10) % 2)) == {0.0}
    assert abs(sums.mean() - 5.0) < 0.05


def test_split_sums_preserve_the_total():
    rng = np.random.default_rng(2)
    gaussian = GaussianNoise(0.1).split_sums(rng, np.array([1.5, -2.0]), np.array([3, 4]))
    assert [len(part) for part in gaussian] == [3, 4]
    np.testing.assert_allclose([part.sum() for part in gaussian], [1.5, -2.0])
    binary = BinaryNoise().split_sums(rng, np.array([2.0]), np.array([6]))
    assert binary[0].sum() == 2.0 and set(binary[0]) <= {-1.0, 1.0}


def joined(pieces) -> np.ndarray:
    return np.concatenate(list(pieces))


def one_gaussian_split(rng, total, n, sigma):
    """The split as one draw: one ``standard_normal(n)`` and its ``mean()``."""
    z = rng.standard_normal(n)
    return total / n + sigma * (z - z.mean())


@pytest.mark.parametrize("n", [1, 127, 128, 1000, 1001, 4099, 100_003])
def test_gaussian_split_in_pieces_has_the_bits_of_one_draw(n):
    pieces_rng, whole_rng = np.random.default_rng(n), np.random.default_rng(n)
    pieces = list(GaussianNoise(0.3).split_sum(pieces_rng, np.float64(0.7 * n), n, chunk=1000))
    assert max(len(piece) for piece in pieces) <= 1000
    assert np.array_equal(np.concatenate(pieces), one_gaussian_split(whole_rng, np.float64(0.7 * n), n, 0.3))
    assert pieces_rng.random() == whole_rng.random()  # the stream is left where one draw leaves it


def test_gaussian_split_in_pieces_smaller_than_numpys_block_has_the_bits_of_one_draw():
    pieces_rng, whole_rng = np.random.default_rng(3), np.random.default_rng(3)
    split = joined(GaussianNoise(1.0).split_sum(pieces_rng, np.float64(2.0), 5000, chunk=10))
    assert np.array_equal(split, one_gaussian_split(whole_rng, np.float64(2.0), 5000, 1.0))


@pytest.mark.parametrize("n, successes", [(10, 3), (5000, 2000), (70_001, 123)])
def test_binary_split_in_pieces_is_the_permutation_of_one_draw(n, successes):
    pieces_rng, whole_rng = np.random.default_rng(n), np.random.default_rng(n)
    values = -np.ones(n)
    values[:successes] = 1.0
    split = joined(BinaryNoise().split_sum(pieces_rng, np.float64(2 * successes - n), n, chunk=999))
    assert np.array_equal(split, whole_rng.permutation(values))
    assert pieces_rng.random() == whole_rng.random()


def test_binary_split_beyond_the_shuffle_limit_keeps_the_sum_in_pieces():
    pieces = list(BinaryNoise().split_sum(np.random.default_rng(4), np.float64(-900.0), 10_000, chunk=300,
                                          shuffle_limit=100))
    assert max(len(piece) for piece in pieces) <= 300
    values = np.concatenate(pieces)
    assert len(values) == 10_000 and values.sum() == -900.0 and set(values) == {-1.0, 1.0}


def test_binary_split_beyond_the_shuffle_limit_draws_every_arrangement_alike():
    # 2 successes among 5 observations: 10 arrangements, 20,000 draws; each count lies within
    # 2000 ± 200 (more than 5 standard deviations, sqrt(2000·0.9) ≈ 42)
    rng = np.random.default_rng(5)
    counts = Counter(tuple(joined(BinaryNoise().split_sum(rng, np.float64(-1.0), 5, chunk=2, shuffle_limit=0)))
                     for _ in range(20_000))
    assert len(counts) == 10 and all(1800 <= count <= 2200 for count in counts.values())


@pytest.mark.parametrize("sigma, message", [
    (-1.0, "noise.sigma: must be > 0, got -1"),
    (0.0, "noise.sigma: must be > 0, got 0"),
    (float("nan"), "noise.sigma: must be finite, got nan"),
    ("0.1", "noise.sigma: must be a number, got '0.1'"),
    (1e200, "noise.sigma: must lie within ±1e+100"),
])
def test_gaussian_noise_with_a_bad_sigma_is_refused_as_a_files_would_be(sigma, message):
    with pytest.raises(InstanceError) as error:
        GaussianNoise(sigma)
    assert str(error.value).startswith(message)


def test_gaussian_noise_stores_a_numpy_sigma_as_a_float():
    assert type(GaussianNoise(np.float64(0.5)).sigma) is float
