"""numba is loaded only by adaptive CBAI runs too long to interpret (loading it and the
compiled kernels costs about half a second, :mod:`cbai_cli.numerics.kernels.jit`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

INSTANCES = Path(__file__).resolve().parents[2] / "instances"


def loads_numba(*commands: list[str]) -> bool:
    """Whether running ``commands`` through the CLI in one fresh process imports numba
    (each command succeeds; exit code 1 is a run stopped by its budget)."""
    code = ("import sys; from cbai_cli.cli.app import app; from typer.testing import CliRunner; r = CliRunner(); "
            f"results = [r.invoke(app, args) for args in {list(commands)!r}]; "
            "assert all(result.exit_code in (0, 1) for result in results), [result.output for result in results]; "
            "print('numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip() == "True"


def test_bound_generate_and_the_safe_kinds_do_not_load_numba(tmp_path):
    cbai = str(INSTANCES / "irrelevant-dims-d10-eps0.05.yaml")
    assert not loads_numba(["bound", cbai], ["generate", "unit-sphere", "--d", "3", "--n", "5", "--seed", "1",
                                             "-o", str(tmp_path / "sphere.yaml")],
                           ["solve", str(INSTANCES / "soare-safe.yaml"), "--budget", "50"])


def test_a_short_adaptive_run_does_not_load_numba():
    # 11 queries of the default rule: milliseconds interpreted, against 0.15 s before numba loads
    assert not loads_numba(["solve", str(INSTANCES / "regret-1d.yaml")])


def test_a_long_adaptive_run_loads_numba():
    # five runs of about 700 queries on 30 arms in dimension 30: seconds interpreted
    assert loads_numba(["solve", str(INSTANCES / "unit-sphere-d30-n30-seed0.npz"), "--algo", "g-acol", "--regime",
                        "theory", "--runs", "5", "--no-bound"])
