"""Standard output that fails (a full disk, a reader that went away) is one line."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys

import pytest

from cbai_cli.contracts.errors import OutputError
from cbai_cli.io.stdout import GuardedStdout


class FailingStream(io.StringIO):
    """A text stream whose writes and flushes raise ``error``."""

    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def write(self, text: str) -> int:
        raise self.error

    def flush(self) -> None:
        raise self.error


def test_a_full_disk_under_stdout_is_an_output_error_naming_it():
    guarded = GuardedStdout(FailingStream(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))))
    with pytest.raises(OutputError, match="^-: cannot write to standard output: No space left on device$"):
        guarded.write("a table")


def test_a_reader_that_went_away_is_an_output_error_saying_so():
    guarded = GuardedStdout(FailingStream(BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))))
    with pytest.raises(OutputError, match="^-: cannot write: standard output was closed by its reader$"):
        guarded.flush()


def test_a_guarded_stream_passes_writes_and_other_attributes_through():
    stream = io.StringIO()
    guarded = GuardedStdout(stream)
    guarded.write("a table\n")
    guarded.flush()
    assert stream.getvalue() == "a table\n" and guarded.getvalue() == "a table\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("arguments", [("algorithms",), ("--help",), ("generate", "regret-1d"), ("bound", "--json", "{instance}")])
def test_a_command_whose_stdout_is_full_ends_with_one_line_and_exit_code_2(arguments, tmp_path):
    instance = tmp_path / "regret-1d.yaml"
    subprocess.run([sys.executable, "-m", "cbai_cli", "generate", "regret-1d", "-o", str(instance)], check=True)
    with open("/dev/full", "w") as full:
        process = subprocess.run([sys.executable, "-m", "cbai_cli",
                                  *(argument.format(instance=instance) for argument in arguments)],
                                 stdout=full, stderr=subprocess.PIPE, text=True)
    assert process.returncode == 2
    assert process.stderr == "cbai: error: -: cannot write to standard output: No space left on device\n"


def test_a_closed_stdout_is_an_output_error_and_flushing_it_is_nothing():
    guarded = GuardedStdout(None)  # what sys.stdout is in a process started with `>&-`
    guarded.flush()
    with pytest.raises(OutputError, match="standard output is closed"):
        guarded.write("x")


def test_a_command_started_with_stdout_closed_ends_with_one_line_and_exit_code_2():
    process = subprocess.run(f"{sys.executable} -m cbai_cli algorithms >&-", shell=True, stderr=subprocess.PIPE,
                             text=True)
    assert process.returncode == 2
    assert process.stderr == "cbai: error: -: cannot write: standard output is closed\n"


def test_write_fully_reports_what_a_buffered_write_lost_after_a_partial_write():
    # a pipe whose reader takes 100 bytes and leaves: the rest must fail, not vanish
    from cbai_cli.io.stdout import write_fully

    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    try:
        os.close(read_end)
        with pytest.raises(BrokenPipeError):
            write_fully(stream, "x" * 200_000)
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _cbai(*arguments, **popen):
    return subprocess.Popen([sys.executable, "-m", "cbai_cli", *arguments], **popen)


def test_a_reader_that_goes_away_ends_the_command_quietly_as_unix_tools_do():
    process = _cbai("generate", "random", "--d", "50", "--n", "3000", "--seed", "1", stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE)
    process.stdout.read(100)
    process.stdout.close()
    stderr = process.stderr.read()
    process.wait(timeout=120)
    assert (process.returncode, stderr) == (141, b"")


@pytest.mark.parametrize("arguments", [
    ("generate", "random", "--d", "50", "--n", "500", "--seed", "1"),
    ("algorithms", "--json"),
    ("solve", "instances/regret-1d.yaml", "--algo", "g-acol", "--regime", "tuned", "--beta", "0.25", "--runs", "700",
     "--json"),
])
def test_output_that_fills_the_disk_partway_is_one_line_and_exit_code_2(small_disk, arguments):
    # the first writes succeed, a later one finds the disk full: never a truncated file and exit 0
    (small_disk / "filler").write_bytes(b"\0" * 50_000)  # about 12 KiB left
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(small_disk / "out", "w") as out:
        process = _cbai(*arguments, stdout=out, stderr=subprocess.PIPE, cwd=root)
        stderr = process.communicate(timeout=300)[1].decode()
    assert process.returncode == 2
    assert stderr == "cbai: error: -: cannot write to standard output: No space left on device\n"
