"""Claims on the runs of a shared SQLite store: who gets a run, when a stopped writer's
runs are taken over (on a clock the test turns by hand), waiting, and the scheduler
leaving other processes' runs alone."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from cbai_cli.compare.claims import LONGEST_LEASE, SoleClaims, Standing, await_runs, check_lease
from cbai_cli.compare.backends import InProcessBackend
from cbai_cli.compare.execute import Scheduler
from cbai_cli.compare.plan import build_grid, build_plan
from cbai_cli.compare.store import open_store
from cbai_cli.contracts.errors import OptionError

from tests.compare.common import FAST_ALGORITHMS, SPHERE
from tests.compare.test_compare_store import make_record

GHOST = "ghost:7:00"


class Clock:
    """A monotonic clock turned by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def ghost_writer(path: Path, keys, lease: float = LONGEST_LEASE, beat: int = 0, writer: str = GHOST) -> None:
    """A writer registered straight in the store, holding ``keys``; its heartbeat moves only
    when the test says (:func:`beat`)."""
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("INSERT INTO writers (writer, lease, beat) VALUES (?, ?, ?)", (writer, lease, beat))
        connection.executemany("INSERT INTO claims (run_key, writer) VALUES (?, ?)", [(key, writer) for key in keys])
    connection.close()


def beat(path: Path, writer: str = GHOST) -> None:
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("UPDATE writers SET beat = beat + 1 WHERE writer = ?", (writer,))
    connection.close()


def table(path: Path, sql: str) -> list[tuple]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


@pytest.fixture
def store(tmp_path):
    """A SQLite store (its claims' lease: a week, so its own heartbeat never matters here)."""
    opened = open_store(tmp_path / "runs.sqlite")
    yield opened
    opened.close()


def test_a_writer_gets_the_runs_nobody_stored_or_claimed(store):
    store.append(make_record(1))
    ghost_writer(store.path, ["key-2"])
    claims = store.claims(LONGEST_LEASE)
    try:
        assert set(claims.claim(["key-1", "key-2", "key-3", "key-4"])) == {"key-3", "key-4"}
        assert set(claims.claim(["key-3", "key-5"])) == {"key-3", "key-5"}  # its own claims stay its own
    finally:
        claims.close()


def test_storing_a_record_ends_its_claim_and_closing_gives_up_the_rest(store):
    claims = store.claims(LONGEST_LEASE)
    claims.claim(["key-1", "key-2"])
    store.append(make_record(1))
    assert table(store.path, "SELECT run_key FROM claims") == [("key-2",)]
    claims.close()
    assert table(store.path, "SELECT * FROM claims") == [] and table(store.path, "SELECT * FROM writers") == []


def test_a_second_writer_gets_none_of_the_first_ones_runs(tmp_path):
    first, second = open_store(tmp_path / "runs.sqlite"), open_store(tmp_path / "runs.sqlite")
    one, two = first.claims(LONGEST_LEASE), second.claims(LONGEST_LEASE)
    try:
        assert set(one.claim(["key-1", "key-2"])) == {"key-1", "key-2"}
        assert set(two.claim(["key-1", "key-2", "key-3"])) == {"key-3"}
        first.append(make_record(1))
        assert set(two.claim(["key-1"])) == set()  # stored: nobody's to run
    finally:
        one.close(), two.close(), first.close(), second.close()


def test_a_writer_whose_heartbeat_stands_still_for_its_lease_loses_its_runs(store):
    """The ghost's lease is 10 s; the waiting writer sees beat 0 at 0 s and beat 1 at 12 s,
    so the ghost's runs are its own until 12 + 10 = 22 s on the waiting writer's clock."""
    ghost_writer(store.path, ["key-1", "key-2"], lease=10.0)
    clock = Clock()
    claims = store.claims(LONGEST_LEASE)
    claims._clock = clock  # the clock that times other writers' heartbeats
    try:
        keys = {"key-1", "key-2"}
        assert claims.settle(keys) == Standing(held=2, holders=("ghost:7",))
        clock.now = 9.9
        assert claims.settle(keys).held == 2
        beat(store.path)
        clock.now = 12.0
        assert claims.settle(keys).held == 2
        clock.now = 21.9
        assert claims.settle(keys).held == 2
        clock.now = 22.0
        assert claims.settle(keys) == Standing(taken=frozenset(keys), stopped=("ghost:7",))
        owners = {writer for (writer,) in table(store.path, "SELECT writer FROM claims")}
        assert owners == {claims.writer}
        assert table(store.path, "SELECT writer FROM writers") == [(claims.writer,)]  # the ghost is gone
    finally:
        claims.close()


def test_a_stopped_writers_runs_go_to_one_waiting_writer_only(tmp_path):
    path = tmp_path / "runs.sqlite"
    first, second = open_store(path), open_store(path)
    ghost_writer(path, ["key-1"], lease=5.0)
    one, two = first.claims(LONGEST_LEASE), second.claims(LONGEST_LEASE)
    clock = Clock()
    one._clock = two._clock = clock
    try:
        one.settle({"key-1"}), two.settle({"key-1"})
        clock.now = 5.0
        assert one.settle({"key-1"}).taken == {"key-1"}
        assert two.settle({"key-1"}) == Standing(held=1, holders=(one.writer.rsplit(":", 1)[0],))
    finally:
        one.close(), two.close(), first.close(), second.close()


def test_waiting_finds_runs_stored_by_others_and_free_ones(store):
    store.append(make_record(1))
    claims = store.claims(LONGEST_LEASE)
    try:
        assert claims.settle({"key-1", "key-2"}) == Standing(stored=frozenset({"key-1"}), taken=frozenset({"key-2"}))
    finally:
        claims.close()


class Scripted:
    """Claims whose looks at the store return the given standings, one per look."""

    poll_seconds = 0.5

    def __init__(self, *standings: Standing) -> None:
        self.standings = list(standings)
        self.looked: list[set] = []

    def settle(self, keys):
        self.looked.append(set(keys))
        return self.standings.pop(0)


def test_waiting_says_once_what_it_waits_for_and_returns_when_all_are_stored():
    claims = Scripted(Standing(held=3, holders=("a:1", "b:2", "c:3", "d:4")),
                      Standing(stored=frozenset({"k1"}), held=2, holders=("a:1",)),
                      Standing(stored=frozenset({"k2", "k3"})))
    told, stored, slept = [], [], []
    taken = await_runs(claims, {"k1", "k2", "k3"}, told.append, stored.append, slept.append)
    assert taken == frozenset()
    assert told == ["waiting for 3 runs claimed by other processes (a:1, b:2, c:3, …)"]
    assert stored == [{"k1"}, {"k2", "k3"}] and slept == [0.5, 0.5]
    assert claims.looked == [{"k1", "k2", "k3"}, {"k1", "k2", "k3"}, {"k2", "k3"}]


@pytest.mark.parametrize(("standing", "line"), [
    (Standing(taken=frozenset({"k1"}), stopped=("a:1",)), "taking over 1 run claimed by a:1, whose heartbeat stopped"),
    (Standing(taken=frozenset({"k1", "k2"})), "running 2 runs that other processes left unfinished"),
])
def test_waiting_returns_the_runs_it_takes_and_says_so(standing, line):
    told = []
    assert await_runs(Scripted(standing), {"k1", "k2"}, told.append, lambda keys: None, lambda s: None) == standing.taken
    assert told == [line]


def test_the_only_writer_gets_every_run_and_waits_for_none():
    claims = SoleClaims()
    assert list(claims.claim(["a", "b"])) == ["a", "b"]
    assert await_runs(claims, set(), print, print) == frozenset()


@pytest.mark.parametrize("lease", [0, 0.5, -1, float("nan"), float("inf"), 8 * 24 * 3600, True, "60"])
def test_a_lease_out_of_range_is_one_line(lease):
    with pytest.raises(OptionError, match=r"^--lease must be a number of seconds from 1 to 604,800 \(a week\), got "):
        check_lease(lease)


def test_a_lease_is_seconds():
    assert check_lease(1) == 1.0 and check_lease(3600.5) == 3600.5


@hypothesis_settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.booleans(), st.sets(st.integers(0, 7), max_size=4)),
                max_size=10))
def test_no_run_is_two_writers_and_no_stored_run_is_anyones(steps):
    """Two writers claim batches and store runs they hold in any order: a run is held by one
    writer at most, never once stored; what a writer waits for afterwards is stored, held
    by the other, or taken."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.sqlite"
        stores = [open_store(path), open_store(path)]
        writers = [store.claims(LONGEST_LEASE) for store in stores]
        held: list[set[str]] = [set(), set()]
        stored: set[str] = set()
        try:
            for who, store_one, numbers in steps:
                keys = [f"key-{number}" for number in sorted(numbers)]
                if store_one and held[who]:
                    key = min(held[who])
                    stores[who].append(make_record(int(key.split("-")[1])))
                    held[who].discard(key)
                    stored.add(key)
                    continue
                granted = set(writers[who].claim(keys))
                assert granted == set(keys) - stored - held[1 - who]  # its own, and every free one
                held[who] |= granted
            everything = {f"key-{number}" for number in range(8)}
            standing = writers[0].settle(everything - stored)
            assert standing.held == len(held[1]) and standing.stored == frozenset()
            assert standing.taken == everything - stored - held[1]
        finally:
            for closing in writers + stores:
                closing.close()


def test_the_scheduler_runs_the_claimed_runs_only_and_bounds_only_their_instances(monkeypatch):
    """Seeds 0 and 2 of a family that draws an instance per seed are this process's: the
    other seeds' runs and the bounds of their instances are left to other processes."""
    bounded: list[str] = []

    def fake_bound(instance, delta, time_limit):
        bounded.append(instance.content_hash)
        return 10.0

    monkeypatch.setattr("cbai_cli.compare.tasks.reference_lower_bound", fake_bound)
    plan = build_plan(build_grid([SPHERE], FAST_ALGORITHMS, seeds=4))
    mine = {run.run_key for run in plan.runs if run.seed in (0, 2)}
    asked: list[str] = []

    def claim(keys):
        asked.extend(keys)
        return [key for key in keys if key in mine]

    records: list[dict] = []
    Scheduler(plan, InProcessBackend(), records.append, with_bounds=True, claim=claim).run(plan.runs)
    assert sorted(record["run_key"] for record in records) == sorted(mine)
    assert sorted(asked) == sorted(run.run_key for run in plan.runs)  # each run asked for once
    assert sorted(bounded) == sorted(plan.instances[(0, seed)].content_hash for seed in (0, 2))
    assert {record["lower_bound"] for record in records} == {10.0}
