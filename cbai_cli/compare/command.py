"""``cbai compare`` as one call: show stores (``--from``) without running anything, or
plan, run with a progress display on stderr and show the tables (JSON, CSV, figure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from cbai_cli.compare.study import CompareSettings


def compare_command(settings: CompareSettings, from_stores: Sequence[Path], title: str | None, *, as_json: bool,
                    as_csv: bool, plot: Path | None, quiet: bool, echo: Callable[[str], None],
                    warn: Callable[[str], None]) -> None:
    """Show the stores ``from_stores`` (with ``settings.out``, copied into it), or plan and
    run ``settings`` (:func:`~cbai_cli.compare.study.plan_comparison`,
    :func:`~cbai_cli.compare.study.run_comparison`) and show the records. ``echo`` gets
    the lines for the user (not with ``quiet``, except where the runs stored before an
    interruption are, and how to resume), ``warn`` the warnings of a request with runs to
    do (even with ``quiet``). A Ctrl-C, SIGTERM or a lost worker propagates."""
    from cbai_cli.compare.render import show_comparison
    from cbai_cli.compare.study import RecordCounter, merge_stores, plan_comparison, run_comparison
    from cbai_cli.contracts.errors import WorkerLostError
    from cbai_cli.run.progress import ProgressStyle, reporting

    out = settings.out
    say = (lambda text: None) if quiet else (lambda text: echo(f"cbai compare: {text}"))
    if from_stores:
        settings.check_nothing_to_run()
        merged = merge_stores(from_stores, out)
        for message in merged.messages(out):
            say(message)
        show_comparison(merged.records, title, as_json=as_json, as_csv=as_csv, plot=plot)
        return
    planned = plan_comparison(settings)
    for message in planned.messages():
        say(message)
    for warning in planned.warnings():
        warn(warning)
    stored_now = RecordCounter()
    try:
        with reporting("compare", ProgressStyle.for_stderr(quiet), len(planned.pending), "runs") as progress:
            result = run_comparison(planned, progress.update, on_record=stored_now, tell=say)
    except (KeyboardInterrupt, WorkerLostError):
        if out is not None:
            echo(f"cbai compare: {stored_now.count} new runs are stored in {out}; run the same command again to resume")
        raise
    if result.by_others:
        say(f"{result.by_others} of the runs were done by other processes writing {out}")
    show_comparison(result.records, title or result.title, as_json=as_json, as_csv=as_csv, plot=plot)
