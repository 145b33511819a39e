"""Clopper–Pearson intervals: hand-computed values, the Beta quantiles of scipy.stats, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import beta

from cbai_cli.numerics.binomial import clopper_pearson


def test_no_success_in_ten_reaches_one_minus_the_tenth_root_of_the_tail():
    # k = 0: the upper end solves (1 − p)^10 = 0.025, p = 1 − 0.025^(1/10) = 0.308497.
    low, high = clopper_pearson(0, 10)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** 0.1, abs=1e-12)
    assert high == pytest.approx(0.308497, abs=1e-6)


def test_ten_successes_in_ten_start_at_the_tenth_root_of_the_tail():
    # k = n: the lower end solves p^10 = 0.025, p = 0.691503.
    low, high = clopper_pearson(10, 10)
    assert low == pytest.approx(0.025 ** 0.1, abs=1e-12) and high == 1.0


def binomial_tail(n: int, p: float, ks: range) -> float:
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in ks)


def test_five_in_ten_is_0_1871_to_0_8129():
    # The ends solve P(Bin(10, p) ≥ 5) = 0.025 and P(Bin(10, p) ≤ 5) = 0.025: symmetric
    # around 1/2, 0.187086 and 0.812914.
    low, high = clopper_pearson(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.1871, 0.8129)
    assert binomial_tail(10, low, range(5, 11)) == pytest.approx(0.025, abs=1e-12)
    assert binomial_tail(10, high, range(0, 6)) == pytest.approx(0.025, abs=1e-12)
    assert low + high == pytest.approx(1.0, abs=1e-12)


def test_one_in_one_at_level_one_half():
    # n = 1, k = 1, α = 1/2: the lower end solves p = 0.25.
    assert clopper_pearson(1, 1, level=0.5) == pytest.approx((0.25, 1.0))


@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_ends_are_the_beta_quantiles_of_scipy_stats(counts, level):
    k, n = counts
    tail = (1 - level) / 2
    low, high = clopper_pearson(k, n, level)
    assert low == (0.0 if k == 0 else pytest.approx(beta.ppf(tail, k, n - k + 1), rel=1e-9, abs=1e-15))
    assert high == (1.0 if k == n else pytest.approx(beta.ppf(1 - tail, k + 1, n - k), rel=1e-9, abs=1e-15))
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_the_interval_covers_the_true_fraction_at_least_at_its_level():
    # Exact coverage, summed over every outcome of Bin(n, p), for a few (n, p).
    from scipy.stats import binom

    for n, p in [(10, 0.5), (30, 0.1), (100, 0.97), (1000, 0.999)]:
        intervals = [clopper_pearson(k, n) for k in range(n + 1)]
        covered = sum(binom.pmf(k, n, p) for k, (low, high) in enumerate(intervals) if low <= p <= high)
        assert covered >= 0.95 - 1e-12


@pytest.mark.parametrize("arguments", [(0, 0), (-1, 10), (11, 10), (5, 10, 1.0), (5, 10, 0.0), (5, 10, math.nan)])
def test_impossible_counts_and_levels_are_refused(arguments):
    with pytest.raises(ValueError):
        clopper_pearson(*arguments)


def test_wider_at_a_higher_level_and_narrower_with_more_trials():
    assert np.subtract(*clopper_pearson(5, 10, 0.99)[::-1]) > np.subtract(*clopper_pearson(5, 10, 0.9)[::-1])
    assert np.subtract(*clopper_pearson(500, 1000)[::-1]) < np.subtract(*clopper_pearson(5, 10)[::-1])


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_closed_form_ends_are_the_doubles_of_betaincinv(level):
    # k = n and k = 0 skip scipy.special: their ends must be its very numbers, not close ones.
    from scipy.special import betaincinv

    tail = (1 - level) / 2
    for n in range(1, 3001):
        assert clopper_pearson(n, n, level) == (float(betaincinv(n, 1, tail)), 1.0)
        assert clopper_pearson(0, n, level) == (0.0, float(betaincinv(1, n, 1 - tail)))
