"""Every write checked to the end: a command whose output fails ends with one line and exit
code 2, and what it finished before the failure is kept.

Real processes (``python -m cbai_cli``) write where writes really fail:

- standard output on ``/dev/full``, which answers every write with ENOSPC;
- outputs on a 64 KiB tmpfs the test mounts (``small_disk``, root only; elsewhere these
  tests skip and say why), filled beforehand to leave ``room`` bytes: 0, so that the first
  write fails, or a few pages, so that the first writes go through and a later one fails.

Every case ends with exit code 2 and exactly one ``cbai: error:`` line naming the output
(and its reason: no space left on the device), no traceback; the only other lines allowed
on stderr are the ``cbai: warning:`` lines a long run prints when its trace stopped being
written. Whatever was complete before the failure is intact: a trace or a store written
elsewhere, the records stored before the disk filled (and a second run resumes from them),
the answers of a study, the scenario files written before the one that did not fit, and
the old content of a file that could not be replaced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cbai_cli.compare.store import read_store
from cbai_cli.session.session import Session

ROOT = Path(__file__).resolve().parents[1]
REGRET = ROOT / "instances" / "regret-1d.yaml"
IRRELEVANT = ROOT / "instances" / "irrelevant-dims-d10-eps0.05.yaml"
# progress lines would join the error line on stderr when a command outlasts their interval (a busy machine)
ENVIRONMENT = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               "CBAI_PROGRESS_INTERVAL": "1000000"}
FULL_STDOUT = "cbai: error: -: cannot write to standard output: No space left on device"
NO_SPACE = "No space left on device"
#: 2 algorithms × 8 seeds on regret-1d: 16 records of about 800 bytes, a few KiB in all.
COMPARE = ("compare", "regret-1d", "--algos", "g-acol:det,maxrew-u:det", "--seeds", "8", "--jobs", "1",
           "--no-bounds", "--quiet")
COMPARE_RUNS = 16
#: A study of regret-1d with the tuned G-ACOL: one query at a time, numbers as answers.
STUDY = ("--algo", "g-acol", "--regime", "tuned", "--beta", "0.25")

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def cbai(*args, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """``cbai ARGS`` as a process of this checkout; stdout (text) unless redirected."""
    return subprocess.run([sys.executable, "-m", "cbai_cli", *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=ENVIRONMENT, cwd=ROOT)


def on_full_stdout(*args) -> subprocess.CompletedProcess:
    """``cbai ARGS`` with standard output on /dev/full."""
    with open("/dev/full", "w") as full:
        return cbai(*args, stdout=full)


def failed_with(process: subprocess.CompletedProcess, error: str) -> None:
    """The process ended with exit code 2, one error line containing ``error`` and nothing
    else but warnings on stderr, and no traceback."""
    lines = process.stderr.splitlines()
    errors = [line for line in lines if line.startswith("cbai: error: ")]
    assert process.returncode == 2, process.stderr
    assert len(errors) == 1 and error in errors[0], process.stderr
    assert all(line.startswith(("cbai: error: ", "cbai: warning: ")) for line in lines), process.stderr


def leave_room(folder: Path, room: int) -> None:
    """Fill the file system of ``folder`` with one filler file until ``room`` bytes are free."""
    status = os.statvfs(folder)
    free = status.f_bavail * status.f_frsize
    assert free >= room, f"only {free} bytes free"
    (folder / "filler").write_bytes(b"\0" * (free - room))


def start_study(path: Path, answers: int = 0) -> Path:
    """A study of regret-1d at ``path`` (made here, not by a process) with ``answers``
    queries answered."""
    with Session.start(path, REGRET, "g-acol", "tuned", beta=0.25) as session:
        for _ in range(answers):
            [query] = session.ask()
            session.answer(query.id, 0.5)
    return path


def handed(study: Path) -> int:
    """The id of a query of the study handed out now."""
    with Session.open(study) as session:
        return session.ask()[0].id


def actions(study: Path) -> list[str]:
    """What the study holds: the kind of every answer, skip and undo, in order."""
    with Session.open(study, writable=False) as session:
        return [record["kind"] for record in session.records()]


# ------------------------------------------------------------------ standard output on /dev/full


@needs_dev_full
def test_solve_whose_stdout_fails_keeps_its_complete_trace(tmp_path):
    assert cbai("solve", REGRET, *STUDY, "--trace", tmp_path / "shown.csv", "--json").returncode == 0
    trace = tmp_path / "t.csv"
    failed_with(on_full_stdout("solve", REGRET, *STUDY, "--trace", trace, "--json"), FULL_STDOUT)
    assert trace.read_text() == (tmp_path / "shown.csv").read_text()  # the same run, every row


@needs_dev_full
@pytest.mark.parametrize("store, shown", [("runs.sqlite", "--json"), ("runs.jsonl", "--csv"), ("runs.jsonl", "")])
def test_compare_whose_stdout_fails_keeps_every_record_in_its_store(tmp_path, store, shown):
    process = on_full_stdout(*COMPARE, "--out", tmp_path / store, *filter(None, [shown]))
    failed_with(process, FULL_STDOUT)
    assert len(read_store(tmp_path / store).records) == COMPARE_RUNS


@needs_dev_full
def test_compare_from_a_store_whose_stdout_fails_leaves_the_store_as_it_was(tmp_path):
    store = tmp_path / "runs.jsonl"
    assert cbai(*COMPARE, "--out", store).returncode == 0
    before = store.read_bytes()
    failed_with(on_full_stdout("compare", "--from", store, "--json"), FULL_STDOUT)
    assert store.read_bytes() == before


@needs_dev_full
def test_session_start_whose_stdout_fails_leaves_a_whole_study(tmp_path):
    study = tmp_path / "s.db"
    failed_with(on_full_stdout("session", "start", REGRET, *STUDY, "-o", study, "--json"), FULL_STDOUT)
    assert actions(study) == [] and handed(study) == 1


@needs_dev_full
def test_session_record_whose_stdout_fails_keeps_the_answer(tmp_path):
    study = start_study(tmp_path / "s.db")
    failed_with(on_full_stdout("session", "record", study, handed(study), "0.5", "--json"), FULL_STDOUT)
    assert actions(study) == ["answer"]


@needs_dev_full
@pytest.mark.parametrize("command, kept", [
    (("next", "--json"), []), (("status",), []), (("log", "--csv"), []), (("skip", "{query}"), ["skip"]),
])
def test_session_commands_whose_stdout_fails_end_in_one_line_and_keep_the_study(tmp_path, command, kept):
    study = start_study(tmp_path / "s.db", answers=2)
    query = handed(study)
    name, *rest = command
    failed_with(on_full_stdout("session", name, study, *(part.format(query=query) for part in rest)), FULL_STDOUT)
    assert actions(study) == ["answer", "answer", *kept]


# ------------------------------------------------------------------ outputs on a full disk


@pytest.mark.parametrize("name", ["x.yaml", "x.npz"])
@pytest.mark.parametrize("room", [0, 8192])
def test_generate_onto_a_full_disk_keeps_the_old_file_and_no_temporary(small_disk, name, room):
    # a random instance of 500 arms in d = 50 is about 200 KB as YAML and NPZ: more than any room
    output = small_disk / name
    output.write_bytes(b"old")
    leave_room(small_disk, room)
    process = cbai("generate", "random", "--d", "50", "--n", "500", "--seed", "1", "-o", output)
    failed_with(process, f"{output}: cannot write: {NO_SPACE}")
    assert output.read_bytes() == b"old" and sorted(os.listdir(small_disk)) == ["filler", name]


@pytest.mark.parametrize("instance, algorithm, room", [
    (IRRELEVANT, ("--algo", "acol"), 0),  # 32,540 queries: 1.3 MB of trace, written while the run goes
    (IRRELEVANT, ("--algo", "acol"), 8192),
    (REGRET, STUDY, 0),  # a dozen rows, written when the run is over
])
def test_trace_onto_a_full_disk_fails_after_the_result_keeping_the_old_trace(small_disk, instance, algorithm, room):
    trace = small_disk / "t.csv"
    trace.write_text("old\n")
    leave_room(small_disk, room)
    process = cbai("solve", instance, *algorithm, "--trace", trace, "--json")
    failed_with(process, f"--trace {trace}: cannot write: {NO_SPACE}")
    assert json.loads(process.stdout)["runs"][0]["stopped"] == "solved"
    assert trace.read_text() == "old\n" and sorted(os.listdir(small_disk)) == ["filler", "t.csv"]


# SQLite in WAL mode keeps a shared-memory file of 32 KiB beside the store: a 1 MiB disk,
# filled to fail its creation (0), the shared memory read back (32 KiB) or a later record
@pytest.mark.parametrize("small_disk, store, room", [
    ("64k", "runs.jsonl", 0), ("64k", "runs.jsonl", 4096), ("64k", "runs.jsonl", 12288),
    ("1m", "runs.sqlite", 0), ("1m", "runs.sqlite", 32768), ("1m", "runs.sqlite", 65536),
], indirect=["small_disk"])
def test_a_store_whose_disk_fills_keeps_its_records_and_resumes(small_disk, store, room):
    path = small_disk / store
    leave_room(small_disk, room)
    failed_with(cbai(*COMPARE, "--out", path), f"--out {path}: ")
    (small_disk / "filler").unlink()  # reading a SQLite store in WAL mode needs room too
    kept = read_store(path).records if path.exists() and path.stat().st_size else ()
    assert len(kept) < COMPARE_RUNS
    resumed = cbai(*COMPARE, "--out", path, "--json")
    assert resumed.returncode == 0, resumed.stderr
    records = read_store(path).records
    assert len(records) == COMPARE_RUNS and all(record in records for record in kept)


def test_a_plot_onto_a_full_disk_shows_the_tables_and_keeps_the_store(small_disk, tmp_path):
    leave_room(small_disk, 0)
    store = tmp_path / "runs.sqlite"
    process = cbai(*COMPARE, "--out", store, "--plot", small_disk / "figure.png")
    failed_with(process, f"{small_disk / 'figure.png'}: cannot write: {NO_SPACE}")
    assert "g-acol:det" in process.stdout and len(read_store(store).records) == COMPARE_RUNS


@pytest.mark.parametrize("room", [0, 8192])
def test_driver_arms_onto_a_full_disk_is_one_line(small_disk, room):
    leave_room(small_disk, room)
    output = small_disk / "arms.npz"
    failed_with(cbai("driver-arms", "--n", "40", "-o", output), f"{output}: cannot write: {NO_SPACE}")
    assert sorted(os.listdir(small_disk)) == ["filler"]


def test_driver_arms_keeps_the_scenario_files_written_before_the_disk_filled(small_disk):
    # each scenario's file of 8 policies takes about 10 KB: room for the first, not all three
    leave_room(small_disk, 12288)
    process = cbai("driver-arms", "--n", "8", "--scenario", "all", "-o", small_disk / "arms.npz")
    failed_with(process, f"cannot write: {NO_SPACE}")
    written = sorted(set(os.listdir(small_disk)) - {"filler"})
    assert written and len(written) < 3
    for name in written:
        assert cbai("bound", small_disk / name, "--json").returncode == 0


def test_a_driver_picture_onto_a_full_disk_is_one_line(small_disk, tmp_path):
    arms = tmp_path / "arms.npz"
    assert cbai("driver-arms", "--n", "3", "-o", arms).returncode == 0
    leave_room(small_disk, 0)
    picture = small_disk / "arms.png"
    process = cbai("driver-arms", "--show", arms, "--arm", "0", "-o", picture)
    failed_with(process, f"{picture}: cannot write: {NO_SPACE}")
    assert sorted(os.listdir(small_disk)) == ["filler"]


# a study is SQLite in WAL mode too (see the stores above)
@pytest.mark.parametrize("small_disk", ["1m"], indirect=True)
@pytest.mark.parametrize("room", [0, 40960])
def test_a_study_started_on_a_full_disk_is_one_line(small_disk, room):
    leave_room(small_disk, room)
    study = small_disk / "s.db"
    failed_with(cbai("session", "start", REGRET, *STUDY, "-o", study), str(study))
    (small_disk / "filler").unlink()
    assert not study.exists() or actions(study) == []  # no study, or one made whole before the failure


# room 0: the study's shared memory cannot be mapped; 32 KiB: it can, the journal cannot grow
@pytest.mark.parametrize("small_disk", ["1m"], indirect=True)
@pytest.mark.parametrize("room", [0, 32768])
@pytest.mark.parametrize("command", ["next", "record", "skip"])
def test_a_study_whose_disk_fills_keeps_its_answers(small_disk, command, room):
    study = start_study(small_disk / "s.db", answers=3)
    query = handed(study)
    leave_room(small_disk, room)
    arguments = {"next": ("next", study, "--rater", "bob"), "record": ("record", study, query, "0.5"),
                 "skip": ("skip", study, query)}[command]
    failed_with(cbai("session", *arguments), str(study))
    (small_disk / "filler").unlink()
    assert actions(study) == ["answer"] * 3


@pytest.mark.parametrize("shown", ["--json", "--csv"])
def test_stdout_to_a_file_whose_disk_fills_partway_is_one_line_and_keeps_the_store(small_disk, tmp_path, shown):
    # 16 records: about 13 KB of JSON and 3 KB of CSV, more than the 2 KiB left
    leave_room(small_disk, 2048)
    store = tmp_path / "runs.jsonl"
    with open(small_disk / "out", "w") as out:
        process = cbai(*COMPARE, "--out", store, shown, stdout=out)
    failed_with(process, FULL_STDOUT)
    assert len(read_store(store).records) == COMPARE_RUNS
