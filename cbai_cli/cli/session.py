"""``cbai session``: run an algorithm against real answers from the shell.

Each command opens the study, replays it (:class:`~cbai_cli.session.session.Session`),
does one thing and closes it, so any number of shells (several raters) can work on one
study; ``--json`` prints one document with stable keys on stdout. Mistakes end as one
line on stderr with exit code 2 (the root command's error handling).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from cbai_cli.algorithms.registry import algorithm_help, run_option_names
from cbai_cli.kinds import session_kinds
from cbai_cli.session.defaults import DEFAULT_GRACE, DEFAULT_LEASE
from cbai_cli.session.answers_file import read_answers
from cbai_cli.session.export import LOG_COLUMNS, write_csv
from cbai_cli.cli.typer_options import REGIME_HELP, with_options

session_app = typer.Typer(
    help="Live sessions: run any cbai algorithm against real answers (people, trials), durable and resumable.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

STUDY_HELP = "The study file (SQLite) made by `cbai session start`."


@session_app.callback()
def _session(ctx: typer.Context) -> None:
    """Live sessions: run any cbai algorithm against real answers (people, trials), durable and resumable."""
    from cbai_cli.run.interrupts import terminate_as_interrupt

    # SIGTERM stops a session command on Ctrl-C's path, in words (nothing acknowledged is lost)
    ctx.with_resource(terminate_as_interrupt())
JSON_HELP = "Print one JSON document instead of tables."


def _json(document: dict) -> None:
    from cbai_cli.io.render import print_json

    print_json(document)


def _status_document(status) -> dict[str, Any]:
    """The keys every command that records shares with ``next``."""
    return {"done": status.done, "recommended": status.recommended if status.done else None,
            "answered": status.answered, "pending": status.pending}


@session_app.command()
@with_options(*run_option_names(session_kinds()), kinds=session_kinds())
def start(
    path: str = typer.Argument(..., metavar="FILE", help="Instance file (.yaml, .yml, .npz, or '-' for YAML on stdin)."),
    algo: Optional[str] = typer.Option(None, "--algo", "-a", help=algorithm_help(with_defaults=True, kinds=session_kinds())),
    regime: Optional[str] = typer.Option(None, "--regime", help=REGIME_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed of the algorithm's random stream (the one `cbai solve --seed` "
                             "gives it)."),
    output: str = typer.Option(..., "-o", "--output", metavar="STUDY", help="The study file to create; an existing "
                               "file is never overwritten."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    **options,
) -> None:
    """Create a study: the instance, the algorithm, its options and the seed, in a new SQLite file."""
    from cbai_cli.io.outputs import check_writable
    from cbai_cli.session.session import Session

    check_writable(output, "-o")  # before the instance is read; the text as typed: a trailing slash still shows
    with Session.start(output, path, algo, regime, seed, **options) as session:
        if sys.stderr.isatty():
            typer.echo(f"preparing {session.algorithm} (compiled on its first use after installing cbai, then loaded "
                       "from the cache)…", err=True)
        session.warm()  # so that the first rater never waits for a compiler
        document = {"study": str(output), "instance": session.instance.name, "algorithm": session.prepared.algorithm,
                    "regime": session.prepared.regime, "seed": session.seed, "options": session.options,
                    "arms": session.instance.n_arms, "noise": session.instance.noise.kind}
    if as_json:
        _json(document)
    else:
        typer.echo(f"started {output}: {document['algorithm']} on {session.instance.name} "
                   f"({document['arms']} arms, {document['noise']} answers); next: cbai session next {output}")


RATER_HELP = "Who answers (a rater id; default: anonymous). Each rater is handed queries of their own."


@session_app.command("next")
def next_queries(
    study: Path = typer.Argument(..., metavar="STUDY", help=STUDY_HELP),
    count: int = typer.Option(1, "--count", "-n", help="Hand out up to N queries at once (at most 10,000)."),
    rater: Optional[str] = typer.Option(None, "--rater", metavar="ID", help=RATER_HELP),
    lease: float = typer.Option(DEFAULT_LEASE, "--lease", metavar="SECONDS", help="How long the rater holds each "
                                "query before it returns to the pool."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Hand a rater queries: the ones they hold first (the same until answered), then free or new ones."""
    from cbai_cli.io.render import console
    from cbai_cli.session.render import outcome_line, queries_table
    from cbai_cli.session.session import Session

    with Session.open(study) as session:
        queries = session.ask(count, rater, lease)
        status = session.status()
        questions = session.questions
    if as_json:
        _json({**_status_document(status), "question": questions.question, "answers": list(questions.answers),
               "numbers": questions.numbers, "queries": [query.to_json() for query in queries]})
        return
    out = console()
    if queries:
        out.print(queries_table(queries, questions.question))
        who = f" --rater {rater}" if rater else ""
        answers = " or ".join(questions.answers) if questions.answers else "a number"
        typer.echo(f"record with: cbai session record {study} ID ANSWER{who}   (ANSWER: {answers})")
    else:
        typer.echo(outcome_line(status))


@session_app.command(context_settings={"ignore_unknown_options": True})
def record(
    study: Path = typer.Argument(..., metavar="STUDY", help=STUDY_HELP),
    query: Optional[str] = typer.Argument(None, metavar="ID", help="The query's id (from `cbai session next`)."),
    values: Optional[list[str]] = typer.Argument(None, metavar="VALUE...", help="Answers: an answer of the file's "
                                                 "meta.answers, or numbers for Gaussian noise; without meta.answers, "
                                                 "binary noise takes 1/0, 1/-1 or yes/no (yes, 1: +1)."),
    answers: Optional[Path] = typer.Option(None, "--file", metavar="CSV", help="Record many: a CSV file with columns "
                                           "id,value, one row per answer ('-' reads it from stdin)."),
    rater: Optional[str] = typer.Option(None, "--rater", metavar="ID", help=RATER_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Record answers, all in one transaction, before anything else (nothing is recorded if any is refused).
    A late answer (its query complete, or the study stopped) is kept as surplus."""
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.session.render import outcome_line
    from cbai_cli.session.session import Session

    if answers is not None and query is not None:
        raise OptionError("give either ID VALUE... or --file, not both")
    if answers is None and (query is None or not values):
        raise OptionError("give a query id and at least one value (ID VALUE...), or --file answers.csv")
    rows = read_answers(answers) if answers is not None else [(query, value) for value in values]
    with Session.open(study) as session:
        recorded = session.store(rows, rater)
        status = session.status()
    surplus = sum(item.surplus for item in recorded)
    if as_json:
        _json({"recorded": len(recorded), "surplus": surplus, **_status_document(status)})
        return
    note = (f" ({surplus} surplus: kept in the log, not used, since their query was complete or the study had "
            "stopped)") if surplus else ""
    typer.echo(f"recorded {len(recorded)} answer(s){note}; " + outcome_line(status))


@session_app.command()
def skip(
    study: Path = typer.Argument(..., metavar="STUDY", help=STUDY_HELP),
    query: str = typer.Argument(..., metavar="ID", help="The query's id."),
    rater: Optional[str] = typer.Option(None, "--rater", metavar="ID", help=RATER_HELP),
) -> None:
    """Record that a rater cannot judge a query (not an answer): it goes to others first."""
    from cbai_cli.session.session import Session

    with Session.open(study) as session:
        session.skip(query, rater)
    typer.echo(f"skipped query {query}; it goes back to the pool")


@session_app.command()
def undo(
    study: Path = typer.Argument(..., metavar="STUDY", help=STUDY_HELP),
    rater: Optional[str] = typer.Option(None, "--rater", metavar="ID", help=RATER_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Take back a rater's last answer or skip while its grace lasts (answers given with a grace: the web page,
    `session ask`)."""
    from cbai_cli.session.session import Session

    with Session.open(study) as session:
        query = session.undo(rater)
    if as_json:
        _json({"undone": True, "query": None if query is None else query.to_json()})
    elif query is None:
        typer.echo("undone; the study has stopped meanwhile")
    else:
        typer.echo(f"undone; query {query.id} ({query.label}) is yours again")


@session_app.command()
def status(
    study: Path = typer.Argument(..., metavar="STUDY", help=STUDY_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Answers and pending queries, raters and leases, the recommendation, and every arm's interval and state."""
    from cbai_cli.io.render import console
    from cbai_cli.session.render import counts_line, outcome_line, status_table
    from cbai_cli.session.session import Session

    with Session.open(study, writable=False) as session:
        current = session.status()
        labels = [session.label(arm) for arm in range(session.instance.n_arms)]
    if as_json:
        _json(current.to_json())
        return
    console().print(status_table(current, labels))
    typer.echo(counts_line(current))
    typer.echo(outcome_line(current))


@session_app.command()
def log(
    study: Path = typer.Argument(..., metavar="STUDY", help=STUDY_HELP),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV (" + ",".join(LOG_COLUMNS) + ") instead of a table."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Every answer, skip and undo in the order recorded, with its query, arm, rater and time."""
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.io.render import console
    from cbai_cli.session.render import log_table
    from cbai_cli.session.session import Session

    if as_csv and as_json:
        raise OptionError("choose one of --csv and --json")
    with Session.open(study, writable=False) as session:
        records = session.records()
    if as_json:
        _json({"records": records})
    elif as_csv:
        write_csv(records, sys.stdout)
    else:
        console().print(log_table(records))


@session_app.command()
def ask(
    study: Path = typer.Argument(..., metavar="STUDY", help=STUDY_HELP),
    rater: Optional[str] = typer.Option(None, "--rater", metavar="ID", help=RATER_HELP),
    pictures: Optional[Path] = typer.Option(None, "--pictures", metavar="FOLDER", help="Where driver instances' "
                                            "trajectory pictures go (default: the study's folder)."),
    grace: float = typer.Option(DEFAULT_GRACE, "--undo-seconds", metavar="S", help="How long after an answer `u` "
                                "may take it back (the algorithm is told it after that)."),
    as_json: bool = typer.Option(False, "--json", help="Print the final status as one JSON document (prompts go to "
                                 "stderr)."),
) -> None:
    """Ask a person at the terminal, one answer at a time, until the study is done or they quit (q).
    Every answer is recorded at once: Ctrl-C loses nothing; s skips, u undoes the last answer."""
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.session.interactive import run

    if sys.stdin is None:  # started with standard input closed (`<&-`)
        raise OptionError("standard input is closed: there is nothing to read answers from")
    final = run(study, sys.stdin, sys.stderr if as_json else sys.stdout, pictures, rater, grace)
    if as_json:
        _json(final.to_json())


@session_app.command()
def upgrade(
    study: Path = typer.Argument(..., metavar="OLD", help="A study of journal schema 1 (made before studies had "
                                 "raters)."),
    output: str = typer.Option(..., "-o", "--output", metavar="NEW", help="The study to create; an existing file is "
                               "never overwritten."),
) -> None:
    """Copy a study made by an earlier cbai into the current journal schema, every answer kept (OLD is only read)."""
    from cbai_cli.io.outputs import check_writable
    from cbai_cli.session.upgrade import upgrade as copy_study

    check_writable(output, "-o")
    answers = copy_study(study, output)
    typer.echo(f"upgraded {study} into {output}: {answers} answer(s), replayed; next: cbai session status {output}")
