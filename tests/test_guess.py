"""A guessed constraint in the library: ``Instance.with_guessed_constraint``,
:func:`cbai_cli.kinds.cbai.guess.apply_guess`, and that bounds and runs of a guess are those of the
truth it stands for, marked as a guess."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cbai_cli.kinds.cbai.bounds import compute_bounds
from cbai_cli.contracts.errors import CbaiError, InstanceError, OptionError
from cbai_cli.kinds.cbai.guess import apply_guess, read_guess
from cbai_cli.kinds.cbai.instance import Instance, save
from cbai_cli.kinds.cbai.families import generate_instance
from cbai_cli.kinds import guess_constraint, load
from cbai_cli.kinds import save as save_any
from cbai_cli.kinds.cbai.noise import BinaryNoise
from cbai_cli.run.simulate import RunRequest
from cbai_cli.run.solving import solve_instance

# Arms whose threshold is folded in by the learner (threshold_known: false): the guess is φ in
# the file's two coordinates, and the learner appends −τ.
FOLDED = Instance(name="folded", arms=np.array([[0.1, 0.2], [0.3, 0.2], [0.3, 0.6], [0.9, 0.8]]),
                  constraint=np.array([1.0, 0.5]), reward=np.array([1.0, 1.0]), threshold=0.5,
                  threshold_known=False)


def test_a_guess_of_the_true_phi_gives_the_bounds_of_the_truth():
    real = FOLDED.without_truth()
    guessed = real.with_guessed_constraint([1.0, 0.5])
    assert guessed.guessed_constraint and not FOLDED.guessed_constraint and not real.guessed_constraint
    np.testing.assert_array_equal(guessed.truth.constraint, [1.0, 0.5, -0.5])
    truth, guess = compute_bounds(FOLDED).to_json(), compute_bounds(guessed).to_json()
    assert guess.pop("guessed_constraint") is True and truth.pop("guessed_constraint") is False
    assert guess.pop("notes") == ["guessed constraint φ = (1, 0.5): every number here assumes it is the hidden truth"]
    assert truth.pop("notes") == []
    assert guess == truth
    # hand check: g = φᵀx − τ = (−0.3, −0.1, 0.1, 0.8) and rewards (0.3, 0.5, 0.9, 1.7): arm 1 is
    # the best feasible arm, and the closest to the boundary are arms 1 and 2
    np.testing.assert_allclose(guessed.gaps, [-0.3, -0.1, 0.1, 0.8])
    assert guess["best_arm"] == 1 and guess["c_min"] == pytest.approx(0.1)


def test_runs_on_a_guess_are_the_runs_on_the_truth():
    request = RunRequest.of("acol", None)
    truth = solve_instance(FOLDED, request, range(3))
    guess = solve_instance(FOLDED.without_truth().with_guessed_constraint(np.array([1.0, 0.5])), request, range(3))
    assert [(r.iterations, r.recommended, r.correct) for r in guess.results] == \
        [(r.iterations, r.recommended, r.correct) for r in truth.results]
    assert guess.to_json()["guessed_constraint"] is True and truth.to_json()["guessed_constraint"] is False
    assert guess.notes[0].startswith("guessed constraint φ = (1, 0.5)")


def test_the_guess_is_not_part_of_the_file_and_leaves_with_the_truth(tmp_path):
    guessed = FOLDED.with_guessed_constraint([2.0, -1.0])
    assert guessed.to_mapping()["constraint"] == [2.0, -1.0]
    assert not guessed.without_truth().guessed_constraint
    save(guessed, tmp_path / "g.yaml")
    assert not load(tmp_path / "g.yaml").guessed_constraint


@pytest.mark.parametrize("phi, message", [
    ([1.0], "constraint: length 1 does not match the arms' dimension d = 2"),
    ([1.0, float("nan")], "constraint: contains NaN or infinite values"),
    ([1.0, 1e200], "constraint: must lie within ±1e+100"),
    (None, "guessed_constraint: needs a constraint (the guess)"),
])
def test_with_guessed_constraint_checks_the_guess_as_a_files_constraint(phi, message):
    with pytest.raises(InstanceError, match=f"^{re.escape(message)}"):
        FOLDED.with_guessed_constraint(phi)


def test_a_binary_guess_must_keep_every_mean_in_minus_one_one():
    binary = Instance(name="b", arms=np.array([[0.5], [1.0]]), constraint=None, reward=np.array([1.0]),
                      threshold=0.2, noise=BinaryNoise())
    assert binary.with_guessed_constraint([1.0]).guessed_constraint
    with pytest.raises(InstanceError, match=r"^noise: binary feedback needs every constraint value φᵀx in \[−1, 1\]; "
                                            r"arm 1 has 1\.2 "):
        binary.with_guessed_constraint([1.2])


def test_a_guess_above_the_files_norm_bound_is_refused():
    bounded = Instance(name="s", arms=np.eye(2), constraint=None, reward=np.ones(2), threshold=0.1,
                       constraint_norm_bound=1.0)
    with pytest.raises(OptionError, match=r"^--guess-constraint 1,1: constraint_norm_bound: 1 is below ‖φ‖ = 1\.41421$"):
        apply_guess(bounded, "1,1")


def test_apply_guess_reads_values_files_and_numbers(tmp_path):
    real = FOLDED.without_truth()
    np.save(tmp_path / "phi.npy", np.array([1.0, 0.5]))
    (tmp_path / "phi.txt").write_text("# φ of the pilot\n1.0, 0.5\n")
    save(FOLDED, tmp_path / "truth.npz")
    for guess in ("1,0.5", " 1 , 5e-1 ", tmp_path / "phi.npy", str(tmp_path / "phi.txt"), tmp_path / "truth.npz",
                  [1.0, 0.5], np.array([1.0, 0.5])):
        guessed = apply_guess(real, guess)
        assert guessed.guessed_constraint and guessed.constraint.tolist() == [1.0, 0.5], guess


def test_warnings_say_when_the_guess_replaces_a_constraint_or_its_file_differs(tmp_path):
    save(FOLDED.with_guessed_constraint([0.0, 1.0]), tmp_path / "other.yaml")
    shifted = Instance(name="shifted", arms=FOLDED.arms + 1, constraint=FOLDED.constraint, reward=FOLDED.reward,
                       threshold=0.3)
    save(shifted, tmp_path / "shifted.yaml")
    said: list[str] = []
    apply_guess(FOLDED.without_truth(), tmp_path / "other.yaml", said.append)
    assert said == []
    apply_guess(FOLDED, "0,1", said.append)
    assert said == ["instance 'folded' has a constraint of its own; --guess-constraint 0,1 replaces it"]
    said.clear()
    apply_guess(FOLDED.without_truth(), str(tmp_path / "shifted.yaml"), said.append)
    assert said == [f"--guess-constraint {tmp_path / 'shifted.yaml'}: differs from instance 'folded' in its arms "
                    "and threshold; only its constraint is used"]


@pytest.mark.parametrize("guess, message", [
    ("abc", "--guess-constraint abc: neither VALUES (numbers separated by commas) nor a FILE"),
    ("1,x", "--guess-constraint 1,x: VALUES must be numbers separated by commas; entry 2 is not a number: 'x'"),
    ("-", "--guess-constraint -: standard input is not read for a guess"),
    ("NOPE.npy", "--guess-constraint NOPE.npy: no such file"),
    ("NOPE.yaml", "--guess-constraint NOPE.yaml: no such file"),
    ("BAD.npy", "--guess-constraint BAD.npy: not a .npy file of one array of numbers"),
    ("BAD.txt", "--guess-constraint BAD.txt: entry 2 is not a number: 'two'"),
])
def test_read_guess_refuses_in_one_line(tmp_path, monkeypatch, guess, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "BAD.npy").write_text("not numpy")
    (tmp_path / "BAD.txt").write_text("1 two 3")
    with pytest.raises(OptionError) as error:
        read_guess(guess)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_guess_file_of_another_kind_or_without_constraint_is_refused(tmp_path):
    save_any(generate_instance("soare-safe"), tmp_path / "safe.yaml")
    save(FOLDED.without_truth(), tmp_path / "real.yaml")
    with pytest.raises(OptionError, match="this one is of kind 'safe-bai'$"):
        read_guess(str(tmp_path / "safe.yaml"))
    with pytest.raises(OptionError, match="real.yaml: constraint: missing; the guess file must hold the constraint"):
        read_guess(str(tmp_path / "real.yaml"))


def test_a_folded_phi_gets_a_hint():
    with pytest.raises(OptionError, match=r"length 3 does not match the arms' dimension d = 2 \(give φ without −τ"):
        apply_guess(FOLDED.without_truth(), "1,0.5,-0.5")


@pytest.mark.parametrize("family, kind", [("amani-a", "safe-regret"), ("soare-safe", "safe-bai")])
def test_safe_kinds_refuse_a_guess(family, kind):
    with pytest.raises(CbaiError, match=rf"^--guess-constraint does not apply to {kind} instances"):
        guess_constraint(generate_instance(family), "1,2")
