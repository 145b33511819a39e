"""Instance kinds: one file format, several problems, and the registry of kinds.

Every instance file is one mapping of fields (YAML or NPZ, see :mod:`cbai_cli.io.files`)
with ``schema_version``, ``kind``, ``name`` and ``meta``; the remaining fields depend on
the kind. Each kind is one module with a subclass of
:class:`~cbai_cli.kinds.base.InstanceKind` that says how its files are parsed, bounded,
run, scored, rendered and summarised; :func:`load` dispatches on the ``kind`` field:

- ``cbai`` — constrained best-arm identification (Lindner et al. 2022); a file without
  a ``kind`` field is read as ``cbai``.
- ``safe-regret`` — the stage-wise safe linear bandit of Safe-LUCB (Amani et al. 2019).
- ``safe-bai`` — safe best-arm identification with partial pulls (Safe-LinGapE).

Kind classes are named by module path and imported on first use, so importing this
module costs nothing and ``cbai --help`` stays fast. A new kind is one module and one
:func:`register` line.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cbai_cli.contracts.errors import InstanceError, UnknownNameError, unknown_name_message
from cbai_cli.kinds.base import InstanceKind

DEFAULT_KIND = "cbai"


#: The entry-point group through which other packages add kinds (docs/extending.md): each
#: entry point names a :class:`KindEntry`.
ENTRY_POINT_GROUP = "cbai.kinds"


@dataclass(frozen=True)
class KindEntry:
    """One registered instance kind: its name, where its class lives (imported on first use),
    and whether studies with people (``cbai session``) run its instances: finite arms and a
    constraint that a person's answer measures."""

    name: str
    path: str  # "module:Class", a subclass of InstanceKind
    sessions: bool = False

    def load(self) -> InstanceKind:
        module, _, cls = self.path.partition(":")
        kind = getattr(importlib.import_module(module), cls)()
        if not isinstance(kind, InstanceKind) or kind.name != self.name:
            raise TypeError(f"{self.path} is not an InstanceKind named {self.name!r}")
        return kind


KINDS: dict[str, KindEntry] = {}
_LOADED: dict[str, InstanceKind] = {}


def register(name: str, path: str, sessions: bool = False) -> None:
    """Add a kind; a name already taken is an error."""
    _register_entry(KindEntry(name, path, sessions))


def _register_entry(entry: Any) -> None:
    if not isinstance(entry, KindEntry):
        raise TypeError(f"it names a {type(entry).__name__}, not a KindEntry")
    if not isinstance(entry.name, str) or not entry.name or entry.name in KINDS:
        raise ValueError(f"instance kind {entry.name!r} is empty or already registered")
    KINDS[entry.name] = entry


register("cbai", "cbai_cli.kinds.cbai.kind:CbaiKind", sessions=True)
register("safe-regret", "cbai_cli.kinds.safe.regret:SafeRegretKind")
register("safe-bai", "cbai_cli.kinds.safe.bai:SafeBaiKind")


def kind_entries() -> dict[str, KindEntry]:
    """Every registered kind by name, those of the ``cbai.kinds`` entry points included."""
    from cbai_cli.contracts.plugins import load_entry_points

    load_entry_points(ENTRY_POINT_GROUP, _register_entry)
    return KINDS


def session_kinds() -> tuple[str, ...]:
    """The kinds whose instances studies with people run."""
    return tuple(name for name, entry in kind_entries().items() if entry.sessions)


def get(name: str) -> InstanceKind:
    """The kind named ``name`` (its class is imported on first use); an unknown name is an
    :class:`~cbai_cli.contracts.errors.UnknownNameError` listing the kinds."""
    known = kind_entries()
    if not isinstance(name, str) or name not in known:
        raise UnknownNameError(unknown_name_message("instance kind", name, known), "kind")
    if name not in _LOADED:
        _LOADED[name] = known[name].load()
    return _LOADED[name]


def kind_of(mapping: Mapping[str, Any], source: str = "<instance>") -> InstanceKind:
    """The registered kind named by a mapping's ``kind`` field (``cbai`` when absent)."""
    name = mapping.get("kind", DEFAULT_KIND)
    known = kind_entries()
    if not isinstance(name, str):
        raise InstanceError(f"{source}: kind: must be a string, one of {', '.join(known)}; got {name!r}")
    if name not in known:
        raise InstanceError(f"{source}: kind: {unknown_name_message('instance kind', name, known)}")
    return get(name)


def from_mapping(mapping: Mapping[str, Any], source: str = "<instance>") -> Any:
    """A validated instance of whatever kind the mapping declares."""
    return kind_of(mapping, source).parse(mapping, source)


def load(path: str | Path, warn: Callable[[str], None] | None = None) -> Any:
    """Read and validate an instance file of any registered kind (YAML, NPZ or ``-``);
    ``warn`` is told when long YAML would read faster as NPZ."""
    from cbai_cli.io.files import read_mapping

    source = "<stdin>" if str(path) == "-" else str(path)
    return from_mapping(read_mapping(path, warn), source)


def save(instance: Any, path: str | Path) -> None:
    """Write any instance (it has ``to_mapping()``) as YAML or NPZ by extension, atomically."""
    from cbai_cli.io.files import write_mapping

    write_mapping(instance.to_mapping(), path)


def generate_file(family: str, output: str, warn: Callable[[str], None] | None = None, **params: Any) -> str | None:
    """``cbai generate``: write the instance of ``family`` with ``params``
    (:func:`cbai_cli.kinds.cbai.families.generate_instance`) to ``output`` (``-``: YAML on
    stdout), checked to be writable first; ``warn`` is told the kind's warnings about the
    file. Returns the line that says what was written (None for stdout)."""
    from cbai_cli.io.outputs import check_writable
    from cbai_cli.kinds.cbai.families import generate_instance

    if output != "-":
        check_writable(output, "-o")  # the text as typed: a trailing slash still shows
    instance = generate_instance(family, **params)
    save(instance, output)
    for warning in get(instance.kind).file_warnings(instance) if warn is not None else ():
        warn(warning)
    if output == "-":
        return None
    summary = getattr(instance, "summary", None) or f"{instance.n_arms} arms, d = {instance.dim}"
    return f"wrote {instance.name} ({summary}) to {output}"


@dataclass(frozen=True)
class Bounds:
    """``cbai bound``'s outcome: the kind's report, as JSON or as tables."""

    kind: InstanceKind
    report: Any

    def to_json(self) -> dict:
        return self.report.to_json()

    def render(self, out) -> None:
        self.kind.render_bound(self.report, out)


def guess_constraint(instance: Any, guess: Any, warn: Callable[[str], None] | None = None) -> Any:
    """``instance`` with ``guess`` (VALUES text, a FILE, or the numbers of φ) put in as its
    hidden constraint, for bounds and simulated runs of a real problem (``--guess-constraint``,
    :mod:`cbai_cli.kinds.cbai.guess`); a one-line error for a kind whose files always hold the truth."""
    return get(instance.kind).guess_constraint(instance, guess, warn)


def bound_file(path: str | Path, guess: Any = None, warn: Callable[[str], None] | None = None,
               progress: Any = None, **options: Any) -> Bounds:
    """``cbai bound FILE``: the instance's difficulty, with the options (by name; None: not
    given) that its kind's bound reads; any other is a one-line error. With ``guess``, the
    bounds are those of the guessed constraint (:func:`guess_constraint`, which tells
    ``warn`` its warnings). ``progress`` (a :class:`cbai_cli.run.progress.Progress`) is told how
    long computations go."""
    return bound_instance(load(path, warn), guess, warn, progress, **options)


def bound_instance(instance: Any, guess: Any = None, warn: Callable[[str], None] | None = None,
                   progress: Any = None, **options: Any) -> Bounds:
    """:func:`bound_file` of an instance held in memory."""
    kind = get(instance.kind)
    if guess is not None:
        instance = kind.guess_constraint(instance, guess, warn)
    kind.require_truth(instance)
    return Bounds(kind, kind.bound(instance, progress=progress, **options))


def checked_bound_options(kind: InstanceKind, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options given (not None) to ``kind``'s ``bound``, each checked against its type
    and range (:func:`cbai_cli.contracts.options.checked`); an unknown option, or one the kind's bound
    does not read, is a one-line :class:`~cbai_cli.contracts.errors.OptionError`. Every kind's
    ``bound`` starts with it, so ``cbai bound`` and the library check alike."""
    from cbai_cli.contracts.options import checked

    given = checked(options)
    kind.check_bound_options(given)
    return given
