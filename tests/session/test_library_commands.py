"""cbai_cli.session.commands: the ``cbai session`` commands as library calls, each returning
a report whose JSON is what ``--json`` prints."""

from __future__ import annotations

import pytest

from cbai_cli.contracts.errors import OptionError
from cbai_cli.session import NothingToUndo, commands


@pytest.fixture
def study(tmp_path, instance_file):
    path = tmp_path / "study.sqlite"
    commands.start(str(path), str(instance_file), "g-acol", seed=3)
    return path


def test_start_reports_the_study_made_and_says_it_prepares_the_algorithm(tmp_path, instance_file):
    told = []
    report = commands.start(str(tmp_path / "s.sqlite"), str(instance_file), "g-acol", seed=3, preparing=told.append,
                            delta=0.1)
    assert report.to_json() == {"study": str(tmp_path / "s.sqlite"), "instance": "irrelevant-dims-d4-eps0.2",
                                "algorithm": "g-acol", "regime": "theory", "seed": 3, "options": {"coordinates": "features", "delta": 0.1},
                                "arms": 5, "noise": "gaussian"}
    assert told == ["preparing g-acol (compiled on its first use after installing cbai, then loaded from the cache)…"]


def test_start_refuses_a_study_it_cannot_write_before_reading_the_instance(tmp_path):
    with pytest.raises(OptionError, match="^-o .*: folder .* does not exist$"):
        commands.start(str(tmp_path / "missing" / "s.sqlite"), str(tmp_path / "no-such-instance.yaml"))


def test_next_hands_the_same_queries_again_until_they_are_answered(study):
    first = commands.hand_out(study, 2, "ann")
    again = commands.hand_out(study, 2, "ann")
    assert [query.id for query in first.queries] == [query.id for query in again.queries] == [1, 2]
    document = first.to_json()
    assert (document["done"], document["recommended"], document["answered"], document["pending"]) == (False, None,
                                                                                                      0, 2)
    assert [query["id"] for query in document["queries"]] == [1, 2]


@pytest.mark.parametrize("query, values, answers, message", [
    (None, (), None, "give a query id and at least one value"),
    ("1", (), None, "give a query id and at least one value"),
    ("1", ("0.5",), "answers.csv", "give either ID VALUE... or --file, not both"),
])
def test_record_needs_either_an_id_and_values_or_a_file(study, query, values, answers, message):
    with pytest.raises(OptionError, match=message):
        commands.record(study, query, values, answers)


def test_record_counts_answers_and_surplus(study, tmp_path):
    count = commands.hand_out(study, 1).queries[0].count
    report = commands.record(study, "1", ["0.5"] * (count + 1))
    assert (report.recorded, report.surplus) == (count + 1, 1)
    assert report.to_json()["recorded"] == count + 1
    answers = tmp_path / "answers.csv"
    answers.write_text("id,value\n1,0.25\n")
    assert commands.record(study, answers=answers).to_json()["surplus"] == 1  # its query is complete


def test_skip_and_undo_give_a_query_back(study):
    commands.hand_out(study, 1, "ann")
    assert commands.skip(study, "1", "ann") == "skipped query 1; it goes back to the pool"
    with pytest.raises(NothingToUndo):  # a skip recorded without a grace cannot be undone
        commands.undo(study, "ann")


def test_status_and_log_read_without_writing(study):
    commands.hand_out(study, 1)
    commands.record(study, "1", ["0.5"])
    status = commands.status(study)
    assert status.to_json()["answered"] == 1
    assert status.labels == ["arm 0", "arm 1", "arm 2", "arm 3", "arm 4"]
    log = commands.log(study)
    assert [record["kind"] for record in log.to_json()["records"]] == ["answer"]
