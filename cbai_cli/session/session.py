"""A live session: any algorithm of the registry against real answers, durable and exact.

A :class:`Session` wraps one algorithm of the ask/tell protocol (:mod:`cbai_cli.protocol`)
around a study file (:mod:`cbai_cli.session.journal`). The study stores only what was
handed out and what was answered; the algorithm's state is rebuilt at every opening by
replaying the journal through ``ask``/``tell`` with the algorithm's random stream of the
recorded seed — the same stream ``cbai solve --seed S`` gives it
(:func:`cbai_cli.simulate.run_streams`) — so a session fed the observations of a
simulated run asks for exactly the queries that run asked for. A replay whose queries
differ from the recorded ones (a study made by a cbai whose algorithm changed) is refused.

The session never sees the hidden constraint: it reads the learner's problem (arms,
rewards, threshold) and the noise model only, and no simulated noise stream is drawn.

Queries: one pull (``count`` 1) for adaptive algorithms, one query per arm of the round
with the round's pull count for round-based ones; the algorithm is told a query's sum
when it completes (a whole round's sums when the round completes). Several queries at
once follow :mod:`cbai_cli.session.pending`.
"""

from __future__ import annotations

import copy
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Any

import numpy as np

from cbai_cli.errors import OptionError
from cbai_cli.options import QueryLimitError
from cbai_cli.protocol import Answer, Query
from cbai_cli.session.journal import Journal, ObservationRow, StaleJournal, StudyFileError, create
from cbai_cli.session.pending import Believer
from cbai_cli.session.values import observation

#: How often a write is retried after another process wrote to the study meanwhile.
WRITE_ATTEMPTS = 20
#: The most queries one ``next`` hands out: an adaptive algorithm asks one at a time, about
#: a millisecond each on the shipped instances, so a count of 10²⁹ would never return.
MAX_HANDED = 10_000


class ReplayError(OptionError):
    """The journal does not replay: this cbai would not ask what the study recorded."""


@dataclass(frozen=True)
class HandedQuery:
    """A query as handed out to a rater.

    Attributes:
        id: the study's stable query id (from 1).
        arm: index of the arm to judge.
        count: observations asked for of that arm.
        remaining: observations still to record.
        label: the arm's label (``meta.labels`` of the file) or ``arm K``.
        features: (d,) the arm's features as written in the file.
    """

    id: int
    arm: int
    count: int
    remaining: int
    label: str
    features: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "arm": self.arm, "count": self.count, "remaining": self.remaining,
                "label": self.label, "features": list(self.features)}


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
        from cbai_cli.bounds import json_number

        return {"arm": self.arm, "lower": json_number(self.lower), "upper": json_number(self.upper),
                "state": self.state}


@dataclass(frozen=True)
class Status:
    """Where a study stands.

    Attributes:
        answered: observations recorded.
        pending: queries handed out and not complete (0 once done).
        done: whether the algorithm stopped (its rule fired, or the budget is spent).
        stopped: ``solved``, ``budget`` or None while running.
        recommended: the final answer when done, the anytime answer otherwise; None
            for "no feasible arm".
        guaranteed: whether ``recommended`` is correct with probability ≥ 1 − δ: the
            stopping rule fired in a regime with a guarantee.
        arms: every arm's interval and state.
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

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "regime": self.regime, "delta": self.delta, "answered": self.answered,
                "pending": self.pending, "done": self.done, "stopped": self.stopped,
                "recommended": self.recommended, "guaranteed": self.guaranteed,
                "arms": [arm.to_json() for arm in self.arms]}


@dataclass
class _Slot:
    """A handed-out query and the values recorded for it so far."""

    id: int
    arm: int
    count: int
    batch: int
    values: list[float] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return self.count - len(self.values)


class _State:
    """The algorithm and the queries in flight, rebuilt from the journal."""

    def __init__(self, prepared, seed: int) -> None:
        from cbai_cli.simulate import run_streams

        _, algorithm_rng, _ = run_streams(seed)
        self.learner = prepared.make_algorithm(algorithm_rng)
        self.rounds = prepared.spec.style == "round"
        self.budget = prepared.budget
        self.slots: list[_Slot] = []
        self.pending: dict[int, _Slot] = {}  # incomplete queries by id, in id order
        self.batches: dict[int, list[_Slot]] = {}
        self.open_batches: dict[int, list[_Slot]] = {}  # batches with an incomplete query, in order
        self.handed = 0  # observations asked for by every query handed out
        self.recorded = 0
        self.budget_spent = False
        self.believer = Believer()

    @property
    def done(self) -> bool:
        return bool(self.learner.done) or self.budget_spent

    @property
    def open(self) -> list[_Slot]:
        """Queries handed out and not complete, by id; none once done."""
        return [] if self.done else list(self.pending.values())

    def _as_query(self, slots: Sequence[_Slot]) -> Query:
        return Query.pulls(np.array([slot.arm for slot in slots]), np.array([slot.count for slot in slots]))

    def issue(self) -> list[tuple[int, int]]:
        """The next batch of queries, ``(arm, count)`` each: one ask of the algorithm (or
        of its believer, :mod:`cbai_cli.session.pending`); empty when none may be asked."""
        if self.done or (self.rounds and self.pending):
            return []
        try:
            # the learner is told an answer only when an observation completes a query, so
            # the count of recorded observations versions it
            query = self.learner.ask() if self.rounds else self.believer.ask(
                self.learner, self.recorded, list(self.open_batches),
                lambda batch: self._as_query([slot for slot in self.batches[batch] if slot.remaining]))
        except QueryLimitError:
            if self.budget is None:
                raise
            query = None
            self.budget_spent = not self.pending
        if query is None:
            return []
        if self.budget is not None and self.handed + query.total > self.budget:
            self.budget_spent = not self.pending
            return []
        return [(int(arm), int(count)) for arm, count in zip(query.arms, query.counts)]

    def settle(self) -> None:
        """Find out now what :meth:`issue` would find at the next ask: with nothing pending,
        the budget is spent when the algorithm's next query no longer fits in it. Without
        this, ``record`` of the budget's last observation and ``status`` called the study
        running until someone asked for a query. The algorithm is asked through a copy, so
        its random stream is not advanced and the queries handed out later are the same."""
        if self.done or self.budget is None or self.pending:
            return
        try:
            query = copy.deepcopy(self.learner).ask()
        except QueryLimitError:
            self.budget_spent = True
            return
        self.budget_spent = query is not None and self.handed + query.total > self.budget

    def add(self, rows: Iterable[tuple[int, int, int]]) -> None:
        """Queries ``(id, arm, count)`` handed out together, as one batch."""
        batch = self.slots[-1].batch + 1 if self.slots else 1
        for query_id, arm, count in rows:
            slot = _Slot(query_id, arm, count, batch)
            self.slots.append(slot)
            self.batches.setdefault(batch, []).append(slot)
            self.open_batches[batch] = self.batches[batch]
            self.pending[query_id] = slot
            self.handed += count

    def record(self, query_id: int, value: float) -> None:
        """Add one observation of query ``query_id``; the algorithm is told a query's sum
        when it completes (a round's sums when the whole round completes)."""
        slot = self.slot(query_id)
        slot.values.append(value)
        self.recorded += 1
        if slot.remaining:
            return
        del self.pending[query_id]
        if not any(member.remaining for member in self.batches[slot.batch]):
            del self.open_batches[slot.batch]
        members = self.batches[slot.batch] if self.rounds else [slot]
        if any(member.remaining for member in members):
            return
        sums = np.array([math.fsum(member.values) for member in members])
        self.learner.tell(self._as_query(members), Answer(sums))

    def check(self, query_id: int) -> _Slot:
        """The slot of an observation about to be recorded; one line when it may not be."""
        if not 1 <= query_id <= len(self.slots):
            known = f"1 to {len(self.slots)}" if self.slots else "none yet; run `cbai session next`"
            raise OptionError(f"no query {query_id} in this study (its queries: {known})")
        slot = self.slots[query_id - 1]
        if slot.remaining == 0:
            raise OptionError(f"query {query_id} is already complete ({slot.count} observation(s) recorded)")
        if self.done:
            raise OptionError(f"the study is done ({self.stopped}); query {query_id} is no longer needed")
        return slot

    def slot(self, query_id: int) -> _Slot:
        return self.slots[query_id - 1]

    @property
    def stopped(self) -> str | None:
        if self.learner.done:
            return "solved"
        return "budget" if self.budget_spent else None


class Session:
    """An open study: hand out queries, record answers, say where it stands.

    Open one with :meth:`start` (a new study) or :meth:`open` (an existing one); close it
    with :meth:`close` or a ``with`` block. Every method reads what other processes
    recorded meanwhile before it writes (several raters may record at once).
    """

    def __init__(self, journal: Journal) -> None:
        from cbai_cli.kinds import from_mapping

        self.journal = journal
        try:
            meta = _checked_meta(journal)
            self.instance = from_mapping(meta["instance"], str(journal.path))
            try:
                check_labels(self.instance)
            except OptionError as error:  # checked at start, so the stored file was changed since
                raise StudyFileError(f"{journal.path}: the study is damaged: its instance's {error}") from None
            self.algorithm, self.regime, self.options = meta["algorithm"], meta["regime"], meta["options"]
            self.seed, self.version = meta["seed"], meta["cbai_version"]
            try:
                self.prepared = prepare_session(self.instance, self.algorithm, self.regime, self.options)
            except OptionError as error:  # the stored request, not options the user typed now
                raise StudyFileError(f"{journal.path}: the study's stored request is refused by this cbai: "
                                     f"{error}") from None
            self._state = self._replay()
        except BaseException:
            journal.close()
            raise

    # ------------------------------------------------------------ opening
    @classmethod
    def start(cls, path: str | Path, instance: Any, algorithm: str | None = None, regime: str | None = None,
              seed: int = 0, **options: Any) -> Session:
        """Create the study ``path`` for ``algorithm`` on ``instance`` (an instance or a
        file path) and open it; the options are those of ``cbai solve`` by library name,
        and ``algorithm`` None is ``cbai solve``'s default. An existing ``path`` is
        refused, never overwritten."""
        from cbai_cli import __version__
        from cbai_cli.algorithms.registry import default_algorithm
        from cbai_cli.kinds import load
        from cbai_cli.options import check_seed, checked
        from cbai_cli.session.journal import SCHEMA_VERSION

        seed = check_seed(seed)
        if isinstance(instance, (str, Path)):
            instance = load(instance)
        # checked here as well as by prepare, so that the study stores plain Python values
        given = checked({name: value for name, value in options.items() if value is not None})
        check_kind(instance)
        instance = instance.without_truth()  # a study never holds the hidden constraint
        check_labels(instance)
        algorithm = algorithm if algorithm is not None else default_algorithm("cbai")
        prepared = prepare_session(instance, algorithm, regime, given)
        create(path, {"schema_version": SCHEMA_VERSION, "cbai_version": __version__, "instance": instance.to_mapping(),
                      "algorithm": algorithm, "regime": regime, "options": given, "seed": seed})
        return cls.open(path)

    @classmethod
    def open(cls, path: str | Path, writable: bool = True) -> Session:
        """Open an existing study and rebuild the algorithm's state by replaying it."""
        return cls(Journal(path, writable))

    def close(self) -> None:
        self.journal.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ replay
    def _replay(self) -> _State:
        """The state after every journaled event, in order: observations up to the moment
        each batch of queries was handed out, then that batch, asked again and compared."""
        state = _State(self.prepared, self.seed)
        observations = self.journal.observations()
        told = 0
        for batch, group in groupby(self.journal.queries(), key=lambda row: row.batch):
            rows = list(group)
            if rows[0].observed < told or rows[0].observed > len(observations):
                raise self._corrupt(f"query {rows[0].id} claims {rows[0].observed} earlier observations")
            for row in observations[told:rows[0].observed]:
                self._replay_observation(state, row)
            told = rows[0].observed
            asked = state.issue()
            recorded = [(row.arm, row.count) for row in rows]
            if asked != recorded:
                raise self._mismatch(rows[0].id, recorded, asked)
            state.add((row.id, row.arm, row.count) for row in rows)
        for row in observations[told:]:
            self._replay_observation(state, row)
        state.settle()
        return state

    def _replay_observation(self, state: _State, row: ObservationRow) -> None:
        try:
            state.check(row.query_id)
        except OptionError as error:
            raise self._corrupt(f"observation {row.seq}: {error}") from None
        state.record(row.query_id, row.value)

    def _corrupt(self, what: str) -> ReplayError:
        return ReplayError(f"{self.journal.path}: the journal does not replay ({what}); it was not written by "
                           "cbai session")

    def _mismatch(self, query_id: int, recorded: list, asked: list) -> ReplayError:
        from cbai_cli import __version__

        said = ", ".join(f"arm {arm} × {count}" for arm, count in recorded)
        now = ", ".join(f"arm {arm} × {count}" for arm, count in asked) or "nothing (it stops)"
        return ReplayError(f"{self.journal.path}: replaying the study does not reproduce query {query_id}: it recorded "
                           f"{said}, this cbai {__version__} asks for {now}; the study was made by cbai "
                           f"{self.version}: use that version")

    def _refresh(self) -> None:
        """Catch up with what other processes wrote."""
        if self.journal.counts() != self._expected():
            self._state = self._replay()

    def _expected(self) -> tuple[int, int]:
        return len(self._state.slots), self._state.recorded

    def _retrying(self, write) -> Any:
        """Run ``write`` (which builds on the current state and appends to the journal);
        when another process wrote first, replay and try again. Any failure leaves the
        state as the journal says."""
        for _ in range(WRITE_ATTEMPTS):
            self._refresh()
            try:
                return write()
            except StaleJournal:
                self._state = self._replay()
            except BaseException:
                self._state = self._replay()
                raise
        raise OptionError(f"{self.journal.path}: other processes keep writing to the study; try again")

    # ------------------------------------------------------------ ask and tell
    def ask(self, count: int = 1) -> list[HandedQuery]:
        """Up to ``count`` queries to hand out: the pending ones first, then new ones
        (stored before they are returned). Asking again without recording returns the
        same queries; none once the study is done."""
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise OptionError(f"--count must be an integer ≥ 1, got {count!r}", "count")
        count = int(count)
        if count > MAX_HANDED:
            raise OptionError(f"--count must be at most {MAX_HANDED:,} (queries handed out at once), got {count:,}",
                              "count")

        def write() -> list[HandedQuery]:
            state = self._state
            expected = self._expected()
            rows = []
            while not state.done and len(state.pending) < count:  # state.open, without a list each time
                batch = state.issue()
                if not batch:
                    break
                first = len(state.slots) + 1
                state.add((first + offset, arm, pulls) for offset, (arm, pulls) in enumerate(batch))
                rows.extend((arm, pulls, state.slots[-1].batch, state.recorded) for arm, pulls in batch)
            if rows:
                self.journal.append_queries(rows, expected)
            return [self._handed(slot) for slot in state.open[:count]]

        return self._retrying(write)

    def tell(self, query_id: int, values: Sequence[Any] | Any) -> Status:
        """Record ``values`` (one or several observations) for query ``query_id``, in one
        transaction; nothing is recorded when any of them is refused."""
        values = list(values) if isinstance(values, (list, tuple, np.ndarray)) else [values]
        return self.record([(query_id, value) for value in values])

    def record(self, rows: Sequence[tuple[int, Any]]) -> Status:
        """Record observations ``(query_id, value)`` (values as numbers or words, see
        :mod:`cbai_cli.session.values`) in one transaction, all or none."""
        if not rows:
            raise OptionError("no observation to record")
        rows = [_row(row) for row in rows]
        noise = self.instance.noise.kind

        def write() -> Status:
            expected = self._expected()
            given = Counter(_query_id(query_id) for query_id, _ in rows)
            for query_id, number in given.items():
                slot = self._state.check(query_id)
                if number > slot.remaining:
                    raise OptionError(f"query {query_id} has {slot.remaining} observation(s) left, got {number}")
            parsed = []
            for position, (query_id, text) in enumerate(rows, start=1):
                query_id = _query_id(query_id)
                if self._state.done and parsed:
                    raise OptionError(f"the study stops ({self._state.stopped}) with observation {len(parsed)} of these "
                                      f"{len(rows)}, so observation {position} (query {query_id}) is not needed; "
                                      f"nothing was recorded: record only the first {len(parsed)}")
                self._state.check(query_id)
                try:
                    value = observation(noise, text)
                except OptionError as error:
                    if len(rows) == 1:
                        raise
                    raise OptionError(f"observation {position} of these {len(rows)} (query {query_id}): {error}; "
                                      "nothing was recorded") from None
                parsed.append((query_id, value))
                self._state.record(query_id, value)
            self._state.settle()
            self.journal.append_observations(parsed, expected)
            return self.status()

        return self._retrying(write)

    def _handed(self, slot: _Slot) -> HandedQuery:
        return HandedQuery(slot.id, slot.arm, slot.count, slot.remaining, self.label(slot.arm),
                           tuple(float(x) for x in self.instance.arms[slot.arm]))

    def label(self, arm: int) -> str:
        """The arm's label: ``meta.labels[arm]`` when the file has labels (checked by
        :func:`check_labels` when the study started), else ``arm K``."""
        labels = self.instance.meta.get("labels")
        if labels is None:
            return f"arm {arm}"
        from cbai_cli.validation import safe_text

        return safe_text(labels[arm])

    # ------------------------------------------------------------ reading
    @property
    def done(self) -> bool:
        return self._state.done

    def recommendation(self) -> int | None:
        """The final answer when done, the anytime answer otherwise (None: no feasible arm)."""
        return self._state.learner.recommendation()

    def status(self) -> Status:
        """Counts, the recommendation and every arm's interval and state."""
        from cbai_cli.confidence import REGIMES

        self._refresh()
        state = self._state
        learner = state.learner
        elimination = learner.state
        states = np.where(elimination.feasible, "feasible",
                          np.where(elimination.uncertain, "uncertain",
                                   np.where(elimination.rewards < elimination.best_feasible_reward, "dominated",
                                            "infeasible")))
        arms = tuple(ArmStatus(index, float(lower), float(upper), str(label)) for index, (lower, upper, label)
                     in enumerate(zip(elimination.last_lower, elimination.last_upper, states)))
        guaranteed = bool(learner.done) and (self.prepared.regime is None or REGIMES[self.prepared.regime].guaranteed)
        return Status(self.prepared.algorithm, self.prepared.regime, float(self.prepared.config.confidence.delta),
                      state.recorded, len(state.open), state.done, state.stopped, learner.recommendation(),
                      guaranteed, arms)

    def log(self) -> list[ObservationRow]:
        """Every recorded observation, in order, with its query id and time."""
        return self.journal.observations()

    def queries(self) -> list[HandedQuery]:
        """Every query handed out so far, by id."""
        return [self._handed(slot) for slot in self._state.slots]


#: The meta keys every study holds (:meth:`Session.start`) and the types cbai writes them as.
META_TYPES = {"instance": (dict,), "algorithm": (str,), "regime": (str, type(None)), "options": (dict,),
              "seed": (int,), "cbai_version": (str,)}


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


def check_labels(instance: Any) -> None:
    """``meta.labels``, when the file has it, must name every arm: a list of K texts or
    numbers (what ``session next`` and ``session ask`` show for each arm); one line otherwise."""
    labels = instance.meta.get("labels")
    if labels is None:
        return
    if not isinstance(labels, list) or not all(isinstance(label, (str, int, float)) and not isinstance(label, bool)
                                               for label in labels):
        raise OptionError("meta.labels must be a list with one text per arm")
    if len(labels) != instance.n_arms:
        raise OptionError(f"meta.labels has {len(labels)} labels for {instance.n_arms} arms; give one per arm")


def check_kind(instance: Any) -> None:
    """Sessions run the kinds of :data:`cbai_cli.session.KINDS` only; one line for the others."""
    from cbai_cli.session import KINDS

    if instance.kind not in KINDS:
        raise OptionError(f"sessions run cbai instances (finite arms and a constraint to learn); this is a "
                          f"{instance.kind} instance")


def prepare_session(instance: Any, algorithm: str, regime: str | None, options: dict[str, Any]):
    """The prepared run of a session: ``cbai solve``'s checks of the request, for an
    algorithm that needs no hidden truth, on an instance of finite arms."""
    from cbai_cli.algorithms.registry import for_kind
    from cbai_cli.simulate import RunRequest, prepare

    check_kind(instance)
    spec, _ = for_kind(algorithm, instance.kind)
    if spec.needs_oracle:
        raise OptionError(f"{spec.name} needs the hidden constraint, which a session never has", "algorithm")
    return prepare(RunRequest.of(algorithm, regime, **options), instance, solve_oracle=False, live=True)


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
    from cbai_cli.validation import safe_text

    shown = text if len(text) <= 40 else text[:40] + "…"
    raise OptionError(f"{safe_text(shown)!r} is not a query id (ids are whole numbers from 1)")


__all__ = ["ArmStatus", "HandedQuery", "ReplayError", "Session", "Status", "prepare_session"]
