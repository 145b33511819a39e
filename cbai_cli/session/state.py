"""A study's state, a pure function of its journal and the clock: the algorithm, and what
every rater holds.

Events (:mod:`cbai_cli.session.journal`) are walked with two cursors.

*Read.* Every event takes effect on hand-outs as soon as it is read: a ``lease`` reserves
one observation of its query for its rater until it expires; an ``answer`` or ``skip``
ends its rater's lease on the query; an answer occupies an observation of its query while
it waits to be told (it is *held*); a skip keeps the query from that rater; an ``undo``
takes back an answer or skip.

*Fold.* An answer is told to the algorithm when it is *folded*, in sequence order:

1. Every stored batch of queries records ``folded``, the last event whose effect the
   algorithm had been told when it asked for the batch. Replaying folds exactly up to it
   and asks again; the algorithm must ask for the same batch (else :class:`ReplayMismatch`).
2. After the last stored batch, events fold in order for as long as each answer's undo
   grace (``until``) has ended by the time the journal was read: the *tail*.
3. An answer is undone iff an ``undo`` event names it. Writers accept an undo only while
   the answer's grace lasts and no stored batch has folded it
   (:meth:`cbai_cli.session.session.Session.undo`), so an undone answer is never one that
   a stored batch was asked after.
4. A folded answer to a query already complete, or folded after the algorithm stopped, is
   *surplus*: kept in the journal and the log, never told. Whether an answer is surplus
   depends only on the order answers arrived in, not on their values.
5. The algorithm is told a query's sum when it completes (a whole round's sums when the
   round completes), exactly as in a simulated run.

Why the guarantee holds with several raters: every query was chosen from answers folded
before it (rule 1), and the algorithm is told answers in the order they fold, so each
pulled arm is predictable with respect to the observations in the order the algorithm
sees them (the condition of the self-normalised bound of Abbasi-Yadkori et al. 2011,
Theorem 2, behind Proposition 3), and the stopping rule reads only folded answers.
Surplus answers are left out by a rule that reads only the order of arrival; if raters'
speed depended on what they answer, that order would carry information, which is why the
lease keeps each observation with one rater at a time (:mod:`cbai_cli.session.pending`
explains how queries are chosen while others are pending).
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from cbai_cli.contracts.options import QueryLimitError
from cbai_cli.contracts.protocol import Answer, Query
from cbai_cli.session.journal import EventRow, QueryRow
from cbai_cli.session.pending import Believer

#: How many points of the intervals' history a study keeps; past it, every other point is
#: dropped and the spacing doubles, so the history spans the whole study in bounded memory.
HISTORY_POINTS = 512
#: The last actions (answers and skips) kept per rater for an undo: writers accept an undo of
#: a rater's last action within its grace of seconds, so older ones are never named.
ACTIONS_KEPT = 1024


class Rebuild(Exception):
    """What was read contradicts a tentative fold of this state (another process folded
    less, or undid an answer this state had folded by the clock): rebuild from the journal."""


class ReplayMismatch(Exception):
    """The algorithm asks for another batch than the journal recorded.

    Attributes:
        query_id: the first query of the recorded batch.
        recorded: the recorded ``(arm, count)`` pairs.
        asked: what the algorithm asks for now.
    """

    def __init__(self, query_id: int, recorded: list[tuple[int, int]], asked: list[tuple[int, int]]) -> None:
        super().__init__(query_id)
        self.query_id, self.recorded, self.asked = query_id, recorded, asked


class Damaged(Exception):
    """An event or batch that cbai cannot have written (a query id never handed out, a
    batch that claims events not yet stored)."""


@dataclass(frozen=True)
class HistoryPoint:
    """Every arm's interval after ``answered`` answers were told: lower, upper (K,)."""

    answered: int
    lower: np.ndarray
    upper: np.ndarray


class StudyState:
    """The algorithm of a study and the hand-out bookkeeping, built by :meth:`read` and
    :meth:`apply` from journal rows. Picklable (a snapshot, :mod:`cbai_cli.session.snapshots`)."""

    def __init__(self, prepared, seed: int) -> None:
        from cbai_cli.run.simulate import run_streams

        _, algorithm_rng, _ = run_streams(seed)
        self.learner = prepared.make_algorithm(algorithm_rng)
        self.rounds = prepared.spec.style == "round"
        self.budget = prepared.budget
        # queries, by id − 1
        self.arms: list[int] = []
        self.counts: list[int] = []
        self.batch_of: list[int] = []
        self.used: list[int] = []  # answers told (folded, not surplus)
        self.values: dict[int, list[float]] = {}  # folded values of incomplete queries
        self.batches: dict[int, list[int]] = {}
        self.open_batches: dict[int, list[int]] = {}  # batches with a query not complete, in order
        self.handed = 0  # observations asked for by every query
        self.recorded = 0  # answers told
        self.budget_spent = False
        self.believer = Believer()
        # cursors
        self.read_seq = 0
        self.fold_seq = 0
        self.tail: deque[EventRow] = deque()  # read, not folded
        self.last_batch_folded = 0  # the `folded` of the last stored batch
        # hand-outs
        self.leases: dict[int, dict[str, float]] = {}  # query → rater → until, for queries not complete
        self.held_by: dict[str, dict[int, float]] = {}  # rater → query → until: the same leases by rater
        self.skipped: dict[int, set[str]] = defaultdict(set)
        self.held: dict[int, int] = defaultdict(int)  # answers read, not folded, not undone
        self.undone: set[int] = set()
        self.actions: dict[str, list[EventRow]] = defaultdict(list)  # recent answers and skips, not undone
        self.surplus: set[int] = set()
        self.answers_by_rater: dict[str, int] = defaultdict(int)
        self.skips = 0
        self.history: list[HistoryPoint] = []
        self._history_step = 1

    # ------------------------------------------------------------ reading
    @property
    def n_queries(self) -> int:
        return len(self.arms)

    @property
    def done(self) -> bool:
        return bool(self.learner.done) or self.budget_spent

    @property
    def stopped(self) -> str | None:
        if self.learner.done:
            return "solved"
        return "budget" if self.budget_spent else None

    def remaining(self, query_id: int) -> int:
        """Observations of a query not told yet."""
        return self.counts[query_id - 1] - self.used[query_id - 1]

    def free(self, query_id: int, rater: str, moment: float) -> int:
        """Observations of a query that may be handed to ``rater`` at ``moment``: not told,
        not held, not reserved by another rater's lease; 0 once the study is done."""
        if self.done:
            return 0
        index = query_id - 1
        others = sum(1 for who, until in self.leases.get(query_id, {}).items() if who != rater and until > moment)
        return self.counts[index] - self.used[index] - self.held.get(query_id, 0) - others

    def lease_of(self, rater: str, query_id: int, moment: float) -> float | None:
        """The expiry of ``rater``'s live lease on a query, or None."""
        until = self.leases.get(query_id, {}).get(rater)
        return until if until is not None and until > moment else None

    def waiting(self) -> list[int]:
        """Queries that still need answers (not told, not held), by id; none once done."""
        if self.done:
            return []
        return [query_id for batch in self.open_batches.values() for query_id in batch
                if self.remaining(query_id) - self.held.get(query_id, 0) > 0]

    def held_answers(self) -> int:
        return sum(self.held.values())

    # ------------------------------------------------------------ applying the journal
    def apply(self, queries: Sequence[QueryRow], events: Sequence[EventRow]) -> None:
        """Take in rows read after this state's cursors: the events' effects on hand-outs,
        then each stored batch after folding to its ``folded`` (the tail is folded by the
        clock apart, :meth:`fold_ready`)."""
        known = self.n_queries + len(queries)
        for event in events:
            self._read(event, known)
        for batch in _batches(queries):
            folded = batch[0].folded
            if folded < self.fold_seq:
                raise Rebuild
            if folded > self.read_seq:
                raise Damaged(f"query {batch[0].id} claims event {folded}, beyond the last stored event")
            self.fold_to(folded)
            asked = self.issue()
            recorded = [(row.arm, row.count) for row in batch]
            if asked != recorded:
                raise ReplayMismatch(batch[0].id, recorded, asked)
            self.add([(row.arm, row.count) for row in batch])
            self.last_batch_folded = folded
        self.settle()

    def fold_ready(self, moment: float) -> None:
        """Fold the tail for as long as each answer's grace has ended by ``moment``."""
        while self.tail:
            event = self.tail[0]
            if event.kind == "answer" and event.seq not in self.undone and event.until is not None \
                    and event.until > moment:
                break
            self._fold(self.tail.popleft())
        self.settle()

    def fold_to(self, seq: int) -> None:
        """Fold every event up to ``seq`` whatever the clock (a stored batch's ``folded``)."""
        while self.tail and self.tail[0].seq <= seq:
            self._fold(self.tail.popleft())
        self.fold_seq = max(self.fold_seq, seq)

    def _read(self, event: EventRow, known: int) -> None:
        """An event's effect on hand-outs; ``known``: the queries stored by the time it was read."""
        if event.seq != self.read_seq + 1:
            raise Damaged(f"event {event.seq} follows event {self.read_seq}")
        if not 1 <= event.query_id <= known:
            raise Damaged(f"event {event.seq} names query {event.query_id}, never handed out")
        self.read_seq = event.seq
        kind, query_id, rater = event.kind, event.query_id, event.rater
        if kind == "lease":
            if query_id > self.n_queries or self.remaining(query_id) > 0:
                self.leases.setdefault(query_id, {})[rater] = event.until
                self.held_by.setdefault(rater, {})[query_id] = event.until
        elif kind in ("answer", "skip"):
            self._release(query_id, rater)
            actions = self.actions[rater]
            actions.append(event)
            if len(actions) > ACTIONS_KEPT:
                del actions[:-ACTIONS_KEPT]
            if kind == "answer":
                self.held[query_id] += 1
                self.answers_by_rater[rater] += 1
            else:
                self.skipped[query_id].add(rater)
                self.skips += 1
        else:  # undo
            target = next((action for action in reversed(self.actions.get(rater, ())) if action.seq == event.target),
                          None)
            if target is None:
                raise Damaged(f"event {event.seq} undoes event {event.target}, not an action of its rater")
            if target.kind == "answer" and target.seq <= self.fold_seq:
                raise Rebuild
            self.undone.add(target.seq)
            self.actions[rater].remove(target)
            if target.kind == "answer":
                self.held[target.query_id] -= 1
                self.answers_by_rater[rater] -= 1
            else:
                self.skipped[target.query_id].discard(rater)
                self.skips -= 1
        self.tail.append(event)

    def _release(self, query_id: int, rater: str) -> None:
        """End ``rater``'s lease on a query (an answer or skip of theirs was read)."""
        holders = self.leases.get(query_id)
        if holders is not None and holders.pop(rater, None) is not None:
            if not holders:
                del self.leases[query_id]
            mine = self.held_by[rater]
            del mine[query_id]
            if not mine:
                del self.held_by[rater]

    def _fold(self, event: EventRow) -> None:
        self.fold_seq = event.seq
        if event.kind != "answer" or event.seq in self.undone:
            return
        query_id = event.query_id
        if query_id > self.n_queries:
            raise Damaged(f"event {event.seq} answers query {query_id} before it was asked")
        self.held[query_id] -= 1
        if self.done or self.remaining(query_id) <= 0:
            self.surplus.add(event.seq)
            return
        self.used[query_id - 1] += 1
        self.values.setdefault(query_id, []).append(event.value)
        self.recorded += 1
        if self.remaining(query_id) == 0:
            self._complete(query_id)

    def _complete(self, query_id: int) -> None:
        for rater in list(self.leases.get(query_id, ())):  # a complete query is no one's to answer
            self._release(query_id, rater)
        batch = self.batch_of[query_id - 1]
        members = self.batches[batch]
        if all(self.remaining(member) == 0 for member in members):
            del self.open_batches[batch]
        told = members if self.rounds else [query_id]
        if any(self.remaining(member) for member in told):
            return
        sums = np.array([math.fsum(self.values.pop(member)) for member in told])
        self.learner.tell(self._as_query(told), Answer(sums))
        self._remember_intervals()

    def _remember_intervals(self) -> None:
        if self.history and self.recorded - self.history[-1].answered < self._history_step:
            return
        elimination = self.learner.state
        self.history.append(HistoryPoint(self.recorded, np.array(elimination.last_lower, dtype=float),
                                         np.array(elimination.last_upper, dtype=float)))
        if len(self.history) >= HISTORY_POINTS:
            self.history = self.history[::2]
            self._history_step *= 2

    # ------------------------------------------------------------ asking the algorithm
    def _as_query(self, query_ids: Sequence[int]) -> Query:
        return Query.pulls(np.array([self.arms[q - 1] for q in query_ids]),
                           np.array([self.counts[q - 1] for q in query_ids]))

    def issue(self) -> list[tuple[int, int]]:
        """The next batch of queries, ``(arm, count)`` each: one ask of the algorithm (or
        of its believer, :mod:`cbai_cli.session.pending`); empty when none may be asked."""
        if self.done or (self.rounds and self.open_batches):
            return []
        try:
            # the learner is told an answer only when an answer completes a query, so the count
            # of answers told versions it
            query = self.learner.ask() if self.rounds else self.believer.ask(
                self.learner, self.recorded, list(self.open_batches),
                lambda batch: self._as_query([q for q in self.batches[batch] if self.remaining(q)]))
        except QueryLimitError:
            if self.budget is None:
                raise
            query = None
            self.budget_spent = not self.open_batches
        if query is None:
            return []
        if self.budget is not None and self.handed + query.total > self.budget:
            self.budget_spent = not self.open_batches
            return []
        return [(int(arm), int(count)) for arm, count in zip(query.arms, query.counts)]

    def hand_out(self, rater: str, count: int, moment: float) -> tuple[list[int], list[tuple[int, int, int, int]]]:
        """Up to ``count`` query ids to hand ``rater`` at ``moment``: the ones they hold,
        then free ones (oldest first), then new ones asked of the algorithm, then ones they
        skipped; and the rows ``(arm, count, batch, folded)`` of the batches the algorithm
        asked for on the way (already added here, to be stored with the leases)."""
        if self.done:
            return [], []
        chosen = sorted(query_id for query_id, until in self.held_by.get(rater, {}).items()
                        if until > moment and self.remaining(query_id) > 0)[:count]
        taken = set(chosen)
        skipped = []
        for query_id in self.waiting():
            if len(chosen) >= count:
                break
            if query_id in taken or self.free(query_id, rater, moment) <= 0:
                continue
            if rater in self.skipped.get(query_id, ()):
                skipped.append(query_id)
                continue
            chosen.append(query_id)
            taken.add(query_id)
        batches = []
        while len(chosen) < count:
            asked = self.issue()
            if not asked:
                break
            folded = self.fold_seq
            ids = self.add(asked)
            self.last_batch_folded = folded
            batches.extend((arm, pulls, self.batch_of[-1], folded) for arm, pulls in asked)
            chosen.extend(ids[:count - len(chosen)])
        chosen.extend(skipped[:count - len(chosen)])
        return chosen, batches

    def settle(self) -> None:
        """Find out now what :meth:`issue` would find at the next ask: with nothing pending,
        the budget is spent when the algorithm's next query no longer fits in it (asked
        through a copy, so the algorithm's random stream is not advanced)."""
        if self.done or self.budget is None or self.open_batches:
            return
        try:
            query = copy.deepcopy(self.learner).ask()
        except QueryLimitError:
            self.budget_spent = True
            return
        self.budget_spent = query is not None and self.handed + query.total > self.budget

    def add(self, batch: Iterable[tuple[int, int]]) -> list[int]:
        """Queries ``(arm, count)`` asked together, as one batch; returns their ids."""
        number = self.batch_of[-1] + 1 if self.batch_of else 1
        ids = []
        for arm, count in batch:
            self.arms.append(arm)
            self.counts.append(count)
            self.batch_of.append(number)
            self.used.append(0)
            ids.append(len(self.arms))
            self.handed += count
        self.batches[number] = ids
        self.open_batches[number] = ids
        return ids

    def __getstate__(self) -> dict:
        """Pickled (a snapshot) without the believer's cached copy of the algorithm, which
        is rebuilt on demand."""
        return {**vars(self), "believer": Believer()}


def _batches(rows: Sequence[QueryRow]) -> list[list[QueryRow]]:
    """Stored query rows grouped by batch, in order."""
    groups: list[list[QueryRow]] = []
    for row in rows:
        if groups and groups[-1][0].batch == row.batch:
            groups[-1].append(row)
        else:
            groups.append([row])
    return groups
