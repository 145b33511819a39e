"""The Session object: exact replay, refused replays, several queries at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds import load
from cbai_cli.session import ReplayError, Session
from cbai_cli.run.simulate import RunRequest, prepare, run_once


def _simulated_rater(instance, seed):
    """Answers a rater would give: φᵀx plus Gaussian noise (the test may read the truth)."""
    rng = np.random.default_rng(seed)
    means = instance.truth.means(instance.problem.arms)
    return lambda arm: float(means[arm] + instance.noise.sigma * rng.standard_normal())


def test_reopening_a_study_rebuilds_the_same_state(tmp_path, instance_file):
    study = tmp_path / "s.db"
    rater = _simulated_rater(load(instance_file), 0)
    with Session.start(study, instance_file, "g-acol", seed=2) as session:
        for _ in range(4):
            query = session.ask()[0]
            session.tell(query.id, rater(query.arm))
        pending = session.ask(2)
        before = session.status()
    with Session.open(study) as again:
        assert again.status() == before
        assert again.ask(2) == pending


def test_in_process_session_matches_run_once_on_the_same_observations(tmp_path, instance_file):
    instance = load(instance_file)
    rows: list = []
    result = run_once(prepare(RunRequest.of("adaptive-uniform"), instance), seed=11, tracer_rows=rows)
    with Session.start(tmp_path / "s.db", instance, "adaptive-uniform", seed=11) as session:
        for step, arm, value, *_ in rows:
            query = session.ask()[0]
            assert query.arm == arm, f"step {step}"
            session.tell(query.id, value)
        assert session.ask() == []
        assert session.status().recommended == result.recommended
        assert session.status().answered == result.iterations


def test_a_replay_that_asks_otherwise_is_refused(tmp_path, instance_file):
    study = tmp_path / "s.db"
    with Session.start(study, instance_file, "g-acol", seed=0) as session:
        asked = session.ask()[0]
    with sqlite3.connect(study) as connection:  # two pulls at once: an adaptive algorithm never asks that
        connection.execute("INSERT INTO queries VALUES (2, ?, 2, 2, 1, 0.0)", (asked.arm,))
    with Session.open(study) as session, pytest.raises(ReplayError, match="does not reproduce query 2"):
        session.status()


def test_the_journal_is_append_only(tmp_path, instance_file):
    study = tmp_path / "s.db"
    with Session.start(study, instance_file, "g-acol") as session:
        session.tell(session.ask()[0].id, 0.3)
    with sqlite3.connect(study) as connection, pytest.raises(sqlite3.DatabaseError, match="append-only"):
        connection.execute("UPDATE events SET value = 1.0")


@pytest.mark.parametrize("order_seed", range(3))
def test_answers_recorded_in_any_order_with_several_raters_give_a_correct_answer(tmp_path, instance_file,
                                                                                  order_seed):
    instance = load(instance_file)
    rater = _simulated_rater(instance, order_seed)
    order = np.random.default_rng(100 + order_seed)
    with Session.start(tmp_path / "s.db", instance, "g-acol", seed=0) as session:
        for _ in range(500):
            queries = session.ask(4)
            if not queries:
                break
            chosen = queries[int(order.integers(len(queries)))]  # any pending query may come back first
            session.tell(chosen.id, rater(chosen.arm))
        status = session.status()
    assert status.done and status.guaranteed
    assert status.recommended == instance.best_arm


def test_pending_pulls_grow_the_design_but_not_the_estimate(tmp_path, instance_file):
    from cbai_cli.session.pending import believed_answer

    with Session.start(tmp_path / "s.db", instance_file, "g-acol") as session:
        session.tell(session.ask()[0].id, 0.7)
        learner = session._state.learner
        design = learner.design
        before = design.predictions.copy(), design.norms2.copy()
        from cbai_cli.contracts.protocol import Query

        query = Query.pull(2)
        design.update(2, float(believed_answer(learner, query).constraint[0]), 1)
        np.testing.assert_allclose(design.predictions, before[0], atol=1e-12)
        assert (design.norms2 <= before[1] + 1e-12).all() and design.norms2[2] < before[1][2]


def test_round_based_count_hands_out_a_round_and_asks_again_only_when_it_is_recorded(tmp_path, instance_file):
    with Session.start(tmp_path / "s.db", instance_file, "acol") as session:
        first = session.ask(100)
        assert len({query.arm for query in first}) == len(first) > 1
        assert session.ask(1) == first[:1]
        session.tell(first[0].id, [0.1] * first[0].count)
        assert [query.id for query in session.ask(100)] == [query.id for query in first[1:]]


def test_an_oracle_study_is_refused(tmp_path, instance_file):
    with pytest.raises(OptionError, match="needs the hidden constraint"):
        Session.start(tmp_path / "s.db", instance_file, "oracle")
    assert not (tmp_path / "s.db").exists()


def test_a_study_holds_no_hidden_constraint_and_runs_on_a_file_without_it(tmp_path, instance_file):
    instance = load(instance_file)
    bare = tmp_path / "bare.yaml"
    from cbai_cli.kinds import save

    save(instance.without_truth(), bare)
    rater = _simulated_rater(instance, 0)
    with Session.start(tmp_path / "s.db", bare, "g-acol", seed=2) as session:
        assert not session.instance.has_truth
        while not session.status().done:
            query = session.ask()[0]
            session.tell(query.id, rater(query.arm))
        assert session.status().recommended == instance.best_arm
    with Session.start(tmp_path / "t.db", instance_file, "g-acol", seed=2) as session:
        assert "constraint" not in session.journal.meta["instance"]


def _labelled(tmp_path, labels) -> Path:
    path = tmp_path / "cookies.yaml"
    path.write_text("kind: cbai\nname: cookies\narms: [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]\nreward: [1.0, 0.5]\n"
                    f"threshold: 0.6\nnoise: {{kind: gaussian, sigma: 0.1}}\nmeta: {{labels: {labels}}}\n")
    return path


def test_queries_carry_the_arm_labels_of_the_file(tmp_path):
    instance_path = _labelled(tmp_path, "[plain, chocolate, oat]")
    with Session.start(tmp_path / "s.db", instance_path, "g-acol") as session:
        queries = session.ask(3)
    assert [query.label for query in queries] == [["plain", "chocolate", "oat"][query.arm] for query in queries]


def test_a_query_of_a_file_without_labels_is_labelled_by_its_index(tmp_path, instance_file):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol") as session:
        query = session.ask()[0]
    assert query.label == f"arm {query.arm}"


@pytest.mark.parametrize("labels, message", [
    ("[plain, chocolate]", "meta.labels: has 2 labels for 3 arms"),
    ("plain", "meta.labels: must be a list with one text per arm"),
    ("[plain, [a, b], oat]", "meta.labels: must be a list with one text per arm"),
])
def test_labels_that_do_not_name_every_arm_are_refused_at_start(tmp_path, labels, message):
    from cbai_cli.contracts.errors import InstanceError

    with pytest.raises(InstanceError, match=message):
        Session.start(tmp_path / "s.db", _labelled(tmp_path, labels), "g-acol")
    assert not (tmp_path / "s.db").exists()


def test_a_numpy_integer_asks_for_that_many_queries(tmp_path, instance_file):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol", seed=0) as session:
        assert len(session.ask(np.int64(2))) == 2


@pytest.mark.parametrize("row", [1, "1 0.5", (1,), (1, 0.5, 0.7)])
def test_a_row_to_record_that_is_not_a_pair_is_one_line(tmp_path, instance_file, row):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol", seed=0) as session:
        session.ask()
        with pytest.raises(OptionError, match=r"^an observation to record is a pair \(query id, value\), got "):
            session.record([row])
        assert session.status().answered == 0


def test_a_study_started_with_numpy_values_stores_plain_ones(tmp_path, instance_file):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol", "tuned", seed=np.int64(3),
                       beta=np.float32(0.25), budget=np.int64(100)) as session:
        assert (session.seed, session.options) == (3, {"coordinates": "features", "beta": 0.25, "budget": 100})
        assert type(session.options["beta"]) is float and type(session.options["budget"]) is int
