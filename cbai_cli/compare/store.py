"""Stores of run records that survive crashes and Ctrl-C, and let a study resume.

- JSON Lines (``.jsonl``): one record per line, each appended with a single unbuffered
  ``write`` call, so a record is on disk (in the page cache) as soon as it finishes and
  an interruption can at worst cut the last line short. Readers skip such a line, and
  the next writer starts on a fresh line. Several processes may append to one file
  on a local file system (O_APPEND writes of one line do not interleave).
- SQLite (``.sqlite``, ``.sqlite3``, ``.db``): one transaction per record in WAL mode
  with a busy timeout, so several processes (shards, or a second terminal) can write
  the same store; ``INSERT OR IGNORE`` on the run key makes a duplicate harmless.

Neither locking scheme holds across machines on a network file system (SQLite's WAL
needs shared memory; NFS appends are not atomic): there, give every shard its own
store and merge them with ``cbai compare --from A --from B --out ALL``.

Both are append-only, so they are not written through a temporary file: a record once
stored is never rewritten. Resuming means skipping the runs whose key is stored.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cbai_cli.errors import OptionError

JSONL_SUFFIXES = (".jsonl",)
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
# How long a SQLite writer waits for another process's transaction to finish.
SQLITE_BUSY_TIMEOUT_MS = 60_000
SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_key TEXT PRIMARY KEY,
    "group" TEXT NOT NULL,
    instance TEXT NOT NULL,
    instance_hash TEXT NOT NULL,
    seed INTEGER NOT NULL,
    algorithm TEXT NOT NULL,
    spec TEXT NOT NULL,
    regime TEXT,
    iterations INTEGER NOT NULL,
    correct INTEGER,
    violation INTEGER,
    stopped TEXT NOT NULL,
    wall_s REAL NOT NULL,
    record TEXT NOT NULL
)
"""


class Store(Protocol):
    """An append-only collection of records keyed by ``run_key``."""

    path: Path

    def keys(self) -> set[str]: ...

    def records(self) -> list[dict]: ...

    def append(self, record: dict) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class StoreContents:
    """The records read from a store and the number of unreadable (cut-short) lines."""

    records: tuple[dict, ...]
    skipped_lines: int = 0


def kind_of(path: Path, option: str = "--out") -> str:
    """``jsonl`` or ``sqlite`` from the file name."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in SQLITE_SUFFIXES:
        return "sqlite"
    raise OptionError(f"{option} {path}: unknown store type {suffix or '(none)'!r}; use .jsonl or .sqlite")


class JsonlStore:
    """Records as JSON Lines, appended one ``write`` per record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as error:
            raise OptionError(f"--out {path}: cannot write: {error.strerror}") from None
        # An interrupted writer may have left a line without its newline: start afresh.
        if path.stat().st_size > 0:
            with open(path, "rb") as stream:
                stream.seek(-1, os.SEEK_END)
                if stream.read(1) != b"\n":
                    os.write(self._descriptor, b"\n")

    def keys(self) -> set[str]:
        return {record["run_key"] for record in self.records()}

    def records(self) -> list[dict]:
        return list(read_jsonl(self.path).records)

    def append(self, record: dict) -> None:
        line = (json.dumps(record, allow_nan=False) + "\n").encode()
        os.write(self._descriptor, line)

    def close(self) -> None:
        if self._descriptor >= 0:
            os.close(self._descriptor)
            self._descriptor = -1


def read_jsonl(path: Path) -> StoreContents:
    """Every complete record of a JSON Lines store (cut-short lines are counted, not read)."""
    records: list[dict] = []
    skipped = 0
    with open(path, "rb") as stream:
        for line in stream:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                skipped += 1
                continue
            if isinstance(record, dict) and "run_key" in record:
                records.append(record)
            else:
                skipped += 1
    return StoreContents(tuple(records), skipped)


class SqliteStore:
    """Records in a SQLite table ``runs``: the main fields as columns (for SQL queries)
    and the whole record as JSON in ``record``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._connection = sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            self._connection.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            # WAL lets readers and one writer proceed together; writers take turns.
            self._connection.execute("PRAGMA journal_mode = WAL")
            self._connection.execute(SQLITE_SCHEMA)
        except sqlite3.Error as error:
            raise OptionError(f"--out {path}: cannot use as a SQLite store: {error}") from None

    def keys(self) -> set[str]:
        return {row[0] for row in self._connection.execute("SELECT run_key FROM runs")}

    def records(self) -> list[dict]:
        return [json.loads(row[0]) for row in self._connection.execute("SELECT record FROM runs ORDER BY rowid")]

    def append(self, record: dict) -> None:
        """Store one record; a run key already stored (another writer's) is left as it is.

        Only a duplicate key is ignored: any other constraint failure is an error, never
        a silently dropped record.
        """
        values = (record["run_key"], record["group"], record["instance"], record["instance_hash"], record["seed"],
                  record["algorithm"], record["spec"], record["regime"], record["iterations"],
                  _flag(record["correct"]), _flag(record["violation"]), record["stopped"], record["wall_s"],
                  json.dumps(record, allow_nan=False))
        try:
            with self._transaction():
                self._connection.execute(
                    'INSERT INTO runs (run_key, "group", instance, instance_hash, seed, algorithm, spec, regime, '
                    "iterations, correct, violation, stopped, wall_s, record) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_key) DO NOTHING", values)
        except sqlite3.IntegrityError as error:
            # Stores created before the safe kinds require a regime and a correctness flag.
            raise OptionError(f"--out {self.path}: cannot store the record of {record['spec']!r} "
                              f"({error}); this store was made by an older cbai: use a new --out file") from None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock up front, so a busy store makes this writer wait
        # (busy timeout) instead of failing halfway through its transaction.
        self._connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        self._connection.execute("COMMIT")

    def close(self) -> None:
        self._connection.close()


def _flag(value: bool | None) -> int | None:
    """A boolean column: 0/1, or NULL where it does not apply (a regret run's correctness)."""
    return None if value is None else int(value)


def open_store(path: str | Path) -> Store:
    """Open (creating if needed) a store for appending; fails with one line when the
    type is unknown or the file cannot be written."""
    path = Path(path)
    kind = kind_of(path)
    if path.is_dir():
        raise OptionError(f"--out {path}: is a folder")
    if not path.parent.is_dir() and str(path.parent):
        raise OptionError(f"--out {path}: folder {path.parent} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise OptionError(f"--out {path}: cannot write: permission denied")
    return JsonlStore(path) if kind == "jsonl" else SqliteStore(path)


def read_store(path: str | Path) -> StoreContents:
    """All records of an existing store (``--from``)."""
    path = Path(path)
    kind = kind_of(path, "--from")
    if not path.is_file():
        raise OptionError(f"--from {path}: no such file")
    if kind == "jsonl":
        return read_jsonl(path)
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)
        try:
            rows = connection.execute("SELECT record FROM runs ORDER BY rowid").fetchall()
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise OptionError(f"--from {path}: not a cbai SQLite store: {error}") from None
    return StoreContents(tuple(json.loads(row[0]) for row in rows))
