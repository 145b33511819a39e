"""``cbai bound`` end to end."""

from __future__ import annotations

import json
import math

import numpy as np

import pytest

JSON_KEYS = {"h_clb", "h_clb_bar", "c_min", "prop1_bound", "lower_bound", "lower_bound_noise", "lower_bound_kl",
             "lower_bound_kl_noise", "acol_upper_bound", "best_arm", "n_feasible", "design", "gap", "delta"}


def test_bound_json_has_the_stable_keys_and_the_closed_form(cli, tmp_path):
    path = tmp_path / "irr.yaml"
    cli("generate", "irrelevant-dims", "--d", "10", "--eps", "0.05", "-o", path)
    result = cli("bound", path, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert JSON_KEYS <= set(document)
    assert document["h_clb"] == pytest.approx(400, rel=1e-5)
    assert document["c_min"] == pytest.approx(0.05)
    assert document["prop1_bound"] == pytest.approx(4000)
    assert document["lower_bound"] == pytest.approx(1696, abs=1)
    assert document["lower_bound_kl"] == pytest.approx(2 * 0.9 * math.log(19) * 400, rel=1e-5)
    assert document["best_arm"] == 9
    assert document["design"][0]["arm"] == 10
    assert document["gap"] <= 1e-6


def test_bound_table_mentions_every_quantity(cli, instance_file):
    result = cli("bound", instance_file)
    assert result.exit_code == 0
    for label in ("H_CLB", "lower bound", "H̄_CLB", "C⁺_min", "Prop. 1", "ACOL bound", "design"):
        assert label in result.stdout


def test_bound_reads_stdin(cli, instance_file):
    result = cli("bound", "-", "--json", input=instance_file.read_text())
    assert result.exit_code == 0 and json.loads(result.stdout)["best_arm"] == 3


def test_bound_on_boundary_arm_is_infinite_and_says_why(cli, tmp_path):
    path = tmp_path / "edge.yaml"
    path.write_text("kind: cbai\narms: [[1.0], [2.0]]\nreward: [1.0]\nconstraint: [1.0]\nthreshold: 2.0\n"
                    "noise: {kind: gaussian, sigma: 0.1}\n")
    result = cli("bound", path, "--json")
    document = json.loads(result.stdout)
    assert document["h_clb"] is None and document["prop1_bound"] is None
    assert any("boundary" in note for note in document["notes"])


@pytest.mark.parametrize("args, message", [
    (["bound", "missing.yaml"], "no such file"),
    (["bound", "{file}", "--delta", "1.5"], "--delta"),
    (["bound", "{file}", "--solver", "magic"], "--solver"),
    (["bound", "{file}", "--epsilon", "0"], "--epsilon must be a finite number > 0"),
    (["bound", "{file}", "--epsilon", "-1"], "--epsilon must be a finite number > 0"),
    (["bound", "{file}", "--epsilon", "nan"], "--epsilon must be a finite number > 0"),
    (["bound", "{file}", "--time-limit", "0"], "--time-limit must be a finite number > 0"),
    (["bound", "{file}", "--time-limit", "-5"], "--time-limit must be a finite number > 0"),
    (["bound", "{file}", "--time-limit", "inf"], "--time-limit must be a finite number > 0"),
    (["bound", "{file}", "--time-limit", "soon"], "--time-limit"),
])
def test_bound_bad_input(cli, instance_file, args, message):
    result = cli(*[a.format(file=instance_file) for a in args])
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_bound_through_a_subprocess(cbai_process, instance_file):
    process = cbai_process("bound", instance_file, "--json")
    assert process.returncode == 0, process.stderr
    assert JSON_KEYS <= set(json.loads(process.stdout))


@pytest.fixture
def random_file(tmp_path, cli):
    """An instance whose design solves need several rounds (so that a cap can stop them)."""
    path = tmp_path / "random.npz"
    assert cli("generate", "random", "--d", "6", "--n", "100", "--seed", "0", "-o", path).exit_code == 0
    return path


def test_bound_time_limit_reports_the_certified_intervals(cli, random_file):
    # 1e-9 s has passed at the solver's first check: one round per design on any machine.
    document = json.loads(cli("bound", random_file, "--json", "--time-limit", "1e-9").stdout)
    exact = json.loads(cli("bound", random_file, "--json").stdout)
    assert document["time_limit"] == 1e-9 and document["time_limit_reached"] is True
    assert exact["time_limit"] is None and exact["time_limit_reached"] is False
    low, high = document["intervals"]["h_clb"]
    assert low <= exact["h_clb"] * (1 + 1e-5) and exact["h_clb"] <= high * (1 + 1e-9)
    assert document["lower_bound"] == pytest.approx(document["intervals"]["lower_bound"][0])
    assert any("time limit of 1e-09 s was reached" in note for note in document["notes"])


def test_bound_time_limit_note_is_in_the_table(cli, random_file):
    result = cli("bound", random_file, "--time-limit", "1e-9")
    assert result.exit_code == 0 and "time limit of 1e-09 s" in result.stdout and "lies between" in result.stdout


def test_bound_time_limit_through_a_subprocess(cbai_process, random_file):
    process = cbai_process("bound", random_file, "--json", "--time-limit", "1e-9")
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["time_limit_reached"] is True
    bad = cbai_process("bound", random_file, "--time-limit", "nan")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--time-limit" in bad.stderr


def test_bound_with_cvxpy_honours_the_time_limit(cli, random_file):
    document = json.loads(cli("bound", random_file, "--json", "--solver", "cvxpy", "--time-limit", "1e-3").stdout)
    assert document["time_limit_reached"] is True and document["solver"] == "fw"


def test_a_cvxpy_solve_that_cannot_fit_in_memory_is_one_line(cbai_process, tmp_path):
    from cbai_cli.kinds.cbai.instance import Instance
    from cbai_cli.kinds import save
    from cbai_cli.kinds.cbai.noise import GaussianNoise

    # no arm feasible: both designs target all 1,000 arms, so cvxpy's problem has
    # 1,000 × 1,000 × 5² coefficients (256 bytes each: 5.96 GiB)
    rng = np.random.default_rng(0)
    instance = Instance(name="none-feasible", arms=rng.standard_normal((1000, 5)), reward=rng.standard_normal(5),
                        constraint=np.array([1.0, 0, 0, 0, 0]), threshold=-100.0, noise=GaussianNoise(0.1))
    path = tmp_path / "none.npz"
    save(instance, path)
    process = cbai_process("bound", path, "--solver", "cvxpy")
    assert process.returncode == 2 and process.stdout == ""
    assert process.stderr == ("cbai: error: the cvxpy design solve over K = 1,000 arms and 1,000 targets in d = 5 "
                              "dimensions would hold about 5.96 GiB, more than the limit of 4 GiB (CBAI_MEMORY_LIMIT raises it); "
                              "--solver fw would "
                              "hold about 640,000 bytes\n")
