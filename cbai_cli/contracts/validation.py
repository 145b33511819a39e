"""Checks of single fields: arrays, real numbers, ranges and integers.

One set of validators serves every place that reads values a user gave: the instance
files of every kind (:mod:`cbai_cli.kinds.cbai.instance`, :mod:`cbai_cli.kinds.safe.files`) and the
problems of the safe library (:mod:`cbai_cli.kinds.safe.problems`). Each returns the checked
value in its canonical type (a read-only float array, a ``float``, an ``int``).

Errors: every validator raises :class:`FieldError`, a ``ValueError`` that carries the
field's name and the broken rule and reads ``FIELD: RULE``. The library lets it
propagate, so library users keep getting a ``ValueError`` that names the parameter; the
file layer turns it into an :class:`~cbai_cli.contracts.errors.InstanceError` that also names the
file (:func:`cbai_cli.io.files.instance_errors`), which the CLI prints as one line
``SOURCE: FIELD: RULE``. The validators themselves know nothing of files or of the CLI.

Numbers: Python ``int`` and ``float``, numpy integer and floating scalars and 0-d arrays
(NPZ files store scalars as 0-d arrays) count as numbers; ``bool`` does not (``true`` in
a file is not 1), nor does a string, and NaN and ±∞ are rejected. The same holds for the
entries of arrays: a boolean, complex number, string or ``None`` inside a list, or an
array of dtype bool, complex, string or object, is refused rather than converted.

Text: :func:`text` refuses control characters in a string a file gives (an instance's
``name`` is printed in tables and messages), and :func:`safe_text` escapes them in any
string before it is printed, as Python's ``repr`` does.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from typing import Any

import numpy as np

from cbai_cli.contracts.options import MAGNITUDE_LIMIT

__all__ = ["FieldError", "array", "flag", "integer", "nonnegative", "numbers", "positive", "probability", "real", "safe_text",
           "text"]

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
            empty``, ``contains NaN or infinite values``, or ``must hold real numbers
            only, ...`` (see :func:`numbers`).
    """
    description = what or _ARRAY_SHAPES.get(ndim, f"a {ndim}-dimensional array of numbers")
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise FieldError(field, f"must be {description}")
    result = _float_array(value, field, description)
    if result.ndim != ndim:
        raise FieldError(field, f"must be {description}, got shape {result.shape}")
    if nonempty and result.size == 0:
        raise FieldError(field, "must not be empty")
    if not np.all(np.isfinite(result)):
        raise FieldError(field, "contains NaN or infinite values")
    result.setflags(write=False)
    return result


def numbers(value: Any, field: str) -> np.ndarray:
    """A float copy of an array of any shape whose entries are all real numbers.

    Unlike :func:`array`, neither the shape nor finiteness is checked (arrays that
    travel with an instance, such as a driver instance's raw features).

    Raises:
        FieldError: ``must hold real numbers only, got …`` for an entry that is a
            boolean, complex number, string, ``None`` or mapping, or an array of such a
            dtype; ``must be an array of numbers`` for what numpy cannot read as one.
    """
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise FieldError(field, "must be an array of numbers")
    return _float_array(value, field, "an array of numbers")


def _float_array(value: Any, field: str, description: str) -> np.ndarray:
    """``value`` as a new float array after :func:`_check_entries`; a value numpy cannot
    read as one (ragged rows, odd objects, a number too large for a float) is ``must be WHAT``."""
    _check_entries(value, field, ())
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise FieldError(field, f"must be {description}") from None


# dtype.kind of arrays whose entries are real numbers: signed, unsigned, floating.
_REAL_KINDS = "iuf"
_DTYPE_WORDS = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "byte strings", "O": "Python objects",
                "M": "dates", "m": "time spans", "V": "records"}


def _check_entries(value: Any, field: str, index: tuple[int, ...]) -> None:
    """Refuse the first entry that is not a real number, with its position.

    numpy would silently read ``True`` as 1, ``"1.5"`` as 1.5 and ``None`` as NaN, and
    drop the imaginary part of a complex number with only a warning.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind in _REAL_KINDS:
            return
        if value.dtype.kind != "O":
            words = _DTYPE_WORDS.get(value.dtype.kind, "non-numbers")
            raise FieldError(field, f"must hold real numbers only, got an array of {words} (dtype {value.dtype})")
        for position, item in np.ndenumerate(value):
            _check_entries(item, field, index + position)
        return
    if isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            if type(item) is float or type(item) is int:  # the common case, without a call
                continue
            _check_entries(item, field, (*index, position))
        return
    problem = _not_a_number(value)
    if problem is not None:
        where = f" at position {list(index)}" if index else ""
        raise FieldError(field, f"must hold real numbers only, got {problem}{where}")


def _not_a_number(value: Any) -> str | None:
    """How an array entry that is clearly not a real number is described, or None."""
    if isinstance(value, (bool, np.bool_)):
        return f"{bool(value)!r} (a boolean)"
    if isinstance(value, (complex, np.complexfloating)):
        return f"{complex(value)!r} (a complex number)"
    if isinstance(value, (str, np.str_)):
        return f"{safe_text(repr(str(value)))} (a string)"
    if isinstance(value, (bytes, np.bytes_)):
        return f"{bytes(value)!r} (a byte string)"
    if value is None:
        return "None (an empty entry)"
    if isinstance(value, Mapping):
        return "a mapping"
    return None


def real(value: Any, field: str) -> float:
    """A finite real number as a ``float``.

    Raises:
        FieldError: ``must be a number, got V`` (also for ``bool`` and strings) or
            ``must be finite, got V`` (NaN, ±∞).
    """
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise FieldError(field, f"must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the float range, e.g. 1e400 written out
        raise FieldError(field, f"must be finite, got an integer of {len(str(abs(int(value))))} digits") from None
    if not math.isfinite(number):
        raise FieldError(field, f"must be finite, got {value!r}")
    return number


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


def flag(value: Any, field: str) -> bool:
    """A ``bool`` (Python or numpy, or a 0-d boolean array), as a Python ``bool``; a number or a
    string (``"no"``, which Python reads as true) is refused.

    Raises:
        FieldError: ``must be true or false, got V``.
    """
    value = _scalar(value)
    if not isinstance(value, (bool, np.bool_)):
        raise FieldError(field, f"must be true or false, got {value!r}")
    return bool(value)


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


def text(value: Any, field: str) -> str:
    """A string without control characters (ANSI escapes, carriage returns, newlines, other
    C0/C1 controls, bidirectional overrides), which would act on the terminal that prints it.

    Raises:
        FieldError: ``must be a string`` or ``must not contain control characters, got 'S'``
            (with the controls escaped).
    """
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == "U":
        value = str(value.item())
    if not isinstance(value, str):
        raise FieldError(field, "must be a string")
    if any(_is_control(character) for character in value):
        raise FieldError(field, f"must not contain control characters, got {safe_text(repr(value))}")
    return value


# Bidirectional embeddings, overrides and isolates: they reorder the text printed after them.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _is_control(character: str) -> bool:
    """C0 and C1 controls and DEL (Unicode category Cc), the line and paragraph separators,
    and the bidirectional controls."""
    return unicodedata.category(character) in ("Cc", "Zl", "Zp") or character in _BIDI_CONTROLS


def safe_text(value: Any) -> str:
    """``str(value)`` with every character that is not printable escaped as in ``repr``
    (``\x1b``, ``\r``, ``\n``, ``\u202e``), so a string from a file cannot move the
    cursor, recolour or clear the terminal, or break a one-line message; printable text,
    including non-ASCII letters and symbols (φ, ≥), is unchanged."""
    string = str(value)
    if string.isprintable():
        return string
    return "".join(character if character.isprintable() else character.encode("unicode_escape").decode("ascii")
                   for character in string)


#: Slack when a known bound (S ≥ ‖μ*‖, L ≥ max ‖x‖) is checked against the truth: round-off only.
NORM_TOL = 1e-9


def replace_field(obj: object, name: str, value: object) -> None:
    """Set a field of a frozen dataclass from its ``__post_init__`` (to store the checked copy)."""
    object.__setattr__(obj, name, value)




def moderate(value: Any, field: str) -> Any:
    """``value`` (a number or an array) if every entry lies within ±:data:`MAGNITUDE_LIMIT`;
    larger numbers would overflow the linear algebra of bounds and algorithms."""
    entries = np.ravel(np.asarray(value, dtype=float))
    if not entries.size:
        return value
    worst = float(entries[np.argmax(np.abs(entries))])
    if abs(worst) > MAGNITUDE_LIMIT:
        raise FieldError(field, f"must lie within ±{MAGNITUDE_LIMIT:g} (larger numbers overflow the linear algebra), "
                                f"got {worst:g}")
    return value
