"""Instance kinds: one file format, several problems.

Every instance file is one mapping of fields (YAML or NPZ, see :mod:`cbai_cli.fileio`)
with ``schema_version``, ``kind``, ``name`` and ``meta``; the remaining fields depend on
the kind. This registry maps a kind to the function that parses and validates its
mapping, so :func:`load` dispatches on the ``kind`` field:

- ``cbai`` — constrained best-arm identification (:mod:`cbai_cli.instance`); a file
  without a ``kind`` field is read as ``cbai``, as before kinds existed.
- ``safe-regret`` — Safe-LUCB's stage-wise safe regret problem (specs/safe.md §2).
- ``safe-bai`` — safe best-arm identification with partial pulls (specs/safe.md §3–4).

Parsers are named by module path and imported on first use, so importing this module
costs nothing and ``cbai --help`` stays fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cbai_cli.errors import InstanceError, unknown_name_message

DEFAULT_KIND = "cbai"


@dataclass(frozen=True)
class Kind:
    """One registered instance kind.

    Attributes:
        name: the value of the file's ``kind`` field.
        parser: ``"module:function"``; the function takes ``(mapping, source)`` and
            returns a validated instance or raises :class:`InstanceError`.
        summary: one line for listings.
    """

    name: str
    parser: str
    summary: str

    def parse(self, mapping: Mapping[str, Any], source: str) -> Any:
        module, _, function = self.parser.partition(":")
        return getattr(importlib.import_module(module), function)(mapping, source)


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    if kind.name in KINDS:
        raise ValueError(f"instance kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind


register(Kind("cbai", "cbai_cli.instance:from_mapping",
              "constrained BAI: finite arms, known reward, hidden linear constraint"))
register(Kind("safe-regret", "cbai_cli.safe.files:safe_regret_from_mapping",
              "Safe-LUCB: action set, unknown loss μ*, stage-wise constraint xᵀBμ* ≤ c, horizon T"))
register(Kind("safe-bai", "cbai_cli.safe.files:safe_bai_from_mapping",
              "safe BAI: finite arms, reward θ*, safety μ*, partial pulls γ·x safe iff γxᵀμ* ≥ η₀"))


def kind_of(mapping: Mapping[str, Any], source: str = "<instance>") -> Kind:
    """The registered kind named by a mapping's ``kind`` field (``cbai`` when absent)."""
    name = mapping.get("kind", DEFAULT_KIND)
    if not isinstance(name, str):
        raise InstanceError(f"{source}: kind: must be a string, one of {', '.join(KINDS)}; got {name!r}")
    if name not in KINDS:
        raise InstanceError(f"{source}: kind: {unknown_name_message('instance kind', name, KINDS)}")
    return KINDS[name]


def from_mapping(mapping: Mapping[str, Any], source: str = "<instance>") -> Any:
    """A validated instance of whatever kind the mapping declares."""
    return kind_of(mapping, source).parse(mapping, source)


def load(path: str | Path) -> Any:
    """Read and validate an instance file of any registered kind (YAML, NPZ or ``-``)."""
    from cbai_cli.fileio import read_mapping

    source = "<stdin>" if str(path) == "-" else str(path)
    return from_mapping(read_mapping(path), source)


def save(instance: Any, path: str | Path) -> None:
    """Write any instance (it has ``to_mapping()``) as YAML or NPZ by extension, atomically."""
    from cbai_cli.fileio import write_mapping

    write_mapping(instance.to_mapping(), path)
