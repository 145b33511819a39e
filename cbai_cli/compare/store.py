"""Stores of run records that survive crashes and Ctrl-C, and let a study resume.

- JSON Lines (``.jsonl``): one record per line, each appended with a single unbuffered
  ``write`` call, so a record is on disk (in the page cache) as soon as it finishes and
  an interruption can at worst cut the last line short. Readers skip such a line, and
  the next writer starts on a fresh line. One writer at a time: a writer holds an
  exclusive ``flock`` on the file while it is open, and a second ``cbai compare``
  writing the same file is refused with one line (it would run the same runs again and
  store them twice). Readers (``--from``) need no lock.
- SQLite (``.sqlite``, ``.sqlite3``, ``.db``): one transaction per record in WAL mode
  with a busy timeout, so several processes (shards, or a second terminal) can write
  the same store; ``INSERT OR IGNORE`` on the run key makes a duplicate harmless. A
  store is marked with SQLite's ``application_id`` and its schema version in
  ``user_version``; a database of another program, a cbai session study, a cbai store
  of an unknown schema or a file that is not SQLite at all is refused, never given a new
  table.

  Beside the records, a SQLite store keeps the claims of the processes writing it
  (tables ``claims`` and ``writers``, :data:`SQLITE_CLAIMS_SCHEMA`), so that several
  ``cbai compare`` processes share its runs (:mod:`cbai_cli.compare.claims`); storing a
  record deletes its run's claim in the record's own transaction.

Neither locking scheme holds across machines on a network file system (SQLite's WAL
needs shared memory; NFS appends are not atomic): there, give every shard its own
store and merge them with ``cbai compare --from A --from B --out ALL``.

Both are append-only, so they are not written through a temporary file: a record once
stored is never rewritten. Resuming means skipping the runs whose key is stored.
Every problem with a store file is one :class:`~cbai_cli.contracts.errors.OptionError` naming
the option and the file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cbai_cli.compare.records import record_problem
from cbai_cli.contracts.errors import OptionError
from cbai_cli.io.databases import immediate, resource_failure
from cbai_cli.io.outputs import (
    check_writable,
    file_identity,
    is_device_or_pipe,
    reason,
    unwritable_reason,
)

if TYPE_CHECKING:
    from cbai_cli.compare.claims import Claims

JSONL_SUFFIXES = (".jsonl",)
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
# How long a SQLite writer waits for another process's transaction to finish.
SQLITE_BUSY_TIMEOUT_MS = 60_000
# SQLite's application_id of a cbai store ("cbai" in ASCII) and the schema version kept
# in its user_version; stores made before the mark have application_id 0.
SQLITE_APPLICATION_ID = 0x63626169
SQLITE_SCHEMA_VERSION = 1
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
RUNS_COLUMNS = ("run_key", "group", "instance", "instance_hash", "seed", "algorithm", "spec", "regime", "iterations",
                "correct", "violation", "stopped", "wall_s", "record")
# Who is writing the store and which runs each has claimed (cbai_cli.compare.claims): a
# writer is "host:pid:tag" with its lease (s) and a heartbeat counter; a claim names its
# writer. A store without these tables gets them when it is next opened for writing; a
# cbai that does not know them reads and writes the store without claims.
SQLITE_CLAIMS_SCHEMA = {
    "writers": """
CREATE TABLE IF NOT EXISTS writers (
    writer TEXT PRIMARY KEY,
    lease REAL NOT NULL,
    beat INTEGER NOT NULL
)
""",
    "claims": """
CREATE TABLE IF NOT EXISTS claims (
    run_key TEXT PRIMARY KEY,
    writer TEXT NOT NULL
)
""",
}
CLAIMS_COLUMNS = {"writers": ("writer", "lease", "beat"), "claims": ("run_key", "writer")}


class Store(Protocol):
    """An append-only collection of records keyed by ``run_key``."""

    path: Path

    def keys(self) -> set[str]: ...

    def records(self) -> list[dict]: ...

    def append(self, record: dict) -> None: ...

    def claims(self, lease: float) -> Claims: ...

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
    """Records as JSON Lines, appended one ``write`` per record, by one writer at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as error:
            raise OptionError(f"--out {path}: cannot write: {reason(error)}") from None
        try:
            self._identity = _descriptor_identity(self._descriptor)
            _lock(self._descriptor, path)
            read_jsonl(path, "--out")  # refuses a file that is not a store before writing to it
            # An interrupted writer may have left a line without its newline: cut it off, so
            # that every line of the store stays a whole record for any JSON Lines reader.
            whole = _whole_lines(path)
            if whole < path.stat().st_size:
                self._truncate(whole)
        except BaseException:
            with contextlib.suppress(OptionError):  # the failure that stopped the opening is the one to report
                self.close()
            raise

    def keys(self) -> set[str]:
        return {record["run_key"] for record in self.records()}

    def records(self) -> list[dict]:
        return list(read_jsonl(self.path, "--out").records)

    def append(self, record: dict) -> None:
        self._write((json.dumps(record, allow_nan=False) + "\n").encode())
        check_still_there(self.path, self._identity)

    def claims(self, lease: float) -> Claims:
        """Every run is this writer's: the lock keeps other writers out."""
        from cbai_cli.compare.claims import SoleClaims

        return SoleClaims()

    def _write(self, data: bytes) -> None:
        """Append ``data`` whole, or (a full disk) cut the file back to where it was and fail
        in one line: a record is never left half written in the store."""
        before = None
        try:
            before = os.fstat(self._descriptor).st_size
            written = 0
            while written < len(data):  # a write may take fewer bytes than asked, then fail
                written += os.write(self._descriptor, data[written:])
        except OSError as error:
            if before is not None:
                with contextlib.suppress(OSError):  # the write's own failure is the one to report
                    os.ftruncate(self._descriptor, before)
            raise OptionError(f"--out {self.path}: cannot write: {reason(error)}") from None

    def _truncate(self, size: int) -> None:
        try:
            os.ftruncate(self._descriptor, size)
        except OSError as error:
            raise OptionError(f"--out {self.path}: cannot write: {reason(error)}") from None

    def close(self) -> None:
        """Sync and close the file, which releases the lock; a write that failed late (a
        network file system reports a full disk or a quota at the sync) is one line
        ``--out PATH: cannot write: REASON``, as at write time."""
        if self._descriptor < 0:
            return
        descriptor, self._descriptor = self._descriptor, -1
        failure = None
        try:
            os.fsync(descriptor)
        except OSError as error:
            if error.errno not in (errno.EINVAL, errno.ENOTSUP):  # a file system that cannot sync: nothing failed
                failure = error
        try:
            os.close(descriptor)
        except OSError as error:
            failure = failure or error
        if failure is not None:
            raise OptionError(f"--out {self.path}: cannot write: {reason(failure)}")


def _descriptor_identity(descriptor: int) -> tuple[int, int]:
    status = os.fstat(descriptor)
    return status.st_dev, status.st_ino


def check_still_there(path: Path, identity: tuple[int, int] | None) -> None:
    """One line when ``path`` no longer names the store that was opened (removed or replaced
    while a run wrote to it): the records would go to a file nobody can read, and the run
    would end as if they were kept."""
    if file_identity(path) != identity:
        raise OptionError(f"--out {path}: the store was removed or replaced while cbai wrote to it; "
                          "the records since are not in it")


def _whole_lines(path: Path, chunk: int = 2**20) -> int:
    """The bytes of ``path`` up to and including its last newline (0 when it has none)."""
    with open(path, "rb") as stream:
        end = stream.seek(0, os.SEEK_END)
        while end > 0:
            start = max(end - chunk, 0)
            stream.seek(start)
            found = stream.read(end - start).rfind(b"\n")
            if found >= 0:
                return start + found + 1
            end = start
    return 0


def _lock(descriptor: int, path: Path) -> None:
    """Take the exclusive writer's lock on an open store, or fail with one line naming the
    process that holds it. File systems without ``flock`` are written without a lock."""
    import fcntl

    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return
        holder = _lock_holder(descriptor)
        who = "" if holder is None else f" (pid {holder})"
        raise OptionError(f"--out {path} is being written by another cbai compare{who}; wait for it to finish "
                          "or use another --out file") from None


def _lock_holder(descriptor: int) -> int | None:
    """The process holding a ``flock`` on the file, from Linux's /proc/locks (lines like
    ``1: FLOCK  ADVISORY  WRITE 5220 fe:00:2213185 0 EOF``); None elsewhere."""
    status = os.fstat(descriptor)
    wanted = (os.major(status.st_dev), os.minor(status.st_dev), status.st_ino)
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as stream:
            lines = stream.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 6 and fields[1] == "->":  # a process waiting for the lock
            continue
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == wanted:
                return int(fields[4])
        except ValueError:
            continue
    return None


def read_jsonl(path: Path, option: str = "--from") -> StoreContents:
    """Every complete record of a JSON Lines store (cut-short lines are counted, not read).

    A non-empty file in which no line is a record is not a store, and is refused (one
    line naming ``option`` and the file) — except for a single line cut short that
    starts like a record: the first record of a store, interrupted.
    """
    records: list[dict] = []
    cut_short = foreign = 0
    try:
        with open(path, "rb") as stream:
            for line in stream:
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                    if line.lstrip().startswith(b"{"):
                        cut_short += 1
                    else:
                        foreign += 1
                    continue
                if isinstance(record, dict) and "run_key" in record:
                    if record_problem(record) is None:
                        records.append(record)
                    else:  # a line edited or damaged into one no reader can use: counted, not read
                        cut_short += 1
                else:
                    foreign += 1
    except OSError as error:
        raise OptionError(f"{option} {path}: cannot read: {reason(error)}") from None
    if not records and (foreign or cut_short > 1):
        raise OptionError(f"{option} {path}: not a cbai store: no line is a run record")
    return StoreContents(tuple(records), cut_short + foreign)


class SqliteStore:
    """Records in a SQLite table ``runs``: the main fields as columns (for SQL queries)
    and the whole record as JSON in ``record``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._connection = sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error as error:
            raise OptionError(f"--out {path}: cannot use as a SQLite store: {error}") from None
        try:
            self._connection.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            # Look before writing anything: another program's database is left untouched.
            if check_sqlite_store(self._connection, path, "--out") == "empty":
                with immediate(self._connection):
                    if check_sqlite_store(self._connection, path, "--out") == "empty":  # nobody made it meanwhile
                        self._connection.execute(SQLITE_SCHEMA)
                        self._connection.execute(f"PRAGMA application_id = {SQLITE_APPLICATION_ID}")
                        self._connection.execute(f"PRAGMA user_version = {SQLITE_SCHEMA_VERSION}")
            if not set(SQLITE_CLAIMS_SCHEMA) <= _tables(self._connection):
                with immediate(self._connection):
                    for schema in SQLITE_CLAIMS_SCHEMA.values():
                        self._connection.execute(schema)
            # WAL lets readers and one writer proceed together; writers take turns.
            self._connection.execute("PRAGMA journal_mode = WAL")
            self._identity = file_identity(path)
        except sqlite3.Error as error:
            self._connection.close()
            raise OptionError(f"--out {path}: cannot use as a SQLite store: {error}") from None
        except BaseException:
            self._connection.close()
            raise

    def keys(self) -> set[str]:
        try:
            return {row[0] for row in self._connection.execute("SELECT run_key FROM runs")}
        except sqlite3.Error as error:
            raise sqlite_failure(error, self.path, "--out") from None

    def records(self) -> list[dict]:
        try:
            return _sqlite_records(self._connection, self.path, "--out")
        except sqlite3.Error as error:
            raise sqlite_failure(error, self.path, "--out") from None

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
            with immediate(self._connection):
                self._connection.execute(
                    'INSERT INTO runs (run_key, "group", instance, instance_hash, seed, algorithm, spec, regime, '
                    "iterations, correct, violation, stopped, wall_s, record) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_key) DO NOTHING", values)
                # In the record's transaction: no process sees the run both unclaimed and unstored.
                self._connection.execute("DELETE FROM claims WHERE run_key = ?", (record["run_key"],))
        except sqlite3.IntegrityError as error:
            # Stores created before the safe kinds require a regime and a correctness flag.
            raise OptionError(f"--out {self.path}: cannot store the record of {record['spec']!r} "
                              f"({error}); this store was made by an older cbai: use a new --out file") from None
        except sqlite3.Error as error:  # a full disk, a file removed or locked for too long
            raise OptionError(f"--out {self.path}: cannot write: {error}") from None
        check_still_there(self.path, self._identity)

    def claims(self, lease: float) -> Claims:
        """This process's claims on runs of the store, kept alive by a heartbeat, with
        ``lease`` seconds of grace after its last beat before other processes may take them."""
        from cbai_cli.compare.claims import SqliteClaims

        return SqliteClaims(self._connection, self.path, lease)

    def close(self) -> None:
        self._connection.close()


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")}


def check_sqlite_store(connection: sqlite3.Connection, path: Path, option: str) -> str:
    """``"cbai"`` for a cbai store, ``"empty"`` for a database with no table yet (a new
    file); anything else is one :class:`OptionError`: a file that is not SQLite, another
    program's database, a cbai store of a schema this cbai does not know."""
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    tables = sorted(_tables(connection))
    if application_id not in (0, SQLITE_APPLICATION_ID):
        from cbai_cli.session.journal import APPLICATION_ID as STUDY_APPLICATION_ID

        if application_id == STUDY_APPLICATION_ID:
            raise OptionError(f"{option} {path}: a cbai session study (made by `cbai session start`), not a compare "
                              "store; see it with `cbai session status`")
        raise OptionError(f"{option} {path}: not a cbai store: another program's SQLite database "
                          f"(application id {application_id:#x})")
    if application_id == SQLITE_APPLICATION_ID and version != SQLITE_SCHEMA_VERSION:
        raise OptionError(f"{option} {path}: a cbai store of schema {version}, which this cbai does not know "
                          f"(it reads schema {SQLITE_SCHEMA_VERSION}): use the cbai that wrote it, or a new file")
    if not tables and application_id == 0:
        return "empty"
    if "runs" not in tables:
        raise OptionError(f"{option} {path}: not a cbai store: it holds the table(s) {', '.join(tables) or '(none)'} "
                          "and no table runs")
    for table, expected in (("runs", RUNS_COLUMNS), *CLAIMS_COLUMNS.items()):
        columns = tuple(row[1] for row in connection.execute(f"PRAGMA table_info({table})"))
        if table in tables and sorted(columns) != sorted(expected):
            raise OptionError(f"{option} {path}: not a cbai store: its table {table} has the columns "
                              f"{', '.join(columns)}, not cbai's")
    return "cbai"


def _sqlite_records(connection: sqlite3.Connection, path: Path, option: str) -> list[dict]:
    records = []
    for run_key, text in connection.execute("SELECT run_key, record FROM runs ORDER BY rowid"):
        try:
            record = json.loads(text)
        except (TypeError, json.JSONDecodeError, RecursionError):
            raise OptionError(f"{option} {path}: the record of run {run_key} is not valid JSON") from None
        problem = record_problem(record) if isinstance(record, dict) else "not a mapping"
        if problem is not None:
            raise OptionError(f"{option} {path}: the record of run {run_key} is not one cbai writes ({problem})")
        records.append(record)
    return records


def _flag(value: bool | None) -> int | None:
    """A boolean column: 0/1, or NULL where it does not apply (a regret run's correctness)."""
    return None if value is None else int(value)


def open_store(path: str | Path) -> Store:
    """Open (creating if needed) a store for appending; fails with one line when the
    type is unknown, the file cannot be written, is not a cbai store, or (JSON Lines)
    is being written by another process."""
    path = Path(path)
    kind = kind_of(path)
    check_writable(path, "--out")
    refused = unwritable_reason(path) if path.exists() else None
    if refused is not None:
        raise OptionError(f"--out {path}: cannot write: {refused}")
    return JsonlStore(path) if kind == "jsonl" else SqliteStore(path)


def read_store(path: str | Path) -> StoreContents:
    """All records of an existing store (``--from``)."""
    path = Path(path)
    kind = kind_of(path, "--from")
    if path.is_dir():
        raise OptionError(f"--from {path}: is a folder")
    if is_device_or_pipe(path):  # reading a pipe may never end
        raise OptionError(f"--from {path}: not a regular file (a pipe or a device), so not a store")
    if not path.is_file():
        raise OptionError(f"--from {path}: no such file")
    if kind == "jsonl":
        return read_jsonl(path)
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)
        try:
            if check_sqlite_store(connection, path, "--from") == "empty":
                return StoreContents(())
            return StoreContents(tuple(_sqlite_records(connection, path, "--from")))
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise sqlite_failure(error, path, "--from") from None


def sqlite_failure(error: sqlite3.Error, path: Path, option: str) -> OptionError:
    """The one line for an SQLite error reading a store: its surroundings failing, or a
    file whose contents are no (longer a whole) cbai store."""
    what = "cannot read" if resource_failure(error) else "not a cbai SQLite store"
    return OptionError(f"{option} {path}: {what}: {error}")
