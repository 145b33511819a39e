"""Typer options of runs, built from the options table (:data:`cbai_cli.contracts.options.OPTIONS`).

``cbai solve``, ``cbai bound``, ``cbai compare`` and ``cbai session start`` declare the
options of a run through :func:`with_options`, so they accept exactly the same flags
with the same ranges, defaults and help.
"""

from __future__ import annotations

import inspect
from typing import Optional

import typer

from cbai_cli.algorithms.registry import option_users
from cbai_cli.numerics.confidence import regimes_help
from cbai_cli.contracts.options import FORCED_BOUND_TIME_LIMIT, OPTIONS

#: The help of ``--regime``, shared by every command that runs a cbai algorithm.
REGIME_HELP = regimes_help()
#: ``--bound/--no-bound`` of ``solve`` and ``--bounds/--no-bounds`` of ``compare``.
BOUND_HELP = ("Compute the instance's bounds (H_CLB, Theorem 1) after the runs; default: only when K·d ≤ 10⁶ and "
              f"K·d³ ≤ 3·10⁸. Forced bounds stop after {FORCED_BOUND_TIME_LIMIT:g} s with a certified interval.")
#: ``--guess-constraint`` of ``bound`` and ``solve`` (cbai_cli.kinds.cbai.guess reads it).
GUESS_CONSTRAINT_HELP = ("Size a study: use this guess of the hidden constraint φ (cbai files; it replaces the file's): "
                         "d numbers separated by commas in the file's coordinates, e.g. 0.5,-0.2,1, or a FILE: a cbai "
                         "instance (.yaml, .yml, .npz) whose constraint is taken, a vector .npy or .txt. The output "
                         "says its numbers are for a guessed constraint.")
BOUNDS_HELP = ("Compute each instance's lower bound for the ratio column; default: only when K·d ≤ 10⁶ and "
               f"K·d³ ≤ 3·10⁸. Forced bounds stop after {FORCED_BOUND_TIME_LIMIT:g} s with the certified lower end.")


#: ``-q/--quiet`` of every command that shows progress.
QUIET_HELP = ("No progress on stderr (a live display on a terminal; elsewhere a line every few seconds, "
              "CBAI_PROGRESS_INTERVAL seconds when set); warnings and errors still print.")


def quiet_option(more: str = ""):
    """The Typer option ``-q/--quiet`` (:data:`QUIET_HELP`, then ``more``)."""
    return typer.Option(False, "--quiet", "-q", help=f"{QUIET_HELP} {more}".strip())


def guess_constraint_option():
    """The Typer option ``--guess-constraint FILE|VALUES`` (None: not given)."""
    return typer.Option(None, "--guess-constraint", metavar="FILE|VALUES", show_default=False,
                        help=GUESS_CONSTRAINT_HELP)


def _add_options(function, options: list[tuple[str, type, object]]):
    """Give ``function`` (which takes ``**options``) keyword parameters ``(name, type, typer.Option)``."""
    signature = inspect.signature(function)
    parameters = [p for p in signature.parameters.values() if p.kind != p.VAR_KEYWORD] + [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[kind], default=default)
        for name, kind, default in options]
    function.__signature__ = signature.replace(parameters=parameters)
    function.__annotations__ = {**function.__annotations__, **{p.name: p.annotation for p in parameters}}
    return function


def with_options(*names: str, kinds: tuple[str, ...] | None = None):
    """Add the options ``names`` of :data:`cbai_cli.contracts.options.OPTIONS` (None: not given), their
    help naming the algorithms that read them (of ``kinds`` only, when given)."""
    return lambda function: _add_options(function, [
        (name, OPTIONS[name].type, typer.Option(None, OPTIONS[name].flag, show_default=False, help=(
            f"{OPTIONS[name].help} ({OPTIONS[name].range_text() or 'switch'}; default {OPTIONS[name].default_text}"
            + (f"; {option_users(name, kinds)}" if option_users(name, kinds) else "") + ").")))
        for name in names])
