"""Typer parameters made from the options declared in tables (:class:`~cbai_cli.contracts.options.Option`),
and the arguments and options several commands share.

``cbai solve``, ``cbai bound``, ``cbai compare`` and ``cbai session start`` add the options of
a run through :func:`with_options` (:data:`~cbai_cli.contracts.options.OPTIONS`), so they
accept exactly the same flags with the same ranges, defaults and help; the ``cbai session``
commands add theirs through :func:`with_session_options`, ``cbai generate`` the families'
through :func:`with_generate_options`; a parameter written ``name=DECLARED`` is the option
of that name in the table given to :func:`declared_in`.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any, Optional

import typer

from cbai_cli.algorithms.registry import algorithm_help, option_users
from cbai_cli.numerics.confidence import regimes_help
from cbai_cli.contracts.options import OPTIONS, SESSION_OPTIONS, Option
from cbai_cli.kinds.cbai.family_declarations import generate_options

#: ``-q/--quiet`` of every command that shows progress.
QUIET_HELP = ("No progress on stderr (a live display on a terminal; elsewhere a line every few seconds, "
              "CBAI_PROGRESS_INTERVAL seconds when set); warnings and errors still print.")


def quiet_option(more: str = ""):
    """The Typer option ``-q/--quiet`` (:data:`QUIET_HELP`, then ``more``)."""
    return typer.Option(False, "--quiet", "-q", help=f"{QUIET_HELP} {more}".strip())


def _parameter(option: Option) -> inspect.Parameter:
    """The keyword parameter of ``option`` that Typer reads: its type (a list of them when
    ``option.multiple``), flags, metavar, help and default (shown unless None)."""
    kind = list[option.type] if option.multiple else option.type
    flag = f"{option.flag}/{option.off}" if option.off else option.flag
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[kind], default=typer.Option(
        option.default, flag, *option.aliases, metavar=option.metavar or None, show_default=option.default is not None,
        help=option.help))


def _with_parameters(function, parameters: list[inspect.Parameter]):
    """``function`` with the signature (and annotations) of ``parameters``, which Typer reads."""
    function.__signature__ = inspect.signature(function).replace(parameters=parameters)
    function.__annotations__ = {**function.__annotations__, **{p.name: p.annotation for p in parameters}}
    return function


def _add_options(options: list[inspect.Parameter], before: str | None = None):
    """A decorator giving a function that takes ``**options`` the parameters ``options``: last,
    or before its parameter ``before`` (``--help`` lists them in this order)."""
    def add(function):
        parameters = [p.replace(kind=p.KEYWORD_ONLY) for p in inspect.signature(function).parameters.values()
                      if p.kind != p.VAR_KEYWORD]
        at = [p.name for p in parameters].index(before) if before is not None else len(parameters)
        return _with_parameters(function, parameters[:at] + options + parameters[at:])
    return add


#: The default of a command's parameter that :func:`declared_in` makes an option of a table.
DECLARED: Any = object()


def declared_in(table: dict[str, Option]):
    """A decorator making each parameter of a command whose default is :data:`DECLARED` the
    option of its name in ``table``, with its declared default and help."""
    def add(function):
        return _with_parameters(function, [
            _parameter(table[p.name]).replace(kind=p.kind)
            if p.default is DECLARED else p for p in inspect.signature(function).parameters.values()])
    return add


def with_options(*names: str, kinds: tuple[str, ...] | None = None):
    """Add the run options ``names`` of :data:`cbai_cli.contracts.options.OPTIONS`: None when not
    given (their defaults depend on the algorithm and the instance), their help naming the range,
    the default and the algorithms that read them (of ``kinds`` only, when given)."""
    def help(option: Option) -> str:
        users = option_users(option.name, kinds)
        return (f"{option.help} ({option.range_text() or 'switch'}; default {option.default_text}"
                + (f"; {users}" if users else "") + ").")
    return _add_options([_parameter(replace(OPTIONS[name], default=None, help=help(OPTIONS[name]))) for name in names])


def with_session_options(*names: str):
    """Add the options ``names`` of :data:`cbai_cli.contracts.options.SESSION_OPTIONS` with
    their declared defaults and help."""
    return _add_options([_parameter(SESSION_OPTIONS[name]) for name in names])


def with_generate_options(before: str):
    """Add the options of ``cbai generate`` that the families declare (``--d``, ``--T``, ``--sigma``;
    :func:`~cbai_cli.kinds.cbai.family_declarations.generate_options`) before the parameter
    ``before``: None when not given (the family's default)."""
    return _add_options([_parameter(option) for option in generate_options().values()], before)


def study_argument():
    """The argument ``STUDY`` of the ``cbai session`` commands."""
    return typer.Argument(..., metavar="STUDY", help="The study file (SQLite) made by `cbai session start`.")


def json_option(help: str = "Print one JSON document instead of tables."):
    """The Typer option ``--json``."""
    return typer.Option(False, "--json", help=help)


def instance_argument():
    """The argument ``FILE`` of the commands that read an instance."""
    return typer.Argument(..., metavar="FILE", help="Instance file (.yaml, .yml, .npz, or '-' for YAML on stdin).")


def algo_option(kinds: tuple[str, ...] | None = None):
    """The Typer option ``--algo/-a`` (None: the instance kind's default), of ``kinds`` only when given."""
    return typer.Option(None, "--algo", "-a", show_default=False,
                        help=algorithm_help(with_defaults=True, kinds=kinds))


def regime_option():
    """The Typer option ``--regime`` (None: the algorithm's default)."""
    return typer.Option(None, "--regime", help=regimes_help())
