"""JSON Lines and SQLite stores: round trips, cut-short lines, duplicates, two writers,
unwritable paths, files that are not stores."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys

import pytest

from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.compare.store import open_store, read_store
from cbai_cli.contracts.errors import OptionError


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


def _cut_short(path):
    """A JSON Lines store of one record, then a record its writer did not finish."""
    store = open_store(path)
    store.append(make_record(1))
    store.close()
    with open(path, "a") as stream:
        stream.write('{"run_key": "key-2", "gro')
    return path


def test_a_cut_short_jsonl_line_is_skipped_when_read(tmp_path):
    contents = read_store(_cut_short(tmp_path / "runs.jsonl"))
    assert [record["run_key"] for record in contents.records] == ["key-1"] and contents.skipped_lines == 1


def test_a_cut_short_last_line_is_cut_off_when_the_store_is_written_again(tmp_path):
    path = _cut_short(tmp_path / "runs.jsonl")
    store = open_store(path)
    store.append(make_record(3))
    store.close()
    contents = read_store(path)
    assert [record["run_key"] for record in contents.records] == ["key-1", "key-3"] and contents.skipped_lines == 0
    assert all(line.startswith('{"run_key"') for line in path.read_text().splitlines())


def test_a_record_the_disk_took_only_part_of_is_taken_back(tmp_path, monkeypatch):
    import errno

    from cbai_cli.compare import store as stores

    path = tmp_path / "runs.jsonl"
    store = open_store(path)
    store.append(make_record(1))
    real_write = os.write
    calls = []

    def full_disk(descriptor, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(descriptor, data[:10])  # a short write, as on a nearly full disk
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(stores.os, "write", full_disk)
    with pytest.raises(OptionError, match="No space left on device"):
        store.append(make_record(2))
    monkeypatch.undo()
    store.close()
    contents = read_store(path)
    assert [record["run_key"] for record in contents.records] == ["key-1"] and contents.skipped_lines == 0


@pytest.mark.parametrize(("key", "value"), [("iterations", "abc"), ("iterations", 10**400), ("seed", "x"),
                                          ("wall_s", float("nan")), ("correct", "yes"), ("algorithm", None),
                                          ("kind", "zzz"), ("regret_curve", [[1, "a"]])])
def test_a_jsonl_record_with_a_field_cbai_cannot_have_written_is_skipped_and_counted(tmp_path, key, value):
    import json

    records = [make_record(number) for number in range(3)]
    records[1][key] = value
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    contents = read_store(path)
    assert [record["run_key"] for record in contents.records] == ["key-0", "key-2"] and contents.skipped_lines == 1


def test_a_jsonl_line_nested_past_the_parsers_depth_is_skipped_and_counted(tmp_path):
    import json

    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(make_record(1)) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    contents = read_store(path)
    assert [record["run_key"] for record in contents.records] == ["key-1"] and contents.skipped_lines == 1


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


def test_two_processes_writing_one_sqlite_store_keep_every_record(tmp_path):
    path = tmp_path / "runs.sqlite"
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


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_named_pipe_cannot_be_shown_and_is_called_not_a_regular_file(tmp_path):
    path = tmp_path / "runs.jsonl"
    os.mkfifo(path)
    with pytest.raises(OptionError, match=r"^--from \S+runs\.jsonl: not a regular file \(a pipe or a device\), "
                                          r"so not a store$"):
        read_store(path)


# One writer at a time on a JSON Lines store


def test_second_jsonl_writer_is_refused_while_the_first_has_the_store_open(tmp_path):
    path = tmp_path / "runs.jsonl"
    first = open_store(path)
    try:
        with pytest.raises(OptionError, match=r"^--out \S+runs\.jsonl is being written by another cbai compare"):
            open_store(path)
    finally:
        first.close()


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="the lock's holder is read from Linux's /proc/locks")
def test_refused_jsonl_writer_is_told_the_pid_of_the_writer(tmp_path):
    path = tmp_path / "runs.jsonl"
    first = open_store(path)
    try:
        with pytest.raises(OptionError, match=rf"being written by another cbai compare \(pid {os.getpid()}\)"):
            open_store(path)
    finally:
        first.close()


def test_jsonl_store_can_be_written_again_once_closed(tmp_path):
    path = tmp_path / "runs.jsonl"
    open_store(path).close()
    store = open_store(path)
    store.append(make_record(1))
    store.close()
    assert [record["run_key"] for record in read_store(path).records] == ["key-1"]


def test_refused_jsonl_writer_leaves_the_store_unchanged(tmp_path):
    path = tmp_path / "runs.jsonl"
    first = open_store(path)
    first.append(make_record(1))
    before = path.read_bytes()
    with pytest.raises(OptionError):
        open_store(path)
    first.close()
    assert path.read_bytes() == before


def test_jsonl_store_can_be_read_while_it_is_written(tmp_path):
    path = tmp_path / "runs.jsonl"
    store = open_store(path)
    store.append(make_record(1))
    try:
        assert [record["run_key"] for record in read_store(path).records] == ["key-1"]
    finally:
        store.close()


def test_second_jsonl_writer_process_is_refused_with_one_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    store = open_store(path)
    try:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        environment = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
        code = ("import sys\nfrom cbai_cli.compare.store import open_store\nfrom cbai_cli.contracts.errors import CbaiError\n"
                "try:\n    open_store(sys.argv[1])\nexcept CbaiError as error:\n    print(error)\n    sys.exit(2)\n")
        result = subprocess.run([sys.executable, "-c", code, str(path)], env=environment, capture_output=True,
                                text=True, timeout=60)
    finally:
        store.close()
    assert result.returncode == 2 and "is being written by another cbai compare" in result.stdout


# Files that are not cbai stores


@pytest.mark.parametrize("content", [b"hello\nworld\n", b'{"a": 1}\n', b"[1, 2]\n", b"\x00\xff\xfe binary\n",
                                     b'{"run_key": "k", "gr\n{"run_key": "l", "gr\n'],
                         ids=["text", "json-objects", "json-lists", "binary", "two-cut-lines"])
def test_jsonl_file_without_any_record_cannot_be_shown(tmp_path, content):
    path = tmp_path / "other.jsonl"
    path.write_bytes(content)
    with pytest.raises(OptionError, match=r"^--from \S+other\.jsonl: not a cbai store: no line is a run record$"):
        read_store(path)


def test_jsonl_file_without_any_record_is_not_appended_to(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"note": "mine"}\n')
    with pytest.raises(OptionError, match=r"^--out \S+notes\.jsonl: not a cbai store"):
        open_store(path)
    assert path.read_bytes() == b'{"note": "mine"}\n'


def test_jsonl_store_whose_only_record_was_cut_short_is_still_a_store(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b'{"run_key": "key-1", "gro')
    contents = read_store(path)
    assert contents.records == () and contents.skipped_lines == 1
    open_store(path).close()


def test_empty_jsonl_file_is_an_empty_store(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"")
    assert read_store(path).records == ()


def test_jsonl_store_with_some_garbage_keeps_its_records_and_counts_the_rest(tmp_path):
    path = tmp_path / "runs.jsonl"
    store = open_store(path)
    store.append(make_record(1))
    store.close()
    with open(path, "ab") as stream:
        stream.write(b"garbage\n")
    contents = read_store(path)
    assert [record["run_key"] for record in contents.records] == ["key-1"] and contents.skipped_lines == 1


def other_programs_database(path, application_id: int = 0) -> None:
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA application_id = {application_id}")
    connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    connection.execute("INSERT INTO users (name) VALUES ('ada')")
    connection.commit()
    connection.close()


def test_database_of_another_program_is_refused_as_out_and_left_untouched(tmp_path):
    path = tmp_path / "app.db"
    other_programs_database(path)
    before = path.read_bytes()
    with pytest.raises(OptionError, match=r"^--out \S+app\.db: not a cbai store: it holds the table\(s\) users "
                                          r"and no table runs$"):
        open_store(path)
    assert path.read_bytes() == before and not (tmp_path / "app.db-wal").exists()


def test_database_of_another_program_cannot_be_shown(tmp_path):
    path = tmp_path / "app.sqlite"
    other_programs_database(path)
    with pytest.raises(OptionError, match=r"^--from \S+app\.sqlite: not a cbai store: it holds the table"):
        read_store(path)


def test_database_marked_by_another_program_is_refused(tmp_path):
    path = tmp_path / "app.sqlite"
    other_programs_database(path, application_id=0x1234)
    with pytest.raises(OptionError, match=r"not a cbai store: another program's SQLite database "
                                          r"\(application id 0x1234\)$"):
        open_store(path)


@pytest.mark.parametrize("option", ["--out", "--from"])
def test_session_study_is_called_a_session_study_not_another_programs_database(tmp_path, option):
    from cbai_cli.session.journal import create

    path = tmp_path / "study.db"
    create(path, {"algorithm": "acol"})
    before = path.read_bytes()
    with pytest.raises(OptionError, match=rf"^{option} \S+study\.db: a cbai session study \(made by `cbai session "
                                          r"start`\), not a compare store; see it with `cbai session status`$"):
        (open_store if option == "--out" else read_store)(path)
    assert path.read_bytes() == before


def test_runs_table_of_another_layout_is_refused(tmp_path):
    path = tmp_path / "runs.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE runs (id INTEGER, started TEXT)")
    with pytest.raises(OptionError, match=r"not a cbai store: its table runs has the columns id, started, not cbai's$"):
        open_store(path)


def test_cbai_store_of_an_unknown_schema_is_refused(tmp_path):
    from cbai_cli.compare.store import SQLITE_APPLICATION_ID

    path = tmp_path / "future.sqlite"
    open_store(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version = 2")
    for option, call in (("--out", open_store), ("--from", read_store)):
        with pytest.raises(OptionError, match=rf"^{option} \S+future\.sqlite: a cbai store of schema 2, which this cbai "
                                              r"does not know \(it reads schema 1\)"):
            call(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA application_id").fetchone()[0] == SQLITE_APPLICATION_ID


@pytest.mark.parametrize("option", ["--out", "--from"])
def test_file_that_is_not_sqlite_is_refused(tmp_path, option):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"these are not the records you are looking for\n" * 20)
    with pytest.raises(OptionError, match=rf"^{option} \S+runs\.sqlite: .*file is not a database$"):
        open_store(path) if option == "--out" else read_store(path)


def test_new_sqlite_store_is_marked_as_a_cbai_store_of_schema_1(tmp_path):
    from cbai_cli.compare.store import SQLITE_APPLICATION_ID

    open_store(tmp_path / "runs.sqlite").close()
    with sqlite3.connect(tmp_path / "runs.sqlite") as connection:
        assert connection.execute("PRAGMA application_id").fetchone()[0] == SQLITE_APPLICATION_ID
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 1


def test_sqlite_store_made_before_the_mark_is_still_read_and_written(tmp_path):
    from cbai_cli.compare.store import SQLITE_SCHEMA

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute(SQLITE_SCHEMA)
    store = open_store(path)
    store.append(make_record(1))
    store.close()
    assert [record["run_key"] for record in read_store(path).records] == ["key-1"]


def test_empty_sqlite_file_is_an_empty_store(tmp_path):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"")
    assert read_store(path).records == ()


# Failures while writing


def test_jsonl_store_on_a_full_disk_fails_with_one_line(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    store = open_store(tmp_path / "runs.jsonl")
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, store._descriptor)  # the store's file now answers every write with ENOSPC
    os.close(full)
    try:
        with pytest.raises(OptionError, match=r"^--out \S+runs\.jsonl: cannot write: No space left on device$"):
            store.append(make_record(1))
    finally:
        store.close()


def test_a_jsonl_write_failing_only_at_the_sync_fails_the_close_in_one_line_and_releases_the_lock(tmp_path,
                                                                                                  monkeypatch):
    # a network file system may report a full disk or a quota only when the file is synced
    path = tmp_path / "runs.jsonl"
    store = open_store(path)
    store.append(make_record(1))

    def quota_exceeded(descriptor):
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    with monkeypatch.context() as patched:
        patched.setattr("cbai_cli.compare.store.os.fsync", quota_exceeded)
        with pytest.raises(OptionError, match=r"^--out \S+runs\.jsonl: cannot write: Disk quota exceeded$"):
            store.close()
    open_store(path).close()  # the lock went with the descriptor


@pytest.mark.parametrize("suffix", [".jsonl", ".sqlite"])
@pytest.mark.parametrize("replace", [False, True])
def test_a_store_removed_or_replaced_while_written_stops_the_run_in_one_line(tmp_path, suffix, replace):
    """Removed (or replaced) while open, the store would take the records into a file nobody
    can read, and the run would end with exit 0 as if they were kept."""
    path = tmp_path / f"runs{suffix}"
    store = open_store(path)
    try:
        store.append(make_record(0))
        for leftover in tmp_path.iterdir():
            leftover.unlink()
        if replace:
            path.write_text("")
        with pytest.raises(OptionError, match="removed or replaced while cbai wrote to it"):
            store.append(make_record(1))
    finally:
        store.close()
