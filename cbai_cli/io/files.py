"""Reading and writing mappings as YAML or NPZ.

Instance files of every kind are one mapping of fields, encoded either as YAML (for
people) or NPZ (for arrays), chosen by the file extension; ``-`` is YAML on stdin or
stdout. NPZ stores numbers and arrays as arrays and nested mappings as JSON text, so
YAML → NPZ → YAML is exact.

Every problem with a file ends as one :class:`~cbai_cli.contracts.errors.InstanceError` that names
the file; :func:`instance_errors` does that for the field validators' errors
(:class:`~cbai_cli.contracts.validation.FieldError`). Reading is strict: a YAML mapping that repeats
a key is an error (PyYAML would keep the last value), and NPZ files are read without
pickles. Strings from a file are escaped (:func:`~cbai_cli.contracts.validation.safe_text`) in the
messages.

Writing is atomic (:mod:`cbai_cli.io.atomic`).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from cbai_cli.contracts.errors import InstanceError
from cbai_cli.contracts.options import memory_limit, memory_limit_text
from cbai_cli.contracts.validation import FieldError, safe_text
from cbai_cli.io.atomic import write_atomic
from cbai_cli.io.outputs import reason

YAML_SUFFIXES = (".yaml", ".yml")
NPZ_SUFFIX = ".npz"
_JSON_PREFIX = "__json__"
# Top-level fields holding a mapping of named arrays; NPZ stores them as "FIELD/NAME".
ARRAY_GROUPS = ("data",)


@contextmanager
def instance_errors(source: str | None = None) -> Iterator[None]:
    """Re-raise a :class:`FieldError` or :class:`InstanceError` from the block as one
    :class:`InstanceError` ``SOURCE: FIELD: RULE`` (without a source: ``FIELD: RULE``)."""
    try:
        yield
    except (FieldError, InstanceError) as error:
        if source is None and isinstance(error, InstanceError):
            raise
        prefix = "" if source is None else f"{source}: "
        raise InstanceError(safe_text(f"{prefix}{error}")) from None


def read_stdin(limit: int | None, source: str, error: type[Exception] = InstanceError) -> str:
    """At most ``limit`` characters of standard input (all of it for None).

    Raises:
        ``error``: ``SOURCE: standard input is closed`` when the command was started with it
            closed (``<&-``: ``sys.stdin`` is None), ``SOURCE: cannot read: REASON`` when
            reading fails (not UTF-8, an I/O error).
    """
    if sys.stdin is None:
        raise error(f"{source}: standard input is closed, so there is nothing to read")
    try:
        return sys.stdin.read(-1 if limit is None else limit)
    except (OSError, UnicodeDecodeError) as failure:
        raise error(f"{source}: cannot read: {reason(failure)}") from None


def encoding_of(path: str | Path) -> str:
    """``"yaml"`` or ``"npz"`` from the extension; ``-`` means YAML on stdin/stdout."""
    if str(path) == "-":
        return "yaml"
    suffix = Path(path).suffix.lower()
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if suffix == NPZ_SUFFIX:
        return "npz"
    raise InstanceError(f"{safe_text(path)}: unknown file type {suffix or '(none)'!r}; use .yaml, .yml or .npz")


#: The most characters of YAML read: a document of a million numbers (the alias expansion
#: limit) is about 20 MB, so a longer text is no instance, and an input that never ends
#: (``- < /dev/zero``) is refused once it passes this instead of filling the memory.
YAML_CHARACTER_LIMIT = 256 * 2**20


#: Characters of YAML from which reading an instance takes seconds (6.4 MB, K = 10⁴ arms in
#: d = 30: 4.6 s with libyaml, 13 s without; the same instance as NPZ: 0.1 s), so that a
#: command suggests NPZ.
YAML_HINT_CHARACTERS = 5 * 10**6


def read_mapping(path: str | Path, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Read one mapping from a YAML or NPZ file (or YAML from stdin for ``-``); a path that
    is no regular file (a pipe, ``/dev/zero``) is refused before it is read. ``warn`` is told
    in one line when the YAML is long enough to read slowly (:data:`YAML_HINT_CHARACTERS`)
    that NPZ reads faster."""
    kind = encoding_of(path)
    if str(path) == "-":
        text = _within_limit(read_stdin(YAML_CHARACTER_LIMIT + 1, "<stdin>"), "<stdin>")
        _hint_npz(text, "<stdin>", warn)
        return _parse_yaml(text, "<stdin>")
    path = Path(path)
    shown = safe_text(path)
    if not path.exists():
        raise InstanceError(f"{shown}: a link to nothing (its target is missing, or links loop)"
                            if path.is_symlink() else f"{shown}: no such file")
    if path.is_dir():
        raise InstanceError(f"{shown}: is a directory, not an instance file")
    if not path.is_file():
        raise not_regular(shown)
    if kind == "yaml":
        try:
            with path.open(encoding="utf-8") as stream:
                text = stream.read(YAML_CHARACTER_LIMIT + 1)
        except (OSError, UnicodeDecodeError) as error:
            raise InstanceError(f"{shown}: cannot read: {reason(error)}") from None
        _hint_npz(_within_limit(text, shown), shown, warn)
        return _parse_yaml(text, shown)
    return _read_npz(path)


def _hint_npz(text: str, shown: str, warn: Callable[[str], None] | None) -> None:
    """Tell ``warn`` that NPZ reads faster, when ``text`` is long YAML."""
    if warn is not None and len(text) > YAML_HINT_CHARACTERS:
        warn(f"{shown}: {len(text) / 1e6:.1f} MB of YAML takes seconds to read; the same instance as .npz reads at "
             "once: cbai generate … -o FILE.npz, or python -c \"from cbai_cli.kinds import load, save; "
             "save(load('FILE.yaml'), 'FILE.npz')\"")


def not_regular(shown: str) -> InstanceError:
    """The error for an instance path that exists but is no regular file (a FIFO, a device):
    refused before it is read, since reading it may never end."""
    return InstanceError(f"{shown}: not a regular file (a pipe or a device), so not an instance file")


#: Bytes that reading YAML holds at its peak per character of the text (the text, the
#: parser's nodes, the values built from them): 25 measured (6.4 MB, 10⁴ arms in d = 30,
#: either parser), with a margin.
YAML_BYTES_PER_CHARACTER = 32


def _within_limit(text: str, shown: str) -> str:
    """``text``, unless it is more YAML than cbai reads (:data:`YAML_CHARACTER_LIMIT`) or than
    reading it could hold in :func:`~cbai_cli.contracts.options.memory_limit`: one line then."""
    from cbai_cli.contracts.options import bytes_text

    if len(text) > YAML_CHARACTER_LIMIT:
        raise InstanceError(f"{shown}: more than {YAML_CHARACTER_LIMIT:,} characters of YAML, more than any instance "
                            "cbai reads (arrays that large belong in .npz)")
    need = len(text) * YAML_BYTES_PER_CHARACTER
    if need > memory_limit():
        raise InstanceError(f"{shown}: reading its {len(text):,} characters of YAML would hold about {bytes_text(need)}, "
                            f"more than {memory_limit_text(memory_limit())}; the same instance as .npz holds far "
                            "less (cbai generate … -o FILE.npz)")
    return text


class _DuplicateKey(Exception):
    """A YAML mapping repeats a key (raised by :class:`_StrictLoader`)."""

    def __init__(self, key: Any, first_line: int, line: int) -> None:
        super().__init__(key)
        self.key, self.first_line, self.line = key, first_line, line


#: Values that aliases may add to a YAML document beyond the nodes written in it: a hand-written
#: file reuses a block or a row a few times, while ten levels of ten aliases each (a few
#: hundred bytes) would expand to 10¹⁰ values, hours and gigabytes before any check could run.
ALIAS_EXPANSION_LIMIT = 1_000_000


class _AliasProblem(Exception):
    """A YAML document whose aliases refer to themselves or expand it too far (raised by
    :class:`_StrictLoader`)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def _check_aliases(root: yaml.Node) -> None:
    """Raise :class:`_AliasProblem` when a node of the composed document contains itself
    through an alias, or when expanding its aliases would add more than
    :data:`ALIAS_EXPANSION_LIMIT` values: the expanded size of every node once (an alias is
    the same node object as its anchor), in an explicit stack (no recursion limit)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = ([item for pair in node.value for item in pair] if isinstance(node, yaml.MappingNode)
                    else node.value if isinstance(node, yaml.SequenceNode) else [])
        if done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise _AliasProblem("an alias refers to a value that contains it", node.start_mark.line + 1)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(children) if id(child) not in sizes)
    written = len(sizes)
    if sizes[id(root)] - written > ALIAS_EXPANSION_LIMIT:
        raise _AliasProblem(f"its aliases expand it to {sizes[id(root)]:,} values, more than "
                            f"{ALIAS_EXPANSION_LIMIT:,} beyond the {written:,} written; write the values out "
                            "or use an NPZ file", root.start_mark.line + 1)


class _StrictConstructor(yaml.constructor.SafeConstructor):
    """PyYAML's safe constructor, except that a mapping may not repeat a key (the YAML spec
    requires unique keys; PyYAML keeps the last value), a key is never a boolean (``yes:`` is
    the text ``yes``), and a malformed date says where it is."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            for key_node, _ in node.value:
                # YAML 1.1 reads a plain yes, no, on, off, true or false as a boolean; as a key it
                # is a name, such as the labels of a study's answers ({yes: feasible, no: infeasible})
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag == "tag:yaml.org,2002:bool":
                    key_node.tag = "tag:yaml.org,2002:str"
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *base" may be overridden
                    continue
                key = self.construct_object(key_node, deep=deep)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise _DuplicateKey(key, seen[key], line)
                    seen[key] = line
                except TypeError:  # an unhashable key: the base class says so
                    continue
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_timestamp(self, node: yaml.ScalarNode):
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as error:
            raise yaml.constructor.ConstructorError(None, None, f"invalid date {node.value!r}: {error}",
                                                    node.start_mark) from None


_StrictConstructor.add_constructor("tag:yaml.org,2002:timestamp", _StrictConstructor.construct_yaml_timestamp)
_StrictConstructor.add_constructor("tag:yaml.org,2002:map", _StrictConstructor.construct_yaml_map)
_StrictConstructor.add_constructor(
    "tag:yaml.org,2002:int",
    lambda loader, node: int(node.value[2:], {"0o": 8, "0x": 16}[node.value[:2]])
    if node.value[:2] in ("0o", "0x") else int(node.value, 10))


class _StrictResolver(yaml.resolver.Resolver):
    """PyYAML's resolver with YAML 1.2's numbers (see below)."""


# YAML 1.2 reads 1e-3 and 1.5E10 as numbers; PyYAML's YAML 1.1 resolver wants a dot and a signed
# exponent (1.0e-3), so `sigma: 1e-3` was the text '1e-3' and refused as such
_StrictResolver.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))
# YAML 1.2's integers are decimal (leading zeros included), 0o octal and 0x hexadecimal; YAML 1.1
# also reads 010 as 8, 0b1 as 1 and 1:30 as 90 (base 60), which PyYAML keeps, so that
# `threshold: 010` would silently be 8. Here 010 is 10 and the other forms are text, which the
# fields that want numbers refuse; digits grouped by underscores (1_000) stay numbers.
_StrictResolver.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:int"]
    for first, resolvers in _StrictResolver.yaml_implicit_resolvers.items()}
_StrictResolver.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+(?:_[0-9]+)*|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789"))


class _StrictLoader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,
                    _StrictConstructor, _StrictResolver):
    """The strict loader in pure Python: :class:`_StrictConstructor` and :class:`_StrictResolver`
    on PyYAML's own parser, and aliases that may neither make a value contain itself nor
    expand the document by more than :data:`ALIAS_EXPANSION_LIMIT` values (checked on the
    composed nodes, before any Python object is built)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _StrictConstructor.__init__(self)
        _StrictResolver.__init__(self)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            self.aliased = True
        return super().compose_node(parent, index)

    def compose_document(self) -> yaml.Node:
        self.aliased = False
        node = super().compose_document()
        if self.aliased:  # a document without aliases is a tree of the nodes written in it
            _check_aliases(node)
        return node


try:
    from yaml.cyaml import CParser as _CParser  # PyYAML built with libyaml
except ImportError:
    _CParser = None


# without libyaml the class has no parser and is never used (load_yaml asks for _CParser first)
class _StrictCLoader(*(() if _CParser is None else (_CParser,)), _StrictConstructor, _StrictResolver):
    """The strict loader on libyaml's parser (PyYAML's ``CSafeLoader`` with the strict
    constructor and resolver), 4× faster on large files: it composes the nodes in C, so the
    aliases are checked on the composed document when the text has any (a ``*``)."""

    def __init__(self, stream: str) -> None:
        _CParser.__init__(self, stream)
        _StrictConstructor.__init__(self)
        _StrictResolver.__init__(self)
        self.may_alias = "*" in stream

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        if self.may_alias:
            _check_aliases(node)
        return self.construct_document(node)


def load_yaml(text: str, source: str, fast: bool = True) -> Any:
    """Parse YAML text with the strict loader: libyaml's parser when PyYAML has it and
    ``fast`` is True, else PyYAML's own; both give the same values. Every problem is one
    :class:`InstanceError` ``SOURCE: not valid YAML (line N): PROBLEM`` or
    ``SOURCE: KEY: duplicate key ...``, in the words of PyYAML's own parser (a text libyaml
    refuses is parsed again by it, so that the message is the same either way)."""
    if fast and _CParser is not None:
        try:
            return yaml.load(text, Loader=_StrictCLoader)
        except (yaml.YAMLError, _AliasProblem, _DuplicateKey, RecursionError, ValueError, TypeError, OverflowError):
            pass  # PyYAML's own parser says what is wrong below
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except _AliasProblem as problem:
        raise InstanceError(f"{source}: not valid YAML (line {problem.line}): {problem}") from None
    except _DuplicateKey as duplicate:
        lines = (f"line {duplicate.line}" if duplicate.first_line == duplicate.line
                 else f"lines {duplicate.first_line} and {duplicate.line}")
        raise InstanceError(f"{source}: {safe_text(duplicate.key)}: duplicate key ({lines}); each key may appear only once") from None
    except yaml.YAMLError as error:
        first_line = str(error).splitlines()[0] if str(error) else "syntax error"
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InstanceError(f"{source}: not valid YAML{where}: {safe_text(first_line)}") from None
    except RecursionError:
        raise InstanceError(f"{source}: not valid YAML: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as error:  # a constructor's own error, e.g. !!int abc
        raise InstanceError(f"{source}: not valid YAML: {reason(error)}") from None


def _parse_yaml(text: str, source: str) -> dict[str, Any]:
    data = load_yaml(text, source)
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: expected a mapping of fields at the top level")
    return data


_NPY_MAGIC = b"\x93NUMPY"


def _read_npz(path: Path) -> dict[str, Any]:
    """The arrays of an NPZ archive, read without pickles; a file that is no such archive,
    or a member that cannot be read, is ``FILE: not a valid .npz file (REASON)``, and a
    member of Python objects ``FILE: FIELD: must hold real numbers only, …``.

    Sizes are checked before anything is decompressed, and memory stays bounded whatever
    the archive says: its directory first (:func:`_directory_refusal`: compression methods,
    sizes their compressed bytes cannot produce, what loading would hold), then each
    member's .npy header against the size the directory gives it (:func:`_member_refusal`).
    Reading then cannot produce more: zipfile stops a member at the size its directory
    gives, deflate decompresses a piece at a time, and a member whose data do not match
    its directory fails its CRC check (one line: ``Bad CRC-32 for file …``)."""
    shown = safe_text(path)

    def invalid(reason: str) -> InstanceError:
        return InstanceError(f"{shown}: not a valid .npz file ({reason})")

    try:
        with open(path, "rb") as stream:
            head = stream.read(len(_NPY_MAGIC))
    except OSError as error:
        raise InstanceError(f"{shown}: cannot read: {reason(error)}") from None
    if head == _NPY_MAGIC:
        raise invalid("a single .npy array, not an archive of named fields")
    if not zipfile.is_zipfile(path):
        raise invalid("not a zip archive")
    raw: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as archive:
            refused = _directory_refusal(archive.zip)
            if refused is not None:
                raise InstanceError(f"{shown}: {refused}")
            for key in archive.files:
                refused = _member_refusal(archive.zip, key)
                if refused is not None:
                    raise invalid(f"field {safe_text(key)!r}: {refused}")
            for key in archive.files:
                try:
                    raw[key] = archive[key]
                    if not isinstance(raw[key], np.ndarray):  # numpy hands back the bytes of a non-.npy member
                        raise invalid(f"field {safe_text(key)!r}: not a .npy array")
                except ValueError as error:
                    if "pickle" in str(error):  # numpy's way of saying "dtype object"
                        raise InstanceError(f"{shown}: {safe_text(key)}: must hold real numbers only, got an array of "
                                            "Python objects (cbai never loads pickled data)") from None
                    raise invalid(f"field {safe_text(key)!r}: {reason(error)}") from None
    except InstanceError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError, KeyError) as error:
        raise invalid(reason(error)) from None
    mapping: dict[str, Any] = {}
    for key, value in raw.items():
        group, _, member = key.partition("/")
        if member and group in ARRAY_GROUPS:
            mapping.setdefault(group, {})[member] = value
        elif key.startswith(_JSON_PREFIX):
            field = safe_text(key[len(_JSON_PREFIX):])
            try:
                mapping[key[len(_JSON_PREFIX):]] = json.loads(str(value))
            except (json.JSONDecodeError, RecursionError):
                raise InstanceError(f"{shown}: field {field!r} holds malformed JSON") from None
        elif value.ndim == 0:
            mapping[key] = value.item()
        else:
            mapping[key] = value
    return mapping


def _header_refusal(stream: Any, size: int) -> str | None:
    """Why the .npy array in ``stream`` (positioned at its start; ``size`` bytes in all)
    cannot be loaded as its header declares it, or None: numpy allocates the declared array
    before reading it, so a header that declares more bytes than the stream holds (a corrupt
    or hostile file) would be a MemoryError, or gigabytes allocated, before the read found
    the data missing; and an array larger than :func:`~cbai_cli.contracts.options.memory_limit` is
    refused like every other request of that size. A header numpy cannot read is left to
    numpy's own message. The stream is left after the header."""
    try:
        version = np.lib.format.read_magic(stream)
        reader = {(1, 0): np.lib.format.read_array_header_1_0,
                  (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if reader is None:
            return None
        shape, _, dtype = reader(stream)
        offset = stream.tell()
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error):
        return None
    declared = math.prod(shape) * dtype.itemsize
    held = size - offset
    array = f"a {'×'.join(map(str, shape)) or 'scalar'} array of {declared:,} bytes"
    if declared > held:
        return f"its header declares {array} but only {held:,} bytes follow it"
    if declared > memory_limit():
        return f"{array}, more than {memory_limit_text(memory_limit())}"
    return None


#: The most bytes deflate produces from one compressed byte (a 258-byte match in about two
#: bits): a directory that says more describes data no deflate stream holds.
DEFLATE_MOST_RATIO = 1032
#: The copies of its arrays that loading an NPZ instance holds at its peak (the arrays read,
#: the validated instance's, and the temporaries of validation: 2.7 measured, K = 4·10⁵, d = 30).
NPZ_LOAD_COPIES = 3
_NPZ_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


def _directory_refusal(archive: zipfile.ZipFile) -> str | None:
    """Why an NPZ archive is refused by its zip directory alone, before any member is opened,
    or None: a member name given twice (which copy counts would be a guess, as for a
    repeated YAML key); a member compressed otherwise than numpy writes them, stored or
    deflated (bzip2 and lzma decompress a whole read at once, so a few bytes could expand to
    gigabytes before any size is checked); a size its compressed bytes cannot produce; and
    members whose loading would hold more than :func:`~cbai_cli.contracts.options.memory_limit`
    (:data:`NPZ_LOAD_COPIES` times what they decompress to)."""
    from cbai_cli.contracts.options import bytes_text

    names = archive.namelist()
    repeated = sorted({name for name in names if names.count(name) > 1}) if len(set(names)) < len(names) else []
    if repeated:
        return f"not a valid .npz file (member {safe_text(repeated[0])!r} appears more than once)"
    for info in archive.infolist():
        member = safe_text(info.filename)
        if info.compress_type not in _NPZ_METHODS:
            return (f"not a valid .npz file (member {member!r} is compressed with zip method {info.compress_type}; "
                    "NPZ members are stored or deflated)")
        most = info.compress_size * (1 if info.compress_type == zipfile.ZIP_STORED else DEFLATE_MOST_RATIO)
        if info.file_size > most:
            return (f"not a valid .npz file (member {member!r}: its directory declares {info.file_size:,} bytes, more "
                    f"than its {info.compress_size:,} {_NPZ_METHODS[info.compress_type]} bytes can hold)")
    total = sum(info.file_size for info in archive.infolist())
    if total * NPZ_LOAD_COPIES > memory_limit():
        return (f"its arrays decompress to {bytes_text(total)}, and loading them holds about "
                f"{bytes_text(total * NPZ_LOAD_COPIES)}, more than {memory_limit_text(memory_limit())}; or store fewer "
                "arms or dimensions")
    return None


def _member_refusal(archive: zipfile.ZipFile, key: str) -> str | None:
    """:func:`_header_refusal` of the member ``key`` of an NPZ archive (its header read
    alone), or None when the member is not found."""
    name = key if key in archive.namelist() else f"{key}.npy"
    try:
        info = archive.getinfo(name)
        with archive.open(info) as member:
            return _header_refusal(member, info.file_size)
    except (KeyError, OSError, zipfile.BadZipFile, zlib.error):
        return None


def read_npy(path: str | Path) -> np.ndarray:
    """One array from a ``.npy`` file, read without pickles.

    Raises:
        InstanceError: ``FILE: no such file``, ``FILE: cannot read: REASON``, or ``FILE: not
            a valid .npy file (REASON)`` — never numpy's advice to allow pickles.
    """
    path = Path(path)
    shown = safe_text(path)
    if not path.is_file():
        raise InstanceError(f"{shown}: no such file" if not path.exists() else f"{shown}: is not a file")
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(_NPY_MAGIC))
            if head != _NPY_MAGIC:
                raise InstanceError(f"{shown}: not a valid .npy file (no .npy header)")
            stream.seek(0)
            refused = _header_refusal(stream, os.fstat(stream.fileno()).st_size)
            if refused is not None:
                raise InstanceError(f"{shown}: not a valid .npy file ({refused})")
            stream.seek(0)
            return np.load(stream, allow_pickle=False)
    except InstanceError:
        raise
    except ValueError as error:
        if "pickle" in str(error):  # numpy's way of saying "dtype object"
            raise InstanceError(f"{shown}: not a valid .npy file (an array of Python objects; cbai never loads "
                                "pickled data)") from None
        raise InstanceError(f"{shown}: not a valid .npy file ({reason(error)})") from None
    except OSError as error:
        raise InstanceError(f"{shown}: cannot read: {reason(error)}") from None
    except (EOFError, OverflowError, TypeError) as error:  # a truncated or inconsistent header
        raise InstanceError(f"{shown}: not a valid .npy file ({reason(error)})") from None


def _npz_arrays(mapping: dict[str, Any]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for key, value in mapping.items():
        if key in ARRAY_GROUPS and isinstance(value, dict):
            for member, array in value.items():
                arrays[f"{key}/{member}"] = np.asarray(array)
        elif isinstance(value, (dict, type(None))):
            # in the mapping's own order: meta.answers lists the answers in the order raters see them
            arrays[_JSON_PREFIX + key] = np.array(json.dumps(value))
        elif isinstance(value, str):
            arrays[key] = np.array(value)
        else:
            arrays[key] = np.asarray(value)
    return arrays


class _FlowListDumper(yaml.SafeDumper):
    """Writes lists of numbers on one line, so arm matrices read as rows."""


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flat = all(isinstance(item, (int, float, bool)) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_FlowListDumper.add_representer(list, _represent_list)


def yaml_text(mapping: dict[str, Any]) -> str:
    """The YAML text of a mapping; floats are written with ``repr`` so they round-trip exactly."""
    return yaml.dump(mapping, Dumper=_FlowListDumper, sort_keys=False, allow_unicode=True)


def write_mapping(mapping: dict[str, Any], path: str | Path) -> None:
    """Write a mapping as YAML or NPZ by extension; ``-`` writes YAML to stdout."""
    kind = encoding_of(path)
    if str(path) == "-":
        _write_stdout(yaml_text(mapping))
        return
    if kind == "yaml":
        text = yaml_text(mapping).encode("utf-8")
        write_atomic(path, lambda stream: stream.write(text))
        return
    buffer = io.BytesIO()
    np.savez(buffer, **_npz_arrays(mapping))
    data = buffer.getvalue()
    write_atomic(path, lambda stream: stream.write(data))


def _write_stdout(text: str) -> None:
    """Write to stdout to the last byte; a reader that went away (``cbai generate … | head``)
    or a full disk is one line (:func:`cbai_cli.io.stdout.write_fully`)."""
    from cbai_cli.io.stdout import quiet_stdout, stdout_error, write_fully

    try:
        write_fully(sys.stdout, text)
    except OSError as error:
        quiet_stdout(sys.stdout)
        raise stdout_error(error) from None
