"""A guessed constraint for a real problem: size a study before anyone answers.

A file without ``constraint`` describes a real problem; its bounds and simulated runs need
the hidden φ. ``--guess-constraint`` puts a guess in its place
(:meth:`cbai_cli.kinds.cbai.instance.Instance.with_guessed_constraint`), so that ``cbai bound`` and
``cbai solve`` report what the study would cost if the guess were the truth. A guess is
written as

- VALUES: d numbers separated by commas, φ in the file's coordinates (the length of its
  arm rows; with ``threshold_known: false`` the learner appends −τ itself), e.g.
  ``0.5,-0.2,1``;
- FILE: a ``cbai`` instance file (.yaml, .yml, .npz) whose ``constraint`` is taken (only
  that: a warning says when its arms or threshold differ from the study's), a ``.npy``
  file holding one vector, or a ``.txt`` file of numbers separated by commas or white
  space (``#`` starts a comment).

Text that is numbers and commas only is VALUES; a FILE is known by its suffix (no number
ends in one), and any other text is a one-line error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cbai_cli.contracts.errors import InstanceError, OptionError
from cbai_cli.kinds.base import GUESS_FLAG as FLAG, GUESS_PARAMETER as PARAMETER

INSTANCE_SUFFIXES = (".yaml", ".yml", ".npz")
VECTOR_SUFFIXES = (".npy", ".txt")
#: The most characters of a ``.txt`` guess that are read: a million numbers, more than any
#: arm row has entries.
TEXT_CHARACTER_LIMIT = 25 * 10**6
_SHOWN_CHARACTERS = 60


@dataclass(frozen=True)
class ConstraintGuess:
    """A guessed φ as read, before it is checked against a problem.

    Attributes:
        constraint: the numbers of the guess, as given (their length and values are checked
            by :meth:`~cbai_cli.kinds.cbai.instance.Instance.with_guessed_constraint`).
        shown: the guess as the messages name it: the VALUES cut to 60 characters, or the FILE.
        file_instance: the instance file the guess was taken from, None for VALUES and vectors.
    """

    constraint: Any
    shown: str
    file_instance: Any = None


def shown_text(text: str) -> str:
    """``text`` cut to 60 characters for a one-line message."""
    return text if len(text) <= _SHOWN_CHARACTERS else text[:_SHOWN_CHARACTERS - 3] + "..."


def _error(shown: str, message: str) -> OptionError:
    return OptionError(f"{FLAG} {shown}: {message}", PARAMETER)


def parse_values(text: str) -> list[float] | None:
    """The numbers of comma-separated VALUES (``nan`` and ``inf`` included, refused later as
    a file's would be), or None when ``text`` is not numbers and commas only."""
    pieces = [piece.strip() for piece in text.split(",")]
    try:
        return [float(piece) for piece in pieces]
    except ValueError:
        return None


def read_guess(guess: str | Path) -> ConstraintGuess:
    """The guess ``guess`` names: VALUES (text of numbers and commas) or a FILE (a ``Path``,
    or any other text); see the module's documentation for the formats.

    Raises:
        OptionError: one line ``--guess-constraint GUESS: WHAT`` for a file that is missing,
            unreadable, of another kind or suffix, or without a constraint, and for text that
            is neither numbers nor a file.
    """
    if isinstance(guess, str):
        values = parse_values(guess)
        if values is not None:
            return ConstraintGuess(values, shown_text(guess))
        if guess == "-":
            raise _error("-", "standard input is not read for a guess; give VALUES or a FILE")
    path = Path(guess)
    shown = shown_text(str(guess))
    suffix = path.suffix.lower()
    if suffix not in INSTANCE_SUFFIXES + VECTOR_SUFFIXES:
        if isinstance(guess, str) and "," in guess:
            position, bad = next((position, piece.strip()) for position, piece in enumerate(guess.split(","), 1)
                                 if parse_values(piece) is None)
            raise _error(shown, f"VALUES must be numbers separated by commas; entry {position} is not a number: "
                                f"{shown_text(repr(bad))}")
        raise _error(shown, "neither VALUES (numbers separated by commas) nor a FILE (a cbai instance "
                            f"{', '.join(INSTANCE_SUFFIXES)}, or a vector {' or '.join(VECTOR_SUFFIXES)})")
    shown = str(guess)  # a file is named in full
    if suffix in INSTANCE_SUFFIXES:
        return _instance_guess(path, shown)
    if not path.is_file():
        what = "no such file" if not path.exists() else "not a regular file"
        raise _error(shown, what)
    if suffix == ".npy":
        return ConstraintGuess(_npy_vector(path, shown), shown)
    return ConstraintGuess(_text_vector(path, shown), shown)


def _instance_guess(path: Path, shown: str) -> ConstraintGuess:
    """The constraint of the ``cbai`` instance file ``path``."""
    from cbai_cli.io.files import read_mapping
    from cbai_cli.kinds.cbai.instance import KIND, from_mapping

    try:
        mapping = read_mapping(path)
        kind = mapping.get("kind", KIND)
        if kind != KIND:
            raise InstanceError(f"{shown}: a guess is read from a cbai instance file, this one is of kind {kind!r}")
        instance = from_mapping(mapping, str(path))
    except InstanceError as error:  # its text starts with the file's name
        raise OptionError(f"{FLAG} {error}", PARAMETER) from None
    if not instance.has_truth:
        raise _error(shown, "constraint: missing; the guess file must hold the constraint φ to use")
    return ConstraintGuess(instance.constraint, shown, instance)


def _npy_vector(path: Path, shown: str) -> np.ndarray:
    """The array stored in the ``.npy`` file ``path`` (no pickled objects)."""
    try:
        with path.open("rb") as stream:
            loaded = np.load(stream, allow_pickle=False)
            if isinstance(loaded, np.ndarray):
                return loaded
    except OSError as error:
        raise _error(shown, f"cannot read: {error.strerror or error}") from None
    except (ValueError, EOFError):
        pass
    raise _error(shown, "not a .npy file of one array of numbers")


def _text_vector(path: Path, shown: str) -> list[float]:
    """The numbers of the ``.txt`` file ``path``: separated by commas or white space, ``#``
    to the end of a line a comment."""
    try:
        with path.open(encoding="utf-8") as stream:
            text = stream.read(TEXT_CHARACTER_LIMIT + 1)
    except (OSError, UnicodeDecodeError) as error:
        raise _error(shown, f"cannot read: {getattr(error, 'strerror', None) or error}") from None
    if len(text) > TEXT_CHARACTER_LIMIT:
        raise _error(shown, f"more than {TEXT_CHARACTER_LIMIT:,} characters, more than a guess of φ needs")
    words = re.split(r"[,\s]+", re.sub(r"#[^\n]*", "", text).strip())
    numbers = []
    for position, word in enumerate(words, 1):
        if not word:
            continue
        try:
            numbers.append(float(word))
        except ValueError:
            raise _error(shown, f"entry {position} is not a number: {shown_text(repr(word))}") from None
    return numbers


def apply_guess(instance: Any, guess: str | Path | Any, warn: Callable[[str], None] | None = None) -> Any:
    """``instance`` (a ``cbai`` instance) with ``guess`` put in as its hidden constraint and
    marked guessed (:meth:`~cbai_cli.kinds.cbai.instance.Instance.with_guessed_constraint`).

    ``guess``: VALUES or a FILE (:func:`read_guess`), or the numbers themselves (a sequence
    or an array). ``warn`` is told, one line each, when the guess replaces a constraint the
    file has, and when a guess file's arms or threshold differ from the instance's (only its
    constraint is used, in the instance's coordinates).

    Raises:
        OptionError: ``--guess-constraint GUESS: FIELD: RULE`` when the guess is not a
            constraint of this problem (wrong length, not finite, beyond ±10¹⁰⁰, above the
            file's ``constraint_norm_bound``, binary means outside [−1, 1]), or any
            :func:`read_guess` error.
    """
    if isinstance(guess, (str, Path)):
        read = read_guess(guess)
    else:
        read = ConstraintGuess(guess, shown_text(_vector_text(guess)))
    try:
        guessed = instance.with_guessed_constraint(read.constraint)
    except InstanceError as error:
        folded = not instance.threshold_known and np.shape(read.constraint) == (instance.dim + 1,)
        hint = " (give φ without −τ: with threshold_known: false the learner appends it)" if folded else ""
        raise _error(read.shown, f"{error}{hint}") from None
    if warn is not None:
        where = instance.source if instance.source is not None else f"instance {instance.name!r}"
        if instance.has_truth:
            warn(f"{where} has a constraint of its own; {FLAG} {read.shown} replaces it")
        differences = _differences(read.file_instance, instance)
        if differences:
            warn(f"{FLAG} {read.shown}: differs from {where} in its {' and '.join(differences)}; only its "
                 "constraint is used")
    return guessed


def _differences(source: Any, instance: Any) -> list[str]:
    """What of ``source`` (a guess file's instance, or None) differs from ``instance``:
    "arms", "threshold" (with its being known or folded in)."""
    if source is None:
        return []
    differences = []
    if source.arms.shape != instance.arms.shape or not np.array_equal(source.arms, instance.arms):
        differences.append("arms")
    if source.threshold != instance.threshold or source.threshold_known != instance.threshold_known:
        differences.append("threshold")
    return differences


def _vector_text(values: Any, separator: str = ",", most: int | None = None) -> str:
    """Numbers as text (``%g``), joined by ``separator``; with ``most``, a longer vector shows
    its first ``most − 1`` entries and its length."""
    try:
        flat = np.ravel(np.asarray(values, dtype=float)).tolist()
    except (TypeError, ValueError):
        return repr(values)
    entries = [f"{value:g}" for value in flat]
    if most is not None and len(entries) > most:
        return separator.join(entries[:most - 1] + [f"… ({len(entries)} entries)"])
    return separator.join(entries)


def guess_note(instance: Any) -> str | None:
    """The note that bounds and runs of a guessed instance carry (None for an instance whose
    constraint is not a guess): the numbers are for the guessed φ, not a measured one."""
    if not getattr(instance, "guessed_constraint", False):
        return None
    return (f"guessed constraint φ = ({_vector_text(instance.constraint, ', ', most=6)}): every number here assumes "
            "it is the hidden truth")
