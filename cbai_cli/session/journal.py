"""The study file of a live session: an append-only journal in SQLite.

A study holds what was asked and what people did, never a derived state:

- ``meta``: one row per key, each value JSON: the instance document (the learner's file
  mapping), the algorithm, its regime and options, the seed, the study's id, the folder of
  the instance file (for ``meta.media``), the cbai version that started the study, the
  journal's schema version;
- ``queries``: every query the algorithm asked, in order: its ``id``, the ``arm``, the
  ``count`` of observations asked for, the ``batch`` it belongs to (one ask of the
  algorithm: one pull of an adaptive algorithm, a whole round of a round-based one),
  ``folded`` (the sequence number of the last event whose effect the algorithm had been
  told when it asked, see :mod:`cbai_cli.session.state`) and the time;
- ``events``: everything raters did, in one order (``seq``): ``lease`` (a query handed
  to a rater until ``until``), ``answer`` (its ``value`` in the learner's units, the
  answer as ``given``, the end of its undo grace in ``until``, an optional client ``key``
  that makes a retried answer a no-op), ``skip`` ("can't judge") and ``undo`` (of the
  event ``target``), each with the ``rater`` (``''`` for anonymous) and the time.

Times are Unix seconds. Triggers refuse UPDATE and DELETE on every table, so the journal
is append-only; every write is one transaction (``BEGIN IMMEDIATE``) in WAL mode, so
``kill -9`` at any moment loses at most the transaction being written and never leaves
half of one. A study is created in a temporary file beside the target and linked into
place, which fails if the target exists: ``start`` never overwrites anything.

Every problem with a study file is one :class:`~cbai_cli.contracts.errors.OptionError` naming it;
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
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cbai_cli.io.databases import resource_failure
from cbai_cli.contracts.errors import OptionError
from cbai_cli.io.atomic import temporary_prefix
from cbai_cli.io.outputs import check_writable, file_identity, reason, unwritable_reason

#: SQLite's application_id of a study ("cbss" in ASCII), distinct from compare's stores.
APPLICATION_ID = 0x63627373
SCHEMA_VERSION = 2
#: How long a command waits for another process's write lock: a write holds it for
#: milliseconds, so a lock held this long is a stuck process, and the command says so in one
#: line well within a minute.
BUSY_TIMEOUT_MS = 10_000
TABLES = ("meta", "queries", "events")
#: The kinds of event rows.
EVENT_KINDS = ("lease", "answer", "skip", "undo")
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE queries (
    id INTEGER PRIMARY KEY,
    arm INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 1),
    batch INTEGER NOT NULL,
    folded INTEGER NOT NULL,
    time REAL NOT NULL
);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('lease', 'answer', 'skip', 'undo')),
    query_id INTEGER NOT NULL REFERENCES queries (id),
    rater TEXT NOT NULL,
    value REAL,
    given TEXT,
    target INTEGER,
    until REAL,
    key TEXT UNIQUE,
    time REAL NOT NULL
);
""" + "".join(
    f"CREATE TRIGGER {table}_no_{action} BEFORE {action.upper()} ON {table} "
    f"BEGIN SELECT RAISE(ABORT, 'a study is append-only'); END;\n"
    for table in TABLES for action in ("update", "delete"))


@dataclass(frozen=True)
class QueryRow:
    """One query the algorithm asked, as stored."""

    id: int
    arm: int
    count: int
    batch: int
    folded: int
    time: float


@dataclass(frozen=True)
class EventRow:
    """One event as stored; ``seq`` counts from 1.

    Attributes:
        kind: ``lease``, ``answer``, ``skip`` or ``undo``.
        query_id: the query it concerns (for an undo, the undone event's query).
        rater: who did it (``''``: anonymous).
        value: an answer's observation in the learner's units; None otherwise.
        given: an answer as the rater gave it (a label or a number); None otherwise.
        target: the undone event's ``seq``, for an undo; None otherwise.
        until: a lease's expiry, or the end of an answer's or skip's undo grace (Unix s).
        key: an answer's client key (a retried answer with the same key is not stored again).
        time: when it was stored (Unix s).
    """

    seq: int
    kind: str
    query_id: int
    rater: str
    value: float | None
    given: str | None
    target: int | None
    until: float | None
    key: str | None
    time: float


@dataclass(frozen=True)
class NewEvent:
    """An event to append (its ``seq`` and time are given when it is stored)."""

    kind: str
    query_id: int
    rater: str = ""
    value: float | None = None
    given: str | None = None
    target: int | None = None
    until: float | None = None
    key: str | None = None


class StudyFileError(OptionError):
    """The study file failed: unreadable or unwritable, removed or replaced while open, or damaged."""


def now() -> float:
    """The current time, Unix seconds."""
    return time.time()


def iso(moment: float) -> str:
    """``moment`` (Unix s) as UTC ISO 8601 with microseconds, as logs show it."""
    return datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="microseconds")


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
    """An open study: read its rows, append queries and events.

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
        refused = unwritable_reason(self.path) if writable else None
        if refused is not None:
            raise StudyFileError(f"{self.path}: cannot write: {refused}")
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
        if version == 1:
            raise OptionError(f"{self.path}: a study of journal schema 1, made by cbai before studies had raters; "
                              f"copy it into schema {SCHEMA_VERSION} with `cbai session upgrade {self.path} -o NEW`")
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

    def read(self, after_query: int = 0, after_event: int = 0) -> tuple[list[QueryRow], list[EventRow]]:
        """The queries after id ``after_query`` and the events after seq ``after_event``, read
        in one transaction (so every query's ``folded`` names an event that is read too);
        :class:`StudyFileError` for a row that cbai cannot have written (SQLite returns NULL or
        text from a damaged page)."""
        try:
            if self._connection.in_transaction:  # inside a write: its view is already fixed
                return self._read_rows(after_query, after_event)
            self._connection.execute("BEGIN")
            try:
                return self._read_rows(after_query, after_event)
            finally:
                self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot read the study: {error}") from None

    def _read_rows(self, after_query: int, after_event: int) -> tuple[list[QueryRow], list[EventRow]]:
        queries = self._connection.execute(
            "SELECT id, arm, count, batch, folded, time FROM queries WHERE id > ? ORDER BY id",
            (after_query,)).fetchall()
        events = self._connection.execute(
            "SELECT seq, kind, query_id, rater, value, given, target, until, key, time FROM events "
            "WHERE seq > ? ORDER BY seq", (after_event,)).fetchall()
        return self._queries(queries, after_query), self._events(events, after_event)

    def actions(self) -> list[EventRow]:
        """Every answer, skip and undo (no leases), in order."""
        try:
            rows = self._connection.execute(
                "SELECT seq, kind, query_id, rater, value, given, target, until, key, time FROM events "
                "WHERE kind != 'lease' ORDER BY seq").fetchall()
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot read the study: {error}") from None
        return self._events(rows, consecutive=False)

    def _queries(self, rows: list[tuple], after: int) -> list[QueryRow]:
        for position, row in enumerate(rows, start=after + 1):
            # ids are handed out 1, 2, 3, …: a gap is a row cbai did not write
            if not (all(_is_integer(value) for value in row[:5]) and row[0] == position and row[2] >= 1
                    and min(row[:5]) >= 0 and _is_time(row[5])):
                raise self._damaged(f"query row {_shown(row)}")
        return [QueryRow(*row) for row in rows]

    def _events(self, rows: list[tuple], after: int = 0, consecutive: bool = True) -> list[EventRow]:
        """Event rows checked as cbai writes them: seqs following ``after`` one by one (when
        ``consecutive``), every value a finite number within
        ±:data:`~cbai_cli.contracts.options.MAGNITUDE_LIMIT` (the bound every recorded value meets)."""
        from cbai_cli.contracts.options import MAGNITUDE_LIMIT

        for position, row in enumerate(rows, start=after + 1):
            seq, kind, query_id, rater, value, given, target, until, key, moment = row
            fine = (_is_integer(seq) and (seq == position or not consecutive) and kind in EVENT_KINDS and _is_integer(query_id) and query_id >= 1
                    and isinstance(rater, str) and _is_time(moment)
                    and (until is None or _is_time(until)) and (key is None or isinstance(key, str)))
            if kind == "answer":
                fine = fine and (isinstance(value, float) and math.isfinite(value) and abs(value) <= MAGNITUDE_LIMIT
                                 and isinstance(given, str))
            elif kind == "undo":
                fine = fine and _is_integer(target) and 1 <= target < seq
            elif kind == "lease":
                fine = fine and until is not None
            if not fine:
                raise self._damaged(f"event row {_shown(row)}")
        return [EventRow(*row) for row in rows]

    def _damaged(self, what: str) -> StudyFileError:
        return StudyFileError(f"{self.path}: the study is damaged: {what} is not one cbai writes")

    def _one(self, sql: str, parameters: tuple = ()) -> tuple:
        try:
            return self._connection.execute(sql, parameters).fetchone()
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot read the study: {error}") from None

    @property
    def in_transaction(self) -> bool:
        """Whether a write transaction is open on this journal."""
        return self._connection.in_transaction

    def fingerprint(self, queries: int, events: int) -> tuple[tuple | None, tuple | None]:
        """The query row ``queries`` and the event row ``events`` as tuples (None for 0 or a
        row not stored): what a snapshot taken there must match."""
        query = self._one("SELECT id, arm, count, batch, folded, time FROM queries WHERE id = ?", (queries,))
        event = self._one("SELECT seq, kind, query_id, rater, value, given, target, until, key, time FROM events "
                          "WHERE seq = ?", (events,))
        return (tuple(query) if query else None), (tuple(event) if event else None)

    def position(self) -> tuple[int, int]:
        """(queries, last event seq) stored now."""
        # ids and seqs count from 1 without gaps (reading checks it), so the largest is the count
        row = self._one("SELECT (SELECT coalesce(max(id), 0) FROM queries), (SELECT coalesce(max(seq), 0) FROM events)")
        return int(row[0]), int(row[1])

    def _check_identity(self) -> None:
        """:class:`StudyFileError` when the path no longer names the file that was opened
        (removed or replaced while open: SQLite would go on writing to the unlinked file)."""
        if file_identity(self.path) != self._identity:
            raise StudyFileError(f"{self.path}: the study file was removed or replaced while it was open; "
                                 "nothing more was recorded")

    @contextmanager
    def writing(self) -> Iterator[Writer]:
        """One write transaction (``BEGIN IMMEDIATE``: it holds the write lock from the start,
        so what is read inside stays true until it commits); nothing is written if the block
        raises."""
        try:
            self._connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StudyFileError(f"{self.path}: cannot write: {_locked(error)}") from None
        try:
            self._check_identity()
            yield Writer(self)
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        try:
            self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            if self._connection.in_transaction:
                self._connection.execute("ROLLBACK")
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


class Writer:
    """What a write transaction may do (:meth:`Journal.writing`): read, check, append."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    def read(self, after_query: int = 0, after_event: int = 0) -> tuple[list[QueryRow], list[EventRow]]:
        return self._journal.read(after_query, after_event)

    def position(self) -> tuple[int, int]:
        """(queries, last event seq) stored now."""
        return self._journal.position()

    def last_folded(self) -> int:
        """The largest ``folded`` of any stored query: events up to it are told to the
        algorithm for good."""
        return int(self._journal._one("SELECT coalesce(max(folded), 0) FROM queries")[0])

    def event_with_key(self, key: str) -> EventRow | None:
        """The answer stored with client key ``key``, if any."""
        row = self._journal._one("SELECT seq, kind, query_id, rater, value, given, target, until, key, time "
                                 "FROM events WHERE key = ?", (key,))
        return None if row is None else self._journal._events([row], consecutive=False)[0]

    def append(self, queries: Sequence[tuple[int, int, int, int]], events: Sequence[NewEvent]) -> list[EventRow]:
        """Store queries ``(arm, count, batch, folded)`` (ids continuing the stored ones) and
        events (seqs continuing the stored ones); returns the events as stored."""
        stamp = now()
        stored = self.position()
        connection = self._journal._connection
        try:
            connection.executemany(
                "INSERT INTO queries (id, arm, count, batch, folded, time) VALUES (?, ?, ?, ?, ?, ?)",
                [(stored[0] + offset + 1, *row, stamp) for offset, row in enumerate(queries)])
            rows = [EventRow(stored[1] + offset + 1, event.kind, event.query_id, event.rater, event.value, event.given,
                             event.target, event.until, event.key, stamp) for offset, event in enumerate(events)]
            connection.executemany(
                "INSERT INTO events (seq, kind, query_id, rater, value, given, target, until, key, time) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [tuple(vars(row).values()) for row in rows])
        except sqlite3.Error as error:
            raise StudyFileError(f"{self._journal.path}: cannot write: {_locked(error)}") from None
        return rows

    def copy(self, queries: Sequence[QueryRow], events: Sequence[EventRow]) -> None:
        """Store rows as they are, ids, seqs and times included (a study copied from another
        file); they must continue the stored ones."""
        stored = self.position()
        if [row.id for row in queries] != list(range(stored[0] + 1, stored[0] + 1 + len(queries))) or \
                [row.seq for row in events] != list(range(stored[1] + 1, stored[1] + 1 + len(events))):
            raise StudyFileError(f"{self._journal.path}: rows to copy must continue the stored ones without a gap")
        connection = self._journal._connection
        try:
            connection.executemany("INSERT INTO queries (id, arm, count, batch, folded, time) VALUES (?, ?, ?, ?, ?, ?)",
                                   [tuple(vars(row).values()) for row in queries])
            connection.executemany(
                "INSERT INTO events (seq, kind, query_id, rater, value, given, target, until, key, time) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [tuple(vars(row).values()) for row in events])
        except sqlite3.Error as error:
            raise StudyFileError(f"{self._journal.path}: cannot write: {_locked(error)}") from None


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_time(value: Any) -> bool:
    return isinstance(value, float) and math.isfinite(value)


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
