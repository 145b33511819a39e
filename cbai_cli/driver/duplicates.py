"""Exact duplicates among candidate policies or arms.

Identical arms waste queries: the arm set the authors of Lindner et al. (ICML 2022)
published with their code holds 1000 policies but only 20 distinct ones, each repeated
20 to 60 times (docs/driver.md), the signature of parallel workers that inherited one
random state. :func:`distinct_rows` finds such repeats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cbai_cli.driver.arrays import read_only

__all__ = ["DistinctRows", "distinct_rows", "count_distinct"]


@dataclass(frozen=True, eq=False)
class DistinctRows:
    """Exact duplicates among ``n`` rows.

    Attributes:
        first: ``(k,)`` index of the first occurrence of each distinct row, ascending.
        inverse: ``(n,)`` for each row, the position in ``first`` of its distinct row.
        counts: ``(k,)`` how often each distinct row occurs.
    """

    first: np.ndarray
    inverse: np.ndarray
    counts: np.ndarray

    @property
    def n_distinct(self) -> int:
        return int(self.first.shape[0])


def distinct_rows(rows: np.ndarray) -> DistinctRows:
    """Exact duplicates among policies ``(n, 20, 2)`` or arms ``(n, d)``.

    Rows are compared element by element for equality (so ``0.0 == -0.0``), each
    row flattened first.
    """
    rows = np.asarray(rows)
    if rows.ndim < 1 or rows.shape[0] < 1:
        raise ValueError("need at least one row")
    flat = rows.reshape(rows.shape[0], -1)
    _, first, inverse, counts = np.unique(flat, axis=0, return_index=True, return_inverse=True, return_counts=True)
    # np.unique orders by value; report the distinct rows in order of first appearance.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return DistinctRows(
        first=read_only(first[order]),
        inverse=read_only(rank[np.ravel(inverse)]),
        counts=read_only(counts[order]),
    )


def count_distinct(rows: np.ndarray) -> int:
    """Number of distinct rows (exact duplicates counted once)."""
    return distinct_rows(rows).n_distinct
