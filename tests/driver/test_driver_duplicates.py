"""Exact duplicates among policies and arms."""

from pathlib import Path

import numpy as np
import pytest

from cbai_cli.driver.bandit import build_bandit
from cbai_cli.driver.duplicates import count_distinct, distinct_rows
from cbai_cli.driver.scenarios import SCENARIO_NAMES

REPO = Path(__file__).resolve().parents[2]
POLICIES_FILE = "driver_policies_1000.npy"


def published_policies() -> np.ndarray:
    for folder in (REPO / ".." / "shared" / "data",):
        if (folder / POLICIES_FILE).is_file():
            return np.load(folder / POLICIES_FILE)
    pytest.skip("shared/data with the published driver policies is not available")


def test_distinct_rows():
    rows = np.array([[1.0, 2.0], [0.0, 0.0], [1.0, 2.0], [-0.0, 0.0], [5.0, 5.0]])
    d = distinct_rows(rows)
    assert d.n_distinct == count_distinct(rows) == 3
    np.testing.assert_array_equal(d.first, [0, 1, 4])
    np.testing.assert_array_equal(d.inverse, [0, 1, 0, 1, 2])
    np.testing.assert_array_equal(d.counts, [2, 2, 1])


def test_distinct_rows_needs_a_row():
    with pytest.raises(ValueError, match="at least one row"):
        distinct_rows(np.zeros((0, 3)))


def test_published_policies_hold_twenty_distinct_arms():
    published = published_policies()
    assert published.shape == (1000, 20, 2)
    d = distinct_rows(published)
    assert d.n_distinct == 20
    assert d.counts.min() >= 20 and d.counts.max() <= 60
    for name in SCENARIO_NAMES:
        bandit = build_bandit(published, name)
        assert count_distinct(bandit.arms) == 20
        assert np.all(np.abs(bandit.constraint_values) <= 1)
