"""Reading and writing mappings as YAML or NPZ, atomically.

Instance files of every kind are one mapping of fields, encoded either as YAML (for
people) or NPZ (for arrays), chosen by the file extension; ``-`` is YAML on stdin or
stdout. NPZ stores numbers and arrays as arrays and nested mappings as JSON text, so
YAML → NPZ → YAML is exact.

Every problem with a file ends as one :class:`~cbai_cli.errors.InstanceError` that names
the file; :func:`instance_errors` does that for the field validators' errors
(:class:`~cbai_cli.validation.FieldError`). Reading is strict: a YAML mapping that repeats
a key is an error (PyYAML would keep the last value), and NPZ files are read without
pickles. Strings from a file are escaped (:func:`~cbai_cli.validation.safe_text`) in the
messages.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from cbai_cli.errors import InstanceError
from cbai_cli.validation import FieldError, safe_text

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


def encoding_of(path: str | Path) -> str:
    """``"yaml"`` or ``"npz"`` from the extension; ``-`` means YAML on stdin/stdout."""
    if str(path) == "-":
        return "yaml"
    suffix = Path(path).suffix.lower()
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if suffix == NPZ_SUFFIX:
        return "npz"
    raise InstanceError(f"{path}: unknown file type {suffix or '(none)'!r}; use .yaml, .yml or .npz")


def read_mapping(path: str | Path) -> dict[str, Any]:
    """Read one mapping from a YAML or NPZ file (or YAML from stdin for ``-``)."""
    kind = encoding_of(path)
    if str(path) == "-":
        try:
            text = sys.stdin.read()
        except (OSError, UnicodeDecodeError) as error:
            raise InstanceError(f"<stdin>: cannot read: {_reason(error)}") from None
        return _parse_yaml(text, "<stdin>")
    path = Path(path)
    shown = safe_text(path)
    if not path.exists():
        raise InstanceError(f"{shown}: no such file")
    if path.is_dir():
        raise InstanceError(f"{shown}: is a directory, not an instance file")
    if kind == "yaml":
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InstanceError(f"{shown}: cannot read: {_reason(error)}") from None
        return _parse_yaml(text, shown)
    return _read_npz(path)


def _reason(error: BaseException) -> str:
    """An exception's message as one printable line (``strerror`` for OS errors, which
    would otherwise repeat the file name)."""
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return safe_text(text.splitlines()[0] if text.splitlines() else text)


class _DuplicateKey(Exception):
    """A YAML mapping repeats a key (raised by :class:`_StrictLoader`)."""

    def __init__(self, key: Any, first_line: int, line: int) -> None:
        super().__init__(key)
        self.key, self.first_line, self.line = key, first_line, line


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a mapping may not repeat a key (the YAML spec
    requires unique keys; PyYAML keeps the last value) and a malformed date says where it is."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
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


_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _StrictLoader.construct_yaml_timestamp)
_StrictLoader.add_constructor("tag:yaml.org,2002:map", _StrictLoader.construct_yaml_map)


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML text with the strict loader; every problem is one :class:`InstanceError`
    ``SOURCE: not valid YAML (line N): PROBLEM`` or ``SOURCE: KEY: duplicate key ...``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
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
        raise InstanceError(f"{source}: not valid YAML: {_reason(error)}") from None


def _parse_yaml(text: str, source: str) -> dict[str, Any]:
    data = load_yaml(text, source)
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: expected a mapping of fields at the top level")
    return data


_NPY_MAGIC = b"\x93NUMPY"


def _read_npz(path: Path) -> dict[str, Any]:
    """The arrays of an NPZ archive, read without pickles; a file that is no such archive,
    or a member that cannot be read, is ``FILE: not a valid .npz file (REASON)``, and a
    member of Python objects ``FILE: FIELD: must hold real numbers only, …``."""
    shown = safe_text(path)

    def invalid(reason: str) -> InstanceError:
        return InstanceError(f"{shown}: not a valid .npz file ({reason})")

    try:
        with open(path, "rb") as stream:
            head = stream.read(len(_NPY_MAGIC))
    except OSError as error:
        raise InstanceError(f"{shown}: cannot read: {_reason(error)}") from None
    if head == _NPY_MAGIC:
        raise invalid("a single .npy array, not an archive of named fields")
    if not zipfile.is_zipfile(path):
        raise invalid("not a zip archive")
    raw: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as archive:
            for key in archive.files:
                try:
                    raw[key] = archive[key]
                except ValueError as error:
                    if "pickle" in str(error):  # numpy's way of saying "dtype object"
                        raise InstanceError(f"{shown}: {safe_text(key)}: must hold real numbers only, got an array of "
                                            "Python objects (cbai never loads pickled data)") from None
                    raise invalid(f"field {safe_text(key)!r}: {_reason(error)}") from None
    except InstanceError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError, KeyError) as error:
        raise invalid(_reason(error)) from None
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


def _npz_arrays(mapping: dict[str, Any]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for key, value in mapping.items():
        if key in ARRAY_GROUPS and isinstance(value, dict):
            for member, array in value.items():
                arrays[f"{key}/{member}"] = np.asarray(array)
        elif isinstance(value, (dict, type(None))):
            arrays[_JSON_PREFIX + key] = np.array(json.dumps(value, sort_keys=True))
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


def write_atomic(path: str | Path, write) -> None:
    """Write a file through ``write(binary_file)`` into a temporary file, then rename it.

    A crash or Ctrl-C leaves either the old file or the new one, never half of one.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise InstanceError(f"{path}: folder {directory} does not exist")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        # mkstemp creates the file 0600; give it the permissions a plain open() would.
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except PermissionError as error:
        Path(temporary).unlink(missing_ok=True)
        raise InstanceError(f"{path}: cannot write: {error.strerror}") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_mapping(mapping: dict[str, Any], path: str | Path) -> None:
    """Write a mapping as YAML or NPZ by extension; ``-`` writes YAML to stdout."""
    kind = encoding_of(path)
    if str(path) == "-":
        sys.stdout.write(yaml_text(mapping))
        sys.stdout.flush()
        return
    if kind == "yaml":
        text = yaml_text(mapping).encode("utf-8")
        write_atomic(path, lambda stream: stream.write(text))
        return
    buffer = io.BytesIO()
    np.savez(buffer, **_npz_arrays(mapping))
    data = buffer.getvalue()
    write_atomic(path, lambda stream: stream.write(data))

