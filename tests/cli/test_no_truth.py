"""Files without the truth end to end: ``generate --no-truth`` writes them, the commands
that only read the problem accept them, and ``bound``, ``solve`` and ``compare`` refuse
them in one line with exit code 2."""

from __future__ import annotations

import json

import pytest

from cbai_cli.kinds.cbai.families import FAMILIES
from cbai_cli.kinds import load

CBAI_FAMILIES = sorted(name for name, family in FAMILIES.items() if family.kind == "cbai")
SAFE_FAMILIES = sorted(name for name, family in FAMILIES.items() if family.kind != "cbai")
# Small parameters where a family takes them, so that every file is quick to write.
SMALL = {"irrelevant-dims": ("--d", "3"), "unit-sphere": ("--d", "3", "--n", "5"), "random": ("--d", "3", "--n", "5")}


def missing_truth_line(result, path) -> str:
    """The one stderr line of a command refused for lack of the truth, with the file as FILE."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    return result.stderr.replace(str(path), "FILE").rstrip("\n")


EXPECTED = ("cbai: error: FILE: constraint: missing; bounds, simulated runs and scores need the hidden constraint φ "
            "(this file describes a real problem): run an algorithm on real answers with "
            "`cbai session start FILE --algo NAME`")


@pytest.fixture
def real_file(cli, tmp_path):
    path = tmp_path / "real.yaml"
    assert cli("generate", "regret-1d", "--no-truth", "-o", path).exit_code == 0
    return path


@pytest.mark.parametrize("name", CBAI_FAMILIES)
@pytest.mark.parametrize("suffix", ["yaml", "npz"])
def test_generate_no_truth_writes_the_same_problem_without_constraint(cli, tmp_path, name, suffix):
    real, full = tmp_path / f"real.{suffix}", tmp_path / f"full.{suffix}"
    assert cli("generate", name, *SMALL.get(name, ()), "--no-truth", "-o", real).exit_code == 0
    assert cli("generate", name, *SMALL.get(name, ()), "-o", full).exit_code == 0
    instance, expected = load(real), load(full).to_mapping()
    del expected["constraint"]
    assert not instance.has_truth and instance.to_mapping() == expected


@pytest.mark.parametrize("name", SAFE_FAMILIES)
def test_generate_no_truth_on_a_safe_family_is_one_line(cli, tmp_path, name):
    result = cli("generate", name, "--no-truth", "-o", tmp_path / "x.yaml")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert f"--no-truth does not apply to {name}" in result.stderr
    assert not (tmp_path / "x.yaml").exists()


@pytest.mark.parametrize("command", [
    ("bound",),
    ("bound", "--json"),
    ("solve", "--algo", "acol"),
    ("solve", "--algo", "oracle", "--budget", "10"),
    ("solve", "--algo", "g-acol", "--budget", "10", "--trace", "TRACE"),
])
def test_bound_and_solve_refuse_a_file_without_truth_in_one_line(cli, real_file, tmp_path, command):
    trace = tmp_path / "t.csv"
    args = [trace if word == "TRACE" else word for word in command]
    assert missing_truth_line(cli(args[0], real_file, *args[1:]), real_file) == EXPECTED
    assert not trace.exists()


def test_compare_refuses_before_creating_its_store(cli, real_file, tmp_path):
    store = tmp_path / "runs.jsonl"
    result = cli("compare", real_file, "regret-1d", "-a", "acol", "--seeds", "1", "--budget", "50", "-j", "1",
                 "-q", "-o", store)
    assert missing_truth_line(result, real_file) == EXPECTED
    assert not store.exists()


def test_compare_without_bounds_refuses_too(cli, real_file):
    result = cli("compare", real_file, "-a", "acol", "--seeds", "1", "--no-bounds", "-j", "1", "-q")
    assert missing_truth_line(result, real_file) == EXPECTED


def test_a_file_without_truth_on_stdin_is_named_stdin(cli, real_file):
    result = cli("bound", "-", input=real_file.read_text())
    assert result.exit_code == 2
    assert result.stderr.startswith("cbai: error: <stdin>: constraint: missing; ")
    assert "`cbai session start FILE --algo NAME`" in result.stderr


def test_algorithms_listing_is_unaffected(cli):
    result = cli("algorithms", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)


def test_real_process_exits_2_with_one_line(cbai_process, tmp_path):
    path = tmp_path / "real.npz"
    assert cbai_process("generate", "irrelevant-dims", "--d", "3", "--no-truth", "-o", path).returncode == 0
    result = cbai_process("solve", path, "--algo", "acol")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.replace(str(path), "FILE").rstrip("\n") == EXPECTED
