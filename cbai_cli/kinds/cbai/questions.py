"""What a study asks its raters, and how an answer becomes an observation.

An instance states the question in its ``meta`` (free otherwise; checked when the instance
is built, since ``feasible_when`` fixes the threshold)::

    meta:
      question: Does this driving feel safe?
      answers: {yes: feasible, no: infeasible}   # binary: exactly one of each
      feasible_when: at least 95% yes             # the constraint in the raters' terms
      media: [clips/a.mp4, clips/b.mp4]           # optional, one file per arm

    meta:                                         # Gaussian noise
      question: How sweet is this cookie, from 0 to 10?
      answers: number                             # or labelled numbers {"not sweet": 0, "sweet": 7}
      feasible_when: mean at least 7              # or mean at most V

**Binary noise** (Lindner et al. 2022, Appendix C): an observation is y ∈ {−1, +1} with
P(y = +1) = (φᵀx + 1)/2, and x is feasible iff φᵀx ≤ τ. The answer mapped to
``infeasible`` records +1 and the one mapped to ``feasible`` −1, so an arm draws the
infeasible-side answer with probability q(x) = (φᵀx + 1)/2 and the feasible-side one with
p(x) = 1 − q(x) = (1 − φᵀx)/2. Hence

- "at least P% F" (F the feasible-side label): p(x) ≥ p ⇔ (1 − φᵀx)/2 ≥ p ⇔ φᵀx ≤ 1 − 2p,
  so τ = 1 − 2p (at least 95% yes ⇒ τ = −0.9);
- "at most Q% I" (I the infeasible-side label): q(x) ≤ q ⇔ (φᵀx + 1)/2 ≤ q ⇔ φᵀx ≤ 2q − 1,
  so τ = 2q − 1 (at most 5% unsafe ⇒ τ = −0.9);
- "at least P% I" reads φᵀx ≥ 2p − 1 and "at most Q% F" reads φᵀx ≥ 1 − 2q: a lower bound on
  φᵀx, which no τ turns into φᵀx ≤ τ. Both are refused, saying what to write instead.

The share is a percentage (``95%``, ``99.5 %``) or a fraction (``0.95``), strictly between 0
and 1; a bare number of 1 or more (``at least 95 yes``) is refused rather than guessed to be
a percentage. It is read as an exact decimal, so τ is the float nearest 1 − 2p (exactly −0.9
for 95%, where 1 − 2·0.95 in floats is −0.8999999999999999).

**Gaussian noise** (§2): y = φᵀx + N(0, σ²), the answer is a number. "mean at most v" is
φᵀx ≤ v: τ = v, answers recorded as given. "mean at least v" records every answer negated:
its mean is −φᵀx = φ'ᵀx with φ' = −φ, and mean ≥ v ⇔ φ'ᵀx ≤ −v, so τ = −v. The learner
never knows φ, so learning −φ instead costs it nothing. ``answers: number`` (or no answers)
takes free numbers; a mapping of labels to numbers takes its labels only, not numbers too:
a study that shows a scale of buttons gets the values of that scale.

Labels are matched after stripping, NFKC normalisation and case folding (``YES`` is
``yes``). When ``meta.answers`` is given only its labels are accepted, never the words a
file without it accepts (yes, y, 1, +1 for +1), which under a question such as "is it
safe?" would invert the data. A binary file without question or answers keeps that
meaning: the default question is worded so that "yes" records +1. Binary question and
answers come together, for the same reason: a question alone says nothing of which answer
is the feasible one, and answers alone would be shown under the default question.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from cbai_cli.contracts.errors import OptionError
from cbai_cli.io.files import instance_errors
from cbai_cli.contracts.options import MAGNITUDE_LIMIT
from cbai_cli.kinds.cbai.answers import observation
from cbai_cli.contracts.validation import FieldError, moderate, real, safe_text, text

#: What a binary study asks when its file states no question: "yes" records +1.
BINARY_QUESTION = "Does this option break the constraint?"
#: What a Gaussian study asks when its file states no question: the value itself.
GAUSSIAN_QUESTION = "What value did you measure for this option?"
#: A question is read on one screen; a longer text is a mistake (a pasted document).
QUESTION_LENGTH_LIMIT = 1000
#: An answer is a button's label.
ANSWER_LENGTH_LIMIT = 100
#: The media a study can show, by suffix: images, video and audio that browsers play.
MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp", ".svg": "image/svg+xml", ".mp4": "video/mp4", ".webm": "video/webm",
               ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg"}

_SIDES = ("feasible", "infeasible")
# at most three exponent digits: Fraction("1e999999999") would build a billion-digit integer
_NUMBER = r"[-+−]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?"
_SHARE = re.compile(r"at (least|most) (.*)", re.IGNORECASE)  # on text with single spaces
_MEAN = re.compile(rf"mean at (least|most) ({_NUMBER})", re.IGNORECASE)
_LEADING_NUMBER = re.compile(_NUMBER)  # also a bare number when it matches in full


@dataclass(frozen=True)
class Questions:
    """What a study asks and how each answer is recorded.

    Attributes:
        question: the text shown to raters.
        answers: the labels shown as buttons, in file order; () when only numbers are taken.
        numbers: free numbers are accepted (Gaussian noise without labelled answers).
        observations: the observation each answer records, in the learner's units.
        negated: numbers are recorded negated ("mean at least v").
        binary_words: the file states no answers, so the words of
            :data:`cbai_cli.kinds.cbai.answers.BINARY_WORDS` are accepted (yes, y, 1, +1 record +1).
        noise: ``binary`` or ``gaussian``.
    """

    question: str
    answers: tuple[str, ...]
    numbers: bool
    observations: tuple[float, ...] = ()
    negated: bool = False
    binary_words: bool = False
    noise: str = "gaussian"

    def value(self, given: str | float) -> float:
        """The observation a rater's answer (a label, a word or a number) records.

        Raises:
            OptionError: one line for an answer the study does not take or the noise model
                cannot produce (not finite, beyond ±MAGNITUDE_LIMIT, digits grouped by '_').
        """
        if self.binary_words:
            return observation("binary", given)
        if self.answers:
            key = _key(str(given))
            for label, recorded in zip(self.answers, self.observations):
                if _key(label) == key:
                    return recorded
            raw = str(given).strip()
            shown = safe_text(raw if len(raw) <= 40 else raw[:40] + "…")
            raise OptionError(f"{shown!r} is not an answer to this question (answers: {_listed(self.answers)})")
        number = observation("gaussian", given)
        # + 0.0: a negated 0 is recorded as 0, not −0
        return (-number if self.negated else number) + 0.0

    def to_json(self) -> dict[str, Any]:
        """``{"question", "answers", "numbers"}``: what a page needs to ask."""
        return {"question": self.question, "answers": list(self.answers), "numbers": self.numbers}


def questions_of(instance: Any) -> Questions:
    """The questions of an instance (its ``meta`` was checked when it was built)."""
    with instance_errors(instance.source):
        return _read(instance.meta, instance.noise.kind)[0]


def feasible_threshold(meta: Mapping[str, Any], noise: Any) -> float | None:
    """τ that ``meta.feasible_when`` states in the raters' terms, or None without it.

    Checks ``meta.question``, ``meta.answers`` and ``meta.feasible_when`` under ``noise`` (a
    noise model), which :class:`cbai_cli.kinds.cbai.instance.Instance` does for every instance it builds.

    Raises:
        InstanceError: one line ``meta.FIELD: RULE``.
    """
    with instance_errors():
        return _read(meta, noise.kind)[1]


def media_type(path: str | Path) -> str:
    """The MIME type of a media file, by its suffix (:data:`MEDIA_TYPES`).

    Raises:
        OptionError: one line for a file of another type.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in MEDIA_TYPES:
        raise OptionError(f"{safe_text(path)!r} is not a media file a study can show ({_media_suffixes()})")
    return MEDIA_TYPES[suffix]


def check_media(instance: Any, folder: str | Path) -> tuple[Path, ...]:
    """The files of ``meta.media`` (one per arm, relative to ``folder``, the instance file's
    folder), resolved; () without it.

    A study serves these files to raters, so each must be a readable image, video or audio
    file inside ``folder``: no absolute path, and neither ``..`` nor a symbolic link may lead
    outside it.

    Raises:
        InstanceError: one line ``SOURCE: meta.media…: RULE``.
    """
    with instance_errors(instance.source):
        return _check_media(instance.meta.get("media"), instance.n_arms, Path(folder))


def _check_media(media: Any, n_arms: int, folder: Path) -> tuple[Path, ...]:
    if media is None:
        return ()
    if not isinstance(media, list) or not all(isinstance(entry, str) for entry in media):
        raise FieldError("meta.media", "must be a list of file paths, one per arm")
    if len(media) != n_arms:
        raise FieldError("meta.media", f"has {len(media)} files for {n_arms} arms; give one per arm")
    root = folder.resolve()
    paths = []
    for index, entry in enumerate(media):
        field = f"meta.media[{index}]"
        text(entry, field)
        shown = safe_text(repr(entry))
        if not entry.strip():
            raise FieldError(field, "must be a file path relative to the instance's folder, got ''")
        if Path(entry).is_absolute():
            raise FieldError(field, f"must be relative to the instance's folder, got {shown}")
        try:
            path = (root / entry).resolve()  # follows symbolic links
        except (OSError, RuntimeError) as error:  # a loop of links
            raise FieldError(field, f"cannot resolve {shown}: {error}") from None
        if not path.is_relative_to(root):
            raise FieldError(field, f"{shown} leads outside the instance's folder {safe_text(str(root))!r}")
        if path.suffix.lower() not in MEDIA_TYPES:
            raise FieldError(field, f"{shown} is not a media file a study can show ({_media_suffixes()})")
        if not path.is_file():
            raise FieldError(field, f"{shown} {'is not a file' if path.exists() else 'does not exist'}")
        try:
            with open(path, "rb") as opened:
                opened.read(1)
        except OSError as error:
            raise FieldError(field, f"{shown} cannot be read: {safe_text(error.strerror or error)}") from None
        paths.append(path)
    return tuple(paths)


def _read(meta: Mapping[str, Any], noise: str) -> tuple[Questions, float | None]:
    """The questions and the threshold that ``meta`` states under noise kind ``noise``."""
    question, answers, when = meta.get("question"), meta.get("answers"), meta.get("feasible_when")
    if question is not None:
        question = _question(question)
    if noise == "binary":
        if answers is None:
            if question is not None or when is not None:
                field = "meta.question" if question is not None else "meta.feasible_when"
                raise FieldError(field, "binary answers must say which one means feasible: add meta.answers, "
                                        "e.g. {yes: feasible, no: infeasible}")
            return Questions(BINARY_QUESTION, ("yes", "no"), False, (1.0, -1.0), binary_words=True, noise=noise), None
        if question is None:
            raise FieldError("meta.answers", f"needs meta.question: the default question ({BINARY_QUESTION!r}) "
                                             "may not be the one the answers reply to")
        labels, observations = _binary_answers(answers)
        threshold = None if when is None else _binary_threshold(when, labels, observations)
        return Questions(question, labels, False, observations, noise=noise), threshold
    question = GAUSSIAN_QUESTION if question is None else question
    negated, threshold = (False, None) if when is None else _gaussian_threshold(when)
    if answers is None or (isinstance(answers, str) and _key(answers) == "number"):
        return Questions(question, (), True, negated=negated, noise=noise), threshold
    labels, values = _gaussian_answers(answers)
    # + 0.0: a negated 0 is recorded as 0, not −0
    observations = tuple((-value if negated else value) + 0.0 for value in values)
    return Questions(question, labels, False, observations, negated=negated, noise=noise), threshold


def _question(value: Any) -> str:
    if not isinstance(value, str):
        raise FieldError("meta.question", f"must be a text, got {_short(value)}")
    question = text(value, "meta.question").strip()
    if not question:
        raise FieldError("meta.question", "must not be empty")
    if len(question) > QUESTION_LENGTH_LIMIT:
        raise FieldError("meta.question", f"has {len(question):,} characters; a question has at most "
                                          f"{QUESTION_LENGTH_LIMIT:,}")
    return question


def _labels(answers: Mapping[str, Any]) -> tuple[str, ...]:
    """The labels of an answers mapping, stripped, each non-empty, short and distinct once matched."""
    labels, seen = [], {}
    for key in answers:
        label = text(str(key), "meta.answers").strip()
        if not label:
            raise FieldError("meta.answers", "a label is empty")
        if len(label) > ANSWER_LENGTH_LIMIT:
            raise FieldError("meta.answers", f"a label has {len(label):,} characters; labels have at most "
                                             f"{ANSWER_LENGTH_LIMIT}")
        if _key(label) in seen:
            raise FieldError("meta.answers", f"{safe_text(repr(seen[_key(label)]))} and {safe_text(repr(label))} "
                                             "are the same answer (labels are matched ignoring case)")
        seen[_key(label)] = label
        labels.append(label)
    return tuple(labels)


def _binary_answers(answers: Any) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Two labels, one mapped to ``feasible`` (records −1), one to ``infeasible`` (records +1)."""
    if not isinstance(answers, Mapping) or len(answers) != 2:
        got = f"{len(answers)} answers" if isinstance(answers, Mapping) else _short(answers)
        raise FieldError("meta.answers", "binary noise takes a mapping of two answers, one feasible and one "
                                         f"infeasible, e.g. {{yes: feasible, no: infeasible}}; got {got}")
    labels = _labels(answers)
    sides = []
    for label, side in zip(labels, answers.values()):
        if not isinstance(side, str) or _key(side) not in _SIDES:
            raise FieldError("meta.answers", f"{safe_text(repr(label))} must map to feasible or infeasible, "
                                             f"got {_short(side)}")
        if _LEADING_NUMBER.fullmatch(_key(label)):
            # 1, 0, -1 are how binary observations are typed without labels; as a label they
            # would read as the observation they are not
            raise FieldError("meta.answers", f"{safe_text(repr(label))} is a number; binary answers are words "
                                             "such as yes and no")
        sides.append(_key(side))
    if sorted(sides) != list(_SIDES):
        raise FieldError("meta.answers", f"needs one feasible and one infeasible answer, got two {sides[0]}")
    return labels, tuple(-1.0 if side == "feasible" else 1.0 for side in sides)


def _gaussian_answers(answers: Any) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """At least two labels, each mapped to a finite number within ±MAGNITUDE_LIMIT."""
    if not isinstance(answers, Mapping):
        raise FieldError("meta.answers", "must be number (free numbers) or a mapping of labels to numbers, "
                                         f"e.g. {{'not sweet': 0, sweet: 7}}; got {_short(answers)}")
    if len(answers) < 2:
        raise FieldError("meta.answers", f"a scale of labelled numbers needs at least two answers, got "
                                         f"{len(answers)}")
    labels = _labels(answers)
    values = []
    for label, value in zip(labels, answers.values()):
        field = f"meta.answers.{safe_text(label)}"
        values.append(moderate(real(value, field), field))
    return labels, tuple(values)


def _binary_threshold(when: Any, labels: tuple[str, ...], observations: tuple[float, ...]) -> float:
    """τ of "at least P% F" (1 − 2p) or "at most Q% I" (2q − 1); see the module's docstring."""
    match = _SHARE.fullmatch(_when_text(when, "at least 95% yes"))
    number = _LEADING_NUMBER.match(match.group(2)) if match else None
    rest = match.group(2)[number.end():].strip() if number else ""
    percent = rest[:1] == "%"
    label = _unquoted(rest[1:].strip() if percent else rest)
    if not label:
        raise FieldError("meta.feasible_when", f"write 'at least P% ANSWER' or 'at most P% ANSWER', got "
                                               f"{_short(when)}")
    bound, number = match.group(1), number.group()
    try:
        share = Fraction(number.replace("−", "-")) / (100 if percent else 1)
    except ValueError:  # more digits than Python converts to an integer (4,300)
        raise FieldError("meta.feasible_when", f"the share has {len(number):,} digits; write fewer") from None
    if not 0 < share < 1:
        hint = f" (write {number}% or {float(share / 100):g})" if not percent and 1 <= share < 100 else ""
        raise FieldError("meta.feasible_when", f"the share must lie strictly between 0% and 100%, got "
                                               f"{number}{'%' if percent else ''}{hint}")
    matches = [index for index, known in enumerate(labels) if _key(known) == _key(label)]
    if not matches:
        raise FieldError("meta.feasible_when", f"{safe_text(repr(label))} is not one of the answers "
                                               f"({_listed(labels)})")
    feasible_side = observations[matches[0]] < 0
    if (bound.lower() == "least") != feasible_side:
        feasible, infeasible = (labels[matches[0]], labels[1 - matches[0]])[::1 if feasible_side else -1]
        raise FieldError("meta.feasible_when", f"{_short(when)} makes an option feasible when raters answer "
                                               f"{safe_text(infeasible)} more often, which no constraint φᵀx ≤ τ "
                                               f"states; write 'at least P% {safe_text(feasible)}' or 'at most P% "
                                               f"{safe_text(infeasible)}'")
    return float(1 - 2 * share) if feasible_side else float(2 * share - 1)


def _gaussian_threshold(when: Any) -> tuple[bool, float]:
    """(negated, τ) of "mean at most v" (as given, v) or "mean at least v" (negated, −v)."""
    match = _MEAN.fullmatch(_when_text(when, "mean at least 7"))
    if match is None:
        raise FieldError("meta.feasible_when", f"write 'mean at least V' or 'mean at most V' for Gaussian noise, "
                                               f"got {_short(when)}")
    bound, number = match.groups()
    value = float(number.replace("−", "-"))
    if not math.isfinite(value) or abs(value) > MAGNITUDE_LIMIT:
        raise FieldError("meta.feasible_when", f"the mean must lie within ±{MAGNITUDE_LIMIT:g}, got {number}")
    if bound.lower() == "least":
        return True, 0.0 - value  # 0.0 −: never −0
    return False, value + 0.0


def _when_text(when: Any, example: str) -> str:
    if not isinstance(when, str):
        raise FieldError("meta.feasible_when", f"must be a text such as {example!r}, got {_short(when)}")
    return " ".join(text(when, "meta.feasible_when").split())


def _key(label: str) -> str:
    """What labels are matched by: stripped, NFKC-normalised (full-width letters are letters), case-folded."""
    return unicodedata.normalize("NFKC", label.strip()).casefold()


def _unquoted(label: str) -> str:
    """A label written in quotes in ``feasible_when`` (``at least 95% "very safe"``) is the label."""
    if len(label) >= 2 and label[0] == label[-1] and label[0] in "'\"":
        return label[1:-1].strip()
    return label


def _listed(labels: tuple[str, ...], limit: int = 10) -> str:
    shown = ", ".join(safe_text(label) for label in labels[:limit])
    return shown + (f", … ({len(labels)} in all)" if len(labels) > limit else "")


def _short(value: Any) -> str:
    shown = safe_text(repr(value))
    return shown if len(shown) <= 60 else shown[:60] + "…"


def _media_suffixes() -> str:
    return "png, jpg, jpeg, gif, webp, svg, mp4, webm, mp3, wav or ogg"


__all__ = ["Questions", "check_media", "feasible_threshold", "media_type", "questions_of", "BINARY_QUESTION",
           "GAUSSIAN_QUESTION", "MEDIA_TYPES"]
