"""``--guess-constraint`` end to end: ``bound`` and ``solve`` of a file without the truth,
with a guess in its place, give exactly the numbers of the file with that truth, and say
that they are a guess's; every mistake is one line and exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cbai_cli.kinds import load


@pytest.fixture
def files(cli, tmp_path):
    """(the file with the truth, the same file without it, the true φ as VALUES)."""
    full, real = tmp_path / "full.yaml", tmp_path / "real.yaml"
    assert cli("generate", "irrelevant-dims", "--d", "4", "--eps", "0.2", "-o", full).exit_code == 0
    assert cli("generate", "irrelevant-dims", "--d", "4", "--eps", "0.2", "--no-truth", "-o", real).exit_code == 0
    values = ",".join(repr(float(value)) for value in load(full).constraint)
    return full, real, values


def documents(*results) -> list[dict]:
    """The JSON documents of successful commands that wrote nothing on stderr."""
    for result in results:
        assert result.exit_code == 0 and result.stderr == "", (result.stdout, result.stderr)
    return [json.loads(result.stdout) for result in results]


def without_guess(document: dict) -> dict:
    """``document`` without what a guess changes: its mark, its note, and run times."""
    document = {key: value for key, value in document.items() if key != "guessed_constraint"}
    document["notes"] = [note for note in document["notes"] if not note.startswith("guessed constraint φ = (")]
    for run in document.get("runs", ()):
        del run["wall_s"]
    return document


def one_error_line(result) -> str:
    """The one stderr line of a refused command."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    return result.stderr.rstrip("\n")


def test_bound_of_the_true_phi_as_values_is_bound_of_the_truth(cli, files):
    full, real, values = files
    truth, guess = documents(cli("bound", full, "--json"), cli("bound", real, "--guess-constraint", values, "--json"))
    assert truth["guessed_constraint"] is False and guess["guessed_constraint"] is True
    assert guess["notes"][0] == "guessed constraint φ = (0, 0, 0, 1): every number here assumes it is the hidden truth"
    assert without_guess(guess) == without_guess(truth)
    # irrelevant-dims d = 4, ε = 0.2 (paper §4.1): H_CLB = 1/ε², and x* = (1 − ε)e_4 is arm 3
    assert guess["h_clb"] == pytest.approx(25, rel=1e-6) and guess["best_arm"] == 3


@pytest.mark.parametrize("algorithm", [("--algo", "acol"), ("--algo", "g-acol", "--regime", "tuned", "--beta", "0.25")])
def test_solve_on_the_true_phi_as_values_runs_as_on_the_truth(cli, files, algorithm):
    full, real, values = files
    truth, guess = documents(cli("solve", full, *algorithm, "--seed", "7", "--runs", "2", "--json"),
                             cli("solve", real, *algorithm, "--seed", "7", "--runs", "2", "--guess-constraint", values,
                                 "--json"))
    assert truth["guessed_constraint"] is False and guess["guessed_constraint"] is True
    assert without_guess(guess) == without_guess(truth)
    assert [run["iterations"] for run in guess["runs"]] == [run["iterations"] for run in truth["runs"]]
    assert all(run["correct"] and run["recommended"] == 3 for run in guess["runs"])


def test_the_tables_say_the_numbers_are_for_a_guessed_constraint(cli, files):
    _, real, values = files
    for command in (("bound",), ("solve", "--algo", "acol")):
        result = cli(command[0], real, *command[1:], "--guess-constraint", values)
        assert result.exit_code == 0 and result.stderr == ""
        assert "for a guessed constraint" in result.stdout.splitlines()[0]
        text = " ".join(result.stdout.split())  # Rich wraps at 80 columns
        assert "note: guessed constraint φ = (0, 0, 0, 1): every number here assumes it is the hidden truth" in text


def test_a_guess_file_gives_the_numbers_of_its_constraint(cli, files, tmp_path):
    full, real, _ = files
    np.save(tmp_path / "phi.npy", load(full).constraint)
    (tmp_path / "phi.txt").write_text("# the pilot's φ\n0 0\n0 1\n")
    truth = without_guess(documents(cli("bound", full, "--json"))[0])
    for guess in (full, tmp_path / "phi.npy", tmp_path / "phi.txt"):
        document = documents(cli("bound", real, "--guess-constraint", guess, "--json"))[0]
        assert document["guessed_constraint"] is True and without_guess(document) == truth, guess


def test_a_guess_for_a_file_with_truth_wins_with_one_warning(cli, files):
    full, _, _ = files
    result = cli("bound", full, "--guess-constraint", "0,0,0,2", "--json")
    assert result.exit_code == 0
    assert result.stderr == (f"cbai: warning: {full} has a constraint of its own; --guess-constraint 0,0,0,2 "
                             "replaces it\n")
    document = json.loads(result.stdout)
    # φ = 2e_4 with τ = 1: the arms (1 ∓ ε)e_4 have φᵀx = 1.6 and 2.4, infeasible, so x* is the
    # first of e_1, e_2, e_3 (reward 0) instead of (1 − ε)e_4
    assert document["guessed_constraint"] is True and document["best_arm"] == 0 and document["n_feasible"] == 3


def test_a_negative_first_value_is_read_as_the_guess(cli, files):
    _, real, _ = files
    result = cli("bound", real, "--guess-constraint", "-0.5,0,0,1", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["guessed_constraint"] is True


@pytest.mark.parametrize("command", [("bound",), ("solve", "--algo", "acol")])
@pytest.mark.parametrize("guess, message", [
    ("0,0,1", "--guess-constraint 0,0,1: constraint: length 3 does not match the arms' dimension d = 4"),
    ("0,nan,0,1", "--guess-constraint 0,nan,0,1: constraint: contains NaN or infinite values"),
    ("0,0,x,1", "--guess-constraint 0,0,x,1: VALUES must be numbers separated by commas; entry 3 is not a number: 'x'"),
])
def test_a_wrong_guess_is_one_line_and_exit_2(cli, files, command, guess, message):
    _, real, _ = files
    assert one_error_line(cli(command[0], real, *command[1:], "--guess-constraint", guess)) == f"cbai: error: {message}"


@pytest.mark.parametrize("command", [("bound",), ("solve", "--algo", "acol")])
def test_a_binary_guess_with_a_mean_outside_minus_one_one_is_refused(cli, tmp_path, command):
    path = tmp_path / "binary.yaml"
    assert cli("generate", "regret-1d", "--noise", "binary", "--no-truth", "-o", path).exit_code == 0
    assert one_error_line(cli(command[0], path, *command[1:], "--guess-constraint", "1.5")) == (
        "cbai: error: --guess-constraint 1.5: noise: binary feedback needs every constraint value φᵀx in [−1, 1]; "
        "arm 9 has 1.5 (rescale the arms, as the paper does for the driver, Appendix C)")
    assert documents(cli(command[0], path, *command[1:], "--guess-constraint", "1", "--json"))[0]["guessed_constraint"]


@pytest.mark.parametrize("family, kind", [("soare-safe", "safe-bai"), ("amani-a", "safe-regret")])
@pytest.mark.parametrize("command", ["bound", "solve"])
def test_a_guess_for_a_safe_instance_is_one_line(cli, tmp_path, family, kind, command):
    path = tmp_path / "safe.yaml"
    assert cli("generate", family, "-o", path).exit_code == 0
    assert one_error_line(cli(command, path, "--guess-constraint", "1,2,3")) == (
        f"cbai: error: --guess-constraint does not apply to {kind} instances (their files always hold the truth)")


def test_a_guess_file_without_constraint_is_one_line(cli, files):
    _, real, _ = files
    assert one_error_line(cli("bound", real, "--guess-constraint", real)) == (
        f"cbai: error: --guess-constraint {real}: constraint: missing; the guess file must hold the constraint φ to use")


def test_real_process_sizes_a_study_and_refuses_a_bad_guess(cbai_process, files):
    _, real, values = files
    result = cbai_process("solve", real, "--algo", "acol", "--runs", "3", "--guess-constraint", values, "--json")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    document = json.loads(result.stdout)
    assert document["guessed_constraint"] is True and [run["seed"] for run in document["runs"]] == [0, 1, 2]
    result = cbai_process("bound", real, "--guess-constraint", "1,2")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("cbai: error: --guess-constraint 1,2: constraint: length 2 does not match the arms' "
                             "dimension d = 4\n")
