"""One record per run: what ran, on what, with which options and versions, and how it went.

Records are flat mappings of plain JSON values, so the same dict is a JSON Lines
line, a SQLite row's payload, a CSV row and an element of ``--json``'s ``records``.

Every record has every key; those that do not concern a run are None. By instance kind:

- ``cbai``: ``iterations`` are constraint queries; ``recommended`` (with ``label``, its
  entry of the file's ``meta.labels``), ``correct`` and ``violation`` (the
  recommendation is infeasible) score the answer; the options
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
import math
from collections.abc import Callable, Mapping
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
    "label",
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
def _text(value: Any) -> bool:
    return isinstance(value, str)


def _count(value: Any) -> bool:
    """An integer ≥ 0 below 2⁵³ (counts become floats in sums)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _flag(value: Any) -> bool:
    return isinstance(value, bool)


#: What a stored record must hold to be read back (``--from``, a resumed ``--out``): the
#: test of each key that a reader computes with, and the keys no reader can do without.
#: A line of a store that fails it is skipped and counted like a line cut short.
RECORD_TYPES: dict[str, Callable[[Any], bool]] = {
    "run_key": _text, "group": _text, "instance": _text, "algorithm": _text, "spec": _text, "kind": _text,
    "regime": _text, "stopped": _text, "label": _text, "seed": _count, "group_index": _count, "algorithm_index": _count,
    "iterations": _count, "recommended": _count, "budget": _count, "violations": _count,
    "exploration_rounds": _count, "delta": _number, "beta": _number, "subgaussian": _number, "ridge": _number,
    "norm_bound": _number, "rounding_epsilon": _number, "wall_s": _number, "lower_bound": _number,
    "regret": _number, "scale": _number, "correct": _flag, "violation": _flag,
}
REQUIRED_KEYS = ("run_key", "group", "instance", "seed", "algorithm", "spec", "iterations")


def record_problem(record: Mapping[str, Any]) -> str | None:
    """Why ``record`` cannot be a run record cbai wrote (its first wrong key), or None.
    Every key but :data:`REQUIRED_KEYS` may be missing or null."""
    for key in REQUIRED_KEYS:
        if record.get(key) is None:
            return f"no {key}"
    for key, valid in RECORD_TYPES.items():
        value = record.get(key)
        if value is not None and not valid(value):
            return f"{key} is {value!r:.40}"
    from cbai_cli.kinds import kind_entries

    if record.get("kind") is not None and record.get("kind") not in kind_entries():
        return f"kind is {record['kind']!r:.40}"
    curve = record.get("regret_curve")
    if curve is not None and not (isinstance(curve, list) and all(
            isinstance(point, list) and len(point) == 2 and all(_number(x) for x in point) for point in curve)):
        return "regret_curve is not a list of [t, R_t] pairs"
    return None


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
