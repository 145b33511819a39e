"""Several raters on one study: their own queries, leases, surplus answers, skip, undo,
keys, catching up, snapshots, and a replay that always equals the live state.

The clock is a fake one (``clock`` fixture), moved by hand, so that leases and undo
graces end exactly when a test says.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cbai_cli.kinds import load
from cbai_cli.session import Session
from cbai_cli.session.session import NothingToUndo, UnknownQuery


class Clock:
    def __init__(self) -> None:
        self.moment = 1_000_000.0

    def __call__(self) -> float:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += seconds


@pytest.fixture
def clock(monkeypatch) -> Clock:
    from cbai_cli.session import journal, session

    fake = Clock()
    monkeypatch.setattr(session, "now", fake)
    monkeypatch.setattr(journal, "now", fake)
    return fake


def _rater(instance, seed):
    rng = np.random.default_rng(seed)
    means = instance.truth.means(instance.problem.arms)
    return lambda arm: float(means[arm] + instance.noise.sigma * rng.standard_normal())


def _fresh(study):
    """What a new process would see: the study replayed from its journal alone."""
    with Session.open(study) as again:
        again._restore = lambda read: again._rebuild(read)  # no snapshot
        return again.status(), again.records()


def test_raters_get_queries_of_their_own_and_their_own_back(tmp_path, instance_file, clock):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol", seed=1) as session:
        [ann] = session.ask(rater="ann")
        [bob] = session.ask(rater="bob")
        assert ann.id != bob.id
        assert session.ask(rater="ann") == [ann] and session.ask(rater="bob") == [bob]
        assert {lease.rater for lease in session.status().leases} == {"ann", "bob"}


def test_an_expired_lease_returns_the_query_to_the_pool(tmp_path, instance_file, clock):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol", seed=1) as session:
        [ann] = session.ask(rater="ann", lease=60)
        clock.advance(30)
        [bob] = session.ask(rater="bob")
        assert bob.id != ann.id
        clock.advance(31)
        [carl] = session.ask(rater="carl")
        assert carl.id == ann.id  # the oldest free query before a new one


def test_a_late_answer_is_kept_as_surplus_and_never_refused(tmp_path, instance_file, clock):
    study = tmp_path / "s.db"
    with Session.start(study, instance_file, "g-acol", seed=1) as session:
        [ann] = session.ask(rater="ann", lease=10)
        clock.advance(11)
        [bob] = session.ask(rater="bob")
        assert bob.id == ann.id
        first = session.answer(bob.id, 0.3, rater="bob")
        late = session.answer(ann.id, 0.4, rater="ann")
        assert (first.surplus, late.surplus) == (False, True)
        status = session.status()
        assert (status.answered, status.surplus) == (1, 1)
        assert dict(status.raters) == {"ann": 1, "bob": 1}
        records = session.records()
    assert [(record["rater"], record["surplus"]) for record in records] == [("bob", False), ("ann", True)]
    assert _fresh(study) == (status, records)


def test_answers_after_the_study_stopped_are_kept(tmp_path, instance_file, clock):
    instance = load(instance_file)
    rater = _rater(instance, 0)
    study = tmp_path / "s.db"
    with Session.start(study, instance_file, "g-acol", seed=0) as session:
        open_queries = []
        while not session.status().done:
            queries = session.ask(2, rater="ann")
            open_queries = queries[1:]
            session.answer(queries[0].id, rater(queries[0].arm), rater="ann")
        status = session.status()
        late = session.answer(open_queries[0].id, 0.0, rater="ann")
        assert late.surplus
        after = session.status()
    assert (after.answered, after.recommended, after.surplus) == (status.answered, status.recommended,
                                                                   status.surplus + 1)
    assert _fresh(study)[0] == after


def test_an_unknown_query_is_refused_and_nothing_is_stored(tmp_path, instance_file, clock):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol") as session:
        session.ask()
        with pytest.raises(UnknownQuery, match="no query 7 in this study"):
            session.answer(7, 0.1)
        assert session.records() == []


def test_a_skipped_query_goes_to_others_and_back_to_its_rater_only_when_nothing_else_is_left(tmp_path,
                                                                                               instance_file, clock):
    with Session.start(tmp_path / "s.db", instance_file, "acol", seed=0) as session:
        round_ = session.ask(100, rater="ann")
        assert len(round_) > 1
        session.skip(round_[0].id, rater="ann")
        assert session.ask(rater="bob")[0].id == round_[0].id  # free again, and bob has none of his own
        for query in round_[1:]:
            session.answer(query.id, [0.1] * 1 if query.count == 1 else 0.1, rater="ann")
        # ann's round queries that still need answers come first; the skipped one is hers last
        mine = session.ask(100, rater="ann")
        assert round_[0].id not in [query.id for query in mine[:-1]]
        assert session.status().skipped == 1


def test_undo_within_the_grace_takes_an_answer_back_and_hands_its_query_again(tmp_path, instance_file, clock):
    study = tmp_path / "s.db"
    with Session.start(study, instance_file, "g-acol", seed=3) as session:
        [query] = session.ask(rater="ann")
        session.answer(query.id, 0.9, rater="ann", hold=10)
        assert session.status().held == 1 and session.status().answered == 0
        again = session.undo(rater="ann")
        assert again.id == query.id and again.expires is not None
        assert session.ask(rater="ann") == [again]
        session.answer(query.id, 0.2, rater="ann", hold=10)
        clock.advance(10)
        status = session.status()
        assert (status.answered, status.held) == (1, 0)
        records = session.records()
    assert [(record["value"], record["undone"], record["kind"]) for record in records] == [
        (0.9, True, "answer"), (None, False, "undo"), (0.2, False, "answer")]
    assert _fresh(study) == (status, records)


def test_undo_after_the_grace_or_of_an_answer_used_is_refused(tmp_path, instance_file, clock):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol", seed=3) as session:
        with pytest.raises(NothingToUndo, match="nothing to undo for rater 'ann'"):
            session.undo(rater="ann")
        [query] = session.ask(rater="ann")
        session.answer(query.id, 0.9, rater="ann", hold=5)
        clock.advance(5)
        with pytest.raises(NothingToUndo, match="its grace has ended"):
            session.undo(rater="ann")
        [second] = session.ask(rater="ann")
        session.answer(second.id, 0.1, rater="ann")  # no grace: told at once
        with pytest.raises(NothingToUndo, match="grace has ended"):
            session.undo(rater="ann")


def test_an_answer_folded_by_a_stored_batch_can_no_longer_be_undone(tmp_path, instance_file, clock):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol", seed=3) as session:
        [query] = session.ask(rater="ann")
        session.answer(query.id, 0.9, rater="ann", hold=100)
        with Session.open(session.journal.path) as other:
            other._sync(clock() + 200)  # another process's clock ran ahead and it asked after folding the answer
            with other.journal.writing() as writer:
                state = other._sync(clock() + 200, writer.read)
                folded = state.fold_seq
                asked = state.issue()
                state.add(asked)
                writer.append([(arm, count, state.batch_of[-1], folded) for arm, count in asked], [])
        with pytest.raises(NothingToUndo, match="the algorithm has used it"):
            session.undo(rater="ann")


def test_a_key_makes_a_retried_answer_a_no_op(tmp_path, instance_file, clock):
    with Session.start(tmp_path / "s.db", instance_file, "g-acol") as session:
        [query] = session.ask(rater="ann")
        first = session.answer(query.id, 0.3, rater="ann", key="k-1")
        again = session.answer(query.id, 0.3, rater="ann", key="k-1")
        assert (again.seq, again.duplicate, first.duplicate) == (first.seq, True, False)
        assert len(session.records()) == 1


def test_two_sessions_catch_up_on_each_others_writes(tmp_path, instance_file, clock):
    instance = load(instance_file)
    rater = _rater(instance, 5)
    study = tmp_path / "s.db"
    Session.start(study, instance_file, "g-acol", seed=2).close()
    with Session.open(study) as one, Session.open(study) as two:
        for step in range(60):
            session, who = (one, "ann") if step % 2 else (two, "bob")
            queries = session.ask(rater=who)
            if not queries:
                break
            session.answer(queries[0].id, rater(queries[0].arm), rater=who)
        assert one.status() == two.status() == _fresh(study)[0]
        assert one.records() == two.records()


def test_an_answer_is_stored_before_the_algorithm_is_rebuilt(tmp_path, instance_file, clock, monkeypatch):
    study = tmp_path / "s.db"
    with Session.start(study, instance_file, "g-acol") as session:
        [query] = session.ask()

    def crash(*args, **kwargs):  # a replay that dies (kill -9, a compile that never ends)
        raise KeyboardInterrupt

    fresh = Session.open(study)
    monkeypatch.setattr(fresh, "_sync", crash)
    with pytest.raises(KeyboardInterrupt):
        fresh.answer(query.id, 0.25)
    fresh.journal.close()
    with Session.open(study) as after:
        assert [record["value"] for record in after.records()] == [0.25]


def test_a_snapshot_gives_the_state_a_replay_gives(tmp_path, instance_file, clock, monkeypatch):
    from cbai_cli.session import snapshots

    monkeypatch.setattr(snapshots, "SNAPSHOT_EVERY", 10)
    instance = load(instance_file)
    rater = _rater(instance, 9)
    study = tmp_path / "s.db"
    with Session.start(study, instance_file, "adaptive-uniform", seed=4, delta=1e-6) as session:
        for _ in range(40):
            [query] = session.ask(rater="ann")
            session.answer(query.id, rater(query.arm), rater="ann")
    import shutil
    import sqlite3

    with sqlite3.connect(study) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    copy = tmp_path / "copy.db"
    shutil.copy(study, copy)
    with Session.open(study) as restored:
        assert restored.status() == _fresh(study)[0]
        assert restored._snapshot_at >= 10  # it started from the snapshot
        from_snapshot = restored.ask(rater="bob")
    with Session.open(copy) as replayed:
        replayed._restore = lambda read: replayed._rebuild(read)
        assert replayed.ask(rater="bob") == from_snapshot  # a new query, asked alike


ACTIONS = st.lists(st.tuples(st.sampled_from(["ask", "answer", "answer", "answer", "skip", "undo", "wait"]),
                             st.integers(0, 3), st.sampled_from([0.0, 0.0, 5.0])), min_size=1, max_size=40)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(actions=ACTIONS, algorithm=st.sampled_from(["g-acol", "acol"]))
def test_any_sequence_of_rater_actions_replays_to_the_live_state(tmp_path_factory, instance_file, actions,
                                                                  algorithm):
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.session import journal, session as session_module

    clock = Clock()
    saved = session_module.now, journal.now
    session_module.now = journal.now = clock
    try:
        study = tmp_path_factory.mktemp("raters") / "s.db"
        instance = load(instance_file)
        rater_answers = _rater(instance, 0)
        with Session.start(study, instance_file, algorithm, seed=0) as session:
            held: dict[str, list] = {}
            for action, who_number, hold in actions:
                who = f"r{who_number}"
                if action == "ask":
                    held[who] = session.ask(2, rater=who, lease=20)
                elif action == "answer" and held.get(who):
                    query = held[who].pop(0)
                    session.answer(query.id, rater_answers(query.arm), rater=who, hold=hold)
                elif action == "skip" and held.get(who):
                    session.skip(held[who].pop(0).id, rater=who, hold=hold)
                elif action == "undo":
                    try:
                        session.undo(rater=who)
                    except OptionError:
                        pass
                elif action == "wait":
                    clock.advance(7)
            live = session.status(), session.records()
        assert _fresh(study) == live
    finally:
        session_module.now, journal.now = saved
