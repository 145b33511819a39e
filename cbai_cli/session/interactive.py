"""``cbai session ask``: the loop for a person at a terminal.

Shows the arm to judge (its label and features; for a driver instance, the picture of
its trajectory drawn with :mod:`cbai_cli.driver.plot`), reads one answer per line,
records it at once (its own transaction, so Ctrl-C loses nothing) and goes on until the
study is done, the input ends, or the person types ``q``. A mistyped answer is said in
one line and asked again; nothing is recorded for it. A failure of the study file itself
(locked, full disk, removed while open) ends the command in one line with exit code 2,
as ``session record`` does. Ctrl-C while an answer is awaited
says how to resume and ends the command with exit code 130 (the CLI's interrupted path);
every answer recorded before it is in the study.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from cbai_cli.errors import CbaiError, OptionError
from cbai_cli.session.journal import StudyFileError
from cbai_cli.session.render import features_text, outcome_line
from cbai_cli.session.session import HandedQuery, Session, Status

QUIT_WORDS = ("q", "quit", "exit")
#: The longest answer line ``session ask`` reads (a query id, values and spaces fit many times over).
ANSWER_LINE_LIMIT = 1_000_000


def run(study: str | Path, source: IO[str], out: IO[str], pictures: Path | None = None) -> Status:
    """Ask until done or quit; returns the final status."""
    with Session.open(study) as session:
        hint = ("yes/1 (+1: counts against feasibility) or no/0 (−1)" if session.instance.noise.kind == "binary"
                else "a number")
        draw = picture_drawer(session, Path(pictures) if pictures is not None else Path(study).parent, Path(study))
        while True:
            queries = session.ask(1)
            if not queries:
                break
            query = queries[0]
            _say(out, f"query {query.id}: {query.label} {features_text(query.features)}, "
                      f"{query.remaining} of {query.count} observation(s) left")
            if draw is not None:
                _say(out, f"  picture: {draw(query)}")
            try:
                answer = _read(source, out, f"answer ({hint}; q to stop): ")
            except KeyboardInterrupt:
                _say(out, "")
                _say(out, resume_line(study))
                raise
            if answer is None or answer.strip().lower() in QUIT_WORDS:
                _say(out, resume_line(study))
                return session.status()
            try:
                session.tell(query.id, answer)
            except StudyFileError:
                raise  # the study cannot take answers now: stop, in one line, rather than ask on
            except CbaiError as error:  # a mistyped answer, or a query another rater completed
                _say(out, f"not recorded: {error}")
        final = session.status()
        _say(out, outcome_line(final))
        return final


def resume_line(study: str | Path) -> str:
    """What a person who stops the loop is told."""
    return f"stopped; every answer is recorded. Resume with: cbai session ask {study}"


def _say(out: IO[str], text: str) -> None:
    out.write(text + "\n")
    out.flush()


def _read(source: IO[str], out: IO[str], prompt: str) -> str | None:
    """One line of input after ``prompt``; None at the end of the input. A line is read up
    to ``ANSWER_LINE_LIMIT`` characters (input without line breaks, /dev/zero, would fill the
    memory); a longer one is refused."""
    out.write(prompt)
    out.flush()
    line = source.readline(ANSWER_LINE_LIMIT + 1)
    if len(line) > ANSWER_LINE_LIMIT:
        raise OptionError(f"an answer line longer than {ANSWER_LINE_LIMIT:,} characters: not an answer")
    return None if line == "" else line.strip()


def picture_drawer(session: Session, folder: Path, study: Path):
    """For a driver instance (policies in ``data.actions``), a function that draws a
    query's trajectory to ``FOLDER/STUDY-query-ID.png`` and returns the path; None for
    other instances."""
    from cbai_cli.driver.instances import GENERATOR

    instance = session.instance
    if instance.meta.get("generator") != GENERATOR or "actions" not in instance.data:
        return None
    from cbai_cli.driver.plot import plot_trajectories
    from cbai_cli.driver.show import driver_view
    from cbai_cli.outputs import check_writable

    view = driver_view(instance, str(study))
    environment = view.scenario.environment

    def draw(query: HandedQuery) -> Path:
        path = check_writable(folder / f"{study.stem}-query-{query.id}.png", "--pictures")
        reward = float(instance.rewards[query.arm])
        return plot_trajectories(path, view.trajectories[[query.arm]], environment.traffic.trajectories,
                                 road=environment.road, labels=[f"{query.label} (reward {reward:.3g})"],
                                 title=f"{view.scenario.name}: query {query.id}")

    return draw
