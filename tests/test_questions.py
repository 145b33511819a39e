"""What a study asks and how answers become observations: thresholds derived from the raters'
terms (hand-computed), the values recorded, every malformed meta as one line, media files."""

from __future__ import annotations

import json
import math
from decimal import Decimal, localcontext
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cbai_cli.cli.app import app
from cbai_cli.contracts.errors import InstanceError, OptionError
from cbai_cli.kinds.cbai.instance import Instance, from_mapping
from cbai_cli.kinds import load, save
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise
from cbai_cli.kinds.cbai.questions import (BINARY_QUESTION, GAUSSIAN_QUESTION, check_media, feasible_threshold, media_type,
                                        questions_of)
from cbai_cli.kinds.cbai.answers import observation

SAFE = {"question": "Does this driving feel safe?", "answers": {"yes": "feasible", "no": "infeasible"}}
UNSAFE = {"question": "Did this driving feel unsafe?", "answers": {"safe": "feasible", "unsafe": "infeasible"}}
SWEET = {"question": "How sweet is this cookie, from 0 to 10?", "answers": "number"}
SCALE = {"question": "How sweet is this cookie?", "answers": {"not sweet": 0, "sweet": 7}}


def instance(meta=None, noise="binary", **fields) -> Instance:
    """Three arms in R²; no hidden constraint unless given."""
    return Instance(name="q", arms=[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], constraint=fields.pop("constraint", None),
                    reward=[1.0, 0.5], noise=BinaryNoise() if noise == "binary" else GaussianNoise(1.0),
                    meta=meta or {}, **fields)


@pytest.mark.parametrize("meta, noise, threshold", [
    ({**SAFE, "feasible_when": "at least 95% yes"}, "binary", -0.9),
    ({**UNSAFE, "feasible_when": "at most 5% unsafe"}, "binary", -0.9),
    ({**SAFE, "feasible_when": "at least 0.95 yes"}, "binary", -0.9),  # a fraction
    ({**SAFE, "feasible_when": "At  least 99.5 % YES"}, "binary", -0.99),
    ({**SAFE, "feasible_when": 'at least 95% "yes"'}, "binary", -0.9),
    ({**SAFE, "feasible_when": "at most 30% no"}, "binary", -0.4),  # 2·0.3 − 1
    ({**SAFE, "feasible_when": "at least 50% yes"}, "binary", 0.0),
    ({**UNSAFE, "feasible_when": "at most 75% unsafe"}, "binary", 0.5),
    ({**SWEET, "feasible_when": "mean at least 7"}, "gaussian", -7.0),
    ({**SWEET, "feasible_when": "mean at most 3"}, "gaussian", 3.0),
    ({**SCALE, "feasible_when": "Mean at MOST -2.5"}, "gaussian", -2.5),
    ({"feasible_when": "mean at least 0"}, "gaussian", 0.0),
])
def test_feasible_when_gives_the_threshold(meta, noise, threshold):
    built = instance(meta, noise)
    assert built.threshold == threshold and math.copysign(1, built.threshold) == math.copysign(1, threshold)
    assert feasible_threshold(built.meta, built.noise) == threshold


def test_without_feasible_when_the_threshold_is_the_files_or_zero():
    assert instance(SAFE, threshold=0.25).threshold == 0.25
    assert instance(SAFE).threshold == 0.0
    assert feasible_threshold({}, BinaryNoise()) is None


@pytest.mark.parametrize("meta, noise, answers", [
    (SAFE, "binary", {"yes": -1.0, " YES ": -1.0, "ｙｅｓ": -1.0, "no": 1.0, "No": 1.0}),
    (UNSAFE, "binary", {"safe": -1.0, "Unsafe": 1.0}),
    ({**SWEET, "feasible_when": "mean at least 7"}, "gaussian", {"7.5": -7.5, " -2 ": 2.0, 3: -3.0, "1e2": -100.0}),
    ({**SWEET, "feasible_when": "mean at most 3"}, "gaussian", {"7.5": 7.5, "−2": -2.0}),
    (SCALE, "gaussian", {"not sweet": 0.0, "SWEET": 7.0}),
    ({**SCALE, "feasible_when": "mean at least 7"}, "gaussian", {"not sweet": 0.0, "sweet": -7.0}),
])
def test_an_answer_records_its_observation(meta, noise, answers):
    questions = questions_of(instance(meta, noise))
    for given_answer, recorded in answers.items():
        value = questions.value(given_answer)
        assert value == recorded and math.copysign(1, value) == math.copysign(1, recorded), given_answer


def test_a_negated_zero_is_recorded_as_zero():
    assert math.copysign(1, questions_of(instance({"feasible_when": "mean at least 1"}, "gaussian")).value("0")) == 1


@pytest.mark.parametrize("noise, answers", [
    ("binary", {"yes": 1.0, "Y": 1.0, "+1": 1.0, "1": 1.0, "1.0": 1.0, " no ": -1.0, "n": -1.0, "0": -1.0,
                "−1": -1.0, 1: 1.0, 0: -1.0}),
    ("gaussian", {"2.5": 2.5, " -3 ": -3.0, "−0.5": -0.5, 4: 4.0, 1e100: 1e100}),
])
def test_without_meta_answers_mean_what_they_always_meant(noise, answers):
    questions = questions_of(instance({}, noise))
    for given_answer, recorded in answers.items():
        assert questions.value(given_answer) == recorded == observation(noise, given_answer)


def test_the_default_questions():
    assert questions_of(instance({}, "binary")).to_json() == {"question": BINARY_QUESTION, "answers": ["yes", "no"],
                                                              "numbers": False}
    assert questions_of(instance({}, "gaussian")).to_json() == {"question": GAUSSIAN_QUESTION, "answers": [],
                                                                "numbers": True}
    assert BINARY_QUESTION == "Does this option break the constraint?"  # worded so that yes records +1
    assert questions_of(instance(SCALE, "gaussian")).to_json() == {
        "question": "How sweet is this cookie?", "answers": ["not sweet", "sweet"], "numbers": False}
    assert questions_of(instance({"question": "  Sweetness?  "}, "gaussian")).to_json()["question"] == "Sweetness?"


@pytest.mark.parametrize("meta, noise, given_answer, message", [
    (UNSAFE, "binary", "yes", "'yes' is not an answer to this question (answers: safe, unsafe)"),
    (UNSAFE, "binary", "1", "'1' is not an answer to this question"),
    (UNSAFE, "binary", -1.0, "'-1.0' is not an answer to this question"),
    (SAFE, "binary", "y", "'y' is not an answer to this question (answers: yes, no)"),
    (SCALE, "gaussian", "7", "'7' is not an answer to this question (answers: not sweet, sweet)"),
    ({}, "binary", "maybe", "'maybe' is not a binary observation"),
    (SWEET, "gaussian", "1_0", "'1_0' is not a number"),
    (SWEET, "gaussian", "nan", "'nan' is not a finite number"),
    ({**SWEET, "feasible_when": "mean at least 7"}, "gaussian", "1e101", "'1e101' is too large"),
    (SWEET, "gaussian", "sweet", "'sweet' is not a number"),
])
def test_an_answer_the_study_does_not_take_is_one_line(meta, noise, given_answer, message):
    with pytest.raises(OptionError) as error:
        questions_of(instance(meta, noise)).value(given_answer)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


MALFORMED = [
    ("binary", {**SAFE, "question": 3}, "meta.question: must be a text, got 3"),
    ("binary", {**SAFE, "question": "  "}, "meta.question: must not be empty"),
    ("gaussian", {"question": "x" * 1001}, "meta.question: has 1,001 characters; a question has at most 1,000"),
    ("gaussian", {"question": "a\x1b[2Jb"}, "meta.question: must not contain control characters"),
    ("binary", {"question": "Safe?"}, "meta.question: binary answers must say which one means feasible"),
    ("binary", {"answers": SAFE["answers"]}, "meta.answers: needs meta.question"),
    ("binary", {"feasible_when": "at most 5% yes"}, "meta.feasible_when: binary answers must say which one"),
    ("binary", {**SAFE, "answers": "number"}, "meta.answers: binary noise takes a mapping of two answers"),
    ("binary", {**SAFE, "answers": {"yes": "feasible", "no": "infeasible", "maybe": "feasible"}},
     "meta.answers: binary noise takes a mapping of two answers, one feasible and one infeasible, "
     "e.g. {yes: feasible, no: infeasible}; got 3 answers"),
    ("binary", {**SAFE, "answers": {"yes": "feasible", "no": "feasible"}},
     "meta.answers: needs one feasible and one infeasible answer, got two feasible"),
    ("binary", {**SAFE, "answers": {"yes": "feasible", "no": "maybe"}},
     "meta.answers: 'no' must map to feasible or infeasible, got 'maybe'"),
    ("binary", {**SAFE, "answers": {"yes": "feasible", "no": -1}},
     "meta.answers: 'no' must map to feasible or infeasible, got -1"),
    ("binary", {**SAFE, "answers": {"Yes": "feasible", "yes ": "infeasible"}},
     "meta.answers: 'Yes' and 'yes' are the same answer"),
    ("binary", {**SAFE, "answers": {"1": "infeasible", "0": "feasible"}}, "meta.answers: '1' is a number"),
    ("binary", {**SAFE, "answers": {"yes": "feasible", "-1": "infeasible"}}, "meta.answers: '-1' is a number"),
    ("binary", {**SAFE, "answers": {" ": "feasible", "no": "infeasible"}}, "meta.answers: a label is empty"),
    ("binary", {**SAFE, "answers": {"yes": "feasible", "n" * 101: "infeasible"}},
     "meta.answers: a label has 101 characters; labels have at most 100"),
    ("gaussian", {**SCALE, "answers": [0, 7]}, "meta.answers: must be number (free numbers) or a mapping"),
    ("gaussian", {**SCALE, "answers": "numbers"}, "meta.answers: must be number (free numbers) or a mapping"),
    ("gaussian", {**SCALE, "answers": {"sweet": 7}}, "meta.answers: a scale of labelled numbers needs at least two"),
    ("gaussian", {**SCALE, "answers": {"a": float("nan"), "b": 1}}, "meta.answers.a: must be finite"),
    ("gaussian", {**SCALE, "answers": {"a": float("inf"), "b": 1}}, "meta.answers.a: must be finite"),
    ("gaussian", {**SCALE, "answers": {"a": "7", "b": 1}}, "meta.answers.a: must be a number, got '7'"),
    ("gaussian", {**SCALE, "answers": {"a": True, "b": 1}}, "meta.answers.a: must be a number, got True"),
    ("gaussian", {**SCALE, "answers": {"a": 1e200, "b": 1}}, "meta.answers.a: must lie within ±1e+100"),
    ("gaussian", {**SCALE, "answers": {"Sweet": 7, "SWEET": 8}}, "meta.answers: 'Sweet' and 'SWEET' are the same"),
    ("binary", {**SAFE, "feasible_when": "95% yes"}, "meta.feasible_when: write 'at least P% ANSWER' or 'at most P% "
                                                     "ANSWER', got '95% yes'"),
    ("binary", {**SAFE, "feasible_when": "at least 95%"}, "meta.feasible_when: write 'at least P% ANSWER'"),
    ("binary", {**SAFE, "feasible_when": "at least 95 "}, "meta.feasible_when: write 'at least P% ANSWER'"),
    ("binary", {**SAFE, "feasible_when": "at least 0." + "9" * 5000 + " yes"},
     "meta.feasible_when: the share has 5,002 digits; write fewer"),
    ("binary", {**SAFE, "feasible_when": 0.95}, "meta.feasible_when: must be a text such as 'at least 95% yes', "
                                                "got 0.95"),
    ("binary", {**SAFE, "feasible_when": "at least 100% yes"},
     "meta.feasible_when: the share must lie strictly between 0% and 100%, got 100%"),
    ("binary", {**SAFE, "feasible_when": "at least 0 yes"}, "meta.feasible_when: the share must lie strictly"),
    ("binary", {**SAFE, "feasible_when": "at least -5% yes"}, "meta.feasible_when: the share must lie strictly"),
    ("binary", {**SAFE, "feasible_when": "at least 95 yes"},
     "meta.feasible_when: the share must lie strictly between 0% and 100%, got 95 (write 95% or 0.95)"),
    ("binary", {**SAFE, "feasible_when": "at least 95% maybe"},
     "meta.feasible_when: 'maybe' is not one of the answers (yes, no)"),
    ("binary", {**SAFE, "feasible_when": "at least 5% no"},
     "meta.feasible_when: 'at least 5% no' makes an option feasible when raters answer no more often, which no "
     "constraint φᵀx ≤ τ states; write 'at least P% yes' or 'at most P% no'"),
    ("binary", {**UNSAFE, "feasible_when": "at most 95% safe"},
     "meta.feasible_when: 'at most 95% safe' makes an option feasible when raters answer unsafe more often, which "
     "no constraint φᵀx ≤ τ states; write 'at least P% safe' or 'at most P% unsafe'"),
    ("gaussian", {**SWEET, "feasible_when": "at least 7"},
     "meta.feasible_when: write 'mean at least V' or 'mean at most V' for Gaussian noise, got 'at least 7'"),
    ("gaussian", {**SWEET, "feasible_when": "mean at least 7 points"}, "meta.feasible_when: write 'mean at least V'"),
    ("gaussian", {**SWEET, "feasible_when": "mean at least 1e200"},
     "meta.feasible_when: the mean must lie within ±1e+100, got 1e200"),
    ("gaussian", {**SWEET, "feasible_when": ["mean at least 7"]}, "meta.feasible_when: must be a text such as "
                                                                  "'mean at least 7'"),
]


@pytest.mark.parametrize("noise, meta, message", MALFORMED, ids=[message for _, _, message in MALFORMED])
def test_a_malformed_meta_is_one_line_when_the_file_is_read(noise, meta, message):
    mapping = {"arms": [[1.0, 0.0], [0.0, 1.0]], "reward": [1.0, 0.5], "threshold": -0.9, "meta": meta,
               "noise": {"kind": "binary"} if noise == "binary" else {"kind": "gaussian", "sigma": 1.0}}
    if "feasible_when" in meta:
        del mapping["threshold"]
    with pytest.raises(InstanceError) as error:
        from_mapping(mapping, "f.yaml")
    assert str(error.value).startswith(f"f.yaml: {message}"), str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("fields, message", [
    ({"threshold": 0.5}, "threshold: 0.5 disagrees with meta.feasible_when 'at least 95% yes', which gives -0.9; "
                         "drop threshold or make them agree"),
    ({"threshold": -0.9 + 1e-9}, "threshold: -0.899999999 disagrees with meta.feasible_when"),
    ({"threshold_known": False}, "threshold_known: cannot be false with meta.feasible_when 'at least 95% yes', "
                                 "which fixes the threshold; drop one of them"),
])
def test_a_threshold_that_contradicts_feasible_when_is_one_line(fields, message):
    with pytest.raises(InstanceError) as error:
        instance({**SAFE, "feasible_when": "at least 95% yes"}, **fields)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_the_threshold_of_mean_at_least_is_negated_and_a_slip_is_named():
    with pytest.raises(InstanceError, match=r"^threshold: 7\.0 disagrees with meta.feasible_when 'mean at least 7', "
                                            r"which gives -7\.0 \(answers are recorded negated\); "):
        instance({**SWEET, "feasible_when": "mean at least 7"}, "gaussian", threshold=7)
    for meta, noise, threshold in [({**SWEET, "feasible_when": "mean at most 7"}, "gaussian", -7),
                                   ({**SAFE, "feasible_when": "at least 95% yes"}, "binary", 0.9)]:
        with pytest.raises(InstanceError) as error:
            instance(meta, noise, threshold=threshold)
        assert "negated" not in str(error.value)


def test_a_stated_threshold_may_differ_from_the_derived_one_by_round_off():
    when = {**SAFE, "feasible_when": "at least 95% yes"}
    assert instance(when, threshold=1 - 2 * 0.95).threshold == 1 - 2 * 0.95  # −0.8999999999999999
    assert instance(when, threshold=-0.9).threshold == -0.9


def test_binary_means_are_still_checked_when_feasible_when_gives_the_threshold():
    with pytest.raises(InstanceError, match=r"^noise: binary feedback needs every constraint value φᵀx in \[−1, 1\]; "
                                            r"arm 0 has 1\.5"):
        instance({**SAFE, "feasible_when": "at least 95% yes"}, constraint=[1.5, 0.0])


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.floats(0.0, 1.0, exclude_min=True, exclude_max=True), st.booleans(), st.booleans())
def test_an_arm_answered_with_the_stated_share_lies_on_the_boundary(share, at_least, percent):
    """For the exact decimal of any float p, an arm whose feasible-side answer (yes) comes with
    probability exactly p, or whose infeasible-side one (no) does, lies on the boundary."""
    with localcontext() as context:
        context.prec = 1200  # every float is an exact decimal of at most 1,100 digits
        written = f"{Decimal(share) * 100}%" if percent else f"{Decimal(share)}"
    when = f"at least {written} yes" if at_least else f"at most {written} no"
    # Appendix C: P(y = +1) = (φᵀx + 1)/2, with no recording +1: P(yes) = (1 − φᵀx)/2, P(no) = (φᵀx + 1)/2
    mean = 1 - 2 * share if at_least else 2 * share - 1
    built = Instance(name="p", arms=[[1.0]], reward=[1.0], constraint=[mean], noise=BinaryNoise(),
                     meta={**SAFE, "feasible_when": when})
    assert built.threshold == mean
    assert built.boundary_arms.tolist() == [0]


def test_yaml_without_threshold_loads_and_bound_and_solve_run(tmp_path):
    path = tmp_path / "drive.yaml"
    path.write_text("kind: cbai\narms: [[1.0, 0.0], [0.0, 1.0]]\nreward: [1.0, 0.5]\nconstraint: [0.5, -0.99]\n"
                    "noise: {kind: binary}\nmeta:\n  question: Does this driving feel safe?\n"
                    "  answers: {yes: feasible, no: infeasible}\n  feasible_when: at least 95% yes\n")
    loaded = load(path)
    assert loaded.threshold == -0.9 and loaded.feasible.tolist() == [False, True]
    assert questions_of(loaded).answers == ("yes", "no")  # YAML's `yes:` key is the text, not true
    runner = CliRunner()
    bound = runner.invoke(app, ["bound", str(path), "--json"])
    assert bound.exit_code == 0, bound.stderr
    assert json.loads(bound.stdout)["best_arm"] == 1
    solve = runner.invoke(app, ["solve", str(path), "--algo", "uniform", "--json"])
    assert solve.exit_code == 0, solve.stderr
    assert json.loads(solve.stdout)["runs"][0]["recommended"] == 1


@pytest.mark.parametrize("suffix", ["yaml", "npz"])
def test_a_derived_threshold_survives_a_round_trip(tmp_path, suffix):
    built = instance({**UNSAFE, "feasible_when": "at most 5% unsafe"}, constraint=[-0.95, 0.2])
    save(built, tmp_path / f"x.{suffix}")
    assert load(tmp_path / f"x.{suffix}") == built


def test_a_file_without_threshold_or_feasible_when_is_still_refused():
    with pytest.raises(InstanceError, match=r"^f\.yaml: threshold: required field is missing$"):
        from_mapping({"arms": [[1.0]], "reward": [1.0], "noise": {"kind": "binary"}, "meta": SAFE}, "f.yaml")


@pytest.fixture
def folder(tmp_path) -> Path:
    """A study's folder with one image, video and audio file, and a file outside it."""
    study = tmp_path / "study"
    (study / "clips").mkdir(parents=True)
    for name in ("clips/a.PNG", "clips/b.mp4", "c.wav"):
        (study / name).write_bytes(b"\x00")
    (tmp_path / "outside.png").write_bytes(b"\x00")
    return study


def test_media_files_are_resolved_in_the_instance_folder(folder):
    (folder / "link.mp4").symlink_to(folder / "clips" / "b.mp4")
    media = check_media(instance({"media": ["clips/a.PNG", "link.mp4", "./clips/../c.wav"]}), folder)
    assert media == (folder / "clips/a.PNG", folder / "clips/b.mp4", folder / "c.wav")
    assert [media_type(path) for path in media] == ["image/png", "video/mp4", "audio/wav"]
    assert check_media(instance({}), folder) == ()


@pytest.mark.parametrize("media, message", [
    ("clips/a.PNG", "meta.media: must be a list of file paths, one per arm"),
    (["clips/a.PNG", "c.wav", 3], "meta.media: must be a list of file paths, one per arm"),
    (["clips/a.PNG", "c.wav"], "meta.media: has 2 files for 3 arms; give one per arm"),
    (["clips/a.PNG", "c.wav", ""], "meta.media[2]: must be a file path relative to the instance's folder"),
    (["clips/a.PNG", "c.wav", "/etc/hostname.png"], "meta.media[2]: must be relative to the instance's folder, "
                                                    "got '/etc/hostname.png'"),
    (["clips/a.PNG", "c.wav", "../outside.png"], "meta.media[2]: '../outside.png' leads outside the instance's folder"),
    (["clips/a.PNG", "c.wav", "escape.png"], "meta.media[2]: 'escape.png' leads outside the instance's folder"),
    (["clips/a.PNG", "c.wav", "clips/missing.mp3"], "meta.media[2]: 'clips/missing.mp3' does not exist"),
    (["clips/a.PNG", "c.wav", "dir.gif"], "meta.media[2]: 'dir.gif' is not a file"),
    (["clips/a.PNG", "c.wav", "notes.txt"], "meta.media[2]: 'notes.txt' is not a media file a study can show "
                                            "(png, jpg, jpeg, gif, webp, svg, mp4, webm, mp3, wav or ogg)"),
    (["clips/a.PNG", "c.wav", "c.wav\n"], "meta.media[2]: must not contain control characters"),
])
def test_a_media_file_a_study_cannot_serve_is_one_line(folder, media, message):
    (folder / "escape.png").symlink_to(folder.parent / "outside.png")  # a link that leads outside
    (folder / "notes.txt").write_text("x")
    (folder / "dir.gif").mkdir()
    with pytest.raises(InstanceError) as error:
        check_media(instance({"media": media}), folder)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_check_media_names_the_instance_file(folder):
    built = from_mapping({"arms": [[1.0]], "reward": [1.0], "threshold": 0.0, "noise": {"kind": "binary"},
                          "meta": {"media": ["gone.png"]}}, "study/f.yaml")
    with pytest.raises(InstanceError, match=r"^study/f\.yaml: meta\.media\[0\]: 'gone\.png' does not exist$"):
        check_media(built, folder)


@pytest.mark.parametrize("path, kind", [("a.jpg", "image/jpeg"), ("a.JPEG", "image/jpeg"), ("x/a.svg", "image/svg+xml"),
                                        ("a.webm", "video/webm"), ("a.mp3", "audio/mpeg"), ("a.ogg", "audio/ogg"),
                                        (Path("a.webp"), "image/webp"), ("a.gif", "image/gif")])
def test_media_type(path, kind):
    assert media_type(path) == kind


def test_media_type_of_another_file_is_one_line():
    with pytest.raises(OptionError, match=r"^'a\.pdf' is not a media file a study can show \(png, "):
        media_type("a.pdf")


def test_questions_of_a_file_is_what_its_meta_says():
    questions = questions_of(instance({**SCALE, "feasible_when": "mean at least 7"}, "gaussian"))
    assert (questions.answers, questions.numbers, questions.observations, questions.negated) == (
        ("not sweet", "sweet"), False, (0.0, -7.0), True)


def test_the_shipped_cookie_study_asks_its_question_and_records_yes_as_feasible(tmp_path):
    from cbai_cli.session import Session

    example = Path(__file__).resolve().parents[1] / "examples" / "cookies" / "cookies.yaml"
    with Session.start(tmp_path / "cookies.db", example) as session:
        assert session.instance.threshold == pytest.approx(-0.6)  # at least 80 % yes: τ = 1 − 2·0.8
        assert (session.questions.question, session.questions.answers) == ("Would you buy this cookie?",
                                                                          ("yes", "no"))
        [query] = session.ask(rater="ann")
        session.answer(query.id, "yes", rater="ann")
        assert [record["value"] for record in session.records()] == [-1.0]
