"""Claims on runs, so that several ``cbai compare`` processes writing one SQLite store
share its runs: each run is done once, by the process that claims it first.

The claims live in the store beside the records (tables ``writers`` and ``claims``,
:data:`~cbai_cli.compare.store.SQLITE_CLAIMS_SCHEMA`):

- A process registers as a writer, ``host:pid:tag`` (a random tag, so that a pid used
  again is another writer), with its lease. Just before it hands a batch to its workers
  it claims the batch's runs in one transaction; a run that is stored, or claimed by
  another writer, is left out of the batch. Storing a record deletes the run's claim in
  the record's own transaction, so a run is always stored, claimed or free.
- A thread advances the writer's heartbeat (``beat``) every quarter of its lease. A
  waiting process takes a writer's claims over once it has seen that writer's beat stand
  still for the writer's lease, timed on its own monotonic clock: no clocks of two
  machines are ever compared.
- A process that ends (done, an error, Ctrl-C, SIGTERM) deletes its claims and its
  writer; only a killed (or frozen) process leaves them, for its lease.

A process whose remaining runs are all claimed by others waits for them, looking at the
store a few times a lease, and ends with the records of the whole plan. A frozen process
that wakes after its claims were taken over runs them once more: the store keeps the
first record of a run (the same results: each run depends only on its instance, seed and
request), so nothing is lost or stored twice, only computed twice.
"""

from __future__ import annotations

import math
import numbers
import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cbai_cli.contracts.errors import CbaiError, OptionError
from cbai_cli.io.databases import immediate

#: Seconds a writer's claims stay its own after its last heartbeat (``--lease``).
DEFAULT_LEASE = 60.0
#: The shortest and longest lease taken (s): a writer beats four times a lease, and a week
#: is longer than any run should go without a heartbeat.
SHORTEST_LEASE = 1.0
LONGEST_LEASE = 7 * 24 * 3600.0
BEATS_PER_LEASE = 4
#: The longest pause between two looks at the store while waiting for other writers (s).
LONGEST_POLL = 1.0
#: How many writers a waiting line names.
NAMED_WRITERS = 3


def check_lease(lease: Any) -> float:
    """``lease`` as seconds, or one line naming ``--lease``."""
    if isinstance(lease, bool) or not isinstance(lease, numbers.Real) or not (
            math.isfinite(lease) and SHORTEST_LEASE <= lease <= LONGEST_LEASE):
        raise OptionError(f"--lease must be a number of seconds from {SHORTEST_LEASE:g} to {LONGEST_LEASE:,.0f} "
                          f"(a week), got {lease!r}", "lease")
    return float(lease)


@dataclass(frozen=True)
class Standing:
    """What one look at the store found about runs not known to be stored.

    Attributes:
        stored: runs stored since (by other processes).
        taken: runs this process has now claimed: free ones (a process that ended left
            them), and those of writers whose heartbeat stood still for their lease.
        stopped: the writers (``host:pid``) whose runs were taken for that reason.
        held: how many runs other writers hold, alive.
        holders: those writers (``host:pid``).
    """

    stored: frozenset[str] = frozenset()
    taken: frozenset[str] = frozenset()
    stopped: tuple[str, ...] = ()
    held: int = 0
    holders: tuple[str, ...] = ()


class Claims(Protocol):
    """Which runs this process does, among processes sharing a store."""

    def claim(self, keys: Sequence[str]) -> Collection[str]:
        """The runs of ``keys`` that this process is now to do; the others are stored or
        another process's."""
        ...

    def settle(self, keys: Collection[str]) -> Standing:
        """Look at runs this process waits for, claiming those nobody else does."""
        ...

    @property
    def poll_seconds(self) -> float: ...

    def close(self) -> None: ...


class SoleClaims:
    """The claims of the only writer (no store, or a JSON Lines store, which takes a lock):
    every run is its own and nobody else's."""

    poll_seconds = LONGEST_POLL

    def claim(self, keys: Sequence[str]) -> Collection[str]:
        return keys

    def settle(self, keys: Collection[str]) -> Standing:
        return Standing()

    def close(self) -> None:
        pass


class SqliteClaims:
    """This process's claims on the runs of a SQLite store, kept by a heartbeat thread.

    Args:
        connection: the store's connection (``isolation_level=None``), so that claims and
            records share its transactions; used from this thread only.
        path: the store's file (the heartbeat opens a connection of its own).
        lease: seconds after this writer's last heartbeat before others may take its runs.
        clock: the monotonic clock that times other writers' heartbeats.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path, lease: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.lease = lease
        self.writer = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._connection = connection
        # the heartbeat's own connection waits for a busy store as long as the store's does
        self._busy_timeout_ms = connection.execute("PRAGMA busy_timeout").fetchone()[0]
        self._clock = clock
        self._seen: dict[str, tuple[int, float]] = {}  # writer → (its beat, when this process first saw it)
        self._failure: str | None = None
        self._stop = threading.Event()
        with self._writing():
            self._connection.execute("INSERT INTO writers (writer, lease, beat) VALUES (?, ?, 0)",
                                     (self.writer, lease))
        self._thread = threading.Thread(target=self._beat, name="cbai-compare-heartbeat", daemon=True)
        self._thread.start()

    @property
    def poll_seconds(self) -> float:
        return min(LONGEST_POLL, self.lease / BEATS_PER_LEASE)

    def claim(self, keys: Sequence[str]) -> Collection[str]:
        self._check_heartbeat()
        mine = set()
        with self._writing():
            for key in keys:
                if self._stored(key):
                    continue
                inserted = self._connection.execute(
                    "INSERT INTO claims (run_key, writer) VALUES (?, ?) ON CONFLICT (run_key) DO NOTHING",
                    (key, self.writer)).rowcount
                if inserted or self._holder(key) == self.writer:
                    mine.add(key)
        return mine

    def settle(self, keys: Collection[str]) -> Standing:
        self._check_heartbeat()
        now = self._clock()
        stored: set[str] = set()
        taken: set[str] = set()
        stopped: set[str] = set()
        holders: dict[str, int] = {}
        with self._writing():
            leases = self._observe(now)
            for key in keys:
                if self._stored(key):
                    stored.add(key)
                    continue
                holder = self._holder(key)
                alive = holder in leases and not self._lapsed(holder, leases[holder], now)
                if holder != self.writer and alive:
                    holders[holder] = holders.get(holder, 0) + 1
                    continue
                if holder is not None and holder != self.writer:  # its heartbeat stood still for its lease
                    stopped.add(holder)
                self._connection.execute("INSERT INTO claims (run_key, writer) VALUES (?, ?) ON CONFLICT (run_key) "
                                         "DO UPDATE SET writer = excluded.writer", (key, self.writer))
                taken.add(key)
            # Writers whose heartbeat stopped and who hold nothing more are gone for good.
            for writer, lease in leases.items():
                if writer != self.writer and self._lapsed(writer, lease, now) and self._connection.execute(
                        "SELECT 1 FROM claims WHERE writer = ? LIMIT 1", (writer,)).fetchone() is None:
                    self._connection.execute("DELETE FROM writers WHERE writer = ?", (writer,))
        return Standing(frozenset(stored), frozenset(taken), tuple(sorted(map(_named, stopped))),
                        sum(holders.values()), tuple(sorted(map(_named, holders))))

    def close(self) -> None:
        """Stop the heartbeat and give up every claim (runs not finished are free again)."""
        self._stop.set()
        self._thread.join()
        with self._writing():
            self._connection.execute("DELETE FROM claims WHERE writer = ?", (self.writer,))
            self._connection.execute("DELETE FROM writers WHERE writer = ?", (self.writer,))

    def _observe(self, now: float) -> dict[str, float]:
        """Every writer's lease, noting when this process first saw its current beat."""
        leases = {}
        for writer, lease, beat in self._connection.execute("SELECT writer, lease, beat FROM writers"):
            leases[writer] = lease
            seen = self._seen.get(writer)
            if seen is None or seen[0] != beat:
                self._seen[writer] = (beat, now)
        return leases

    def _lapsed(self, writer: str, lease: float, now: float) -> bool:
        """Whether ``writer``'s beat has stood still for its lease, as far as this process saw."""
        return now - self._seen[writer][1] >= lease

    def _stored(self, key: str) -> bool:
        return self._connection.execute("SELECT 1 FROM runs WHERE run_key = ?", (key,)).fetchone() is not None

    def _holder(self, key: str) -> str | None:
        row = self._connection.execute("SELECT writer FROM claims WHERE run_key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _check_heartbeat(self) -> None:
        """One line when the heartbeat failed: other processes may be taking this one's runs."""
        if self._failure is not None:
            raise OptionError(f"--out {self.path}: cannot write the heartbeat of this process: {self._failure}")

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One transaction on the store; a failure is one line."""
        try:
            with immediate(self._connection):
                yield
        except sqlite3.Error as error:
            raise OptionError(f"--out {self.path}: cannot write: {error}") from None

    def _beat(self) -> None:
        """The heartbeat thread: advance this writer's beat every quarter lease until told to
        stop. A writer whose row another process removed (it saw no beat for a lease: this
        process was frozen) is written again. A failure is kept for the main thread."""
        try:
            connection = sqlite3.connect(self.path, timeout=self._busy_timeout_ms / 1000,
                                         isolation_level=None)
            try:
                while not self._stop.wait(self.lease / BEATS_PER_LEASE):
                    with immediate(connection):
                        connection.execute("INSERT INTO writers (writer, lease, beat) VALUES (?, ?, 1) "
                                           "ON CONFLICT (writer) DO UPDATE SET beat = beat + 1", (self.writer, self.lease))
            finally:
                connection.close()
        except sqlite3.Error as error:
            self._failure = str(error)


def _named(writer: str) -> str:
    """``host:pid`` of a writer ``host:pid:tag``."""
    return writer.rsplit(":", 1)[0]


@contextmanager
def sharing(store: Any, lease: float) -> Iterator[Claims]:
    """This process's claims on ``store`` (None: no store, every run its own) while the
    block runs; given up at the end. When the block fails, the failure is the one
    reported: claims that cannot be given up are left to expire with the lease."""
    claims = SoleClaims() if store is None else store.claims(lease)
    try:
        yield claims
    except BaseException:
        with suppress(CbaiError):
            claims.close()
        raise
    claims.close()


def await_runs(claims: Claims, keys: Collection[str], tell: Callable[[str], None],
               on_stored: Callable[[frozenset[str]], None], sleep: Callable[[float], None] = time.sleep) -> frozenset[str]:
    """Wait until every run of ``keys`` is stored by other processes, or this process can
    take some: returns the runs it has claimed (none once all are stored). Tells once that
    it waits, naming the writers, and tells which runs it takes over; ``on_stored`` gets
    the runs others stored, as they are seen."""
    left = set(keys)
    told = False
    while left:
        standing = claims.settle(left)
        if standing.stored:
            left -= standing.stored
            on_stored(standing.stored)
        if standing.taken:
            count = _runs(len(standing.taken))
            tell(f"taking over {count} claimed by {', '.join(standing.stopped)}, whose heartbeat stopped"
                 if standing.stopped else f"running {count} that other processes left unfinished")
            return standing.taken
        if not standing.held:
            break
        if not told:
            named = ", ".join(standing.holders[:NAMED_WRITERS]) + (", …" if len(standing.holders) > NAMED_WRITERS else "")
            tell(f"waiting for {_runs(standing.held)} claimed by other processes ({named})")
            told = True
        sleep(claims.poll_seconds)
    return frozenset()


def _runs(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"
