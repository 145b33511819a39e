"""``cbai generate`` end to end."""

from __future__ import annotations

import yaml

from cbai_cli.kinds.cbai.instance import load


def test_generate_writes_a_loadable_file(cli, tmp_path):
    path = tmp_path / "sphere.npz"
    result = cli("generate", "unit-sphere", "--d", "5", "--n", "8", "--seed", "2", "-o", path)
    assert result.exit_code == 0, result.output
    instance = load(path)
    assert (instance.n_arms, instance.dim) == (8, 5)
    assert instance.meta["params"] == {"d": 5, "n": 8, "seed": 2}


def test_generate_to_stdout_is_yaml(cli):
    result = cli("generate", "regret-1d")
    assert result.exit_code == 0
    assert yaml.safe_load(result.stdout)["name"] == "regret-1d"


def test_generate_is_deterministic(cli):
    first = cli("generate", "random", "--seed", "4").stdout
    assert first == cli("generate", "random", "--seed", "4").stdout


def test_generate_options(cli):
    result = cli("generate", "regret-1d", "--noise", "binary")
    assert yaml.safe_load(result.stdout)["noise"] == {"kind": "binary"}
    result = cli("generate", "regret-1d", "--sigma", "0.2")
    assert yaml.safe_load(result.stdout)["noise"] == {"kind": "gaussian", "sigma": 0.2}


def test_unknown_family_is_one_line_with_suggestion(cli):
    result = cli("generate", "irrelevant-dim")
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "did you mean 'irrelevant-dims'" in result.stderr


def test_option_the_family_lacks_is_rejected(cli):
    result = cli("generate", "regret-1d", "--d", "3")
    assert result.exit_code == 2 and "has no parameter 'd'" in result.stderr


def test_negative_sigma_is_rejected(cli):
    result = cli("generate", "regret-1d", "--sigma", "-0.1")
    assert result.exit_code == 2 and "--sigma" in result.stderr


def test_binary_noise_outside_range_is_rejected(cli):
    result = cli("generate", "irrelevant-dims", "--noise", "binary")
    assert result.exit_code == 2 and "[−1, 1]" in result.stderr


def test_unit_sphere_in_one_dimension_is_refused_in_one_line(cli):
    result = cli("generate", "unit-sphere", "--d", "1", "--n", "5")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("cbai: error: unit-sphere: d must be ≥ 2 (the unit sphere of R¹ is the two points ±1, so "
                             "its arms would repeat), got 1\n")


def test_generate_through_a_subprocess(cbai_process, tmp_path):
    path = tmp_path / "r.yaml"
    process = cbai_process("generate", "random", "--d", "3", "--n", "6", "-o", path)
    assert process.returncode == 0, process.stderr
    assert load(path).n_arms == 6


def _one_line(result, text):
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and text in result.stderr, result.stderr


def test_an_empty_noise_model_is_refused_not_read_as_the_default(cli):
    _one_line(cli("generate", "regret-1d", "--noise", ""), "--noise must be 'gaussian' or 'binary', got ''")


def test_a_sigma_whose_square_underflows_is_said_not_shown_as_zero(cli, tmp_path):
    path = tmp_path / "tiny.yaml"
    assert cli("generate", "regret-1d", "--sigma", "1e-300", "-o", path).exit_code == 0
    result = cli("solve", path)
    assert result.exit_code == 0
    assert "σ² = < 2.2e-308 (σ² underflows" in " ".join(result.stdout.split())
    assert "σ² = 0:" not in result.stdout


def test_a_horizon_no_run_can_hold_is_written_with_a_warning_naming_the_option(cli, tmp_path):
    result = cli("generate", "amani-a", "--T", "1000000000", "-o", tmp_path / "a.yaml")
    assert result.exit_code == 0 and (tmp_path / "a.yaml").exists()
    assert "cbai: warning: T = 1,000,000,000 rounds is more than a run keeps in memory" in result.stderr
    assert "--T of at most that" in result.stderr
