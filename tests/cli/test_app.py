"""The ``cbai`` entry point: help, version, start-up cost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cbai_cli import __version__

SHIPPED = Path(__file__).resolve().parents[2] / "instances"


def test_help_lists_every_subcommand(cli):
    result = cli("--help")
    assert result.exit_code == 0
    for command in ("generate", "bound", "solve", "algorithms"):
        assert command in result.stdout


def test_version(cli):
    assert cli("--version").stdout.strip() == f"cbai {__version__}"


def test_solve_help_lists_algorithms_from_the_registry(cli):
    from cbai_cli.algorithms.registry import ALGORITHMS

    # Help text wraps at hyphens ("g-acol-" / "uniform"): undo the wrapping before searching.
    text = " ".join(cli("solve", "--help").stdout.split()).replace("- ", "-")
    for name in ALGORITHMS:
        assert name in text


def test_help_of_every_command_imports_no_heavy_module():
    """Start-up stays fast: help never loads numpy, scipy, cvxpy, numba, matplotlib, Dask or
    the safe-bandit library (the one registry names every algorithm)."""
    code = ("import sys; from cbai_cli.cli.app import app; from typer.testing import CliRunner; r = CliRunner(); "
            "[r.invoke(app, args) for args in (['--help'], *[[c, '--help'] for c in "
            "('generate', 'bound', 'solve', 'compare', 'driver-arms', 'algorithms')])]; "
            "print(sorted(m for m in sys.modules if m in ('numpy', 'scipy', 'cvxpy', 'numba', 'matplotlib', 'distributed') "
            "or m.startswith('cbai_cli.algorithms.safe.')))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_unknown_command_is_one_line(cli):
    result = cli("sovle")
    assert result.exit_code == 2 and "did you mean" in result.stderr.lower() and result.stderr.count("\n") == 1


def test_algorithms_lists_the_registry(cli):
    result = cli("algorithms")
    assert result.exit_code == 0 and "maxrew-f" in result.stdout and "adaptive_tuned" in result.stdout


def test_algorithms_json_lists_every_entry_with_its_capabilities(cli):
    import json

    from cbai_cli.algorithms.registry import entries

    document = json.loads(cli("algorithms", "--json").stdout)
    assert (document["cbai_version"], document["schema"]) == (__import__("cbai_cli").__version__, 1)
    listed = document["algorithms"]
    assert [entry["name"] for entry in listed] == list(entries())
    by_name = {entry["name"]: entry for entry in listed}
    assert by_name["acol"]["kinds"] == ["cbai"] and by_name["acol"]["style"] == "round"
    assert by_name["acol"]["regimes"] == ["static"]
    assert by_name["safe-lingape"]["regimes"] == [] and by_name["safe-lingape"]["kinds"] == ["safe-bai"]
    beta = next(option for option in by_name["g-acol"]["options"] if option["name"] == "beta")
    assert (beta["flag"], beta["type"], beta["range"]) == ("--beta", "float", "> 0")


def test_python_dash_m_works():
    process = subprocess.run([sys.executable, "-m", "cbai_cli", "--version"], capture_output=True, text=True)
    assert process.returncode == 0 and __version__ in process.stdout


def test_a_file_name_too_long_for_the_file_system_is_one_line(cli, tmp_path):
    """pathlib's checks let ENAMETOOLONG escape wherever a path is looked at."""
    name = str(tmp_path / ("x" * 300 + ".yaml"))
    for args in (["solve", name], ["bound", name], ["generate", "random", "-o", name]):
        result = cli(*args)
        assert result.exit_code == 2, args
        assert "file name too long" in result.stderr and "Traceback" not in result.stderr


def test_a_path_under_a_folder_that_may_not_be_searched_is_one_line(cli, tmp_path, monkeypatch):
    """pathlib's checks let EACCES escape too (a folder without x permission on the way);
    simulated, since the tests may run as root, whom permissions do not stop."""
    import errno
    import os

    locked = tmp_path / "locked"
    real_stat = Path.stat

    def stat(self, *args, **kwargs):
        if str(self).startswith(str(locked)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_stat(self, *args, **kwargs)

    shipped = SHIPPED / "regret-1d.yaml"
    monkeypatch.setattr(Path, "stat", stat)
    for args, path in ((["session", "status", locked / "s.db"], locked / "s.db"),
                       (["solve", locked / "x.yaml"], locked / "x.yaml"),
                       (["session", "start", shipped, "-o", locked / "n.db"], locked / "n.db")):
        result = cli(*args)
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stderr.splitlines() == [
            f"cbai: error: {path}: permission denied (a folder on the way may not be searched)"]


@pytest.mark.parametrize("command", ["solve -", "bound -", "session start - -o {tmp}/n.db",
                                     "session record {tmp}/s.db --file -"])
def test_a_command_reading_a_closed_standard_input_is_one_line(tmp_path, command):
    import os

    env = {**os.environ, "PYTHONPATH": str(SHIPPED.parent)}
    started = subprocess.run([sys.executable, "-m", "cbai_cli", "session", "start", str(SHIPPED / "regret-1d.yaml"),
                              "-o", str(tmp_path / "s.db")], capture_output=True, text=True, env=env)
    assert started.returncode == 0, started.stderr
    process = subprocess.run(f"{sys.executable} -m cbai_cli {command.format(tmp=tmp_path)} <&-", shell=True,
                             capture_output=True, text=True, env=env, timeout=300)
    assert process.returncode == 2
    assert process.stderr.splitlines() == [
        f"cbai: error: {'--file -' if '--file' in command else '<stdin>'}: standard input is closed, so there is "
        "nothing to read"]


def test_the_shell_completes_commands_and_subcommands():
    import os
    import subprocess
    import sys

    def complete(words: str, index: int) -> list[str]:
        env = {**os.environ, "_CBAI_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(index)}
        done = subprocess.run([sys.executable, "-m", "cbai_cli"], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("cbai so", 1) == ["solve"]
    assert complete("cbai session st", 2) == ["start", "status"]
