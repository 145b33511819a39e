"""``cbai session``: run an algorithm against real answers from the shell.

Each command is one call of :mod:`cbai_cli.session.commands` (``serve``:
:func:`cbai_cli.serve.listen.serve`, ``ask``: :func:`cbai_cli.session.interactive.run`),
printed; its options are declared in :data:`cbai_cli.contracts.options.SESSION_OPTIONS`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from cbai_cli.algorithms.registry import run_option_names
from cbai_cli.cli.parameters import (algo_option, instance_argument, json_option, regime_option, study_argument,
                                     with_run_options)
from cbai_cli.cli.printing import say, show
from cbai_cli.contracts.options import SESSION_OPTIONS
from cbai_cli.kinds import session_kinds
from cbai_cli.session.export import LOG_COLUMNS
from cbai_cli.typer_adapter.parameters import DECLARED, declared_in

session_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@session_app.callback()
def _session(ctx: typer.Context) -> None:
    """Live sessions: run any cbai algorithm against real answers (people, trials), durable and resumable."""
    from cbai_cli.run.interrupts import terminate_as_interrupt

    # SIGTERM stops a session command on Ctrl-C's path, in words (nothing acknowledged is lost)
    ctx.with_resource(terminate_as_interrupt())


@session_app.command()
@with_run_options(SESSION_OPTIONS, run_option_names(session_kinds()), session_kinds())
def start(
    path: str = instance_argument(),
    algo: Optional[str] = algo_option(session_kinds()),
    regime: Optional[str] = regime_option(),
    seed=DECLARED,
    output: str = typer.Option(..., "-o", "--output", metavar="STUDY", help="The study file to create; an existing "
                               "file is never overwritten."),
    as_json: bool = json_option(),
    **options,
) -> None:
    """Create a study: the instance, the algorithm, its options and the seed, in a new SQLite file."""
    from cbai_cli.session.commands import start as start_study

    preparing = say if sys.stderr.isatty() else (lambda text: None)
    show(start_study(output, path, algo, regime, seed, preparing, **options), as_json)


@session_app.command("next")
@declared_in(SESSION_OPTIONS, "count", "rater", "lease")
def next_queries(study: Path = study_argument(), as_json: bool = json_option(), **options) -> None:
    """Hand a rater queries: the ones they hold first (the same until answered), then free or new ones."""
    from cbai_cli.session.commands import hand_out

    show(hand_out(study, **options), as_json)


@session_app.command(context_settings={"ignore_unknown_options": True})
@declared_in(SESSION_OPTIONS, "rater")
def record(
    study: Path = study_argument(),
    query: Optional[str] = typer.Argument(None, metavar="ID", help="The query's id (from `cbai session next`)."),
    values: Optional[list[str]] = typer.Argument(None, metavar="VALUE...", help="Answers: an answer of the file's "
                                                 "meta.answers, or numbers for Gaussian noise; without meta.answers, "
                                                 "binary noise takes 1/0, 1/-1 or yes/no (yes, 1: +1)."),
    answers=DECLARED,
    as_json: bool = json_option(),
    **options,
) -> None:
    """Record answers, all in one transaction, before anything else (nothing is recorded if any is refused).
    A late answer (its query complete, or the study stopped) is kept as surplus."""
    from cbai_cli.session.commands import record as record_answers

    show(record_answers(study, query, values or (), answers, **options), as_json)


@session_app.command()
@declared_in(SESSION_OPTIONS, "rater")
def skip(study: Path = study_argument(), query: str = typer.Argument(..., metavar="ID", help="The query's id."),
         **options) -> None:
    """Record that a rater cannot judge a query (not an answer): it goes to others first."""
    from cbai_cli.session.commands import skip as skip_query

    typer.echo(skip_query(study, query, **options))


@session_app.command()
@declared_in(SESSION_OPTIONS, "rater")
def undo(study: Path = study_argument(), as_json: bool = json_option(), **options) -> None:
    """Take back a rater's last answer or skip while its grace lasts (answers given with a grace: the web page,
    `session ask`)."""
    from cbai_cli.session.commands import undo as undo_last

    show(undo_last(study, **options), as_json)


@session_app.command()
def status(study: Path = study_argument(), as_json: bool = json_option()) -> None:
    """Answers and pending queries, raters and leases, the recommendation, and every arm's interval and state."""
    from cbai_cli.session.commands import status as study_status

    show(study_status(study), as_json)


@session_app.command()
def log(
    study: Path = study_argument(),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV (" + ",".join(LOG_COLUMNS) + ") instead of a table."),
    as_json: bool = json_option(),
) -> None:
    """Every answer, skip and undo in the order recorded, with its query, arm, rater and time."""
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.session.commands import log as study_log
    from cbai_cli.session.export import write_csv

    if as_csv and as_json:
        raise OptionError("choose one of --csv and --json")
    records = study_log(study)
    if as_csv:
        write_csv(records.records, sys.stdout)
    else:
        show(records, as_json)


@session_app.command()
@declared_in(SESSION_OPTIONS, "rater", "undo_seconds")
def ask(
    study: Path = study_argument(),
    pictures=DECLARED,
    as_json: bool = json_option("Print the final status as one JSON document (prompts go to stderr)."),
    **options,
) -> None:
    """Ask a person at the terminal, one answer at a time, until the study is done or they quit (q).
    Every answer is recorded at once: Ctrl-C loses nothing; s skips, u undoes the last answer."""
    from cbai_cli.session.interactive import run

    final = run(study, sys.stdin, sys.stderr if as_json else sys.stdout, pictures, **options)
    if as_json:
        show(final, as_json)


@session_app.command()
def upgrade(
    study: Path = typer.Argument(..., metavar="OLD", help="A study of journal schema 1 (made before studies had "
                                 "raters)."),
    output: str = typer.Option(..., "-o", "--output", metavar="NEW", help="The study to create; an existing file is "
                               "never overwritten."),
) -> None:
    """Copy a study made by an earlier cbai into the current journal schema, every answer kept (OLD is only read)."""
    from cbai_cli.session.commands import upgrade as copy_study

    typer.echo(copy_study(study, output))


@session_app.command()
@declared_in(SESSION_OPTIONS, "host", "port", "token", "lease", "undo_seconds")
def serve(study: Path = study_argument(), **options) -> None:
    """Serve the study to raters over HTTP: a rater page, an owner dashboard and a JSON API (/openapi.json)."""
    from cbai_cli.serve.listen import serve as serve_study

    serve_study(study, announce=typer.echo, **options)
    typer.echo(f"stopped; every answer is recorded in {study}")
