"""Typer parameters made from the options declared in tables (:class:`~cbai_cli.contracts.options.Option`),
and the arguments and options several commands share.

A parameter written ``name=DECLARED`` is the option of that name in the table given to
:func:`declared_in`, which may also add options of the table where the command takes
``**options``. ``cbai solve``, ``cbai bound``, ``cbai compare`` and ``cbai session start``
add the options of a run (:data:`~cbai_cli.contracts.options.OPTIONS`) through
:func:`with_run_options`, so they accept exactly the same flags with the same ranges,
defaults and help.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Optional

import typer

from cbai_cli.algorithms.registry import algorithm_help, option_users
from cbai_cli.numerics.confidence import regimes_help
from cbai_cli.contracts.options import OPTIONS, QUIET_HELP, Option


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


#: The default of a command's parameter that :func:`declared_in` makes an option of a table.
DECLARED: Any = object()


def declared_in(table: Mapping[str, Option], *added: str, before: str | None = None):
    """A decorator making each parameter of a command whose default is :data:`DECLARED` the
    option of its name in ``table`` (its declared default and help), and adding the options
    ``added`` of ``table`` as the parameters that the command's ``**options`` collects: last,
    or before its parameter ``before`` (``--help`` lists them in this order)."""
    def declare(function):
        parameters = [(_parameter(table[p.name]) if p.default is DECLARED else p).replace(kind=p.KEYWORD_ONLY)
                      for p in inspect.signature(function).parameters.values() if p.kind != p.VAR_KEYWORD]
        at = [p.name for p in parameters].index(before) if before is not None else len(parameters)
        parameters[at:at] = [_parameter(table[name]) for name in added]
        function.__signature__ = inspect.signature(function).replace(parameters=parameters)
        function.__annotations__ = {**function.__annotations__, **{p.name: p.annotation for p in parameters}}
        return function
    return declare


def with_run_options(table: Mapping[str, Option], names: Iterable[str], kinds: tuple[str, ...] | None = None):
    """:func:`declared_in` ``table``, adding the run options ``names`` of
    :data:`cbai_cli.contracts.options.OPTIONS`: None when not given (their defaults depend on the
    algorithm and the instance), their help naming the range, the default and the algorithms
    that read them (of ``kinds`` only, when given)."""
    def composed(option: Option) -> Option:
        users = option_users(option.name, kinds)
        return replace(option, default=None, help=f"{option.help} ({option.range_text() or 'switch'}; default "
                       f"{option.default_text}" + (f"; {users}" if users else "") + ").")
    runs = {name: composed(OPTIONS[name]) for name in names}
    return declared_in({**table, **runs}, *runs)


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
