"""Noise models: sums drawn in one call, exact conditional splits for traces."""

from __future__ import annotations

import numpy as np

from cbai_cli.noise import BinaryNoise, GaussianNoise


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
