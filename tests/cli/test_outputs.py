"""Output files that cannot be written end with one line naming the file and the reason,
exit code 2, before any long work starts; results already computed are shown first."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cbai_cli.io.atomic import temporary_prefix

REPO = Path(__file__).resolve().parents[2]
INSTANCE = REPO / "instances" / "regret-1d.yaml"
IRRELEVANT = REPO / "instances" / "irrelevant-dims-d10-eps0.05.yaml"
NO_PROC = not Path("/proc/self").is_dir()
needs_proc = pytest.mark.skipif(NO_PROC, reason="needs Linux's /proc (a folder where no file can be made)")
# a regime with a guarantee: stderr then holds the failure alone
COMPARE = ("compare", "regret-1d", "--algos", "g-acol:det", "--seeds", "2", "--jobs", "1", "--no-bounds")


def one_error_line(result) -> str:
    """The single line of stderr of a run that failed with exit code 2."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cbai: error: "), result.stderr
    return lines[0]


def full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# solve --trace


def test_trace_onto_a_folder_is_refused_before_the_run(cli, tmp_path):
    (tmp_path / "trace.csv").mkdir()
    line = one_error_line(cli("solve", INSTANCE, "--algo", "acol", "--trace", tmp_path / "trace.csv"))
    assert line.endswith("trace.csv: is a folder") and "--trace" in line


def test_trace_onto_a_folder_without_a_suffix_says_it_is_a_folder(cli, tmp_path):
    line = one_error_line(cli("solve", INSTANCE, "--algo", "acol", "--trace", tmp_path))
    assert line == f"cbai: error: --trace {tmp_path}: is a folder"


def test_trace_into_a_missing_folder_is_refused(cli, tmp_path):
    line = one_error_line(cli("solve", INSTANCE, "--algo", "acol", "--trace", tmp_path / "missing" / "t.csv"))
    assert "folder" in line and "does not exist" in line


@needs_proc
def test_trace_where_no_file_can_be_made_names_the_os_reason(cli):
    line = one_error_line(cli("solve", INSTANCE, "--algo", "acol", "--trace", "/proc/t.csv"))
    assert line == "cbai: error: --trace /proc/t.csv: cannot write: No such file or directory"


class FillingDisk:
    """A file on a disk with ``room`` bytes left: a write beyond them fails."""

    def __init__(self, stream, room: int) -> None:
        self.stream, self.room = stream, room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.stream.write(data)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def disk_with_room(monkeypatch, room: int) -> None:
    """Trace files opened from now on sit on a disk with ``room`` bytes left, and get their
    rows every 1,000 characters."""
    from cbai_cli.io import atomic
    from cbai_cli.run import solving

    opened = atomic.AtomicFile.open

    def open_filling(self):
        opened(self)
        self.stream = FillingDisk(self.stream, room)

    monkeypatch.setattr(atomic.AtomicFile, "open", open_filling)
    monkeypatch.setattr(solving, "TRACE_FLUSH_CHARS", 1000)


def test_trace_whose_disk_fills_during_the_run_is_a_warning_then_one_error_line_after_the_result(cli, tmp_path,
                                                                                                monkeypatch):
    disk_with_room(monkeypatch, 5000)
    trace = tmp_path / "t.csv"
    trace.write_text("old\n")
    result = cli("solve", IRRELEVANT, "--algo", "acol", "--trace", trace, "--json")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"cbai: warning: --trace {trace}: cannot write: No space left on device; the run goes on without its trace, "
        "and its result will be shown",
        f"cbai: error: --trace {trace}: cannot write: No space left on device"]
    assert json.loads(result.stdout)["runs"][0]["stopped"] == "solved"  # the result is shown all the same
    assert os.listdir(tmp_path) == ["t.csv"] and trace.read_text() == "old\n"


def test_trace_whose_disk_fills_gets_no_more_rows(cli, tmp_path, monkeypatch):
    from cbai_cli.run.solving import TraceWriter

    disk_with_room(monkeypatch, 5000)
    handed = []  # (rows, whether the file was still written) of every call
    extend = TraceWriter.extend
    monkeypatch.setattr(TraceWriter, "extend", lambda self, rows: (handed.append((len(rows), self.writing)),
                                                                   extend(self, rows)))
    result = cli("solve", IRRELEVANT, "--algo", "acol", "--trace", tmp_path / "t.csv", "--json")
    assert all(writing for _, writing in handed)
    assert sum(rows for rows, _ in handed) < json.loads(result.stdout)["runs"][0]["iterations"]


def test_trace_that_cannot_be_renamed_into_place_is_one_line_after_the_result(cli, tmp_path, monkeypatch):
    def folder_gone(source, target):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), source, target)

    monkeypatch.setattr("cbai_cli.io.atomic.os.replace", folder_gone)
    result = cli("solve", INSTANCE, "--algo", "acol", "--trace", tmp_path / "t.csv", "--json")
    assert one_error_line(result).endswith("t.csv: cannot write: No such file or directory")
    assert json.loads(result.stdout)["runs"] and os.listdir(tmp_path) == []


# compare --plot and --out


@needs_proc
def test_compare_plot_where_no_file_can_be_made_fails_before_any_run(cli, tmp_path):
    out = tmp_path / "runs.jsonl"
    result = cli(*COMPARE, "--out", out, "--plot", "/proc/figure.png")
    assert one_error_line(result) == "cbai: error: --plot /proc/figure.png: cannot write: No such file or directory"
    assert result.stdout == "" and not out.exists()


def test_compare_plot_onto_a_folder_fails_before_any_run(cli, tmp_path):
    (tmp_path / "figure.png").mkdir()
    result = cli(*COMPARE, "--plot", tmp_path / "figure.png")
    assert one_error_line(result).endswith("figure.png: is a folder") and result.stdout == ""


def test_compare_plot_failing_after_the_runs_prints_the_tables_first(cli, tmp_path, monkeypatch):
    monkeypatch.setattr("cbai_cli.io.atomic.write_atomic", full_disk)
    result = cli(*COMPARE, "--plot", tmp_path / "figure.png")
    assert one_error_line(result).endswith("figure.png: cannot write: No space left on device")
    assert "g-acol:det" in result.stdout and "median" in result.stdout


def test_compare_plot_failing_after_the_runs_prints_the_json_first(cli, tmp_path, monkeypatch):
    monkeypatch.setattr("cbai_cli.io.atomic.write_atomic", full_disk)
    result = cli(*COMPARE, "--json", "--plot", tmp_path / "figure.png")
    one_error_line(result)
    assert len(json.loads(result.stdout)["records"]) == 2


def test_compare_plot_failing_after_the_runs_keeps_the_stored_records(cli, tmp_path, monkeypatch):
    from cbai_cli.compare.store import read_store

    monkeypatch.setattr("cbai_cli.io.atomic.write_atomic", full_disk)
    out = tmp_path / "runs.sqlite"
    one_error_line(cli(*COMPARE, "--out", out, "--plot", tmp_path / "figure.png"))
    assert len(read_store(out).records) == 2


@needs_proc
def test_compare_out_where_no_file_can_be_made_fails_before_any_run(cli):
    result = cli(*COMPARE, "--out", "/proc/runs.sqlite")
    assert one_error_line(result) == "cbai: error: --out /proc/runs.sqlite: cannot write: No such file or directory"


# driver-arms -o


@needs_proc
def test_driver_arms_output_where_no_file_can_be_made_fails_before_the_cem(cli):
    started = time.monotonic()
    line = one_error_line(cli("driver-arms", "--n", "100000", "-o", "/proc/arms.npz"))
    assert line == "cbai: error: -o /proc/arms.npz: cannot write: No such file or directory"
    assert time.monotonic() - started < 30  # 100,000 CEMs would take hours


def test_driver_arms_output_into_a_missing_folder_fails_before_the_cem(cli, tmp_path):
    line = one_error_line(cli("driver-arms", "--n", "100000", "-o", tmp_path / "missing" / "arms.npz"))
    assert line.endswith(f"folder {tmp_path / 'missing'} does not exist")


def test_driver_arms_output_onto_a_folder_fails_before_the_cem(cli, tmp_path):
    (tmp_path / "arms.npz").mkdir()
    line = one_error_line(cli("driver-arms", "--n", "100000", "-o", tmp_path / "arms.npz"))
    assert line.endswith("arms.npz: is a folder")


def test_driver_arms_checks_every_scenario_file_before_the_cem(cli, tmp_path):
    (tmp_path / "arms-different-reward.npz").mkdir()
    line = one_error_line(cli("driver-arms", "--n", "100000", "--scenario", "all", "-o", tmp_path / "arms.npz"))
    assert line.endswith("arms-different-reward.npz: is a folder")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["arms-different-reward.npz"]


def test_driver_arms_output_failing_when_written_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setattr("cbai_cli.io.files.write_atomic", full_disk)
    line = one_error_line(cli("driver-arms", "--n", "2", "-o", tmp_path / "arms.npz"))
    assert line.endswith("arms.npz: cannot write: No space left on device")


@needs_proc
def test_driver_arms_picture_where_no_file_can_be_made_fails_before_drawing(cli, tmp_path):
    line = one_error_line(cli("driver-arms", "--show", tmp_path / "missing.npz", "--arm", "0", "-o", "/proc/x.png"))
    assert line == "cbai: error: -o /proc/x.png: cannot write: No such file or directory"


def test_driver_picture_failing_when_written_is_one_line(tmp_path, monkeypatch):
    import numpy as np

    from cbai_cli.driver.plot import plot_trajectories
    from cbai_cli.contracts.errors import CbaiError

    monkeypatch.setattr("cbai_cli.io.atomic.tempfile.mkstemp", full_disk)
    with pytest.raises(CbaiError, match=r"x\.png: cannot write: No space left on device$"):
        plot_trajectories(tmp_path / "x.png", np.zeros((3, 4)), np.zeros((0, 3, 4)))


# real processes: one line, no traceback


@needs_proc
@pytest.mark.parametrize("args", [
    ("solve", INSTANCE, "--algo", "acol", "--trace", "/proc/t.csv"),
    (*COMPARE, "--plot", "/proc/figure.png"),
    (*COMPARE, "--out", "/proc/runs.jsonl"),
    ("driver-arms", "--n", "2", "-o", "/proc/arms.npz"),
], ids=["solve-trace", "compare-plot", "compare-out", "driver-arms"])
def test_unwritable_output_in_a_real_process_is_one_line_without_traceback(cbai_process, args):
    result = cbai_process(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "/proc/" in result.stderr


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM as on POSIX")
def test_sigterm_during_a_traced_run_keeps_the_old_trace_and_no_temporary(tmp_path):
    # 2.9e9 observations at --subgaussian 1000: the run is still tracing when the signal comes
    trace = tmp_path / "t.csv"
    trace.write_text("old\n")
    process = subprocess.Popen([sys.executable, "-m", "cbai_cli", "solve", INSTANCE, "--algo", "acol",
                                "--subgaussian", "1000", "--trace", trace],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    prefix = temporary_prefix(trace, process.pid)  # the trace's temporary file, not check_writable's probe
    try:
        deadline = time.monotonic() + 120
        while not any(name.startswith(prefix) for name in os.listdir(tmp_path)):
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGTERM, stderr
    assert os.listdir(tmp_path) == ["t.csv"] and trace.read_text() == "old\n"


# generate -o: written by kinds.save → files.write_mapping → atomic.write_atomic


@needs_proc
def test_generate_where_no_file_can_be_made_is_one_line(cli):
    line = one_error_line(cli("generate", "regret-1d", "-o", "/proc/x.yaml"))
    assert "/proc/x.yaml" in line and "No such file or directory" in line


def test_generate_onto_a_folder_is_one_line(cli, tmp_path):
    (tmp_path / "x.yaml").mkdir()
    line = one_error_line(cli("generate", "regret-1d", "-o", tmp_path / "x.yaml"))
    assert "x.yaml" in line and "folder" in line
