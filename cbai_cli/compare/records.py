"""One record per run: what ran, on what, with which options and versions, and how it went.

Records are flat mappings of plain JSON values, so the same dict is a JSON Lines
line, a SQLite row's payload, a CSV row and an element of ``--json``'s ``records``.

Every record has every key; those that do not concern a run are None. By instance kind:

- ``cbai``: ``iterations`` are constraint queries; ``recommended``, ``correct`` and
  ``violation`` (the recommendation is infeasible) score the answer; the options
  ``delta`` … ``budget`` are those in effect.
- ``safe-regret`` (Safe-LUCB): ``iterations`` = T; ``regret`` = R_T, ``regret_curve`` =
  ``[[t, R_t], ...]``, ``violations`` = unsafe actions, ``exploration_rounds`` = T'.
- ``safe-bai`` (LinGapE, Safe-LinGapE): ``iterations`` = pulls to stop; ``recommended``
  and its ``scale``; ``correct`` = ε-optimal at its true safe scale; ``violation`` = the
  recommended scaled arm is unsafe; ``violations`` = unsafe pulls.

Safe algorithms have no confidence regime (``regime`` None); their options in effect
are the mapping ``algorithm_options``. Records written before the safe kinds existed
lack the new keys; readers treat a missing ``kind`` as ``cbai``.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from typing import Any

# The stable record keys, in CSV column order.
RECORD_KEYS: tuple[str, ...] = (
    "run_key",
    "group",
    "source",
    "swept_parameter",
    "swept_value",
    "instance",
    "instance_hash",
    "kind",
    "seed",
    "algorithm",
    "spec",
    "regime",
    "delta",
    "beta",
    "subgaussian",
    "ridge",
    "norm_bound",
    "rounding_epsilon",
    "budget",
    "algorithm_options",
    "iterations",
    "recommended",
    "correct",
    "violation",
    "stopped",
    "wall_s",
    "lower_bound",
    "regret",
    "scale",
    "violations",
    "exploration_rounds",
    "regret_curve",
    "group_index",
    "algorithm_index",
    "cbai_version",
    "numpy_version",
    "scipy_version",
    "cvxpy_version",
)
# Keys that legitimately differ between two runs of the same grid.
VOLATILE_KEYS = ("wall_s", "cbai_version", "numpy_version", "scipy_version", "cvxpy_version")


def package_version(name: str) -> str | None:
    """The installed version of a distribution, read from its metadata (importing cvxpy
    just to ask would cost a second per worker), or None when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def runtime_versions() -> dict[str, str | None]:
    """Versions of cbai (the code actually running) and of numpy, scipy and cvxpy."""
    from cbai_cli import __version__

    return {
        "cbai_version": __version__,
        "numpy_version": package_version("numpy"),
        "scipy_version": package_version("scipy"),
        "cvxpy_version": package_version("cvxpy"),
    }


def stable_part(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record without wall time and versions: what must agree between two runs of the
    same grid, whatever the number of jobs, shards or machines."""
    return {key: value for key, value in record.items() if key not in VOLATILE_KEYS}


def order_key(record: Mapping[str, Any]) -> tuple:
    """Canonical record order: group, seed, algorithm (as in the grid that made it)."""
    return (record.get("group_index", 0), record.get("seed", 0), record.get("algorithm_index", 0), record.get("run_key", ""))
