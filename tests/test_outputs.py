"""The shared output check (before long work) and the OS errors of writing, as one line."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from cbai_cli.contracts.errors import InstanceError, OptionError
from cbai_cli.io.outputs import check_writable, write_errors

NO_PROC = not Path("/proc/self").is_dir()
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def test_new_file_in_an_existing_folder_passes_and_leaves_nothing_behind(tmp_path):
    assert check_writable(tmp_path / "figure.png", "--plot") == tmp_path / "figure.png"
    assert list(tmp_path.iterdir()) == []


def test_existing_file_passes_and_is_left_unchanged(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("kept")
    check_writable(path)
    assert path.read_text() == "kept" and list(tmp_path.iterdir()) == [path]


def test_a_folder_is_refused(tmp_path):
    (tmp_path / "figure.png").mkdir()
    with pytest.raises(OptionError, match=r"^--plot .*figure\.png: is a folder$"):
        check_writable(tmp_path / "figure.png", "--plot")


def test_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(OptionError, match=r"^--out .*runs\.jsonl: folder .*missing does not exist$"):
        check_writable(tmp_path / "missing" / "runs.jsonl", "--out")


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    (tmp_path / "plain").write_text("")
    with pytest.raises(OptionError, match=r"plain/x\.png: .*plain is not a folder$"):
        check_writable(tmp_path / "plain" / "x.png")


@pytest.mark.skipif(NO_PROC, reason="needs Linux's /proc")
def test_a_folder_where_no_file_can_be_made_names_the_os_reason():
    with pytest.raises(OptionError, match=r"^-o /proc/x\.yaml: cannot write: No such file or directory$"):
        check_writable("/proc/x.yaml", "-o")


@pytest.mark.skipif(ROOT, reason="root can write read-only folders")
def test_a_read_only_folder_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(OptionError, match="cannot write: Permission denied"):
            check_writable(folder / "x.png")
    finally:
        folder.chmod(0o755)


def test_without_an_option_the_message_starts_with_the_path(tmp_path):
    with pytest.raises(OptionError, match=r"^\S*missing/x\.npz: folder"):
        check_writable(tmp_path / "missing" / "x.npz")


def test_a_full_disk_while_writing_is_one_line_naming_the_file(tmp_path):
    with pytest.raises(OptionError, match=r"^--trace .*t\.csv: cannot write: No space left on device$"):
        with write_errors(tmp_path / "t.csv", "--trace"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_failing_temporary_file_beside_the_target_is_one_line(tmp_path):
    temporary = tmp_path / ".t.csv.abc.tmp"
    with pytest.raises(OptionError, match="cannot write: No such file or directory"):
        with write_errors(tmp_path / "t.csv"):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(temporary))


def test_renaming_onto_a_folder_says_it_is_a_folder(tmp_path):
    (tmp_path / "t.csv").mkdir()
    (tmp_path / ".t.csv.x.tmp").write_text("new")
    with pytest.raises(OptionError, match=r"t\.csv: is a folder$"):
        with write_errors(tmp_path / "t.csv"):
            os.replace(tmp_path / ".t.csv.x.tmp", tmp_path / "t.csv")


def test_os_errors_about_other_files_are_left_alone(tmp_path):
    with pytest.raises(FileNotFoundError):
        with write_errors(tmp_path / "out" / "t.csv"):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "/somewhere/else/input.npy")


def test_user_errors_pass_unchanged(tmp_path):
    with pytest.raises(InstanceError, match="^as it was$"):
        with write_errors(tmp_path / "t.csv", "--trace"):
            raise InstanceError("as it was")


@pytest.mark.parametrize(("typed", "message"), [("", "an empty path names no file"),
                                                ("runs.jsonl/", "ends with a slash, so names a folder")])
def test_an_output_typed_empty_or_with_a_trailing_slash_is_refused(tmp_path, monkeypatch, typed, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OptionError, match=message):
        check_writable(typed, "-o")
    assert list(tmp_path.iterdir()) == []


def test_generate_refuses_an_output_with_a_trailing_slash(tmp_path):
    from typer.testing import CliRunner

    from cbai_cli.cli.app import app

    result = CliRunner().invoke(app, ["generate", "regret-1d", "-o", f"{tmp_path}/x.yaml/"])
    assert result.exit_code == 2 and "ends with a slash" in result.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_a_device_as_an_output_is_refused_not_replaced(tmp_path):
    """The atomic write renames a finished file over its target: over /dev/null that would
    replace the device for everyone when run as root."""
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.io.outputs import check_writable

    with pytest.raises(OptionError, match="not a regular file"):
        check_writable("/dev/null", "--trace")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(OptionError, match="not a regular file"):
        check_writable(str(pipe), "-o")
