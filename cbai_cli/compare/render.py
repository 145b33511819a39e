"""Tables, JSON and CSV of a comparison, and its progress bar. No computation here
beyond formatting; the numbers come from :mod:`cbai_cli.compare.summary`."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.table import Table

from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.compare.summary import SummaryRow, by_group
from cbai_cli.errors import OptionError

PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def check_outputs(as_json: bool, as_csv: bool, plot: Path | None) -> None:
    """Reject impossible output requests before anything runs."""
    if as_json and as_csv:
        raise OptionError("--json and --csv both write to stdout: choose one")
    if plot is not None:
        if plot.suffix.lower() not in PLOT_SUFFIXES:
            raise OptionError(f"--plot must end in {', '.join(PLOT_SUFFIXES)}, got {plot.name!r}")
        folder = plot.parent if str(plot.parent) else Path(".")
        if not folder.is_dir():
            raise OptionError(f"--plot {plot}: folder {folder} does not exist")


def _number(value: float | None, digits: int = 4) -> str:
    from cbai_cli.render import fmt

    return fmt(value, digits)


def group_tables(rows: Sequence[SummaryRow]) -> list[Table]:
    """One Rich table per instance group: algorithm, runs, median and quartiles of
    queries, fraction correct, violations of the recommendations, budget stops (when
    any), median wall time and median queries / lower bound."""
    from rich import box

    tables = []
    for group, members in by_group(rows).items():
        first = members[0]
        caption = f"instance: {first.instance}"
        if first.lower_bound is not None:
            caption += f"; lower bound (Thm 1, at the noise level): {_number(first.lower_bound)}"
        table = Table(title=group, caption=caption, header_style="bold", title_justify="left", caption_justify="left",
                      box=box.SIMPLE_HEAD, show_edge=False)
        show_budget = any(row.budget_stops for row in members)
        columns = [("algorithm", "left"), ("runs", "right"), ("median", "right"), ("q25–q75", "right"),
                   ("correct", "right"), ("violations", "right")]
        columns += [("budget stops", "right")] if show_budget else []
        show_ratio = any(row.lower_bound is not None for row in members)
        columns += [("wall ms", "right")] + ([("× lower bound", "right")] if show_ratio else [])
        for column, justify in columns:
            table.add_column(column, justify=justify)
        for row in members:
            correct = f"{row.fraction_correct:.0%}"
            cells = [
                row.display_name,
                str(row.runs),
                _number(row.median),
                f"{_number(row.q25)}–{_number(row.q75)}",
                correct if row.fraction_correct == 1 else f"[red]{correct}[/red]",
                str(row.violations) if row.violations == 0 else f"[red]{row.violations}[/red]",
            ]
            cells += [str(row.budget_stops)] if show_budget else []
            cells += [f"{1000 * row.median_wall_s:.3g}"]
            if show_ratio:
                cells += ["—" if row.ratio_to_lower_bound is None else f"{row.ratio_to_lower_bound:,.1f}"]
            table.add_row(*cells)
        tables.append(table)
    return tables


def table_console():
    """stdout for tables: as wide as the terminal, or 132 columns into a file or pipe
    (Rich would otherwise squeeze the tables into 80)."""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=False)
    return console if console.is_terminal else Console(highlight=False, soft_wrap=False, width=132)


def json_document(records: Sequence[dict], rows: Sequence[SummaryRow]) -> dict:
    """``{"records": [...], "summary": [...]}``: one entry per run and per (group, algorithm)."""
    return {"records": list(records), "summary": [row.to_json() for row in rows]}


def print_json_document(records: Sequence[dict], rows: Sequence[SummaryRow]) -> None:
    sys.stdout.write(json.dumps(json_document(records, rows), indent=2, allow_nan=False) + "\n")


def csv_text(records: Sequence[dict]) -> str:
    """One row per run; the header is the record keys (extra keys of other cbai
    versions follow the standard ones). Booleans as true/false, missing values empty."""
    columns = list(RECORD_KEYS) + sorted({key for record in records for key in record} - set(RECORD_KEYS))
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow([_cell(record.get(column)) for column in columns])
    return text.getvalue()


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@contextmanager
def progress_bar(total: int, enabled: bool) -> Iterator[Callable[[int], None] | None]:
    """A live bar with ETA on stderr, or nothing when disabled (quiet, or stderr is not
    a terminal). Yields the callback that takes the number of finished runs."""
    if not enabled or total == 0:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = (TextColumn("compare"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("runs", total=total)
        yield lambda finished: progress.update(task, completed=finished)


def show_comparison(records: Sequence[dict], title: str | None, *, as_json: bool = False, as_csv: bool = False,
                    plot: Path | None = None) -> None:
    """Summarise records and render them: tables on stdout (or JSON, or CSV), and the
    figure when ``plot`` is given. Duplicate run keys are shown once."""
    from cbai_cli.compare.study import deduplicate
    from cbai_cli.compare.summary import sort_records, summarize

    records = sort_records(deduplicate(records))
    rows = summarize(records)
    if plot is not None:
        from cbai_cli.compare.plot import plot_comparison

        plot_comparison(rows, records, plot, title)
    if as_json:
        print_json_document(records, rows)
    elif as_csv:
        sys.stdout.write(csv_text(records))
    else:
        out = table_console()
        if title:
            out.print(f"[bold]{title}[/bold]")
        for table in group_tables(rows):
            out.print(table)
            out.print()
