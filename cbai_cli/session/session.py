"""A live session: any algorithm of the registry against real answers from several raters,
durable and exact.

A :class:`Session` wraps one algorithm of the ask/tell protocol (:mod:`cbai_cli.contracts.protocol`)
around a study file (:mod:`cbai_cli.session.journal`). The study stores only what the
algorithm asked and what raters did; the state (:mod:`cbai_cli.session.state`) is rebuilt
from it with the algorithm's random stream of the recorded seed — the one ``cbai solve
--seed S`` gives it (:func:`cbai_cli.run.simulate.run_streams`) — so a session fed the
observations of a simulated run asks for exactly the queries that run asked for. A replay
whose queries differ from the recorded ones (a study made by a cbai whose algorithm
changed) is refused. Every call first reads only the rows written since the last one (by
this process or any other), and a new process starts from a snapshot of the state
(:mod:`cbai_cli.session.snapshots`) when one matches.

Raters: each has an id (``''`` for anonymous). :meth:`Session.ask` gives a rater their own
leased queries first, then free ones, then new ones chosen by the pending-pull rule
(:mod:`cbai_cli.session.pending`); a lease expires after ``lease`` seconds and returns
the query to the pool. :meth:`Session.answer` stores an answer in its own transaction
before anything else is computed, and never refuses one for being late: an answer to a
query already complete, or after the study stopped, is kept as surplus. An answer given
with ``hold`` seconds of grace waits that long before the algorithm is told it, and until
then its rater may take it back with :meth:`Session.undo`; :meth:`Session.skip` records
"can't judge".

The session never sees the hidden constraint: it reads the learner's problem (arms,
rewards, threshold) and the noise model only, and no simulated noise stream is drawn.
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from cbai_cli.contracts.errors import InstanceError, OptionError
from cbai_cli.contracts.options import SESSION_OPTIONS
from cbai_cli.contracts.protocol import Answer
from cbai_cli.session import snapshots
from cbai_cli.session.estimate import Estimate, answers_needed
from cbai_cli.session.journal import EventRow, Journal, NewEvent, StudyFileError, create, iso, now
from cbai_cli.kinds.cbai.questions import check_media, questions_of
from cbai_cli.session.state import Damaged, HistoryPoint, Rebuild, ReplayMismatch, StudyState

#: The longest rater id and client key (characters).
RATER_LIMIT = 64
KEY_LIMIT = 200


class ReplayError(OptionError):
    """The journal does not replay: this cbai would not ask what the study recorded."""


class UnknownQuery(OptionError):
    """An answer or skip names a query the study never handed out."""


class NothingToUndo(OptionError):
    """The rater has no answer or skip that may still be taken back."""


@dataclass(frozen=True)
class HandedQuery:
    """A query as handed out to a rater.

    Attributes:
        id: the study's stable query id (from 1).
        arm: index of the arm to judge.
        count: observations asked for of that arm.
        remaining: observations not told to the algorithm yet.
        label: the arm's label (``meta.labels`` of the file) or ``arm K``.
        features: (d,) the arm's features as written in the file.
        expires: when the rater's lease on it ends (Unix s); None for a query listed
            without a lease (:meth:`Session.queries`).
    """

    id: int
    arm: int
    count: int
    remaining: int
    label: str
    features: tuple[float, ...]
    expires: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "arm": self.arm, "count": self.count, "remaining": self.remaining,
                "label": self.label, "features": list(self.features), "expires": self.expires}


@dataclass(frozen=True)
class Recorded:
    """What became of an answer: its ``seq`` in the journal, whether it is ``surplus`` (the
    query was already complete or the study had stopped; for an answer still in its undo
    grace, as things stand now), and whether it is a ``duplicate`` of an answer stored
    earlier with the same client key (then nothing was stored)."""

    seq: int
    query_id: int
    surplus: bool
    duplicate: bool = False


@dataclass(frozen=True)
class ArmStatus:
    """One arm's last confidence interval of φᵀx and its state: ``feasible`` (certainly
    feasible, in F), ``uncertain`` (in U), ``dominated`` (its reward is below the best
    certainly-feasible one), or ``infeasible`` (certainly infeasible)."""

    arm: int
    lower: float
    upper: float
    state: str

    def to_json(self) -> dict[str, Any]:
        from cbai_cli.kinds.cbai.bounds import json_number

        return {"arm": self.arm, "lower": json_number(self.lower), "upper": json_number(self.upper),
                "state": self.state}


@dataclass(frozen=True)
class Lease:
    """A query held by a rater until ``expires`` (Unix s)."""

    id: int
    rater: str
    expires: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "rater": self.rater, "expires": self.expires}


@dataclass(frozen=True)
class Status:
    """Where a study stands.

    Attributes:
        answered: answers told to the algorithm.
        pending: queries that still need an answer (0 once done).
        done: whether the algorithm stopped (its rule fired, or the budget is spent).
        stopped: ``solved``, ``budget`` or None while running.
        recommended: the final answer when done, the anytime answer otherwise; None
            for "no feasible arm".
        guaranteed: whether ``recommended`` is correct with probability ≥ 1 − δ: the
            stopping rule fired in a regime with a guarantee.
        arms: every arm's interval and state.
        threshold: τ of the learner's problem (the intervals are of φᵀx against it).
        held: answers in their undo grace, not told yet.
        surplus: answers kept but never told (late, or after the study stopped).
        skipped: skips ("can't judge") not taken back.
        raters: answers per rater id (``''``: anonymous), surplus and held included.
        leases: live leases, by query id.
        estimate: the answers still needed, extrapolated from the intervals
            (:mod:`cbai_cli.session.estimate`); None once done or while it cannot be made.
        label: ``recommended``'s entry of the file's ``meta.labels`` (None without labels).
        options: the algorithm's options the study runs with (those it stores, and the
            declared default of each regime-dependent one it does not store), by name.
    """

    algorithm: str
    regime: str | None
    delta: float
    answered: int
    pending: int
    done: bool
    stopped: str | None
    recommended: int | None
    guaranteed: bool
    arms: tuple[ArmStatus, ...]
    threshold: float = 0.0
    held: int = 0
    surplus: int = 0
    skipped: int = 0
    raters: tuple[tuple[str, int], ...] = ()
    leases: tuple[Lease, ...] = ()
    estimate: Estimate | None = None
    label: str | None = None
    options: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "regime": self.regime, "options": dict(self.options),
                "delta": self.delta, "answered": self.answered,
                "pending": self.pending, "done": self.done, "stopped": self.stopped,
                "recommended": self.recommended, "label": self.label, "guaranteed": self.guaranteed,
                "threshold": self.threshold,
                "held": self.held, "surplus": self.surplus, "skipped": self.skipped,
                "raters": dict(self.raters), "leases": [lease.to_json() for lease in self.leases],
                "estimate": None if self.estimate is None else self.estimate.to_json(),
                "arms": [arm.to_json() for arm in self.arms]}


class Session:
    """An open study: hand out queries, record answers, say where it stands.

    Open one with :meth:`start` (a new study) or :meth:`open` (an existing one); close it
    with :meth:`close` or a ``with`` block. Every method first takes in what any process
    wrote since (several raters may work at once, in several processes). Not thread-safe:
    one thread at a time per object.
    """

    def __init__(self, journal: Journal) -> None:
        from cbai_cli.kinds import from_mapping

        self.journal = journal
        try:
            meta = _checked_meta(journal)
            try:
                self.instance = from_mapping(meta["instance"], str(journal.path))
            except InstanceError as error:  # checked at start, so the stored instance was changed since
                said = str(error).removeprefix(f"{journal.path}: ")
                raise StudyFileError(f"{journal.path}: the study is damaged: its instance's {said}") from None
            self.algorithm, self.regime, self.options = meta["algorithm"], meta["regime"], meta["options"]
            self.seed, self.version, self.study_id = meta["seed"], meta["cbai_version"], meta["study_id"]
        except BaseException:
            journal.close()
            raise
        self._prepared = None
        self._questions = None
        self._media: tuple[Path, ...] | None = None
        self._state: StudyState | None = None
        self._snapshot_at = 0  # the events applied when the last snapshot was read or written

    # ------------------------------------------------------------ opening
    @classmethod
    def start(cls, path: str | Path, instance: Any, algorithm: str | None = None, regime: str | None = None,
              seed: int = 0, **options: Any) -> Session:
        """Create the study ``path`` for ``algorithm`` on ``instance`` (an instance or a
        file path) and open it; the options are those of ``cbai solve`` by library name,
        and ``algorithm`` None is ``cbai solve``'s default. An existing ``path`` is
        refused, never overwritten."""
        from cbai_cli import __version__
        from cbai_cli.algorithms.registry import default_algorithm, load_plugins
        from cbai_cli.kinds import load
        from cbai_cli.contracts.options import check_seed, checked
        from cbai_cli.session.journal import SCHEMA_VERSION

        seed = check_seed(seed)
        if isinstance(instance, (str, Path)):
            instance = load(instance)
        folder = media_folder(instance)
        # checked here as well as by prepare, so that the study stores plain Python values
        load_plugins()  # a plugin's options are declared as its algorithm loads
        given = checked({name: value for name, value in options.items() if value is not None})
        check_kind(instance)
        instance = instance.without_truth()  # a study never holds the hidden constraint
        algorithm = algorithm if algorithm is not None else default_algorithm(instance.kind)
        prepared = prepare_session(instance, algorithm, regime, given)
        # the options whose default depends on the regime are stored as resolved (replayed_options)
        given = {**{name: prepared.spec.default_of(name, prepared.regime) for name in regime_dependent(prepared.spec)},
                 **given}
        questions_of(instance)
        if instance.meta.get("media") is not None:
            if folder is None:
                raise OptionError("meta.media names files beside the instance file: start the study from the file "
                                  "(its path), not from an instance built in memory")
            check_media(instance, folder)
        create(path, {"schema_version": SCHEMA_VERSION, "cbai_version": __version__, "study_id": uuid.uuid4().hex,
                      "instance": instance.to_mapping(), "algorithm": algorithm, "regime": regime,
                      "options": given, "seed": seed, "media_folder": None if folder is None else str(folder)})
        return cls.open(path)

    @classmethod
    def open(cls, path: str | Path, writable: bool = True) -> Session:
        """Open an existing study; its state is rebuilt when first needed."""
        return cls(Journal(path, writable))

    def close(self) -> None:
        """Close the study, leaving a snapshot of the state when it advanced since the last
        one (the next process then reads only what is written after it)."""
        try:
            if self._state is not None and self._state.read_seq > self._snapshot_at:
                self._snapshot(self._state)
        finally:
            self.journal.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def prepared(self):
        """The prepared run of the study's stored request (:func:`prepare_session`)."""
        if self._prepared is None:
            try:
                self._prepared = prepare_session(self.instance, self.algorithm, self.regime,
                                                 replayed_options(self.instance, self.algorithm, self.options))
            except OptionError as error:  # the stored request, not options the user typed now
                raise StudyFileError(f"{self.journal.path}: the study's stored request is refused by this cbai: "
                                     f"{error}") from None
        return self._prepared

    @property
    def questions(self):
        """What the study asks raters and how their answers become observations
        (:class:`~cbai_cli.kinds.cbai.questions.Questions`, from the instance's ``meta``)."""
        if self._questions is None:
            self._questions = questions_of(self.instance)
        return self._questions

    def media(self, arm: int) -> Path | None:
        """The file of ``meta.media`` for ``arm`` (checked to lie in the instance file's
        folder, as when the study started), or None when the instance has no media."""
        if self.instance.meta.get("media") is None:
            return None
        if self._media is None:
            folder = self.journal.meta.get("media_folder")
            if not isinstance(folder, str):
                raise StudyFileError(f"{self.journal.path}: the study is damaged: its instance has meta.media but "
                                     "the study does not say where the instance file was")
            self._media = check_media(self.instance, Path(folder))
        return self._media[arm]

    def warm(self) -> None:
        """Run the algorithm's ask and tell once on a copy, so that what they compile on
        first use is compiled (or loaded from the cache) now, before a rater waits."""
        state = self._sync()
        if state.done:
            return
        learner = copy.deepcopy(state.learner)
        query = learner.ask()
        if query is not None:
            learner.tell(query, Answer(np.zeros(len(query.arms))))

    # ------------------------------------------------------------ the state
    def _sync(self, moment: float | None = None, reader=None) -> StudyState:
        """The state after every stored row, the tail folded by the clock at ``moment``
        (default: now, read before the rows are). ``reader`` reads rows (a write
        transaction's, to catch up under its lock)."""
        moment = now() if moment is None else moment
        read = reader if reader is not None else self.journal.read
        state = self._state
        try:
            if state is None:
                state = self._restore(read)
            queries, events = read(state.n_queries, state.read_seq)
            try:
                state.apply(queries, events)
            except Rebuild:
                self._state = None
                state = self._rebuild(read)
            self._maybe_snapshot(state)
            state.fold_ready(moment)
        except ReplayMismatch as mismatch:
            self._state = None
            raise self._mismatch(mismatch) from None
        except Damaged as error:
            self._state = None
            raise self._corrupt(str(error)) from None
        except BaseException:
            self._state = None  # a half-applied state is never used again
            raise
        self._state = state
        return state

    def _restore(self, read) -> StudyState:
        """The state from the snapshot of this study when it matches the journal, else new."""
        found = snapshots.load(self.study_id)
        if found is not None:
            position, state = found
            if (isinstance(state, StudyState) and position.events
                    and self.journal.fingerprint(position.queries, position.events)
                    == (position.last_query, position.last_event)):
                self._snapshot_at = position.events
                return state
        self._snapshot_at = 0
        return StudyState(self.prepared, self.seed)

    def _rebuild(self, read) -> StudyState:
        """A state from the journal's rows alone (the snapshot may hold a tentative fold)."""
        state = StudyState(self.prepared, self.seed)
        state.apply(*read(0, 0))
        return state

    def _maybe_snapshot(self, state: StudyState) -> None:
        """Save a snapshot when many events were applied since the last one
        (:mod:`cbai_cli.session.snapshots`)."""
        if state.read_seq - self._snapshot_at >= snapshots.SNAPSHOT_EVERY:
            self._snapshot(state)

    def _snapshot(self, state: StudyState) -> None:
        """Save a snapshot of ``state``. It may hold answers folded by the clock after the
        last stored batch; a process that later reads a batch folded short of them rebuilds
        from the journal alone (:class:`~cbai_cli.session.state.Rebuild`)."""
        if self.journal.in_transaction:  # never while a write holds the lock
            return
        try:
            rows = self.journal.fingerprint(state.n_queries, state.read_seq)
        except StudyFileError:  # a study that fails is said by the call that needs it, not here
            return
        position = snapshots.Position(state.n_queries, state.read_seq, *rows)
        snapshots.save(self.study_id, position, state)
        self._snapshot_at = state.read_seq

    def _corrupt(self, what: str) -> ReplayError:
        return ReplayError(f"{self.journal.path}: the journal does not replay ({what}); it was not written by "
                           "cbai session")

    def _mismatch(self, mismatch: ReplayMismatch) -> ReplayError:
        from cbai_cli import __version__

        said = ", ".join(f"arm {arm} × {count}" for arm, count in mismatch.recorded)
        now_asked = ", ".join(f"arm {arm} × {count}" for arm, count in mismatch.asked) or "nothing (it stops)"
        return ReplayError(f"{self.journal.path}: replaying the study does not reproduce query {mismatch.query_id}: "
                           f"it recorded {said}, this cbai {__version__} asks for {now_asked}; the study was made by "
                           f"cbai {self.version}: use that version")

    def _own(self, state: StudyState, rows: Sequence[EventRow]) -> None:
        """Take in events this session has just stored (their effects on hand-outs)."""
        try:
            for row in rows:
                state._read(row, state.n_queries)
        except BaseException:
            self._state = None
            raise

    def refresh(self) -> None:
        """Take in what other processes wrote."""
        self._sync()

    # ------------------------------------------------------------ ask
    def ask(self, count: int = 1, rater: str | None = None, lease: float | None = None) -> list[HandedQuery]:
        """Up to ``count`` queries for ``rater`` (None: anonymous): the queries they hold
        first (their lease renewed when half of it is gone), then free ones (oldest first,
        a lease ended returns a query to the pool), then new ones asked of the algorithm,
        then ones they skipped. Each comes with a lease of ``lease`` seconds (default
        :data:`~cbai_cli.contracts.options.SESSION_OPTIONS`' ``lease``), stored with any new queries in one transaction. Asking
        again without answering returns the same queries; none once the study is done, and
        possibly none for now while a round waits for other raters' answers."""
        count = SESSION_OPTIONS["count"].check(count)
        rater, lease = check_rater(rater), _lease(lease)
        if self._state is None:
            self._sync()  # a replay, and any first compile, happen here, outside the write lock
        with self.journal.writing() as writer:
            moment = now()
            state = self._sync(moment, writer.read)
            chosen, batches = state.hand_out(rater, count, moment)
            renew = [query_id for query_id in chosen
                     if (state.lease_of(rater, query_id, moment) or 0.0) - moment < lease / 2]
            try:
                rows = writer.append(batches, [NewEvent("lease", query_id, rater, until=moment + lease)
                                               for query_id in renew])
            except BaseException:
                self._state = None  # the new queries are in the state and not in the journal
                raise
        self._own(state, rows)
        return [self._handed(state, query_id, state.lease_of(rater, query_id, moment)) for query_id in chosen]

    def _handed(self, state: StudyState, query_id: int, expires: float | None = None) -> HandedQuery:
        arm = state.arms[query_id - 1]
        return HandedQuery(query_id, arm, state.counts[query_id - 1], state.remaining(query_id), self.label(arm),
                           tuple(float(x) for x in self.instance.arms[arm]), expires)

    # ------------------------------------------------------------ answers
    def answer(self, query_id: Any, given: Any, rater: str | None = None, key: str | None = None,
               hold: float = 0.0) -> Recorded:
        """Store one answer to query ``query_id`` in its own transaction, before anything
        else is computed, then take it in. ``given`` is a number or a word (see
        :mod:`cbai_cli.kinds.cbai.answers`); ``key``, a client's id for this answer, makes a
        retry of the same answer a no-op; ``hold`` seconds of grace in which the rater may
        undo it, and before which the algorithm is not told it. A late answer is kept
        (surplus), never refused; a query the study never handed out, or a value the noise
        model cannot produce, is one line."""
        [recorded] = self.store([(query_id, given)], rater, key, hold)
        return recorded

    def record(self, rows: Sequence[tuple[Any, Any]], rater: str | None = None, hold: float = 0.0) -> Status:
        """Store answers ``(query_id, value)`` in one transaction, all or none, then return
        the status."""
        self.store(rows, rater, hold=hold)
        return self.status()

    def tell(self, query_id: int, values: Sequence[Any] | Any) -> Status:
        """Record ``values`` (one or several observations) for query ``query_id``, in one
        transaction; nothing is recorded when any of them is refused."""
        values = list(values) if isinstance(values, (list, tuple, np.ndarray)) else [values]
        return self.record([(query_id, value) for value in values])

    def store(self, rows: Sequence[tuple[Any, Any]], rater: str | None = None, key: str | None = None,
              hold: float = 0.0) -> list[Recorded]:
        """Store answers ``(query_id, given)`` in one transaction, all or none, before
        anything else is computed; returns what became of each (:class:`Recorded`). ``key``
        (one answer only) makes a retry a no-op; ``hold``: seconds of undo grace."""
        if not rows:
            raise OptionError("no observation to record")
        rows = [_row(row) for row in rows]
        rater, key, hold = check_rater(rater), check_key(key), _hold(hold)
        if key is not None and len(rows) != 1:
            raise OptionError("a key names one answer; store answers with keys one at a time")

        parsed = []
        for position, (query_id, given) in enumerate(rows, start=1):
            query_id = _query_id(query_id)
            try:
                value = self.questions.value(given)
            except OptionError as error:
                if len(rows) == 1:
                    raise
                raise OptionError(f"observation {position} of these {len(rows)} (query {query_id}): {error}; "
                                  "nothing was recorded") from None
            parsed.append((query_id, value, _given_text(given)))
        with self.journal.writing() as writer:
            earlier = writer.event_with_key(key) if key is not None else None
            if earlier is not None:
                if earlier.query_id != parsed[0][0] or earlier.rater != rater:
                    raise OptionError(f"key {key!r} was given to another answer (query {earlier.query_id}); a key "
                                      "names one answer")
                stored_rows = [earlier]
            else:
                stored = writer.position()[0]
                for query_id, _, _ in parsed:
                    if query_id > stored:
                        raise UnknownQuery(_unknown(query_id, stored))
                moment = now()
                stored_rows = writer.append([], [NewEvent("answer", query_id, rater, value, text, until=moment + hold,
                                                          key=key) for query_id, value, text in parsed])
        # stored: whatever happens from here on (a replay, a first compile, a kill), the
        # answer is in the journal
        state = self._sync()
        return [Recorded(row.seq, row.query_id, self._surplus(state, row), earlier is not None)
                for row in stored_rows]

    def _surplus(self, state: StudyState, row: EventRow) -> bool:
        """Whether an answer is surplus: known once it is folded; while it is held, whether
        its query was already complete or the study stopped when it arrived."""
        if row.seq <= state.fold_seq:
            return row.seq in state.surplus
        if row.seq in state.undone:
            return False
        before = sum(1 for event in state.tail if event.kind == "answer" and event.query_id == row.query_id
                     and event.seq < row.seq and event.seq not in state.undone)
        return state.done or state.remaining(row.query_id) - before <= 0

    def skip(self, query_id: Any, rater: str | None = None, hold: float = 0.0) -> None:
        """Record that ``rater`` cannot judge query ``query_id``: not an observation; the
        query returns to the pool and is handed to them again only when nothing else is
        left. ``hold``: seconds in which they may undo it."""
        query_id, rater, hold = _query_id(query_id), check_rater(rater), _hold(hold)
        with self.journal.writing() as writer:
            stored = writer.position()[0]
            if query_id > stored:
                raise UnknownQuery(_unknown(query_id, stored))
            writer.append([], [NewEvent("skip", query_id, rater, until=now() + hold)])
        self._sync()

    def undo(self, rater: str | None = None, lease: float | None = None) -> HandedQuery | None:
        """Take back ``rater``'s last answer or skip, if its grace has not ended and (for an
        answer) the algorithm has not been told it; the query goes back to them with a new
        lease and is returned (None when the study stopped meanwhile). :class:`NothingToUndo`
        otherwise."""
        rater, lease = check_rater(rater), _lease(lease)
        if self._state is None:
            self._sync()
        with self.journal.writing() as writer:
            moment = now()
            state = self._sync(moment, writer.read)
            actions = state.actions.get(rater)
            last = actions[-1] if actions else None
            who = f"rater {rater!r}" if rater else "anonymous answers"
            if last is None:
                raise NothingToUndo(f"nothing to undo for {who}")
            if last.until is None or last.until <= moment:
                raise NothingToUndo(f"the last {last.kind} of {who} (query {last.query_id}) can no longer be undone: "
                                    "its grace has ended")
            if last.kind == "answer" and last.seq <= max(writer.last_folded(), state.fold_seq):
                raise NothingToUndo(f"the last answer of {who} (query {last.query_id}) can no longer be undone: the "
                                    "algorithm has used it")
            events = [NewEvent("undo", last.query_id, rater, target=last.seq)]
            if not state.done:
                events.append(NewEvent("lease", last.query_id, rater, until=moment + lease))
            rows = writer.append([], events)
        self._own(state, rows)
        if state.done:
            return None
        return self._handed(state, last.query_id, state.lease_of(rater, last.query_id, moment))

    # ------------------------------------------------------------ reading
    def label(self, arm: int) -> str:
        """The arm's label: ``meta.labels[arm]`` when the file has labels, else ``arm K``."""
        label = self.instance.label(arm)
        return f"arm {arm}" if label is None else label

    @property
    def done(self) -> bool:
        return self._sync().done

    def recommendation(self) -> int | None:
        """The final answer when done, the anytime answer otherwise (None: no feasible arm)."""
        return self._sync().learner.recommendation()

    def status(self) -> Status:
        """Counts, the recommendation, every arm's interval and state, raters and leases."""
        from cbai_cli.numerics.confidence import regimes

        moment = now()
        state = self._sync(moment)
        learner = state.learner
        elimination = learner.state
        states = np.where(elimination.feasible, "feasible",
                          np.where(elimination.uncertain, "uncertain",
                                   np.where(elimination.rewards < elimination.best_feasible_reward, "dominated",
                                            "infeasible")))
        arms = tuple(ArmStatus(index, float(lower), float(upper), str(label)) for index, (lower, upper, label)
                     in enumerate(zip(elimination.last_lower, elimination.last_upper, states)))
        prepared = self.prepared
        guaranteed = bool(learner.done) and (prepared.regime is None or regimes()[prepared.regime].guaranteed)
        earlier = next((point for point in reversed(state.history) if 0 < point.answered <= state.recorded / 2), None)
        estimate = None if state.done else answers_needed(
            elimination.last_lower, elimination.last_upper, elimination.rewards, elimination.threshold,
            elimination.uncertain, elimination.feasible, state.recorded,
            None if earlier is None else (earlier.answered, earlier.lower, earlier.upper))
        leases = () if state.done else tuple(
            Lease(query_id, rater, until) for query_id, holders in sorted(state.leases.items())
            for rater, until in sorted(holders.items()) if until > moment and state.remaining(query_id) > 0)
        return Status(prepared.algorithm, prepared.regime, float(prepared.config.confidence.delta), state.recorded,
                      len(state.waiting()), state.done, state.stopped, learner.recommendation(), guaranteed, arms,
                      float(self.instance.problem.threshold), state.held_answers(), len(state.surplus), state.skips,
                      tuple(sorted((rater, number) for rater, number in state.answers_by_rater.items() if number)),
                      leases, estimate, self.instance.label(learner.recommendation()),
                      tuple(sorted(replayed_options(self.instance, self.algorithm, self.options).items())))

    def records(self) -> list[dict[str, Any]]:
        """Every answer, skip and undo in the order stored, as plain dicts: ``seq``,
        ``kind``, ``id`` (the query), ``arm``, ``label``, ``rater``, ``answer`` (as given),
        ``value`` (in the learner's units), ``surplus``, ``held`` (in its undo grace, not
        told yet), ``undone`` and ``time`` (UTC, ISO 8601); ``pandas.DataFrame(records)``
        makes a table of them."""
        state = self._sync()
        labels = [self.label(arm) for arm in range(self.instance.n_arms)]
        out = []
        for row in self.journal.actions():
            arm = state.arms[row.query_id - 1]
            answer = row.kind == "answer"
            out.append({"seq": row.seq, "kind": row.kind, "id": row.query_id, "arm": arm, "label": labels[arm],
                        "rater": row.rater, "answer": row.given, "value": row.value,
                        "surplus": row.seq in state.surplus,
                        "held": answer and row.seq > state.fold_seq and row.seq not in state.undone,
                        "undone": row.seq in state.undone, "time": iso(row.time)})
        return out

    def queries(self) -> list[HandedQuery]:
        """Every query asked so far, by id."""
        state = self._sync()
        return [self._handed(state, query_id) for query_id in range(1, state.n_queries + 1)]

    def history(self) -> list[HistoryPoint]:
        """Every arm's interval at points spread over the answers told so far (at most
        :data:`~cbai_cli.session.state.HISTORY_POINTS`)."""
        return list(self._sync().history)


#: The meta keys every study holds (:meth:`Session.start`) and the types cbai writes them as.
META_TYPES = {"instance": (dict,), "algorithm": (str,), "regime": (str, type(None)), "options": (dict,),
              "seed": (int,), "cbai_version": (str,), "study_id": (str,)}


def _checked_meta(journal: Journal) -> dict[str, Any]:
    """The study's meta if it holds every key as cbai writes it (the seed an integer ≥ 0);
    :class:`StudyFileError` otherwise."""
    meta = journal.meta
    for key, types in META_TYPES.items():
        if key not in meta:
            raise StudyFileError(f"{journal.path}: not a cbai study: its meta has no {key!r}")
        value = meta[key]
        if not isinstance(value, types) or isinstance(value, bool) or (key == "seed" and value < 0):
            raise StudyFileError(f"{journal.path}: the study is damaged: meta.{key} is {_short(value)}, not one "
                                 "cbai writes")
    return meta


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def check_kind(instance: Any) -> None:
    """Sessions run the kinds that declare it (:func:`cbai_cli.kinds.session_kinds`); one
    line for the others."""
    from cbai_cli.kinds import session_kinds

    if instance.kind not in session_kinds():
        raise OptionError(f"sessions run {' and '.join(session_kinds())} instances (finite arms and a constraint to "
                          f"learn); this is a {instance.kind} instance")


def prepare_session(instance: Any, algorithm: str, regime: str | None, options: dict[str, Any]):
    """The prepared run of a session: ``cbai solve``'s checks of the request, for an
    algorithm that needs no hidden truth, on an instance of finite arms."""
    from cbai_cli.algorithms.registry import for_kind
    from cbai_cli.run.simulate import RunRequest, prepare

    check_kind(instance)
    spec, _ = for_kind(algorithm, instance.kind)
    if spec.needs_oracle:
        raise OptionError(f"{spec.name} needs the hidden constraint, which a session never has", "algorithm")
    return prepare(RunRequest.of(algorithm, regime, **options), instance, solve_oracle=False, live=True)


def regime_dependent(spec: Any) -> tuple[str, ...]:
    """The options of registry entry ``spec`` whose default depends on the regime
    (:attr:`~cbai_cli.algorithms.registry.AlgorithmEntry.regime_defaults`): a study stores
    them as they resolved when it started (:meth:`Session.start`)."""
    return tuple(dict.fromkeys(name for name, _, _ in spec.regime_defaults))


def replayed_options(instance: Any, algorithm: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options a study replays with: those it stores, and the declared default
    (:attr:`~cbai_cli.contracts.options.Option.default`) of each :func:`regime_dependent`
    option it does not store. A study without one was asked with that declared default, so
    its queries come out the same: a Track-and-Stop study without ``step`` ran
    ``vertex-or-target``, under ``ols`` too."""
    from cbai_cli.algorithms.registry import for_kind
    from cbai_cli.contracts.options import OPTIONS

    check_kind(instance)
    spec, _ = for_kind(algorithm, instance.kind)
    return {**{name: OPTIONS[name].default for name in regime_dependent(spec)}, **options}


def media_folder(instance: Any) -> Path | None:
    """The folder of the file an instance was read from (where ``meta.media`` lies), or
    None for an instance built in memory or read from stdin."""
    source = getattr(instance, "source", None)
    if not source or source.startswith("<") or source == "-":
        return None
    path = Path(source)
    return path.parent.resolve() if path.is_file() else None


def check_rater(rater: Any) -> str:
    """A rater id: None or ``''`` (anonymous), or a text of at most :data:`RATER_LIMIT`
    printable characters; one line otherwise."""
    if rater is None:
        return ""
    if not isinstance(rater, str):
        raise OptionError(f"a rater id is a text, got {_short(rater)}", "rater")
    rater = rater.strip()
    if len(rater) > RATER_LIMIT or not rater.isprintable():
        raise OptionError(f"a rater id is at most {RATER_LIMIT} printable characters, got {_short(rater)}", "rater")
    return rater


def check_key(key: Any) -> str | None:
    """A client's key for an answer: None, or a text of 1 to :data:`KEY_LIMIT` printable characters."""
    if key is None:
        return None
    if not isinstance(key, str) or not 1 <= len(key) <= KEY_LIMIT or not key.isprintable():
        raise OptionError(f"an answer's key is a text of 1 to {KEY_LIMIT} printable characters, got {_short(key)}",
                          "key")
    return key


def _lease(lease: Any) -> float:
    """A lease in seconds, as ``--lease`` takes it (None: its default)."""
    option = SESSION_OPTIONS["lease"]
    return option.check(option.default if lease is None else lease)


def _hold(hold: Any) -> float:
    """``hold`` of :meth:`Session.answer` and :meth:`Session.skip`: a grace in the range of
    ``--undo-seconds``, refused in one line that names ``hold``."""
    option = replace(SESSION_OPTIONS["undo_seconds"], name="hold", flag="hold")
    if hold is None:  # "not given" to an option, no number of seconds here
        raise OptionError(f"hold must be {option.must}, got None", "hold")
    return option.check(hold)


def _given_text(given: Any) -> str:
    """An answer as the rater gave it, as stored (at most 200 characters)."""
    text = given if isinstance(given, str) else repr(float(given)) if isinstance(given, (float, np.floating)) \
        else str(given)
    return text.strip()[:200]


def _unknown(query_id: int, stored: int) -> str:
    known = f"1 to {stored}" if stored else "none yet; run `cbai session next`"
    return f"no query {query_id} in this study (its queries: {known})"


def _row(row: Any) -> tuple[Any, Any]:
    """One ``(query_id, value)`` pair of :meth:`Session.record`; one line otherwise."""
    if isinstance(row, (str, bytes)) or not isinstance(row, (tuple, list)) or len(row) != 2:
        raise OptionError(f"an observation to record is a pair (query id, value), got {row!r}")
    return row[0], row[1]


def _query_id(value: Any) -> int:
    """A query id given as a number or text; one line otherwise."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    text = str(value).strip()
    # ASCII digits only (str.isdigit also takes '²' and other scripts' digits), and few of
    # them: no study hands out 10¹⁸ queries, and int() refuses strings of over 4,300 digits
    if re.fullmatch(r"[0-9]{1,18}", text):
        return int(text)
    from cbai_cli.contracts.validation import safe_text

    shown = text if len(text) <= 40 else text[:40] + "…"
    raise OptionError(f"{safe_text(shown)!r} is not a query id (ids are whole numbers from 1)")


__all__ = ["ArmStatus", "HandedQuery", "Lease", "NothingToUndo", "Recorded", "ReplayError", "Session", "Status",
           "UnknownQuery", "prepare_session"]
