"""Field checks of the safe library's frozen dataclasses.

Each check raises ``ValueError`` whose message starts with the field's name, so that the
file layer (:mod:`cbai_cli.safe.files`) can report it as ``FIELD: RULE``.
"""

from __future__ import annotations

import math

import numpy as np

#: Slack when checking the known bounds S, L against the truth (round-off only).
NORM_TOL = 1e-9


def read_only_array(value: object, name: str, ndim: int) -> np.ndarray:
    """A finite, read-only float copy of ``value`` with ``ndim`` dimensions."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: not a numeric array ({exc})") from None
    if array.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim}-D array, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: contains non-finite values")
    array.setflags(write=False)
    return array


def replace_field(obj: object, name: str, value: object) -> None:
    """Set a field of a frozen dataclass from its ``__post_init__`` (a validated copy)."""
    object.__setattr__(obj, name, value)


def check_positive(value: object, name: str) -> None:
    if not (isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def check_nonnegative(value: object, name: str) -> None:
    if not (isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def check_probability(value: object, name: str) -> None:
    if not (isinstance(value, (int, float, np.floating)) and 0 < value < 1):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")


def check_integer_at_least(value: object, name: str, low: int) -> None:
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low):
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
