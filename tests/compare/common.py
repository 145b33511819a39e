"""Small grids of fast runs shared by the compare tests (adaptive tuned algorithms and
Uniform on tiny instances: no optimal-design solves, a millisecond per run)."""

from __future__ import annotations

from dataclasses import replace

from cbai_cli.compare.records import stable_part
from cbai_cli.compare.study import CompareSettings
from cbai_cli.compare.summary import sort_records

SWEEP = "irrelevant-dims:d=3,eps=0.2|0.3"
SPHERE = "unit-sphere:d=3,n=5"
FAST_ALGORITHMS = ("g-acol:tuned:beta=0.25", "maxrew-u:tuned:beta=0.25", "uniform")
SMALL = CompareSettings(sources=(SWEEP, SPHERE), algorithms=FAST_ALGORITHMS, seeds=4, bounds=False, jobs=1)


def settings(**changes) -> CompareSettings:
    """The small grid with some fields changed."""
    return replace(SMALL, **changes)


def stable(records) -> list[dict]:
    """Records in canonical order without wall times and versions."""
    return [stable_part(record) for record in sort_records(records)]
