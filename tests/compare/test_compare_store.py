"""JSON Lines and SQLite stores: round trips, cut-short lines, duplicates, two writers,
unwritable paths."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.compare.store import open_store, read_store
from cbai_cli.errors import OptionError


def make_record(number: int) -> dict:
    record = {key: None for key in RECORD_KEYS}
    record.update(run_key=f"key-{number}", group="g", instance="i", instance_hash="h", seed=number, algorithm="acol",
                  spec="acol", regime="static", iterations=10 * number + 1, recommended=number % 3, correct=number % 2 == 0,
                  violation=False, stopped="solved", wall_s=0.5 + number, lower_bound=1.5, swept_value=0.05)
    return record


def safe_regret_record(number: int) -> dict:
    """A Safe-LUCB record: no regime, no answer to score (correct and violation None)."""
    record = make_record(number)
    record.update(kind="safe-regret", algorithm="safe-lucb", spec="safe-lucb", regime=None, correct=None,
                  violation=None, stopped="horizon", regret=12.5, violations=0, exploration_rounds=100,
                  regret_curve=[[10, 1.0], [20, 2.5]], algorithm_options={"exploration": "gap"})
    return record


@pytest.mark.parametrize("suffix", ["jsonl", "sqlite"])
@pytest.mark.parametrize("factory", ["cbai", "safe-regret"])
def test_store_round_trips_records(tmp_path, suffix, factory):
    """CBAI records, and safe-regret ones (no regime, no answer: None columns)."""
    make = make_record if factory == "cbai" else safe_regret_record
    records = [make(number) for number in range(5)]
    store = open_store(tmp_path / f"runs.{suffix}")
    for record in records:
        store.append(record)
    store.close()
    assert list(read_store(tmp_path / f"runs.{suffix}").records) == records


@pytest.mark.parametrize("suffix", ["jsonl", "sqlite"])
def test_reopened_store_lists_its_keys(tmp_path, suffix):
    store = open_store(tmp_path / f"runs.{suffix}")
    store.append(make_record(1))
    store.close()
    assert open_store(tmp_path / f"runs.{suffix}").keys() == {"key-1"}


def test_cut_short_jsonl_line_is_skipped_and_the_next_record_starts_a_new_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    store = open_store(path)
    store.append(make_record(1))
    store.close()
    with open(path, "a") as stream:
        stream.write('{"run_key": "key-2", "gro')
    store = open_store(path)
    store.append(make_record(3))
    store.close()
    contents = read_store(path)
    assert [record["run_key"] for record in contents.records] == ["key-1", "key-3"] and contents.skipped_lines == 1


def test_sqlite_store_of_an_older_schema_refuses_safe_records_loudly(tmp_path):
    path = tmp_path / "old.sqlite"
    connection = sqlite3.connect(path)
    connection.execute('CREATE TABLE runs (run_key TEXT PRIMARY KEY, "group" TEXT NOT NULL, instance TEXT NOT NULL, '
                       "instance_hash TEXT NOT NULL, seed INTEGER NOT NULL, algorithm TEXT NOT NULL, spec TEXT NOT NULL, "
                       "regime TEXT NOT NULL, iterations INTEGER NOT NULL, correct INTEGER NOT NULL, "
                       "violation INTEGER NOT NULL, stopped TEXT NOT NULL, wall_s REAL NOT NULL, record TEXT NOT NULL)")
    connection.close()
    store = open_store(path)
    with pytest.raises(OptionError, match="made by an older cbai"):
        store.append(safe_regret_record(1))
    store.append(make_record(2))
    store.close()
    assert [record["run_key"] for record in read_store(path).records] == ["key-2"]


def test_sqlite_ignores_a_second_record_with_the_same_key(tmp_path):
    store = open_store(tmp_path / "runs.sqlite")
    store.append(make_record(1))
    store.append({**make_record(1), "iterations": 999})
    store.close()
    (record,) = read_store(tmp_path / "runs.sqlite").records
    assert record["iterations"] == 11


def test_sqlite_columns_allow_plain_sql_queries(tmp_path):
    store = open_store(tmp_path / "runs.sqlite")
    for number in range(4):
        store.append(make_record(number))
    store.close()
    with sqlite3.connect(tmp_path / "runs.sqlite") as connection:
        assert connection.execute("SELECT SUM(correct), MAX(iterations) FROM runs").fetchone() == (2, 31)


WRITER = """
import sys
from cbai_cli.compare.store import open_store
from tests.compare.test_compare_store import make_record
store = open_store(sys.argv[1])
for number in range(int(sys.argv[2]), int(sys.argv[2]) + 150):
    store.append(make_record(number))
store.close()
"""


def write_from_two_processes(path) -> list[int]:
    """Two processes append 150 records each to ``path`` at the same time; their exit codes."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    environment = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(start)], env=environment)
               for start in (0, 1000)]
    return [writer.wait(timeout=120) for writer in writers]


@pytest.mark.parametrize("suffix", ["jsonl", "sqlite"])
def test_two_processes_writing_one_store_keep_every_record(tmp_path, suffix):
    path = tmp_path / f"runs.{suffix}"
    assert write_from_two_processes(path) == [0, 0]
    contents = read_store(path)
    assert contents.skipped_lines == 0
    assert sorted(record["seed"] for record in contents.records) == list(range(150)) + list(range(1000, 1150))


def test_sqlite_store_written_by_two_processes_passes_the_integrity_check(tmp_path):
    path = tmp_path / "runs.sqlite"
    assert write_from_two_processes(path) == [0, 0]
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize("name, message", [
    ("missing/runs.jsonl", "does not exist"),
    ("runs.csv", "unknown store type"),
    (".", "is a folder"),
])
def test_unusable_out_path_is_rejected(tmp_path, name, message):
    path = tmp_path / name if name != "." else tmp_path / "folder.jsonl"
    if name == ".":
        path.mkdir()
    with pytest.raises(OptionError, match=message):
        open_store(path)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write read-only files")
def test_read_only_store_is_rejected(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text("")
    path.chmod(0o444)
    with pytest.raises(OptionError, match="cannot write"):
        open_store(path)


def test_missing_store_cannot_be_shown(tmp_path):
    with pytest.raises(OptionError, match="no such file"):
        read_store(tmp_path / "none.sqlite")
