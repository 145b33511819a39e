"""Checks of single fields: arrays, real numbers, ranges and integers.

One set of validators serves every place that reads values a user gave: the instance
files of every kind (:mod:`cbai_cli.instance`, :mod:`cbai_cli.safe.files`) and the
problems of the safe library (:mod:`cbai_cli.safe.problems`). Each returns the checked
value in its canonical type (a read-only float array, a ``float``, an ``int``).

Errors: every validator raises :class:`FieldError`, a ``ValueError`` that carries the
field's name and the broken rule and reads ``FIELD: RULE``. The library lets it
propagate, so library users keep getting a ``ValueError`` that names the parameter; the
file layer turns it into an :class:`~cbai_cli.errors.InstanceError` that also names the
file (:func:`cbai_cli.fileio.instance_errors`), which the CLI prints as one line
``SOURCE: FIELD: RULE``. The validators themselves know nothing of files or of the CLI.

Numbers: Python ``int`` and ``float``, numpy integer and floating scalars and 0-d arrays
(NPZ files store scalars as 0-d arrays) count as numbers; ``bool`` does not (``true`` in
a file is not 1), nor does a string, and NaN and ±∞ are rejected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["FieldError", "array", "integer", "nonnegative", "positive", "probability", "real"]

# How an array of each number of dimensions is described in "must be ..." messages.
_ARRAY_SHAPES = {1: "a list of numbers", 2: "a matrix of numbers (a list of equal-length rows)"}


class FieldError(ValueError):
    """A field's value breaks its rule; ``str(error)`` is ``FIELD: RULE``.

    Attributes:
        field: the field's name as the user wrote it (``lambda``, ``noise.sigma``).
        rule: what is wrong, e.g. ``must be > 0, got -1``.
    """

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule

    def __reduce__(self) -> tuple[type[FieldError], tuple[str, str]]:
        # Worker processes send errors back pickled; the default would call FieldError(message).
        return type(self), (self.field, self.rule)


def array(value: Any, field: str, ndim: int, *, what: str | None = None, nonempty: bool = True) -> np.ndarray:
    """A read-only float copy of ``value`` with ``ndim`` dimensions and finite entries.

    Args:
        value: a nested list or an array; strings, mappings and ``None`` are refused
            (``numpy`` would read ``"1.5"`` as a number).
        field: the field's name, for the error.
        ndim: the number of dimensions required (1: a vector (n,), 2: a matrix (m, n)).
        what: how the required array is described in the error; defaults to "a list of
            numbers" (ndim 1) and "a matrix of numbers (a list of equal-length rows)" (ndim 2).
        nonempty: refuse an array without entries (e.g. shape (0,) or (1, 0)).

    Raises:
        FieldError: ``must be WHAT``, ``must be WHAT, got shape S``, ``must not be
            empty`` or ``contains NaN or infinite values``.
    """
    description = what or _ARRAY_SHAPES.get(ndim, f"a {ndim}-dimensional array of numbers")
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise FieldError(field, f"must be {description}")
    try:
        result = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise FieldError(field, f"must be {description}") from None
    if result.ndim != ndim:
        raise FieldError(field, f"must be {description}, got shape {result.shape}")
    if nonempty and result.size == 0:
        raise FieldError(field, "must not be empty")
    if not np.all(np.isfinite(result)):
        raise FieldError(field, "contains NaN or infinite values")
    result.setflags(write=False)
    return result


def real(value: Any, field: str) -> float:
    """A finite real number as a ``float``.

    Raises:
        FieldError: ``must be a number, got V`` (also for ``bool`` and strings) or
            ``must be finite, got V`` (NaN, ±∞).
    """
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise FieldError(field, f"must be a number, got {value!r}")
    if not math.isfinite(float(value)):
        raise FieldError(field, f"must be finite, got {value!r}")
    return float(value)


def positive(value: Any, field: str) -> float:
    """A finite real number > 0 (a noise level, a radius, a ridge λ).

    Raises:
        FieldError: as :func:`real`, or ``must be > 0, got V``.
    """
    number = real(value, field)
    if number <= 0:
        raise FieldError(field, f"must be > 0, got {number:g}")
    return number


def nonnegative(value: Any, field: str) -> float:
    """A finite real number ≥ 0.

    Raises:
        FieldError: as :func:`real`, or ``must be ≥ 0, got V``.
    """
    number = real(value, field)
    if number < 0:
        raise FieldError(field, f"must be ≥ 0, got {number:g}")
    return number


def probability(value: Any, field: str) -> float:
    """A number in the open interval (0, 1), such as a confidence δ.

    Raises:
        FieldError: as :func:`real`, or ``must lie in (0, 1), got V``.
    """
    number = real(value, field)
    if not 0 < number < 1:
        raise FieldError(field, f"must lie in (0, 1), got {number:g}")
    return number


def integer(value: Any, field: str, low: int, *, integral_float: bool = False) -> int:
    """An integer ≥ ``low`` as an ``int``.

    Args:
        value: a Python or numpy integer (or 0-d integer array); ``bool`` is refused.
        field: the field's name, for the error.
        low: the smallest value allowed.
        integral_float: also accept a float with an integral value (``1e5``,
            ``100000.0``), as a file may write a round count.

    Raises:
        FieldError: ``must be an integer ≥ LOW, got V``.
    """
    value = _scalar(value)
    if integral_float and isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise FieldError(field, f"must be an integer ≥ {low}, got {value!r}")
    return int(value)


def _scalar(value: Any) -> Any:
    """The Python number inside a 0-d array (how NPZ stores a scalar); anything else as is."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


#: Slack when a known bound (S ≥ ‖μ*‖, L ≥ max ‖x‖) is checked against the truth: round-off only.
NORM_TOL = 1e-9


def replace_field(obj: object, name: str, value: object) -> None:
    """Set a field of a frozen dataclass from its ``__post_init__`` (to store the checked copy)."""
    object.__setattr__(obj, name, value)
