"""JSON values against the small subset of JSON Schema that the routes declare.

The route table (:mod:`cbai_cli.serve.routes`) writes its request and response schemas as
plain JSON-schema dicts, which go into the OpenAPI document as they are; :func:`check`
holds a request to them, and the tests hold every response to them. The keywords read:
``type`` (a name or a list of names), ``properties``, ``required``,
``additionalProperties`` (false, or a schema for every other key), ``items``, ``enum``,
``minLength``, ``maxLength``, ``pattern``, ``minimum``, ``maximum``. Any other keyword
(``description``, ``example``) is documentation only.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Python's types for each JSON-schema type name; a bool is not a number in JSON.
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


class SchemaError(ValueError):
    """A value breaks its schema; the message is one line naming the field."""


def check(schema: dict[str, Any], value: Any, where: str = "the body") -> None:
    """Raise :class:`SchemaError` when ``value`` breaks ``schema``; ``where`` names the
    value in the message (``the body``, ``id``, ``the body's query.id``)."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is(name, value) for name in names):
            raise SchemaError(f"{where} must be {_a(names)}, got {_kind(value)}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{where} must be one of {', '.join(map(repr, schema['enum']))}, got {_short(value)}")
    if isinstance(value, str):
        _check_text(schema, value, where)
    elif _is("number", value):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaError(f"{where} must be ≥ {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaError(f"{where} must be ≤ {schema['maximum']}, got {value}")
    elif isinstance(value, dict):
        _check_object(schema, value, where)
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            check(schema["items"], item, f"{where}[{index}]")


def _check_text(schema: dict[str, Any], value: str, where: str) -> None:
    if len(value) < schema.get("minLength", 0):
        raise SchemaError(f"{where} must not be empty" if schema["minLength"] == 1
                          else f"{where} must have at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise SchemaError(f"{where} must have at most {schema['maxLength']} characters, got {len(value):,}")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        rule = schema.get("description", f"match {schema['pattern']}")
        raise SchemaError(f"{where} {_short(value)} is refused: {rule}")


def _check_object(schema: dict[str, Any], value: dict[str, Any], where: str) -> None:
    properties = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            raise SchemaError(f"{where} has no {name!r} field")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        inside = name if where == "the body" else f"{where}.{name}"
        if name in properties:
            check(properties[name], item, inside)
        elif extra is False:
            known = ", ".join(properties) or "none"
            raise SchemaError(f"{where} has an unknown field {_short(name)} (its fields: {known})")
        elif isinstance(extra, dict):
            check(extra, item, inside)


def _is(name: str, value: Any) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value))
    return isinstance(value, _TYPES[name])


def _a(names: list[str]) -> str:
    words = {"object": "an object", "array": "a list", "string": "a text", "integer": "a whole number",
             "number": "a finite number", "boolean": "true or false", "null": "null"}
    return " or ".join(words[name] for name in names)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    return _short(value)


def _short(value: Any) -> str:
    from cbai_cli.contracts.validation import safe_text

    text = safe_text(repr(value))
    return text if len(text) <= 40 else text[:40] + "…"


def coerce(schema: dict[str, Any], text: str, where: str) -> Any:
    """A query or path parameter (always text in the URL) as its schema's type: whole
    numbers are read as written (ASCII digits, an optional minus sign), the rest stays
    text; then :func:`check`."""
    value: Any = text
    if schema.get("type") == "integer":
        if re.fullmatch(r"-?[0-9]{1,18}", text) is None:
            raise SchemaError(f"{where} must be a whole number, got {_short(text)}")
        value = int(text)
    check(schema, value, where)
    return value
