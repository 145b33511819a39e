"""Reading and writing mappings as YAML or NPZ, atomically.

Instance files of every kind are one mapping of fields, encoded either as YAML (for
people) or NPZ (for arrays), chosen by the file extension; ``-`` is YAML on stdin or
stdout. NPZ stores numbers and arrays as arrays and nested mappings as JSON text, so
YAML → NPZ → YAML is exact.

Every problem with a file ends as one :class:`~cbai_cli.errors.InstanceError` that names
the file; :func:`instance_errors` does that for the field validators' errors
(:class:`~cbai_cli.validation.FieldError`).
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from cbai_cli.errors import InstanceError
from cbai_cli.validation import FieldError

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
        raise InstanceError(f"{prefix}{error}") from None


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
        return _parse_yaml(sys.stdin.read(), "<stdin>")
    path = Path(path)
    if not path.exists():
        raise InstanceError(f"{path}: no such file")
    if path.is_dir():
        raise InstanceError(f"{path}: is a directory, not an instance file")
    if kind == "yaml":
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InstanceError(f"{path}: cannot read: {error}") from None
        return _parse_yaml(text, str(path))
    return _read_npz(path)


def _parse_yaml(text: str, source: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        first_line = str(error).splitlines()[0] if str(error) else "syntax error"
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InstanceError(f"{source}: not valid YAML{where}: {first_line}") from None
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: expected a mapping of fields at the top level")
    return data


def _read_npz(path: Path) -> dict[str, Any]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            raw = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise InstanceError(f"{path}: not a readable NPZ file: {error}") from None
    mapping: dict[str, Any] = {}
    for key, value in raw.items():
        group, _, member = key.partition("/")
        if member and group in ARRAY_GROUPS:
            mapping.setdefault(group, {})[member] = value
        elif key.startswith(_JSON_PREFIX):
            try:
                mapping[key[len(_JSON_PREFIX):]] = json.loads(str(value))
            except json.JSONDecodeError:
                raise InstanceError(f"{path}: field {key[len(_JSON_PREFIX):]!r} holds malformed JSON") from None
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
