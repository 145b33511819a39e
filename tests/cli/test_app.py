"""The ``cbai`` entry point: help, version, start-up cost."""

from __future__ import annotations

import subprocess
import sys

from cbai_cli import __version__


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
    code = ("import sys; from cbai_cli.cli import app; from typer.testing import CliRunner; r = CliRunner(); "
            "[r.invoke(app, args) for args in (['--help'], *[[c, '--help'] for c in "
            "('generate', 'bound', 'solve', 'compare', 'driver-arms', 'algorithms')])]; "
            "print(sorted(m for m in sys.modules if m in ('numpy', 'scipy', 'cvxpy', 'numba', 'matplotlib', 'distributed') "
            "or m.startswith('cbai_cli.safe.')))")
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

    listed = json.loads(cli("algorithms", "--json").stdout)
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
