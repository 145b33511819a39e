"""Rich tables and JSON documents on stdout: the formatting that every command shares. No
computation happens here."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.console import Console


#: What the titles of ``bound`` and ``solve`` add when the instance's constraint is a guess.
GUESSED_TITLE = " — for a guessed constraint"


def markup_safe(value: object) -> str:
    """A string from a file (an instance name, a meta value) ready for a Rich table or
    ``console.print``: control characters escaped (:func:`~cbai_cli.contracts.validation.safe_text`)
    and square brackets escaped, so ``[/x]`` is printed, not read as markup (which fails)."""
    from rich.markup import escape

    from cbai_cli.contracts.validation import safe_text

    return escape(safe_text(value))


def console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def fmt(value: float | None, digits: int = 6) -> str:
    """A number for a table, thousands grouped as in 1,337.5: ∞ for infinity, — for missing."""
    if value is None:
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    if isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    return f"{value:,.{digits}g}"


def variance_text(variance: float) -> str:
    """σ² as text; one that underflowed (σ below 1.5e−154 squares to a subnormal or to 0)
    says so rather than read as σ² = 0."""
    if variance >= sys.float_info.min:
        return f"{variance:g}"
    return f"< {sys.float_info.min:.1e} (σ² underflows: the σ²-scaled bounds read 0)"


def method_text(algorithm: str, regime: str | None, options: dict[str, Any]) -> str:
    """``track-and-stop (ols; step=rollout)``: an algorithm with its regime and options."""
    settings = "; ".join(f"{name}={value}" for name, value in sorted(options.items()))
    inside = "; ".join(part for part in (regime or "no regime", settings) if part)
    return f"{algorithm} ({inside})"


def arm_label(arm: int | None, label: str | None = None) -> str:
    """An arm as tables show it: its index, with its label (``meta.labels``) when it has one."""
    if arm is None:
        return "no feasible arm"
    return str(arm) if label is None else f"{arm} ({markup_safe(label)})"


#: The version of the shape of every JSON document the command line prints (its keys and
#: their meaning); docs/cli.md says what may change within one.
JSON_SCHEMA = 1


def print_json(document: dict) -> None:
    """One JSON document on stdout (infinities are already None), opening with the cbai
    version that wrote it and :data:`JSON_SCHEMA`, so that a script can check both."""
    from cbai_cli import __version__

    stamped = {"cbai_version": __version__, "schema": JSON_SCHEMA, **document}
    sys.stdout.write(json.dumps(stamped, indent=2, allow_nan=False) + "\n")


def show(outcome: Any, as_json: bool) -> None:
    """What a command did, on stdout: ``outcome.to_json()`` as one JSON document
    (:func:`print_json`), or its tables and lines (``outcome.render(console())``)."""
    if as_json:
        print_json(outcome.to_json())
    else:
        outcome.render(console())


def print_notes(out: Console, notes: Sequence[str]) -> None:
    for note in notes:
        out.print(f"[yellow]note:[/yellow] {note}")


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    q25, median, q75 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q25), float(median), float(q75)
