"""Reading and writing mappings: strict YAML, NPZ without pickles, atomic writes that leave
no temporary file behind (Ctrl-C, SIGTERM, a killed writer), and one-line errors."""

from __future__ import annotations

import errno
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.contracts.errors import InstanceError
from cbai_cli.io.files import instance_errors, read_mapping, read_npy, write_mapping
from cbai_cli.io.atomic import STALE_TEMPORARY_AGE_S, atomic_file, remove_stale_temporaries, temporary_prefix, write_atomic
from cbai_cli.contracts.validation import FieldError

POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="signals and PIDs as on POSIX")


def read_yaml(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    return read_mapping(path)


def yaml_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(InstanceError) as error:
        read_yaml(tmp_path, text)
    message = str(error.value)
    assert "\n" not in message
    return message.replace(str(tmp_path / "f.yaml"), "f.yaml")


def dead_pid() -> int:
    """The PID of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def temporaries(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


# ---------------------------------------------------------------- YAML


def test_a_repeated_top_level_key_is_an_error_naming_key_and_lines(tmp_path):
    message = yaml_error(tmp_path, "threshold: 1.0\narms: [[1.0]]\nthreshold: 2.0\n")
    assert message == "f.yaml: threshold: duplicate key (lines 1 and 3); each key may appear only once"


def test_a_repeated_key_in_a_nested_flow_mapping_is_an_error(tmp_path):
    message = yaml_error(tmp_path, "noise: {kind: gaussian, sigma: 1, sigma: 2}\n")
    assert message == "f.yaml: sigma: duplicate key (line 1); each key may appear only once"


def test_a_merge_key_may_be_overridden(tmp_path):
    mapping = read_yaml(tmp_path, "base: &b {a: 1, b: 2}\nother:\n  <<: *b\n  a: 3\n")
    assert mapping["other"] == {"a": 3, "b": 2}


def test_distinct_keys_read_as_before(tmp_path):
    assert read_yaml(tmp_path, "a: 1\nb: {c: 2, d: [1, 2]}\n") == {"a": 1, "b": {"c": 2, "d": [1, 2]}}


def test_a_duplicate_key_with_control_characters_is_escaped(tmp_path):
    message = yaml_error(tmp_path, '"a\\e[31m": 1\n"a\\e[31m": 2\n')
    assert "\x1b" not in message and "a\\x1b[31m: duplicate key" in message


def test_an_impossible_date_is_one_line_with_its_line(tmp_path):
    message = yaml_error(tmp_path, "a: 1\nmeta: {made: 2020-13-45}\n")
    assert message == "f.yaml: not valid YAML (line 2): invalid date '2020-13-45': month must be in 1..12"


def test_a_bad_explicit_tag_is_one_line(tmp_path):
    assert yaml_error(tmp_path, "a: !!int abc\n").startswith("f.yaml: not valid YAML: ")


def test_deep_nesting_is_one_line(tmp_path):
    assert yaml_error(tmp_path, "a: " + "[" * 20000 + "]" * 20000 + "\n") == "f.yaml: not valid YAML: nested too deeply"


def test_a_sequence_that_contains_itself_through_an_alias_is_one_line(tmp_path):
    assert yaml_error(tmp_path, "a: 1\narms: &x [[1.0], *x]\n") == (
        "f.yaml: not valid YAML (line 2): an alias refers to a value that contains it")


def test_a_mapping_that_contains_itself_through_an_alias_is_one_line(tmp_path):
    assert yaml_error(tmp_path, "meta: &m {a: 1, b: {c: *m}}\n") == (
        "f.yaml: not valid YAML (line 1): an alias refers to a value that contains it")


def test_aliases_that_expand_a_document_past_the_limit_are_refused_before_it_is_built(tmp_path):
    # l_i has 1 + 10·|l_(i−1)| nodes, |l0| = 11: Σ_(i≤6) |l_i| = 12,345,677, plus the 7 keys, the two
    # mappings and "meta"; written: 10 scalars, 7 sequences, 7 keys, 2 mappings and "meta"
    lines = ["meta:", "  l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 7)]
    message = yaml_error(tmp_path, "\n".join(lines) + "\n")
    assert message.startswith("f.yaml: not valid YAML (line 1): its aliases expand it to 12,345,687 values, "
                              "more than 1,000,000 beyond the 27 written")


def test_aliases_that_share_a_value_within_the_limit_read_as_before(tmp_path):
    text = "noise: &n {kind: gaussian, sigma: 1.0}\nrow: &r [1.0, 2.0]\narms: [*r, *r, *r]\nmeta: {noise: *n}\n"
    mapping = read_yaml(tmp_path, text)
    assert mapping["arms"] == [[1.0, 2.0]] * 3 and mapping["meta"]["noise"] == mapping["noise"]


def test_python_tags_are_refused(tmp_path):
    assert "not valid YAML" in yaml_error(tmp_path, "a: !!python/object/apply:os.system ['true']\n")


def test_stdin_that_cannot_be_read_is_one_line(monkeypatch):
    class Broken(io.StringIO):
        def read(self, *args):
            raise OSError(errno.EISDIR, "Is a directory")

    monkeypatch.setattr("sys.stdin", Broken())
    with pytest.raises(InstanceError, match=r"^<stdin>: cannot read: Is a directory$"):
        read_mapping("-")


# ---------------------------------------------------------------- NPZ


def npz_error(path: Path) -> str:
    with pytest.raises(InstanceError) as error:
        read_mapping(path)
    message = str(error.value)
    assert "\n" not in message and "allow_pickle" not in message and "trust" not in message
    return message.replace(str(path), "F")


def test_a_text_file_named_npz_is_not_a_valid_npz_file(tmp_path):
    path = tmp_path / "x.npz"
    path.write_text("garbage")
    assert npz_error(path) == "F: not a valid .npz file (not a zip archive)"


def test_a_single_npy_array_named_npz_is_not_a_valid_npz_file(tmp_path):
    path = tmp_path / "x.npz"
    with open(path, "wb") as stream:
        np.save(stream, np.ones(3))
    assert npz_error(path) == "F: not a valid .npz file (a single .npy array, not an archive of named fields)"


def test_a_truncated_npz_file_is_not_a_valid_npz_file(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, arms=np.ones((50, 4)), threshold=np.array(1.0))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert npz_error(path).startswith("F: not a valid .npz file (")


def test_a_corrupt_member_is_not_a_valid_npz_file(tmp_path):
    path = tmp_path / "x.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("arms.npy", b"\x93NUMPY\x01\x00garbage")
    assert npz_error(path).startswith("F: not a valid .npz file (field 'arms': ")


def huge_header(shape: tuple[int, ...]) -> bytes:
    """A .npy header declaring float64 ``shape``, followed by 64 bytes of data."""
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return stream.getvalue() + bytes(64)


def test_an_npz_member_declaring_more_than_it_holds_is_refused_before_allocating(tmp_path):
    path = tmp_path / "x.npz"
    with zipfile.ZipFile(path, "w") as archive:  # numpy would allocate 72.8 TiB first
        archive.writestr("arms.npy", huge_header((10**7, 10**6)))
    assert npz_error(path) == ("F: not a valid .npz file (field 'arms': its header declares a 10000000×1000000 array "
                               "of 80,000,000,000,000 bytes but only 64 bytes follow it)")


def test_npz_members_whose_loading_would_pass_the_memory_limit_are_refused_by_the_directory(tmp_path, monkeypatch):
    path = tmp_path / "x.npz"
    np.savez_compressed(path, arms=np.ones((5, 4)))  # 128 bytes of .npy header and 160 of data
    monkeypatch.setenv("CBAI_MEMORY_LIMIT", str(863))
    assert npz_error(path) == ("F: its arrays decompress to 288 bytes, and loading them holds about 864 bytes, more "
                               "than the limit of 863 bytes (CBAI_MEMORY_LIMIT raises it); or store fewer arms or dimensions")
    monkeypatch.setenv("CBAI_MEMORY_LIMIT", str(864))
    assert read_mapping(path)["arms"].shape == (5, 4)


def test_a_compressed_npz_file_reads_back(tmp_path):
    path = tmp_path / "x.npz"
    np.savez_compressed(path, arms=np.arange(6.0).reshape(3, 2), threshold=np.array(0.5))
    mapping = read_mapping(path)
    assert mapping["arms"].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]] and mapping["threshold"] == 0.5


def test_an_npz_array_of_python_objects_names_the_field(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, arms=np.array([[1.0, None]], dtype=object))
    assert npz_error(path) == ("F: arms: must hold real numbers only, got an array of Python objects "
                               "(cbai never loads pickled data)")


def test_npz_scalars_strings_and_arrays_read_back(tmp_path):
    path = tmp_path / "x.npz"
    write_mapping({"name": "n", "threshold": 0.5, "arms": [[1.0, 2.0]], "meta": {"a": [1]}}, path)
    mapping = read_mapping(path)
    assert mapping["name"] == "n" and mapping["threshold"] == 0.5 and mapping["meta"] == {"a": [1]}
    assert mapping["arms"].tolist() == [[1.0, 2.0]]


# ---------------------------------------------------------------- NPY


def npy_error(path: Path) -> str:
    with pytest.raises(InstanceError) as error:
        read_npy(path)
    message = str(error.value)
    assert "\n" not in message and "allow_pickle" not in message and "trust" not in message
    return message.replace(str(path), "F")


def test_read_npy_reads_an_array(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(6.0).reshape(2, 3))
    assert read_npy(tmp_path / "a.npy").tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_a_text_file_named_npy_is_not_a_valid_npy_file(tmp_path):
    (tmp_path / "a.npy").write_text("garbage")
    assert npy_error(tmp_path / "a.npy") == "F: not a valid .npy file (no .npy header)"


def test_an_npy_array_of_python_objects_is_refused_without_pickle_advice(tmp_path):
    np.save(tmp_path / "a.npy", np.array([1, None], dtype=object))
    assert npy_error(tmp_path / "a.npy") == ("F: not a valid .npy file (an array of Python objects; "
                                             "cbai never loads pickled data)")


def test_an_npy_file_declaring_more_than_it_holds_is_refused_before_allocating(tmp_path):
    (tmp_path / "a.npy").write_bytes(huge_header((10**7, 10**6)))
    assert npy_error(tmp_path / "a.npy") == ("F: not a valid .npy file (its header declares a 10000000×1000000 array "
                                             "of 80,000,000,000,000 bytes but only 64 bytes follow it)")


def test_a_truncated_npy_file_is_not_a_valid_npy_file(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((20, 30)))
    data = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "a.npy").write_bytes(data[:300])
    assert npy_error(tmp_path / "a.npy").startswith("F: not a valid .npy file (")
    (tmp_path / "a.npy").write_bytes(data[:60])
    assert npy_error(tmp_path / "a.npy").startswith("F: not a valid .npy file (")


def test_a_missing_npy_file_is_one_line(tmp_path):
    assert npy_error(tmp_path / "a.npy") == "F: no such file"


# ---------------------------------------------------------------- errors name the file, safely


def test_instance_errors_escapes_control_characters():
    with pytest.raises(InstanceError) as error:
        with instance_errors("f\x1b[2J.yaml"):
            raise FieldError("na\rme", "bad")
    assert str(error.value) == "f\\x1b[2J.yaml: na\\rme: bad"


def test_a_missing_file_with_control_characters_in_its_name_is_escaped(tmp_path):
    with pytest.raises(InstanceError) as error:
        read_mapping(tmp_path / "a\x1b[31m.yaml")
    assert "\x1b" not in str(error.value) and str(error.value).endswith("a\\x1b[31m.yaml: no such file")


def test_an_unknown_file_type_with_control_characters_is_escaped(tmp_path):
    with pytest.raises(InstanceError) as error:
        read_mapping(tmp_path / "a\x1b[31m.txt")
    assert "\x1b" not in str(error.value) and "a\\x1b[31m.txt: unknown file type '.txt'" in str(error.value)


# ---------------------------------------------------------------- atomic writes


def test_write_atomic_names_its_temporary_after_target_and_process(tmp_path):
    seen = []
    write_atomic(tmp_path / "x.yaml", lambda stream: seen.extend(temporaries(tmp_path)))
    assert len(seen) == 1 and seen[0].startswith(temporary_prefix(tmp_path / "x.yaml"))
    assert temporary_prefix(tmp_path / "x.yaml").startswith(f".x.yaml.{os.getpid()}-")
    assert temporaries(tmp_path) == []


def test_an_exception_in_the_writer_removes_the_temporary(tmp_path):
    def fail(stream):
        stream.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "x.yaml", fail)
    assert os.listdir(tmp_path) == []


def test_an_os_error_while_writing_is_one_line_and_removes_the_temporary(tmp_path):
    def full(stream):
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(InstanceError, match=r"x\.yaml: cannot write: No space left on device$"):
        write_atomic(tmp_path / "x.yaml", full)
    assert os.listdir(tmp_path) == []


@POSIX_ONLY
def test_write_atomic_removes_a_stale_temporary_of_a_dead_writer(tmp_path):
    target = tmp_path / "x.npz"
    stale = tmp_path / f"{temporary_prefix(target, dead_pid())}abcd_123.tmp"
    stale.write_bytes(b"half")
    write_atomic(target, lambda stream: stream.write(b"new"))
    assert not stale.exists() and target.read_bytes() == b"new"


@POSIX_ONLY
def test_a_temporary_of_a_running_writer_is_kept(tmp_path):
    target = tmp_path / "x.npz"
    running = tmp_path / f"{temporary_prefix(target, os.getppid())}abcd_123.tmp"
    running.write_bytes(b"in progress")
    write_atomic(target, lambda stream: stream.write(b"new"))
    assert running.exists()


def test_a_temporary_older_than_the_limit_is_removed_whoever_wrote_it(tmp_path):
    target = tmp_path / "x.npz"
    old = tmp_path / f".x.npz.{os.getppid()}-0123abcd.abcd_123.tmp"
    old.write_bytes(b"old")
    past = time.time() - STALE_TEMPORARY_AGE_S - 60
    os.utime(old, (past, past))
    assert remove_stale_temporaries(target) == [old]


@POSIX_ONLY
def test_stale_temporaries_of_other_targets_and_other_files_are_kept(tmp_path):
    pid = dead_pid()
    keep = [tmp_path / f"{temporary_prefix(tmp_path / 'y.npz', pid)}abcd_123.tmp",  # another target
            tmp_path / f".x.npz.{pid}.abcd_123.tmp",  # not the writer's pattern
            tmp_path / "x.npz.tmp",
            tmp_path / f"{temporary_prefix(tmp_path / 'x.npz', pid)}abcd_123.tmp.bak"]
    for path in keep:
        path.write_bytes(b"keep")
    assert remove_stale_temporaries(tmp_path / "x.npz") == []
    assert all(path.exists() for path in keep)


@POSIX_ONLY
def test_a_stale_temporary_that_is_a_folder_is_kept(tmp_path):
    folder = tmp_path / f"{temporary_prefix(tmp_path / 'x.npz', dead_pid())}abcd_123.tmp"
    folder.mkdir()
    assert remove_stale_temporaries(tmp_path / "x.npz") == [] and folder.is_dir()


SLOW_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from cbai_cli.io.atomic import write_atomic

    target, ready = Path(sys.argv[1]), Path(sys.argv[2])

    def slow(stream):
        stream.write(b"half of a file")
        stream.flush()
        ready.write_text("writing")
        time.sleep(60)
        stream.write(b"the rest")

    write_atomic(target, slow)
""")


def start_slow_writer(tmp_path: Path, *setup: str) -> tuple[subprocess.Popen, Path]:
    """A process writing ``tmp_path/out/x.npz`` that stops halfway; returns it once its
    temporary file exists."""
    out = tmp_path / "out"
    out.mkdir()
    ready = tmp_path / "ready"
    script = "\n".join(setup) + SLOW_WRITER
    process = subprocess.Popen([sys.executable, "-c", script, str(out / "x.npz"), str(ready)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the writer did not start"
        time.sleep(0.05)
    assert len(temporaries(out)) == 1
    return process, out


@POSIX_ONLY
def test_sigterm_during_a_write_removes_the_temporary_and_ends_the_process(tmp_path):
    process, out = start_slow_writer(tmp_path)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGTERM, stderr
    assert stderr == "" and os.listdir(out) == []


@POSIX_ONLY
def test_sigterm_with_a_handler_of_the_caller_is_left_to_it(tmp_path):
    # compare installs its own SIGTERM handler, which raises: the temporary goes, and the
    # caller decides how to end.
    process, out = start_slow_writer(
        tmp_path, "import signal, sys",
        "def handler(signum, frame): raise KeyboardInterrupt",
        "signal.signal(signal.SIGTERM, handler)",
        "sys.excepthook = lambda *args: sys.exit(7)")
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    assert process.returncode == 7 and os.listdir(out) == []


@POSIX_ONLY
def test_sigint_during_a_write_removes_the_temporary(tmp_path):
    process, out = start_slow_writer(tmp_path)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    assert process.returncode != 0 and os.listdir(out) == []


@POSIX_ONLY
def test_sigkill_leaves_a_temporary_that_the_next_write_removes(tmp_path):
    process, out = start_slow_writer(tmp_path)
    process.kill()
    process.communicate(timeout=60)
    assert len(temporaries(out)) == 1
    write_atomic(out / "x.npz", lambda stream: stream.write(b"complete"))
    assert os.listdir(out) == ["x.npz"] and (out / "x.npz").read_bytes() == b"complete"


FINALISER_SIGTERM = textwrap.dedent("""
    import gc, os, signal, sys
    from pathlib import Path
    from cbai_cli.io.atomic import atomic_file

    class Finalised:
        def __del__(self):  # Python runs the handler here, where a raised exception is dropped
            os.kill(os.getpid(), signal.SIGTERM)

    with atomic_file(Path(sys.argv[1]) / "t.csv") as target:
        target.stream.write(b"piece")
        Finalised()
        gc.collect()
        print("survived", flush=True)
""")


def assert_terminated_cleanly(script: str, folder: Path) -> None:
    """Run ``script`` on ``folder``: SIGTERM ends it (status −SIGTERM) before it prints, and
    no temporary file is left."""
    process = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True,
                             timeout=300)
    assert process.returncode == -signal.SIGTERM, process.stderr
    assert process.stdout == "" and os.listdir(folder) == []


@POSIX_ONLY
def test_sigterm_handled_inside_a_finaliser_still_ends_the_process_and_removes_the_temporary(tmp_path):
    assert_terminated_cleanly(FINALISER_SIGTERM, tmp_path)


NESTED_SIGTERM = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from cbai_cli.io.atomic import atomic_file

    folder = Path(sys.argv[1])
    with atomic_file(folder / "outer.csv"), atomic_file(folder / "inner.csv"):
        os.kill(os.getpid(), signal.SIGTERM)
        print("survived", flush=True)
""")


@POSIX_ONLY
def test_sigterm_during_nested_writes_removes_both_temporaries(tmp_path):
    assert_terminated_cleanly(NESTED_SIGTERM, tmp_path)


def test_the_sigterm_handler_is_restored_after_a_write(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    write_atomic(tmp_path / "x.yaml", lambda stream: stream.write(b"a: 1\n"))
    assert signal.getsignal(signal.SIGTERM) is before


def test_atomic_file_replaces_the_target_only_at_commit(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old\n")
    with atomic_file(target) as written:
        written.stream.write(b"first piece\n")
        written.stream.flush()
        written.stream.write(b"second piece\n")
        assert target.read_text() == "old\n"
        written.commit()
    assert target.read_text() == "first piece\nsecond piece\n" and os.listdir(tmp_path) == ["t.csv"]


def test_atomic_file_left_without_commit_keeps_the_old_file(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old\n")
    with atomic_file(target) as written:
        written.stream.write(b"half")
    assert target.read_text() == "old\n" and os.listdir(tmp_path) == ["t.csv"]


def test_atomic_file_left_by_an_exception_removes_the_temporary(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_file(tmp_path / "t.csv") as written:
            written.stream.write(b"half")
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_atomic_file_discarded_early_frees_its_temporary_at_once(tmp_path):
    with atomic_file(tmp_path / "t.csv") as written:
        written.stream.write(b"half")
        written.discard()
        assert os.listdir(tmp_path) == []
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- stdout


@POSIX_ONLY
def test_a_closed_stdout_is_one_line():
    script = textwrap.dedent("""
        import sys
        from cbai_cli.contracts.errors import CbaiError
        from cbai_cli.io.files import write_mapping
        try:
            for _ in range(200):
                write_mapping({"a": list(range(100000))}, "-")
        except CbaiError as error:
            print(error, file=sys.stderr)
            sys.exit(2)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.read(10)
    process.stdout.close()
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    assert process.returncode == 2
    assert stderr == "-: cannot write: standard output was closed by its reader\n"


def test_a_pipe_named_like_an_instance_is_refused_before_it_is_read(tmp_path):
    pipe = tmp_path / "instance.yaml"
    os.mkfifo(pipe)
    with pytest.raises(InstanceError, match="not a regular file"):
        read_mapping(pipe)


def test_a_device_behind_a_link_is_refused_before_it_is_read(tmp_path):
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    with pytest.raises(InstanceError, match="not a regular file"):
        read_mapping(link)


def test_yaml_on_stdin_longer_than_any_instance_is_refused(monkeypatch):
    from cbai_cli.io import files as fileio

    monkeypatch.setattr(fileio, "YAML_CHARACTER_LIMIT", 100)
    monkeypatch.setattr(sys, "stdin", io.StringIO("\0" * 10_000))
    with pytest.raises(InstanceError, match="more than 100 characters of YAML"):
        read_mapping("-")


def test_an_atomic_write_to_a_link_replaces_the_file_it_names_and_keeps_the_link(tmp_path):
    target = tmp_path / "target.yaml"
    target.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to("target.yaml")
    write_atomic(link, lambda stream: stream.write(b"new\n"))
    assert link.is_symlink() and target.read_text() == "new\n"


def test_a_link_loop_is_not_called_a_missing_file(tmp_path):
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    with pytest.raises(InstanceError, match="a link to nothing"):
        read_mapping(tmp_path / "a.yaml")


def test_a_number_in_exponent_notation_without_a_dot_is_a_number():
    from cbai_cli.io.files import load_yaml

    assert load_yaml("a: [1e-3, 2E+10, 1.5e3, -3e2]\nb: e5\nc: 1e\n", "t") == {
        "a": [0.001, 2e10, 1500.0, -300.0], "b": "e5", "c": "1e"}


def test_integers_are_read_as_yaml_1_2_reads_them():
    """010 is ten (YAML 1.1 made it eight), 1:30 and 0b11 are text (1.1: ninety and three),
    0o and 0x are octal and hexadecimal, underscores group digits."""
    from cbai_cli.io.files import load_yaml

    assert load_yaml("a: 010\nb: 1:30\nc: 0b11\nd: 0o10\ne: 0x1F\nf: -1_000\ng: +7\n", "t") == {
        "a": 10, "b": "1:30", "c": "0b11", "d": 8, "e": 31, "f": -1000, "g": 7}


def test_a_key_is_never_a_boolean():
    """YAML 1.1 reads a plain yes, no, on, off, true or false as a boolean; as a key it is a
    name (a study's answers {yes: feasible, no: infeasible}); values keep YAML's booleans."""
    from cbai_cli.io.files import load_yaml

    assert load_yaml("a: {yes: feasible, No: infeasible, on: 1, OFF: 2, true: 3}\nb: [yes, off, true]\n", "t") == {
        "a": {"yes": "feasible", "No": "infeasible", "on": 1, "OFF": 2, "true": 3}, "b": [True, False, True]}


def test_a_threshold_written_with_a_leading_zero_is_read_in_decimal(tmp_path):
    from cbai_cli.kinds.cbai.instance import load

    path = tmp_path / "t.yaml"
    path.write_text("schema_version: 1\nkind: cbai\nname: t\narms: [[1.0, 0.0], [0.0, 1.0]]\nreward: [1.0, 2.0]\n"
                    "constraint: [5.0, 20.0]\nthreshold: 010\nnoise: {kind: gaussian, sigma: 0.1}\n")
    assert load(path).threshold == 10.0


def test_yaml_from_a_closed_standard_input_is_one_line(monkeypatch):
    from cbai_cli.io.files import read_mapping

    monkeypatch.setattr("sys.stdin", None)  # what Python sets when started with `<&-`
    with pytest.raises(InstanceError, match=r"^<stdin>: standard input is closed, so there is nothing to read$"):
        read_mapping("-")
