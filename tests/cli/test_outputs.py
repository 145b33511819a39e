"""Output files that cannot be written end with one line naming the file and the reason,
exit code 2, before any long work starts; results already computed are shown first."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTANCE = REPO / "instances" / "regret-1d.yaml"
NO_PROC = not Path("/proc/self").is_dir()
needs_proc = pytest.mark.skipif(NO_PROC, reason="needs Linux's /proc (a folder where no file can be made)")
COMPARE = ("compare", "regret-1d", "--algos", "g-acol:tuned:beta=0.25", "--seeds", "2", "--jobs", "1", "--no-bounds")


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


def test_trace_failing_when_written_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setattr("cbai_cli.solving.write_atomic", full_disk)
    line = one_error_line(cli("solve", INSTANCE, "--algo", "acol", "--trace", tmp_path / "t.csv"))
    assert line.endswith("t.csv: cannot write: No space left on device")
