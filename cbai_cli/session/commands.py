"""The ``cbai session`` commands as library calls: each opens the study, does one thing,
closes it and returns a report of what it did, which the command line prints as one JSON
document with stable keys (``to_json``) or as tables and lines (``render``). Opening and
closing per call lets any number of shells (several raters) work on one study."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from cbai_cli.contracts.errors import OptionError
from cbai_cli.session.session import HandedQuery, Session, Status


def _status_keys(status: Status) -> dict[str, Any]:
    """The keys every report of a command that records shares with ``next``."""
    return {"done": status.done, "recommended": status.recommended if status.done else None,
            "answered": status.answered, "pending": status.pending}


@dataclass(frozen=True)
class StartReport:
    """``cbai session start``: the study made."""

    study: str
    instance: str
    algorithm: str
    regime: str | None
    seed: int
    options: dict[str, Any]
    arms: int
    noise: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def render(self, out: Console) -> None:
        out.out(f"started {self.study}: {self.algorithm} on {self.instance} ({self.arms} arms, {self.noise} answers); "
                f"next: cbai session next {self.study}")


def start(output: str, path: str, algorithm: str | None = None, regime: str | None = None, seed: int = 0,
          preparing: Callable[[str], None] = lambda text: None, **options: Any) -> StartReport:
    """Create the study ``output`` (:meth:`Session.start`), checked to be writable before the
    instance is read, and warm its algorithm up so that the first rater never waits for a
    compiler (``preparing`` is told so first)."""
    from cbai_cli.io.outputs import check_writable

    check_writable(output, "-o")  # the text as typed: a trailing slash still shows
    with Session.start(output, path, algorithm, regime, seed, **options) as session:
        preparing(f"preparing {session.algorithm} (compiled on its first use after installing cbai, then loaded from "
                  "the cache)…")
        session.warm()
        return StartReport(str(output), session.instance.name, session.prepared.algorithm, session.prepared.regime,
                           session.seed, session.options, session.instance.n_arms, session.instance.noise.kind)


@dataclass(frozen=True)
class NextReport:
    """``cbai session next``: the queries handed to a rater and where the study stands."""

    study: Path
    rater: str | None
    queries: Sequence[HandedQuery]
    status: Status
    questions: Any

    def to_json(self) -> dict[str, Any]:
        return {**_status_keys(self.status), "question": self.questions.question,
                "answers": list(self.questions.answers), "numbers": self.questions.numbers,
                "queries": [query.to_json() for query in self.queries]}

    def render(self, out: Console) -> None:
        from cbai_cli.session.render import outcome_line, queries_table

        if not self.queries:
            out.out(outcome_line(self.status))
            return
        out.print(queries_table(self.queries, self.questions.question))
        who = f" --rater {self.rater}" if self.rater else ""
        answers = " or ".join(self.questions.answers) if self.questions.answers else "a number"
        out.out(f"record with: cbai session record {self.study} ID ANSWER{who}   (ANSWER: {answers})")


def hand_out(study: Path, count: int = 1, rater: str | None = None, lease: float | None = None) -> NextReport:
    """Up to ``count`` queries for ``rater`` (:meth:`Session.ask`)."""
    with Session.open(study) as session:
        queries = session.ask(count, rater, lease)
        return NextReport(study, rater, tuple(queries), session.status(), session.questions)


@dataclass(frozen=True)
class RecordReport:
    """``cbai session record``: answers recorded, how many of them surplus."""

    recorded: int
    surplus: int
    status: Status

    def to_json(self) -> dict[str, Any]:
        return {"recorded": self.recorded, "surplus": self.surplus, **_status_keys(self.status)}

    def render(self, out: Console) -> None:
        from cbai_cli.session.render import outcome_line

        note = (f" ({self.surplus} surplus: kept in the log, not used, since their query was complete or the study "
                "had stopped)") if self.surplus else ""
        out.out(f"recorded {self.recorded} answer(s){note}; " + outcome_line(self.status))


def record(study: Path, query: str | None = None, values: Sequence[str] = (), answers: Path | None = None,
           rater: str | None = None) -> RecordReport:
    """Record the answers ``values`` to ``query``, or the rows of the answers file
    ``answers`` (:func:`cbai_cli.session.answers_file.read_answers`), all in one transaction
    (:meth:`Session.store`)."""
    from cbai_cli.session.answers_file import read_answers

    if answers is not None and query is not None:
        raise OptionError("give either ID VALUE... or --file, not both")
    if answers is None and (query is None or not values):
        raise OptionError("give a query id and at least one value (ID VALUE...), or --file answers.csv")
    rows = read_answers(answers) if answers is not None else [(query, value) for value in values]
    with Session.open(study) as session:
        recorded = session.store(rows, rater)
        return RecordReport(len(recorded), sum(item.surplus for item in recorded), session.status())


def skip(study: Path, query: str, rater: str | None = None) -> str:
    """Record that ``rater`` cannot judge ``query`` (:meth:`Session.skip`); the line that says so."""
    with Session.open(study) as session:
        session.skip(query, rater)
    return f"skipped query {query}; it goes back to the pool"


@dataclass(frozen=True)
class UndoReport:
    """``cbai session undo``: the query given back to its rater (None: the study stopped meanwhile)."""

    query: HandedQuery | None

    def to_json(self) -> dict[str, Any]:
        return {"undone": True, "query": None if self.query is None else self.query.to_json()}

    def render(self, out: Console) -> None:
        out.out("undone; the study has stopped meanwhile" if self.query is None else
                f"undone; query {self.query.id} ({self.query.label}) is yours again")


def undo(study: Path, rater: str | None = None) -> UndoReport:
    """Take back ``rater``'s last answer or skip (:meth:`Session.undo`)."""
    with Session.open(study) as session:
        return UndoReport(session.undo(rater))


@dataclass(frozen=True)
class StatusReport:
    """``cbai session status``: the study's status and every arm's label."""

    status: Status
    labels: Sequence[str]

    def to_json(self) -> dict[str, Any]:
        return self.status.to_json()

    def render(self, out: Console) -> None:
        from cbai_cli.session.render import counts_line, outcome_line, status_table

        out.print(status_table(self.status, self.labels))
        out.out(counts_line(self.status))
        out.out(outcome_line(self.status))


def status(study: Path) -> StatusReport:
    """The study's status (:meth:`Session.status`), read only."""
    with Session.open(study, writable=False) as session:
        return StatusReport(session.status(), [session.label(arm) for arm in range(session.instance.n_arms)])


@dataclass(frozen=True)
class LogReport:
    """``cbai session log``: every answer, skip and undo (:meth:`Session.records`)."""

    records: Sequence[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"records": list(self.records)}

    def render(self, out: Console) -> None:
        from cbai_cli.session.render import log_table

        out.print(log_table(self.records))


def log(study: Path) -> LogReport:
    """The study's log, read only."""
    with Session.open(study, writable=False) as session:
        return LogReport(session.records())


def upgrade(old: Path, output: str) -> str:
    """Copy the schema-1 study ``old`` into the new study ``output``
    (:func:`cbai_cli.session.upgrade.upgrade`); the line that says so."""
    from cbai_cli.io.outputs import check_writable
    from cbai_cli.session.upgrade import upgrade as copy_study

    check_writable(output, "-o")
    answers = copy_study(old, output)
    return f"upgraded {old} into {output}: {answers} answer(s), replayed; next: cbai session status {output}"
