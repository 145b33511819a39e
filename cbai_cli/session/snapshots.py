"""Snapshots of a study's state in the user's cache: a command on a long study reads only
what was written since the last snapshot, instead of replaying every answer.

The journal stays the one source of truth. A snapshot is a pickle of
:class:`~cbai_cli.session.state.StudyState` taken where the state depends on stored rows
only (every fold up to the last stored batch's ``folded``, none by the clock), with the
position it was taken at and a fingerprint of the last query and event rows there. It is
used only when the study's id, the fingerprint and the code stamp (a digest of cbai's
sources and of the Python and numpy versions) all match, so a copied study that went its
own way, or a cbai edited since, replays instead. Snapshots live in an owner-only folder
of the user's cache (``CBAI_CACHE_DIR``, else ``$XDG_CACHE_HOME/cbai``, else
``~/.cache/cbai``), trusted as numba's compiled cache is: a pickle is only ever read from a
folder that only its owner can write. Any failure to read or write one is silent: a
snapshot saves time and nothing else.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: A snapshot is written once this many events were applied since the last one.
SNAPSHOT_EVERY = 2_000
#: The pickle protocol (5 keeps numpy arrays out of band, fast to load).
PROTOCOL = 5


@dataclass(frozen=True)
class Position:
    """Where a snapshot was taken: the stored queries and events it has taken in, and the
    rows there (as tuples) that a journal must hold for the snapshot to be its own."""

    queries: int
    events: int
    last_query: tuple | None
    last_event: tuple | None


def cache_root() -> Path | None:
    """The owner-only folder for snapshots, made if missing; None when it cannot be made
    or is not the user's own (then no snapshot is read or written)."""
    base = os.environ.get("CBAI_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = str(Path(xdg) / "cbai") if xdg else str(Path.home() / ".cache" / "cbai")
    folder = Path(base) / "studies"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return folder


@functools.lru_cache(maxsize=1)
def code_stamp() -> str:
    """A digest of every source file of cbai and of the Python and numpy versions: a state
    pickled by other code is never loaded."""
    import numpy

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{sys.version}|{numpy.__version__}".encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def _path(root: Path, study_id: str) -> Path:
    return root / f"{study_id}-{code_stamp()}.pickle"


def load(study_id: str) -> tuple[Position, Any] | None:
    """The snapshot of study ``study_id`` for this code, or None."""
    root = cache_root()
    if root is None:
        return None
    try:
        with open(_path(root, study_id), "rb") as handle:
            position, state = pickle.load(handle)
    except Exception:  # noqa: BLE001 - a missing, truncated or foreign snapshot is no snapshot
        return None
    if not isinstance(position, Position):
        return None
    return position, state


def save(study_id: str, position: Position, state: Any) -> None:
    """Write a snapshot atomically (a temporary file renamed over the old one); silent on
    any failure."""
    root = cache_root()
    if root is None:
        return
    target = _path(root, study_id)
    try:
        handle, temporary = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=root)
        try:
            with os.fdopen(handle, "wb") as out:
                pickle.dump((position, state), out, protocol=PROTOCOL)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except Exception:  # noqa: BLE001 - a full or read-only cache only costs a replay
        return
