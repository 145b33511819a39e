"""Typer parameters made from the options declared in tables (:class:`~cbai_cli.contracts.options.Option`).

A parameter of a command written ``name=DECLARED`` is the option of that name in the table
given to :func:`declared_in`, which may also add options of the table where the command
takes ``**options``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Optional

import typer

from cbai_cli.contracts.options import Option

#: The default of a command's parameter that :func:`declared_in` makes an option of a table.
DECLARED: Any = object()


def _parameter(option: Option) -> inspect.Parameter:
    """The keyword parameter of ``option`` that Typer reads: its type (a list of them when
    ``option.multiple``), flags, metavar, help and default (shown unless None)."""
    kind = list[option.type] if option.multiple else option.type
    flag = f"{option.flag}/{option.off}" if option.off else option.flag
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[kind], default=typer.Option(
        option.default, flag, *option.aliases, metavar=option.metavar or None, show_default=option.default is not None,
        help=option.help))


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
        # Typer reads the signature and the annotations
        function.__signature__ = inspect.signature(function).replace(parameters=parameters)
        function.__annotations__ = {**function.__annotations__, **{p.name: p.annotation for p in parameters}}
        return function
    return declare
