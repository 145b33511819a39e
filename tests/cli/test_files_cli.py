"""Instance files through the command line: every mistake in a file is one line
``cbai: error: FILE: FIELD: RULE`` with exit code 2, and writes leave no temporary file."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from cbai_cli.io.atomic import temporary_prefix

POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="signals and PIDs as on POSIX")


def temporaries(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


# ---------------------------------------------------------------- temporary files

# `cbai generate` in a real process whose write stops after the data are in the temporary
# file (fsync waits), so that the signal arrives while the temporary exists.
STALLED_CLI = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path

    ready = Path(sys.argv.pop(1))

    def stalled_fsync(fd):
        ready.write_text("writing")
        time.sleep(60)

    os.fsync = stalled_fsync
    from cbai_cli.cli.app import main
    sys.argv[0] = "cbai"
    main()
""")


@POSIX_ONLY
@pytest.mark.parametrize("suffix", ["npz", "yaml"])
def test_sigterm_while_generate_writes_leaves_no_temporary_file(tmp_path, suffix):
    out, ready = tmp_path / "out", tmp_path / "ready"
    out.mkdir()
    process = subprocess.Popen([sys.executable, "-c", STALLED_CLI, str(ready), "generate", "unit-sphere", "--d", "20",
                                "--n", "200", "-o", str(out / f"X.{suffix}")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "generate did not reach its write"
        time.sleep(0.05)
    assert [name.startswith(f".X.{suffix}.") for name in temporaries(out)] == [True]
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGTERM, stderr
    assert os.listdir(out) == []


@POSIX_ONLY
def test_generate_removes_a_stale_temporary_left_by_a_killed_writer(tmp_path, cbai_process):
    target = tmp_path / "X.npz"
    killed = subprocess.Popen([sys.executable, "-c", "pass"])
    killed.wait()
    stale = tmp_path / f"{temporary_prefix(target, killed.pid)}k1ll3d_x.tmp"
    stale.write_bytes(b"half a file")
    process = cbai_process("generate", "unit-sphere", "--d", "3", "--n", "5", "-o", target)
    assert process.returncode == 0, process.stderr
    assert sorted(os.listdir(tmp_path)) == ["X.npz"]


def test_generate_into_a_missing_folder_is_one_line(tmp_path, cli):
    result = cli("generate", "regret-1d", "-o", tmp_path / "missing" / "x.yaml")
    assert result.exit_code == 2
    assert result.stderr == f"cbai: error: -o {tmp_path / 'missing' / 'x.yaml'}: folder {tmp_path / 'missing'} does not exist\n"


# ---------------------------------------------------------------- cbai fields

CBAI = ("kind: cbai\narms: [[1.0, 0.0], [0.0, 1.0]]\nreward: [1.0, 2.0]\nconstraint: [0.6, 0.8]\nthreshold: 0.7\n"
        "noise: {kind: gaussian, sigma: 0.1}\n")


def bad_file(tmp_path, text: str, name: str = "f.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def one_line_error(cli, path, *command: str) -> str:
    """Run ``cbai bound PATH`` (or COMMAND PATH …); it must fail with one line and exit code 2."""
    result = cli(*(command or ("bound",)), path, *(("--algo", "acol") if command == ("solve",) else ()))
    assert result.exit_code == 2, result.stdout
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("cbai: error: "), result.stderr
    return result.stderr[len("cbai: error: "):].rstrip("\n").replace(str(path), "FILE")


def test_the_example_file_is_valid(tmp_path, cli):
    assert cli("bound", bad_file(tmp_path, CBAI)).exit_code == 0


def test_a_cbai_file_without_threshold_is_an_error(tmp_path, cli):
    path = bad_file(tmp_path, CBAI.replace("threshold: 0.7\n", ""))
    assert one_line_error(cli, path, "solve") == "FILE: threshold: required field is missing"


def test_a_constraint_norm_bound_below_the_norm_of_phi_is_an_error(tmp_path, cli):
    path = bad_file(tmp_path, CBAI + "constraint_norm_bound: 0.5\n")
    assert one_line_error(cli, path, "solve") == "FILE: constraint_norm_bound: 0.5 is below ‖φ‖ = 1"


# ---------------------------------------------------------------- strings from files reach no terminal raw


def test_a_name_with_an_ansi_escape_is_refused(tmp_path, cli):
    path = bad_file(tmp_path, CBAI + 'name: "evil\\e[2J\\e[31m"\n')
    message = one_line_error(cli, path)
    assert message == "FILE: name: must not contain control characters, got 'evil\\x1b[2J\\x1b[31m'"


def test_a_name_with_a_carriage_return_is_refused_in_a_safe_file(tmp_path, cli):
    path = tmp_path / "a.yaml"
    assert cli("generate", "amani-a", "-o", path).exit_code == 0
    path.write_text(re.sub(r"(?m)^name: .*$", 'name: "amani\\\\rfake"', path.read_text()))
    assert one_line_error(cli, path) == "FILE: name: must not contain control characters, got 'amani\\rfake'"


def test_an_unknown_key_with_control_characters_is_printed_escaped(tmp_path, cli):
    path = bad_file(tmp_path, CBAI + '"\\e]0;title\\a": 1\n')
    message = one_line_error(cli, path)
    assert message.startswith("FILE: unknown field(s) \\x1b]0;title\\x07; valid fields: ")


def test_a_file_name_with_control_characters_is_printed_escaped(tmp_path, cli):
    path = bad_file(tmp_path, CBAI.replace("threshold: 0.7\n", ""), name="evil\x1b[31m.yaml")
    result = cli("bound", path)
    assert result.exit_code == 2 and "\x1b" not in result.stderr
    assert result.stderr.endswith("evil\\x1b[31m.yaml: threshold: required field is missing\n")


# ---------------------------------------------------------------- numbers in arrays


@pytest.mark.parametrize("row, shown", [
    ("[1.0, true]", "True (a boolean)"),
    ("[1.0, yes]", "True (a boolean)"),
    ("[1.0, null]", "None (an empty entry)"),
    ("[1.0, '0.5']", "'0.5' (a string)"),
])
def test_an_arms_entry_that_is_not_a_real_number_is_one_line(tmp_path, cli, row, shown):
    path = bad_file(tmp_path, CBAI.replace("arms: [[1.0, 0.0], [0.0, 1.0]]", f"arms: [[1.0, 0.0], {row}]"))
    assert one_line_error(cli, path, "solve") == f"FILE: arms: must hold real numbers only, got {shown} at position [1, 1]"


def npz_file(tmp_path, **changes):
    """The CBAI example as an NPZ file, with some arrays replaced."""
    import numpy as np

    from cbai_cli.io.files import read_mapping, write_mapping

    source = bad_file(tmp_path, CBAI, name="example.yaml")
    path = tmp_path / "f.npz"
    write_mapping(read_mapping(source), path)
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    arrays.update(changes)
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("dtype, words", [("bool", "booleans"), ("complex128", "complex numbers"), ("<U3", "strings")])
def test_an_npz_constraint_of_a_non_real_dtype_is_one_line(tmp_path, cli, dtype, words):
    import numpy as np

    path = npz_file(tmp_path, constraint=np.array([1, 0], dtype=dtype))
    assert one_line_error(cli, path) == f"FILE: constraint: must hold real numbers only, got an array of {words} (dtype {dtype})"


def test_an_npz_array_of_python_objects_is_one_line_without_pickle_advice(tmp_path, cli):
    import numpy as np

    path = npz_file(tmp_path, reward=np.array([1.0, None], dtype=object))
    assert one_line_error(cli, path) == ("FILE: reward: must hold real numbers only, got an array of Python objects "
                                         "(cbai never loads pickled data)")


def test_an_npz_threshold_that_is_complex_is_one_line(tmp_path, cli):
    import numpy as np

    path = npz_file(tmp_path, threshold=np.array(0.7 + 1j))
    assert one_line_error(cli, path) == "FILE: threshold: must be a number, got (0.7+1j)"


def test_a_corrupt_npz_file_is_one_line_without_pickle_advice(tmp_path, cli):
    path = tmp_path / "f.npz"
    path.write_bytes(b"not an archive")
    assert one_line_error(cli, path, "solve") == "FILE: not a valid .npz file (not a zip archive)"


def test_a_truncated_npz_file_is_one_line(tmp_path, cli):
    path = npz_file(tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    assert one_line_error(cli, path).startswith("FILE: not a valid .npz file (")


def test_an_npz_header_declaring_terabytes_is_one_line(tmp_path, cli):
    import io
    import zipfile

    import numpy as np

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**7, 10**6)})
    path = tmp_path / "f.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("arms.npy", header.getvalue())
    assert one_line_error(cli, path, "solve").startswith("FILE: not a valid .npz file (field 'arms': its header "
                                                         "declares a 10000000×1000000 array")


def test_a_duplicate_key_is_one_line(tmp_path, cli):
    path = bad_file(tmp_path, CBAI + "threshold: 0.2\n")
    assert one_line_error(cli, path, "solve") == ("FILE: threshold: duplicate key (lines 5 and 7); "
                                                  "each key may appear only once")


def test_meta_that_contains_itself_is_one_line(tmp_path, cli):
    path = bad_file(tmp_path, CBAI + "meta: &m {note: x, again: *m}\n")
    assert one_line_error(cli, path, "solve") == ("FILE: not valid YAML (line 7): an alias refers to a value "
                                                  "that contains it")


def test_arms_multiplied_by_aliases_are_one_line(tmp_path, cli):
    rows = ["kind: cbai", "r0: &r0 [1.0, 0.0]"] + [f"r{i}: &r{i} [" + ", ".join([f"*r{i - 1}"] * 10) + "]"
                                                    for i in range(1, 7)]
    path = bad_file(tmp_path, "\n".join(rows) + "\narms: *r6\n")
    assert one_line_error(cli, path).startswith("FILE: not valid YAML (line 1): its aliases expand it to ")


def test_a_duplicate_key_in_a_safe_file_is_one_line(tmp_path, cli):
    path = tmp_path / "a.yaml"
    assert cli("generate", "amani-a", "-o", path).exit_code == 0
    path.write_text(path.read_text() + "c: 0.5\n")
    assert re.fullmatch(r"FILE: c: duplicate key \(lines \d+ and \d+\); each key may appear only once",
                        one_line_error(cli, path))


def test_markup_safe_prints_brackets_and_escapes_controls():
    from rich.console import Console
    from rich.table import Table

    from cbai_cli.io.render import markup_safe

    out = Console(record=True, width=80, force_terminal=False)
    name = "a[/x]b[red]c\x1b[2J"
    table = Table(title=f"Bounds for {markup_safe(name)}")
    table.add_column("quantity")
    table.add_row(markup_safe(name))
    out.print(table)
    text = out.export_text()
    assert "a[/x]b[red]c\\x1b[2J" in text and "\x1b" not in text


def test_table_numbers_group_thousands_whether_whole_or_not():
    from cbai_cli.io.render import fmt

    assert [fmt(1338), fmt(1337.5), fmt(1338.0), fmt(0.000123), fmt(-12345.25), fmt(float("inf")), fmt(None)] == [
        "1,338", "1,337.5", "1,338", "0.000123", "-12,345.2", "∞", "—"]
