"""`cbai session` commands in-process: JSON documents and every refused input."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from cbai_cli.session import Session


def _study(tmp_path, instance, cli, *options):
    study = tmp_path / "s.db"
    result = cli("session", "start", instance, "-o", study, *options)
    assert result.exit_code == 0, result.stderr
    return study


def _observations(study) -> int:
    with sqlite3.connect(study) as connection:
        return connection.execute("SELECT count(*) FROM events WHERE kind = 'answer'").fetchone()[0]


def _refused(result, text):
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and text in result.stderr, result.stderr


def test_next_json_has_the_stable_keys_and_repeats_pending_queries(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "g-acol")
    first = json.loads(cli("session", "next", study, "--json").stdout)
    assert set(first) == {"cbai_version", "schema", "done", "recommended", "answered", "pending", "question", "answers",
                          "numbers", "queries"}
    assert set(first["queries"][0]) == {"id", "arm", "count", "remaining", "label", "features", "expires"}
    assert json.loads(cli("session", "next", study, "--json").stdout) == first
    three = json.loads(cli("session", "next", study, "--count", "3", "--json").stdout)["queries"]
    assert [query["id"] for query in three] == [1, 2, 3]
    assert json.loads(cli("session", "next", study, "--count", "2", "--json").stdout)["queries"] == three[:2]


def test_status_json_lists_every_arm_with_its_interval_and_state(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "g-acol")
    cli("session", "next", study)
    assert cli("session", "record", study, "1", "0.4").exit_code == 0
    status = json.loads(cli("session", "status", study, "--json").stdout)
    assert {"answered", "pending", "done", "recommended", "guaranteed", "arms"} <= set(status)
    assert status["answered"] == 1 and status["pending"] == 0
    assert [arm["arm"] for arm in status["arms"]] == list(range(5))
    assert all(arm["lower"] <= arm["upper"] and arm["state"] in ("uncertain", "feasible", "infeasible", "dominated")
               for arm in status["arms"])


@pytest.mark.parametrize(("options", "step"), [((), "rollout"), (("--step", "vertex-or-target"), "vertex-or-target")])
def test_status_names_the_step_a_track_and_stop_study_takes(tmp_path, instance_file, cli, options, step):
    study = _study(tmp_path, instance_file, cli, "--algo", "track-and-stop", *options)
    assert json.loads(cli("session", "status", study, "--json").stdout)["options"] == {"coordinates": "d-optimal",
                                                                                         "step": step}
    assert (f"track-and-stop (ols; coordinates=d-optimal; step={step})"
            in " ".join(cli("session", "status", study).stdout.split()))


def test_start_records_the_options_given(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "g-acol", "--regime", "tuned", "--beta", "0.25",
                   "--seed", "4", "--lambda", "0.5")
    with Session.open(study) as session:
        assert session.options == {"coordinates": "features", "beta": 0.25, "ridge": 0.5}
        assert (session.seed, session.regime, session.algorithm) == (4, "tuned", "g-acol")


def test_log_csv_lists_answers_in_order_with_their_rater(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "acol")
    query = json.loads(cli("session", "next", study, "--json", "--rater", "ann").stdout)["queries"][0]
    assert cli("session", "record", study, query["id"], "0.5", "-0.25", "--rater", "ann").exit_code == 0
    lines = cli("session", "log", study, "--csv").stdout.splitlines()
    assert lines[0] == "seq,kind,id,arm,label,rater,answer,value,surplus,held,undone,time"
    # seq 1 is the lease that `next` stored
    arm = str(query["arm"])
    assert [line.split(",")[:11] for line in lines[1:]] == [
        ["2", "answer", "1", arm, f"arm {arm}", "ann", "0.5", "0.5", "false", "false", "false"],
        ["3", "answer", "1", arm, f"arm {arm}", "ann", "-0.25", "-0.25", "false", "false", "false"]]


def test_binary_answers_take_words_and_numbers(tmp_path, binary_file, cli):
    study = _study(tmp_path, binary_file, cli, "--algo", "acol")
    query = json.loads(cli("session", "next", study, "--json").stdout)["queries"][0]
    assert cli("session", "record", study, query["id"], "yes", "no", "1", "0", "-1").exit_code == 0
    values = [row["value"] for row in json.loads(cli("session", "log", study, "--json").stdout)["records"]]
    assert values == [1.0, -1.0, 1.0, -1.0, -1.0]


# ------------------------------------------------------------ refused inputs: one line, exit 2, nothing recorded
@pytest.fixture
def started(tmp_path, instance_file, cli):
    """An ACOL study whose first query (count ≥ 2) has one observation recorded."""
    study = _study(tmp_path, instance_file, cli, "--algo", "acol")
    query = json.loads(cli("session", "next", study, "--json").stdout)["queries"][0]
    assert cli("session", "record", study, query["id"], "0.1").exit_code == 0
    return study, query


def test_more_values_than_a_query_has_left_are_kept_as_surplus(started, cli):
    study, query = started
    result = cli("session", "record", study, query["id"], *["0.2"] * query["count"], "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["surplus"] == 1
    records = json.loads(cli("session", "log", study, "--json").stdout)["records"]
    assert [record["surplus"] for record in records] == [False] * query["count"] + [True]


def test_an_unknown_query_id_is_refused(started, cli):
    study, _ = started
    _refused(cli("session", "record", study, "999", "0.2"), "no query 999")
    assert _observations(study) == 1


def test_a_query_id_that_is_not_a_number_is_refused(started, cli):
    study, _ = started
    _refused(cli("session", "record", study, "first", "0.2"), "not a query id")


@pytest.mark.parametrize("text", ["²", "١", "1" * 5000])
def test_a_query_id_of_other_digits_or_thousands_of_them_is_refused(started, cli, text):
    study, _ = started
    _refused(cli("session", "record", study, text, "0.2"), "not a query id")
    assert _observations(study) == 1


def test_a_value_beyond_the_magnitude_limit_is_refused(started, cli):
    study, query = started
    _refused(cli("session", "record", study, query["id"], "1e308"), "too large")
    assert cli("session", "record", study, query["id"], "-1e100").exit_code == 0


def test_an_answer_to_a_completed_query_is_kept_as_surplus(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "g-acol")
    cli("session", "next", study)
    assert cli("session", "record", study, "1", "0.2").exit_code == 0
    late = cli("session", "record", study, "1", "0.3")
    assert late.exit_code == 0 and "1 surplus" in late.stdout, late.stderr
    assert _observations(study) == 2
    status = json.loads(cli("session", "status", study, "--json").stdout)
    assert (status["answered"], status["surplus"]) == (1, 1)


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "1e999", ""])
def test_a_value_gaussian_noise_cannot_produce_is_refused(started, cli, value):
    study, query = started
    _refused(cli("session", "record", study, query["id"], "0.3", value), "number")
    assert _observations(study) == 1


@pytest.mark.parametrize("value", ["2", "0.5", "maybe", "-2"])
def test_a_value_binary_noise_cannot_produce_is_refused(tmp_path, binary_file, cli, value):
    study = _study(tmp_path, binary_file, cli, "--algo", "acol")
    cli("session", "next", study)
    _refused(cli("session", "record", study, "1", "yes", value), "not a binary observation")
    assert _observations(study) == 0


def test_an_answers_file_with_one_bad_row_records_nothing(tmp_path, started, cli):
    study, query = started
    answers = tmp_path / "answers.csv"
    answers.write_text(f"id,value\n{query['id']},0.1\n{query['id']},0.2\n{query['id']},oops\n")
    _refused(cli("session", "record", study, "--file", answers), "'oops' is not a number")
    assert _observations(study) == 1
    answers.write_text(f"id,value\n{query['id']},0.1\n{query['id']},0.2\n")
    assert cli("session", "record", study, "--file", answers).exit_code == 0
    assert _observations(study) == 3


@pytest.mark.parametrize(("text", "message"), [("query,answer\n1,0.1\n", "header id,value"),
                                               ("id,value\n1,0.1,7\n", "line 2 has 3 field(s)"),
                                               ("id,value\n", "no observation"),
                                               ("id,value\n1," + "1" * 200_000 + "\n", "line 2: field larger")])
def test_a_malformed_answers_file_is_refused(tmp_path, started, cli, text, message):
    study, _ = started
    answers = tmp_path / "answers.csv"
    answers.write_text(text)
    _refused(cli("session", "record", study, "--file", answers), message)
    assert _observations(study) == 1


def test_an_answers_file_with_a_byte_order_mark_is_read(tmp_path, started, cli):
    study, query = started
    answers = tmp_path / "answers.csv"
    answers.write_bytes(f"\ufeffid,value\n{query['id']},0.1\n".encode())
    assert cli("session", "record", study, "--file", answers).exit_code == 0
    assert _observations(study) == 2


def test_record_without_values_is_refused(started, cli):
    study, query = started
    _refused(cli("session", "record", study, query["id"]), "at least one value")


def test_a_done_study_keeps_answers_it_no_longer_needs_as_surplus(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "g-acol")
    handed, recorded = set(), set()
    for _ in range(50):
        queries = json.loads(cli("session", "next", study, "--count", "3", "--json").stdout)["queries"]
        if not queries:
            break
        handed |= {query["id"] for query in queries}
        assert cli("session", "record", study, queries[0]["id"], "-5").exit_code == 0
        recorded.add(queries[0]["id"])
    assert json.loads(cli("session", "status", study, "--json").stdout)["done"]
    unanswered = min(handed - recorded)
    before = json.loads(cli("session", "status", study, "--json").stdout)
    late = cli("session", "record", study, unanswered, "0.1", "--json")
    assert late.exit_code == 0 and json.loads(late.stdout)["surplus"] == 1
    after = json.loads(cli("session", "status", study, "--json").stdout)
    assert (after["answered"], after["surplus"], after["recommended"]) == (
        before["answered"], before["surplus"] + 1, before["recommended"])


def test_count_above_the_limit_is_refused(started, cli):
    study, _ = started
    _refused(cli("session", "next", study, "--count", str(10**29)), "at most 10,000")


def test_count_below_one_is_refused(started, cli):
    study, _ = started
    _refused(cli("session", "next", study, "--count", "0"), "--count must be")


def test_start_never_overwrites(tmp_path, instance_file, cli):
    study = tmp_path / "s.db"
    study.write_text("precious")
    _refused(cli("session", "start", instance_file, "--algo", "acol", "-o", study), "exists already")
    assert study.read_text() == "precious"
    assert [path.name for path in tmp_path.iterdir()] == sorted(["s.db", "irr.yaml"]) or len(list(tmp_path.iterdir())) == 2


def test_start_in_a_missing_folder_is_refused(tmp_path, instance_file, cli):
    _refused(cli("session", "start", instance_file, "--algo", "acol", "-o", tmp_path / "no" / "s.db"),
             "does not exist")


def test_start_output_ending_in_a_slash_is_refused(tmp_path, instance_file, cli):
    _refused(cli("session", "start", instance_file, "--algo", "acol", "-o", f"{tmp_path / 's.db'}/"),
             "-o " + f"{tmp_path / 's.db'}/: ends with a slash")
    assert sorted(path.name for path in tmp_path.iterdir()) == [instance_file.name]


def test_start_output_given_as_an_empty_path_is_refused(tmp_path, instance_file, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an empty path read as a path is this folder (which exists)
    _refused(cli("session", "start", instance_file, "--algo", "acol", "-o", ""), "-o '': an empty path names no file")
    assert sorted(path.name for path in tmp_path.iterdir()) == [instance_file.name]


def test_start_without_algo_runs_the_default_of_cbai_solve(tmp_path, instance_file, cli):
    from cbai_cli.algorithms.registry import default_algorithm

    with Session.open(_study(tmp_path, instance_file, cli)) as session:
        assert session.algorithm == default_algorithm("cbai")


def test_a_missing_option_names_the_session_command(tmp_path, instance_file, cli):
    _refused(cli("session", "start", instance_file), "cbai session start: error: Missing option")


def test_start_with_a_bad_option_is_refused(tmp_path, instance_file, cli):
    _refused(cli("session", "start", instance_file, "--algo", "acol", "--delta", "2", "-o", tmp_path / "s.db"),
             "--delta must lie in")
    assert not (tmp_path / "s.db").exists()


def test_a_file_that_is_not_sqlite_is_refused(tmp_path, cli):
    study = tmp_path / "notes.db"
    study.write_text("hello, not a database\n" * 100)
    _refused(cli("session", "status", study), "not a cbai study")


def test_another_programs_database_is_refused(tmp_path, cli):
    study = tmp_path / "other.db"
    with sqlite3.connect(study) as connection:
        connection.execute("CREATE TABLE t (x)")
    _refused(cli("session", "next", study), "not a cbai study")


def test_a_missing_study_is_refused(tmp_path, cli):
    _refused(cli("session", "status", tmp_path / "none.db"), "no such study")


def test_a_pipe_given_as_a_study_is_not_a_regular_file(tmp_path, cli):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    _refused(cli("session", "status", pipe), "not a regular file")


@pytest.mark.parametrize("instance", ["amani-a.yaml", "soare-safe.yaml"])
def test_start_on_a_safe_instance_is_refused(tmp_path, cli, instance):
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[2] / "instances" / instance
    _refused(cli("session", "start", shipped, "-o", tmp_path / "s.db"), "sessions run cbai instances")


def test_a_truncated_study_is_damaged_in_one_line(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "g-acol", "--regime", "tuned", "--beta", "0.25")
    for _ in range(12):
        queries = json.loads(cli("session", "next", study, "--json").stdout)["queries"]
        if queries:
            assert cli("session", "record", study, queries[0]["id"], "0.3").exit_code == 0
    with sqlite3.connect(study) as connection:  # everything in the main file, then cut its last page short
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with sqlite3.connect(study) as connection:  # cut the events table's page short (its few rows fit in one)
        page = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    os.truncate(study, (page - 1) * page_size + 100)
    result = cli("session", "status", study)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr


def test_a_study_cut_to_a_few_pages_is_called_damaged(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "g-acol")
    with sqlite3.connect(study) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    os.truncate(study, 8192)
    _refused(cli("session", "status", study), "a damaged study (or not a cbai study): database disk image is malformed")


def test_an_observation_row_cbai_cannot_have_written_is_damage(started, cli):
    study, query = started
    with sqlite3.connect(study) as connection:
        connection.execute("INSERT INTO events (seq, kind, query_id, rater, value, given, time) "
                           "VALUES (3, 'answer', ?, '', 'abc', 'abc', 0.0)", (query["id"],))
    _refused(cli("session", "status", study), "the study is damaged: event row")


@pytest.mark.parametrize(("key", "value", "message"), [("seed", "-1", "meta.seed is -1"),
                                                       ("instance", "null", "meta.instance is None"),
                                                       ("options", "[1]", "meta.options is [1]"),
                                                       ("options", '{"delta": 5}', "stored request is refused"),
                                                       ("options", '{"beta": "abc"}', "stored request is refused"),
                                                       ("options", '{"beta": [1]}', "stored request is refused"),
                                                       ("options", '{"delta": {"a": 1}}', "stored request is refused")])
def test_a_study_whose_meta_cbai_cannot_have_written_is_one_line(started, cli, key, value, message):
    study, _ = started
    with sqlite3.connect(study) as connection:
        connection.execute("DROP TRIGGER meta_no_update")
        connection.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    _refused(cli("session", "status", study), message)


def test_a_study_removed_while_open_refuses_the_write(started):
    from cbai_cli.contracts.errors import OptionError

    study, query = started
    with Session.open(study) as session:
        for leftover in (study, study.with_name(study.name + "-wal"), study.with_name(study.name + "-shm")):
            leftover.unlink(missing_ok=True)
        with pytest.raises(OptionError, match="removed or replaced"):
            session.tell(query["id"], 0.2)


def test_next_hands_out_thousands_of_queries_as_one_at_a_time_would(tmp_path, instance_file, cli):
    at_once = _study(tmp_path, instance_file, cli, "--algo", "g-acol", "--regime", "tuned", "--beta", "0.25")
    queries = json.loads(cli("session", "next", at_once, "--count", "1500", "--json").stdout)["queries"]
    (tmp_path / "one").mkdir()
    in_turn = _study(tmp_path / "one", instance_file, cli, "--algo", "g-acol", "--regime", "tuned", "--beta", "0.25")
    arms = [json.loads(cli("session", "next", in_turn, "--count", str(n), "--json").stdout)["queries"][-1]["arm"]
            for n in (1, 2, 3, 700, 1500)]
    assert len(queries) == 1500
    assert arms == [queries[n - 1]["arm"] for n in (1, 2, 3, 700, 1500)]


def test_a_study_locked_by_another_writer_is_one_line(monkeypatch, started, cli):
    from cbai_cli.session import journal

    study, query = started
    monkeypatch.setattr(journal, "BUSY_TIMEOUT_MS", 50)
    holder = sqlite3.connect(study, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = cli("session", "record", study, query["id"], "0.2")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _refused(result, "locked")
    assert _observations(study) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_study_is_refused_for_writing(started, cli):
    study, query = started
    study.chmod(0o444)
    _refused(cli("session", "record", study, query["id"], "0.2"), "cannot write")


def test_a_study_in_a_folder_that_cannot_be_written_can_still_be_read(started, cli, monkeypatch):
    from cbai_cli.session import journal

    study, query = started
    with sqlite3.connect(study) as connection:  # as a study is left once its last writer closed it
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    study.with_name(study.name + "-wal").unlink(missing_ok=True)
    allowed = os.access
    monkeypatch.setattr(journal.os, "access", lambda path, mode: False if Path(path) == study.parent
                        else allowed(path, mode))
    assert journal._immutable(study) == "&immutable=1"
    log = json.loads(cli("session", "log", study, "--json").stdout)["records"]
    assert [entry["id"] for entry in log] == [query["id"]]


def test_a_study_with_a_write_ahead_log_is_never_read_as_immutable(started, monkeypatch):
    from cbai_cli.session import journal

    study, _ = started
    study.with_name(study.name + "-wal").write_bytes(b"x" * 32)  # a writer's unmerged pages
    monkeypatch.setattr(journal.os, "access", lambda path, mode: False)
    assert journal._immutable(study) == ""


def test_an_answers_file_that_is_a_pipe_is_refused_before_it_is_read(started, cli, tmp_path):
    study, _ = started
    pipe = tmp_path / "answers.csv"
    os.mkfifo(pipe)
    _refused(cli("session", "record", study, "--file", str(pipe)), "not a regular file")


def test_an_answer_line_longer_than_any_answer_is_refused(started, cli):
    from cbai_cli.session.interactive import ANSWER_LINE_LIMIT

    study, _ = started
    result = cli("session", "ask", study, input="1" * (ANSWER_LINE_LIMIT + 5))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "an answer line longer than" in result.stderr


def test_answers_are_read_from_stdin_with_file_dash(started, cli):
    study, query = started
    result = cli("session", "record", study, "--file", "-", input=f"id,value\n{query['id']},0.3\n")
    assert result.exit_code == 0, result.stderr
    assert "recorded 1 answer(s)" in result.stdout


def _spend_the_budget(study, cli) -> str:
    """Answer every query of a study of --budget 2 (two single pulls); the last record's output."""
    for _ in range(2):
        query = json.loads(cli("session", "next", study, "--json").stdout)["queries"][0]
        result = cli("session", "record", study, query["id"], "0.5")
        assert result.exit_code == 0, result.stderr
    return result.stdout


def test_record_of_the_last_observation_the_budget_allows_says_the_budget_is_spent(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "uniform", "--budget", "2")
    # two answers 0.5 for arm 0 make it certainly feasible: the best feasible arm known (reward 0)
    assert _spend_the_budget(study, cli) == "recorded 1 answer(s); done (budget spent): recommended 0 " \
                                            "(no guarantee)\n"


def test_status_of_a_study_whose_budget_is_spent_says_it_ended_at_its_budget(tmp_path, instance_file, cli):
    study = _study(tmp_path, instance_file, cli, "--algo", "uniform", "--budget", "2")
    _spend_the_budget(study, cli)
    status = json.loads(cli("session", "status", study, "--json").stdout)
    assert (status["done"], status["stopped"], status["pending"]) == (True, "budget", 0)


def test_start_help_lists_only_the_algorithms_and_options_sessions_run(cli):
    help_text = " ".join(cli("session", "start", "--help").stdout.split())
    assert "maxrew-f (cbai)" in help_text and "Default: track-" in help_text
    for safe in ("safe-lucb", "lingape", "safe-regret", "safe-bai", "--exploration", "--T ", "--dw"):
        assert safe not in help_text, safe


@pytest.mark.parametrize("left", ["-wal", "-shm"])
def test_start_refuses_a_name_with_a_removed_studys_log_beside_it(tmp_path, instance_file, cli, left):
    # SQLite replays a write-ahead log found beside a new file into it at its first open
    study = tmp_path / "s.db"
    Path(f"{study}{left}").write_bytes(b"\0" * 64)
    _refused(cli("session", "start", instance_file, "-o", study), f"{study.name}-wal or {study.name}-shm is beside it")
    assert not study.exists()


@pytest.mark.parametrize("name", ["p.db#2", "a?b.db", "50%41.db"])
def test_a_study_named_with_uri_characters_opens_that_file(tmp_path, instance_file, cli, name):
    # 'p.db#2' opened p.db: SQLite read the name as a URI with a fragment
    other = _study(tmp_path, instance_file, cli, "--algo", "acol")
    study = tmp_path / name
    assert cli("session", "start", instance_file, "-o", study, "--algo", "g-acol").exit_code == 0
    query = json.loads(cli("session", "next", study, "--json").stdout)["queries"][0]
    assert cli("session", "record", study, query["id"], "0.5").exit_code == 0
    assert (_observations(study), _observations(other)) == (1, 0)
    assert sorted(path.name for path in tmp_path.iterdir() if not path.name.endswith(("-wal", "-shm"))) == sorted(
        [instance_file.name, other.name, name])


def test_a_gap_in_the_query_ids_is_damage(started, cli):
    study, query = started
    with sqlite3.connect(study) as connection:
        connection.execute("INSERT INTO queries VALUES (20, 0, 1, 9, 0, 0.0)")
    _refused(cli("session", "status", study), "the study is damaged: query row")


def test_stored_labels_that_no_longer_name_every_arm_are_damage(started, cli):
    study, _ = started
    with sqlite3.connect(study) as connection:
        instance = json.loads(connection.execute("SELECT value FROM meta WHERE key = 'instance'").fetchone()[0])
        instance["meta"]["labels"] = ["x"]
        connection.execute("DROP TRIGGER meta_no_update")
        connection.execute("UPDATE meta SET value = ? WHERE key = 'instance'", (json.dumps(instance),))
    _refused(cli("session", "next", study), "the study is damaged: its instance's meta.labels: has 1 labels for 5 arms")


def test_a_stored_setting_nested_past_the_parsers_depth_is_one_line(started, cli):
    study, _ = started
    with sqlite3.connect(study) as connection:
        connection.execute("INSERT INTO meta VALUES ('deep', ?)", ("[" * 100_000 + "]" * 100_000,))
    _refused(cli("session", "status", study), "the study's meta.deep is not valid JSON")


def test_a_batch_whose_early_rows_end_the_study_keeps_the_later_ones_as_surplus(tmp_path, cli):
    # on regret-1d an answer of −0.5 to the first query certifies the answer at once
    regret = Path(__file__).resolve().parents[2] / "instances" / "regret-1d.yaml"
    study = _study(tmp_path, regret, cli, "--algo", "g-acol", "--regime", "tuned", "--beta", "0.25")
    assert cli("session", "next", study, "-n", "3").exit_code == 0
    result = cli("session", "record", study, "--file", "-", "--json", input="id,value\n1,-0.5\n2,0.5\n")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) | {"recommended": None, "cbai_version": None} == {
        "cbai_version": None, "schema": 1, "recorded": 2, "surplus": 1, "done": True, "recommended": None,
        "answered": 1, "pending": 0}
    assert [record["surplus"] for record in json.loads(cli("session", "log", study, "--json").stdout)["records"]] \
        == [False, True]


def test_a_refused_value_in_a_batch_names_its_observation(started, cli):
    study, query = started
    _refused(cli("session", "record", study, "--file", "-", input=f"id,value\n{query['id']},0.5\n{query['id']},abc\n"),
             f"observation 2 of these 2 (query {query['id']}): 'abc' is not a number")
    assert _observations(study) == 1


def test_a_study_on_a_read_only_file_system_says_so(tmp_path, instance_file, cli):
    import subprocess

    folder = tmp_path / "ro"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        study = _study(folder, instance_file, cli, "--algo", "g-acol")
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        _refused(cli("session", "record", study, "1", "0.2"), "cannot write: read-only file system")
        assert cli("session", "status", study).exit_code == 0  # reading it still works
    finally:
        subprocess.run(["umount", str(folder)], check=True)
