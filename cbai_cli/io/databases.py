"""SQLite for cbai's files: one write transaction (:func:`immediate`), and what an SQLite
error means to the user: the file's surroundings failing (a full disk, a lock held too
long, no permission, an I/O error) or its contents not being a cbai store or study. The two
need different words: "not a cbai study" about a full disk sends the user after the wrong
problem."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

#: SQLite's primary result codes that come from the file's surroundings, not its contents:
#: PERM, BUSY, LOCKED, NOMEM, READONLY, IOERR, FULL, CANTOPEN, PROTOCOL.
RESOURCE_CODES = frozenset({3, 5, 6, 7, 8, 10, 13, 14, 15})


def resource_failure(error: sqlite3.Error) -> bool:
    """Whether ``error`` is the file's surroundings failing rather than its contents."""
    code = getattr(error, "sqlite_errorcode", None)  # Python ≥ 3.11
    return code is not None and (code & 0xFF) in RESOURCE_CODES


@contextmanager
def immediate(connection: sqlite3.Connection) -> Iterator[None]:
    """One write transaction on ``connection`` (opened with ``isolation_level=None``),
    rolled back on any exception."""
    # IMMEDIATE takes the write lock up front, so a busy store makes this writer wait
    # (busy timeout) instead of failing halfway through its transaction.
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
