"""Several ``cbai compare`` processes on one SQLite store, end to end through real
processes: they share the runs and each ends with the whole table; a process that waits
says so; the runs of a killed process are taken over after its lease; a locked or
damaged store is one line and exit 2."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbai_cli.cli.app import app
from cbai_cli.compare.store import open_store, read_store
from cbai_cli.compare.study import compare

from tests.compare.common import FAST_ALGORITHMS, SPHERE, SWEEP, settings, stable
from tests.compare.test_compare_claims import ghost_writer, table

ROOT = Path(__file__).resolve().parents[2]
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               "CBAI_PROGRESS_INTERVAL": "1000000"}  # no progress lines beside the ones a test reads
SEEDS = 12
GRID = (SWEEP, SPHERE, "--algos", ",".join(FAST_ALGORITHMS), "--seeds", str(SEEDS), "--jobs", "1", "--no-bounds")


@pytest.fixture(scope="module")
def reference():
    """The grid's records from one process, without a store."""
    return compare(settings(seeds=SEEDS)).records


def start(out: Path, *options: str) -> subprocess.Popen:
    """``cbai compare GRID --out OUT --json`` as a real process."""
    return subprocess.Popen([sys.executable, "-m", "cbai_cli", "compare", *GRID, "--out", str(out), "--json", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENVIRONMENT)


def finish(process: subprocess.Popen) -> tuple[list[dict], str]:
    """The records a process printed and its stderr, once it ended well."""
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr
    return json.loads(stdout)["records"], stderr


def read_line_with(process: subprocess.Popen, text: str) -> str:
    """Read the process's stderr up to the first line holding ``text``."""
    for line in process.stderr:
        if text in line:
            return line
    pytest.fail(f"the process ended without saying {text!r} (exit code {process.wait()})")


def by_key(records) -> dict[str, dict]:
    return {record["run_key"]: record for record in records}


def assert_left_clean(path: Path) -> None:
    assert table(path, "SELECT * FROM claims") == [] and table(path, "SELECT * FROM writers") == []


def test_two_processes_on_one_store_share_the_runs_and_each_ends_with_the_whole_table(tmp_path, reference):
    out = tmp_path / "runs.sqlite"
    processes = [start(out), start(out)]
    (first, _), (second, _) = finish(processes[0]), finish(processes[1])
    stored = read_store(out).records
    assert len(stored) == len(by_key(stored)) == len(reference)
    assert stable(first) == stable(second) == stable(reference)
    # Each printed exactly the stored records, wall times included: a run done by both
    # would show the wall time of the loser's run in one of the two tables.
    assert by_key(first) == by_key(second) == by_key(stored)
    assert_left_clean(out)


def test_a_process_waits_for_runs_claimed_by_a_live_writer_and_says_so(tmp_path, reference):
    out = tmp_path / "runs.sqlite"
    open_store(out).close()
    theirs = reference[:2]
    ghost_writer(out, [record["run_key"] for record in theirs])  # alive: its lease is a week
    process = start(out)
    line = read_line_with(process, "waiting for")
    assert line == "cbai compare: waiting for 2 runs claimed by other processes (ghost:7)\n"
    writer = open_store(out)
    for record in theirs:  # the other process finishes its runs
        writer.append(record)
    writer.close()
    records, stderr = finish(process)
    assert f"2 of the runs were done by other processes writing {out}" in stderr
    assert stable(records) == stable(reference)
    assert by_key(records) == by_key(read_store(out).records)
    assert table(out, "SELECT * FROM claims") == []


# A process that claims two runs through cbai's claims, stores two others, says "ready" and
# sleeps until it is killed; its heartbeat (a thread) advances every quarter of its 1 s lease.
CLAIMING = """
import json, sys, time
from cbai_cli.compare.store import open_store
store = open_store(sys.argv[1])
claims = store.claims(1.0)
claims.claim(json.loads(sys.argv[2]))
for record in json.loads(sys.argv[3]):
    store.append(record)
print("ready", flush=True)
time.sleep(600)
"""


def test_the_runs_of_a_killed_process_are_taken_over_after_its_lease(tmp_path, reference):
    out = tmp_path / "runs.sqlite"
    claimed, done = reference[:2], reference[2:4]
    killed = subprocess.Popen([sys.executable, "-c", CLAIMING, str(out), json.dumps([r["run_key"] for r in claimed]),
                               json.dumps(done)], stdout=subprocess.PIPE, text=True, env=ENVIRONMENT)
    assert killed.stdout.readline() == "ready\n"
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    [(writer,)] = table(out, "SELECT writer FROM writers")
    assert {key for (key,) in table(out, "SELECT run_key FROM claims")} == {r["run_key"] for r in claimed}
    records, stderr = finish(start(out))
    host_pid = writer.rsplit(":", 1)[0]
    assert f"cbai compare: taking over 2 runs claimed by {host_pid}, whose heartbeat stopped\n" in stderr
    assert f"2 of {len(reference)} runs already stored in {out}" in stderr
    assert stable(records) == stable(reference)
    stored = read_store(out).records
    assert len(stored) == len(by_key(stored)) == len(reference)
    assert_left_clean(out)


def test_a_compare_killed_mid_way_leaves_its_claims_to_the_next_one(tmp_path, reference):
    """SIGKILL to a real ``cbai compare`` (lease 1 s) once it has stored a record: the next
    one takes over whatever it had claimed, and the table is the one-process table."""
    out = tmp_path / "runs.sqlite"
    killed = start(out, "--lease", "1")
    while killed.poll() is None and not (out.exists() and _stored(out)):
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=60)
    left = table(out, "SELECT run_key FROM claims")
    records, stderr = finish(start(out))
    assert ("taking over" in stderr) == bool(left)
    assert stable(records) == stable(reference)
    stored = read_store(out).records
    assert len(stored) == len(by_key(stored)) == len(reference)
    assert table(out, "SELECT * FROM claims") == []


def test_a_process_stopped_with_sigterm_gives_its_claims_up_at_once(tmp_path):
    out = tmp_path / "runs.sqlite"
    process = subprocess.Popen([sys.executable, "-m", "cbai_cli", "compare", "regret-1d", "--algos",
                                "maxrew-f:tuned:beta=0.25", "--seeds", "20000", "--jobs", "1", "--no-bounds", "--out",
                                str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENVIRONMENT)
    while process.poll() is None and not (out.exists() and _stored(out)):
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143 and "run the same command again to resume" in stderr
    assert 0 < _stored(out) < 20000
    assert_left_clean(out)


def _stored(path: Path) -> int:
    try:
        return table(path, "SELECT COUNT(*) FROM runs")[0][0]
    except sqlite3.Error:  # not made yet
        return 0


# One line and exit 2


def cli(*args) -> object:
    return CliRunner().invoke(app, [str(arg) for arg in args])


SMALL = ("compare", "regret-1d", "--algos", "uniform", "--seeds", "2", "--jobs", "1", "--no-bounds")


def test_a_store_locked_by_another_process_for_too_long_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr("cbai_cli.compare.store.SQLITE_BUSY_TIMEOUT_MS", 50)
    out = tmp_path / "runs.sqlite"
    open_store(out).close()
    holder = sqlite3.connect(out, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, held for the whole command
    try:
        result = cli(*SMALL, "--out", out)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"cbai: error: --out {out}: cannot write: database is locked\n"


def test_a_damaged_store_is_one_line(tmp_path):
    out = tmp_path / "runs.sqlite"
    assert cli(*SMALL, "--seeds", "40", "--out", out).exit_code == 0
    data = bytearray(out.read_bytes())
    page = 4096
    for start_of_page in range(page, len(data), page):  # every page but the header's, scribbled over
        data[start_of_page + 8:start_of_page + page - 8] = b"\xab" * (page - 16)
    out.write_bytes(bytes(data))
    result = cli(*SMALL, "--out", out)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"cbai: error: --out {out}: not a cbai SQLite store: database disk image is "
                             "malformed\n")


def test_a_claims_table_of_another_layout_is_refused(tmp_path):
    out = tmp_path / "runs.sqlite"
    open_store(out).close()
    connection = sqlite3.connect(out)
    with connection:
        connection.execute("DROP TABLE claims")
        connection.execute("CREATE TABLE claims (id INTEGER, who TEXT)")
    connection.close()
    result = cli(*SMALL, "--out", out)
    assert result.exit_code == 2
    assert result.stderr == (f"cbai: error: --out {out}: not a cbai store: its table claims has the columns id, "
                             "who, not cbai's\n")


@pytest.mark.parametrize(("args", "message"), [
    (("--out", "runs.sqlite", "--lease", "0.5"),
     "--lease must be a number of seconds from 1 to 604,800 (a week), got 0.5"),
    (("--out", "runs.jsonl", "--lease", "5"),
     "--lease applies to a SQLite --out store (.sqlite), which several cbai compare processes can share"),
    (("--lease", "5"), "--lease applies to a SQLite --out store"),
])
def test_a_lease_that_cannot_apply_is_one_line_before_any_file_is_made(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    result = cli(*SMALL, *args)
    assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_from_takes_no_lease(tmp_path):
    result = cli("compare", "--from", tmp_path / "runs.sqlite", "--lease", "5")
    assert result.exit_code == 2 and "--from shows stores as they are; it takes no --lease" in result.stderr
