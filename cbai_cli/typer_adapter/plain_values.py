"""Command-line values that need no conversion, read without Pydantic.

Typer converts every parameter's value through a Pydantic ``TypeAdapter`` built the first
time the parameter is read; importing Pydantic and building the adapters costs about 0.07 s
of every command's start-up, more than ``cbai bound``'s arithmetic. Most values of a
command line need none of it: an option not given (None), a text for a ``str`` parameter
(the adapter returns it unchanged), a plain decimal for an ``int`` or ``float`` one.
:func:`install` gives every parameter a converter that answers those itself, with the value
Typer's adapter returns, and hands every other value to Typer's own conversion, built then:
a value given in any other form, and every error message, are Typer's.
"""

from __future__ import annotations

import re
from typing import Any, get_args, get_origin

#: For each type: the texts answered here, and the conversion that gives the value Typer's
#: adapter gives for them (tests/cli/test_plain_values.py compares the two).
PLAIN_TEXTS = {
    str: (re.compile(r".*", re.DOTALL), str),
    int: (re.compile(r"-?[0-9]{1,18}"), int),
    float: (re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,15})?"), float),
}
#: What :func:`plain_value` answers for a value it leaves to Typer.
NOT_PLAIN = object()


def plain_value(annotation: Any, value: Any) -> Any:
    """``value`` converted to ``annotation`` when it is a plain text of it (or a list or
    tuple of them for ``list[...]``), else :data:`NOT_PLAIN`."""
    if get_origin(annotation) is list:
        if not isinstance(value, (list, tuple)):
            return NOT_PLAIN
        items = [plain_value(get_args(annotation)[0], item) for item in value]
        return NOT_PLAIN if any(item is NOT_PLAIN for item in items) else items
    pattern, convert = PLAIN_TEXTS.get(annotation, (None, None))
    if pattern is None or type(value) is not str or not pattern.fullmatch(value):
        return NOT_PLAIN
    return convert(value)


class PlainFirst:
    """A parameter's conversion (Typer's ``RuntimeParam`` interface): not given and plain
    values here, the rest by Typer's own conversion of its type, built the first time."""

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        self._typer: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:  # as Typer: nothing for an option not given, no values for a repeatable one
            return () if param.multiple or param.nargs == -1 else None
        plain = plain_value(self.descriptor.annotation, value)
        if plain is not NOT_PLAIN:
            return plain
        if self._typer is None:
            from typer._coercion import build_runtime_param

            self._typer = build_runtime_param(self.descriptor)
        return self._typer.coerce(value, param=param, ctx=ctx)


def install(command: Any, ctx: Any) -> None:
    """Give every Typer parameter of ``command`` and of its subcommands, their ``--help``
    included (made now, as ``ctx`` names it; Click keeps it), a :class:`PlainFirst`
    conversion. With a Typer that converts through Click's types (no ``_TyperParameter``)
    there is nothing to do."""
    import typer.core

    parameter_class = getattr(typer.core, "_TyperParameter", None)
    if parameter_class is None or not hasattr(parameter_class, "get_runtime_param"):
        return
    for param in [*command.params, command.get_help_option(ctx)]:
        if isinstance(param, parameter_class) and getattr(param, "_runtime_param", NOT_PLAIN) is None:
            param._runtime_param = PlainFirst(param.type_descriptor)
    for subcommand in getattr(command, "commands", {}).values():
        install(subcommand, ctx)
