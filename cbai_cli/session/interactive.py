"""``cbai session ask``: the loop for a person at a terminal.

Shows the question of the study (:mod:`cbai_cli.kinds.cbai.questions`), the arm to judge
(its label; for a driver instance, the picture of its trajectory drawn with
:mod:`cbai_cli.driver.plot`, without its reward, which would bias the answer) and the
answers as a numbered list; reads one line at a time: a number of the list, an answer,
``s`` to skip ("can't judge"), ``u`` to undo the last answer or skip while its grace lasts,
``q`` to stop. Each answer is recorded at once, in its own transaction, so Ctrl-C loses
nothing; a mistyped answer is said in one line and asked again. A failure of the study
file itself (locked, full disk, removed while open) ends the command in one line with exit
code 2, as ``session record`` does. Ctrl-C while an answer is awaited says how to resume
and ends the command with exit code 130 (the CLI's interrupted path).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO

from cbai_cli.contracts.errors import CbaiError, OptionError
from cbai_cli.contracts.options import SESSION_OPTIONS
from cbai_cli.session.journal import StudyFileError
from cbai_cli.session.render import outcome_line
from cbai_cli.session.session import HandedQuery, Session, Status

QUIT_WORDS = ("q", "quit", "exit")
SKIP_WORDS = ("s", "skip")
UNDO_WORDS = ("u", "undo")
#: The longest answer line ``session ask`` reads (an answer and spaces fit many times over).
ANSWER_LINE_LIMIT = 1_000_000
#: How often the loop looks again while the only answers left are in their undo grace (s).
RELEASE_POLL = 0.25


def run(study: str | Path, source: IO[str] | None, out: IO[str], pictures: Path | None = None, rater: str | None = None,
        undo_seconds: float = 0.0) -> Status:
    """Ask until done or quit; returns the final status. ``undo_seconds``: the grace in which
    an answer or a skip may be undone."""
    if source is None:  # the command started with standard input closed (`<&-`)
        raise OptionError("standard input is closed: there is nothing to read answers from")
    grace = SESSION_OPTIONS["undo_seconds"].check(undo_seconds)
    with Session.open(study) as session:
        questions = session.questions
        choices = list(questions.answers)
        hint = ", ".join(f"{number} {label}" for number, label in enumerate(choices, start=1))
        if questions.numbers:
            hint = f"{hint}, or a number" if hint else "a number"
        draw = picture_drawer(session, Path(pictures) if pictures is not None else Path(study).parent, Path(study))
        _say(out, questions.question)
        while True:
            queries = session.ask(1, rater)
            if not queries:
                current = session.status()
                if current.done:
                    break
                if current.held:  # the algorithm is told the last answers when their grace ends
                    time.sleep(RELEASE_POLL)
                    continue
                _say(out, "no query for you now: the algorithm waits for other raters' answers. "
                          + resume_line(study))
                return current
            query = queries[0]
            _say(out, f"query {query.id}: {query.label}")
            if draw is not None:
                _say(out, f"  picture: {draw(query)}")
            try:
                line = _read(source, out, f"answer ({hint}; s skip, u undo, q to stop): ")
            except KeyboardInterrupt:
                _say(out, "")
                _say(out, resume_line(study))
                raise
            word = None if line is None else line.strip().lower()
            if word is None or word in QUIT_WORDS:
                _say(out, resume_line(study))
                return session.status()
            try:
                if word in SKIP_WORDS:
                    session.skip(query.id, rater, hold=grace)
                    _say(out, "skipped")
                elif word in UNDO_WORDS:
                    given_back = session.undo(rater)
                    _say(out, "undone" if given_back is None else f"undone: query {given_back.id} is asked again")
                else:
                    answer = choices[int(word) - 1] if word.isdigit() and 1 <= int(word) <= len(choices) else line
                    recorded = session.answer(query.id, answer, rater, hold=grace)
                    if recorded.surplus:
                        _say(out, "recorded as surplus (the query was complete or the study had stopped)")
            except StudyFileError:
                raise  # the study cannot take answers now: stop, in one line, rather than ask on
            except CbaiError as error:  # a mistyped answer, nothing to undo
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
    other instances. The picture names the arm, never its reward."""
    from cbai_cli.driver.instances import GENERATOR

    instance = session.instance
    if instance.meta.get("generator") != GENERATOR or "actions" not in instance.data:
        return None
    from cbai_cli.driver.plot import plot_trajectories
    from cbai_cli.driver.show import driver_view
    from cbai_cli.io.outputs import check_writable

    view = driver_view(instance, str(study))
    environment = view.scenario.environment

    def draw(query: HandedQuery) -> Path:
        path = check_writable(folder / f"{study.stem}-query-{query.id}.png", "--pictures")
        return plot_trajectories(path, view.trajectories[[query.arm]], environment.traffic.trajectories,
                                 road=environment.road, labels=[query.label],
                                 title=f"{view.scenario.name}: query {query.id}")

    return draw
