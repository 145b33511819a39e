"""The study file of a live session: an append-only journal in SQLite.

A study holds what was asked and what was answered, never a derived state:

- ``meta``: one row per key, each value JSON — the instance document (the learner's
  file mapping), the algorithm, its regime and options, the seed, the cbai version that
  started the study, the journal's schema version;
- ``queries``: every query handed out, in order: its ``id``, the ``arm``, the ``count``
  of observations asked for, the ``batch`` it belongs to (one ask of the algorithm: one
  pull of an adaptive algorithm, a whole round of a round-based one), ``observed`` (how
  many observations were recorded when it was handed out) and the time;
- ``observations``: every recorded value in order (``seq``), with its query id and time.

Triggers refuse UPDATE and DELETE on all three tables, so the journal is append-only;
every write is one transaction (``BEGIN IMMEDIATE``) in WAL mode, so ``kill -9`` at any
moment loses at most the transaction being written and never leaves half of one.
A study is created in a temporary file beside the target and linked into place, which
fails if the target exists: ``start`` never overwrites anything.

Every problem with a study file is one :class:`~cbai_cli.errors.OptionError` naming it;
:class:`StudyFileError` when the file itself fails (it cannot be read or written, it was
removed or replaced while open, or its rows are damaged), which ``session ask`` does not
take for a mistyped answer.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cbai_cli.databases import resource_failure
from cbai_cli.errors import OptionError
from cbai_cli.fileio import temporary_prefix
from cbai_cli.outputs import check_writable, file_identity, reason

#: SQLite's application_id of a study ("cbss" in ASCII), distinct from compare's stores.
APPLICATION_ID = 0x63627373
SCHEMA_VERSION = 1
#: How long a command waits for another process's write lock: a write holds it for
#: milliseconds, so a lock held this long is a stuck process, and the command says so in one
#: line well within a minute (60 s until 2026-12-04).
BUSY_TIMEOUT_MS = 10_000
TABLES = ("meta", "observations", "queries")
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE queries (
    id INTEGER PRIMARY KEY,
    arm INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 1),
    batch INTEGER NOT NULL,
    observed INTEGER NOT NULL,
    time TEXT NOT NULL
);
CREATE TABLE observations (
    seq INTEGER PRIMARY KEY,
    query_id INTEGER NOT NULL REFERENCES queries (id),
    value REAL NOT NULL,
    time TEXT NOT NULL
);
""" + "".join(
    f"CREATE TRIGGER {table}_no_{action} BEFORE {action.upper()} ON {table} "
    f"BEGIN SELECT RAISE(ABORT, 'a study is append-only'); END;\n"
    for table in TABLES for action in ("update", "delete"))


@dataclass(frozen=True)
class QueryRow:
    """One handed-out query as stored."""

    id: int
    arm: int
    count: int
    batch: int
    observed: int
    time: str


@dataclass(frozen=True)
class ObservationRow:
    """One recorded observation as stored; ``seq`` counts from 1."""

    seq: int
    query_id: int
    value: float
    time: str


class StudyFileError(OptionError):
    """The study file failed: unreadable or unwritable, removed or replaced while open, or damaged."""


class StaleJournal(Exception):
    """Another process wrote to the study since it was read: read it again and retry."""


def now() -> str:
    """The current time, UTC, ISO 8601 with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def create(path: str | Path, meta: Mapping[str, Any]) -> None:
    """Write a new study holding ``meta`` at ``path``; refuse an existing path.

    The database is built in a temporary file in the same folder and hard-linked to
    ``path`` (atomic, and fails when ``path`` exists, even if another process makes it
    meanwhile), then the temporary name is removed.
    """
    path = Path(path)
    if path.exists() or path.is_symlink():
        raise OptionError(f"-o {path}: exists already; a study is never overwritten (choose another name)")
    left = [Path(f"{path}{suffix}") for suffix in ("-wal", "-shm")]
    if any(leftover.exists() or leftover.is_symlink() for leftover in left):
        # SQLite would replay a removed study's write-ahead log into the new file at its first open
        raise OptionError(f"-o {path}: {left[0].name} or {left[1].name} is beside it, left by a study of that name "
                          "that was removed while open or after a crash: remove them too, or choose another name")
    check_writable(path, "-o")
    handle, temporary = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.executescript(SCHEMA)
            connection.execute("BEGIN")
            connection.executemany("INSERT INTO meta (key, value) VALUES (?, ?)",
                                   [(key, json.dumps(value, allow_nan=False)) for key, value in meta.items()])
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
            connection.execute("PRAGMA journal_mode = WAL")
        finally:
            connection.close()
        os.chmod(temporary, 0o666 & ~_umask())
        try:
            os.link(temporary, path)
        except FileExistsError:
            raise OptionError(f"-o {path}: exists already; a study is never overwritten (choose another name)") from None
        except OSError as error:
            raise OptionError(f"-o {path}: cannot write: {reason(error)}") from None
    except sqlite3.Error as error:
        raise OptionError(f"-o {path}: cannot write the study: {error}") from None
    finally:
        for leftover in (temporary, temporary + "-wal", temporary + "-shm"):
            Path(leftover).unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Journal:
    """An open study: read its rows, append queries and observations.

    Args:
        path: the study file; it must exist and be a cbai study.
        writable: open for writing (``next``, ``record``); else read only.
    """

    def __init__(self, path: str | Path, writable: bool = True) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise OptionError(f"{self.path}: is a folder, not a study")
        if not self.path.exists():
            raise OptionError(f"{self.path}: no such study (make one with `cbai session start`)")
        if not self.path.is_file():
            raise OptionError(f"{self.path}: not a regular file (a pipe or a device), so not a study")
        if writable and not os.access(self.path, os.W_OK):
            raise StudyFileError(f"{self.path}: cannot write: permission denied")
        try:
            self._identity = file_identity(self.path)
            # as_uri() escapes '?', '#' and '%', which SQLite would read as a URI's query, fragment
            # and escapes: the name 'p.db#2' opened p.db
            uri = self.path.resolve().as_uri() + ("" if writable else "?mode=ro" + _immutable(self.path))
            self._connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                               isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            said = getattr(error, "strerror", None) or error
            raise StudyFileError(f"{self.path}: cannot open the study: {said}") from None
        try:
            self._check()
            self.meta = self._read_meta()
        except sqlite3.DatabaseError as error:
            self._connection.close()
            if resource_failure(error) and not os.access(self.path.parent, os.W_OK):
                raise StudyFileError(f"{self.path}: cannot use the study: its folder is not writable, and SQLite "
                                     f"must keep {self.path.name}-shm beside it while the study is open") from None
            if resource_failure(error):
                raise StudyFileError(f"{self.path}: cannot read the study: {error}") from None
            if "malformed" in str(error):  # a truncated or overwritten file: SQLite cannot tell whose it was
                raise StudyFileError(f"{self.path}: a damaged study (or not a cbai study): {error}") from None
            raise OptionError(f"{self.path}: not a cbai study: {error}") from None
        except BaseException:
            self._connection.close()
            raise

    def _check(self) -> None:
        application_id = self._connection.execute("PRAGMA application_id").fetchone()[0]
        if application_id != APPLICATION_ID:
            raise OptionError(f"{self.path}: not a cbai study (SQLite application id {application_id:#x}; "
                              "make one with `cbai session start`)")
        version = self._connection.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise OptionError(f"{self.path}: a study of journal schema {version}, which this cbai does not read "
                              f"(it reads schema {SCHEMA_VERSION})")
        tables = {row[0] for row in self._connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not set(TABLES) <= tables:
            raise OptionError(f"{self.path}: not a cbai study: tables {', '.join(sorted(set(TABLES) - tables))} "
                              "are missing")

    def _read_meta(self) -> dict[str, Any]:
        meta = {}
        for key, value in self._connection.execute("SELECT key, value FROM meta"):
            try:
                meta[key] = json.loads(value)
            except (TypeError, json.JSONDecodeError, RecursionError):  # RecursionError: nested beyond the parser
                raise OptionError(f"{self.path}: the study's meta.{key} is not valid JSON") from None
        return meta

    def queries(self) -> list[QueryRow]:
        """Every handed-out query, by id; :class:`StudyFileError` for a row that cbai cannot
        have written (SQLite returns NULL or text from a damaged page)."""
        rows = self._read("SELECT id, arm, count, batch, observed, time FROM queries ORDER BY id")
        for position, row in enumerate(rows, start=1):
            # ids are handed out 1, 2, 3, …: a gap is a row cbai did not write
            if not (all(_is_integer(value) for value in row[:5]) and row[0] == position and row[2] >= 1
                    and min(row[:5]) >= 0 and isinstance(row[5], str)):
                raise self._damaged(f"query row {_shown(row)}")
        return [QueryRow(*row) for row in rows]

    def observations(self) -> list[ObservationRow]:
        """Every recorded observation, in the order recorded; :class:`StudyFileError` for a
        row that cbai cannot have written (a value that is not a finite number within
        ±:data:`~cbai_cli.options.MAGNITUDE_LIMIT`, the bound every recorded value meets)."""
        from cbai_cli.options import MAGNITUDE_LIMIT

        rows = self._read("SELECT seq, query_id, value, time FROM observations ORDER BY seq")
        for row in rows:
            value = row[2]
            if not (_is_integer(row[0]) and _is_integer(row[1]) and isinstance(value, float)
                    and math.isfinite(value) and abs(value) <= MAGNITUDE_LIMIT and isinstance(row[3], str)):
                raise self._damaged(f"observation row {_shown(row)}")
        return [ObservationRow(*row) for row in rows]

    def _damaged(self, what: str) -> StudyFileError:
        return StudyFileError(f"{self.path}: the study is damaged: {what} is not one cbai writes")

    def _read(self, sql: str) -> list[tuple]:
        try:
            return self._connection.execute(sql).fetchall()
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot read the study: {error}") from None

    def counts(self) -> tuple[int, int]:
        """(queries, observations) stored now."""
        row = self._read("SELECT (SELECT count(*) FROM queries), (SELECT count(*) FROM observations)")[0]
        return int(row[0]), int(row[1])

    def _check_identity(self) -> None:
        """:class:`StudyFileError` when the path no longer names the file that was opened
        (removed or replaced while open: SQLite would go on writing to the unlinked file)."""
        if file_identity(self.path) != self._identity:
            raise StudyFileError(f"{self.path}: the study file was removed or replaced while it was open; "
                                 "nothing more was recorded")

    @contextmanager
    def _write(self, expected: tuple[int, int]) -> Iterator[sqlite3.Connection]:
        """One write transaction, after checking that the journal still holds ``expected``
        (queries, observations): else :class:`StaleJournal` and nothing is written."""
        try:
            self._connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot write: {_locked(error)}") from None
        try:
            self._check_identity()
            if self.counts() != expected:
                raise StaleJournal
            yield self._connection
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        try:
            self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot write: {_locked(error)}") from None

    def append_queries(self, rows: Sequence[tuple[int, int, int, int]], expected: tuple[int, int]) -> None:
        """Store handed-out queries ``(arm, count, batch, observed)`` in one transaction;
        their ids continue the stored ones."""
        stamp = now()
        try:
            with self._write(expected) as connection:
                connection.executemany("INSERT INTO queries (id, arm, count, batch, observed, time) "
                                       "VALUES (?, ?, ?, ?, ?, ?)",
                                       [(expected[0] + offset + 1, *row, stamp) for offset, row in enumerate(rows)])
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot write: {_locked(error)}") from None

    def append_observations(self, rows: Sequence[tuple[int, float]], expected: tuple[int, int]) -> None:
        """Store observations ``(query_id, value)`` in one transaction."""
        stamp = now()
        try:
            with self._write(expected) as connection:
                connection.executemany("INSERT INTO observations (seq, query_id, value, time) VALUES (?, ?, ?, ?)",
                                       [(expected[1] + offset + 1, query, value, stamp)
                                        for offset, (query, value) in enumerate(rows)])
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot write: {_locked(error)}") from None

    def close(self) -> None:
        self._connection.close()


def _immutable(path: Path) -> str:
    """``&immutable=1`` for a study to read in a folder that cannot be written (an archive, a
    read-only share) and that no writer left a WAL file beside: SQLite would otherwise need to
    create its ``-shm`` there just to read, and with no WAL there is nothing it could miss."""
    wal = path.with_name(path.name + "-wal")
    if os.access(path.parent, os.W_OK) or (wal.exists() and wal.stat().st_size > 0):
        return ""
    return "&immutable=1"


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(row: tuple) -> str:
    """A row as one short line (a damaged text may be long)."""
    text = repr(row)
    return text if len(text) <= 120 else text[:120] + "…"


def _locked(error: sqlite3.Error) -> str:
    """SQLite's reason, and for a lock how long cbai waited for it."""
    text = str(error)
    if "locked" in text:
        return f"{text} (another process held it for over {BUSY_TIMEOUT_MS // 1000} s)"
    return text
