"""Tables, JSON and CSV of a comparison. No computation here
beyond formatting; the numbers come from :mod:`cbai_cli.compare.summary`."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.table import Table

from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.compare.summary import SummaryRow, by_group
from cbai_cli.contracts.errors import OptionError
from cbai_cli.io.render import markup_safe

PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def check_outputs(as_json: bool, as_csv: bool, plot: str | Path | None, out: str | Path | None = None) -> None:
    """Reject impossible output requests, and a figure or store that could not be
    written, before anything runs. ``plot`` and ``out`` as typed (text): an empty path and
    one ending in a slash are refused too (:func:`~cbai_cli.io.outputs.check_writable`)."""
    from cbai_cli.io.outputs import check_writable

    if as_json and as_csv:
        raise OptionError("--json and --csv both write to stdout: choose one")
    if plot is not None:
        plot = check_writable(plot, "--plot")
        if plot.suffix.lower() not in PLOT_SUFFIXES:
            raise OptionError(f"--plot must end in {', '.join(PLOT_SUFFIXES)}, got {plot.name!r}")
    if out is not None:
        from cbai_cli.compare.store import kind_of

        kind_of(check_writable(out, "--out"))


def _number(value: float | None, digits: int = 4) -> str:
    """``digits`` significant digits, but whole numbers with thousands separators from
    1,000 on (a median of 37,571.5 reads better as 37,572 than as 3.757e+04)."""
    from cbai_cli.io.render import fmt

    if value is not None and math.isfinite(value) and abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return fmt(value, digits)


# What a group's median and quartiles measure, for table captions.
METRIC_CAPTIONS = {
    "queries": "constraint queries",
    "pulls": "pulls until the stopping rule fired",
    "regret": "cumulative regret R_T at the horizon",
}


def _fraction(value: float | None) -> str:
    if value is None:
        return "—"
    text = f"{value:.0%}"
    return text if value == 1 else f"[red]{text}[/red]"


def _interval(low: float | None, high: float | None) -> str:
    """A fraction's interval in percent, e.g. ``69.2–100%``, its ends rounded outwards to
    0.1 % so that the shown interval contains the exact one."""
    if low is None or high is None:
        return "—"
    ends = (math.floor(1000 * low + 1e-9) / 10, math.ceil(1000 * high - 1e-9) / 10)
    return "–".join(f"{end:.1f}".removesuffix(".0") for end in ends) + "%"


def _count(value: int) -> str:
    return "0" if value == 0 else f"[red]{value:,}[/red]"


#: The mark of a spec whose regime carries no guarantee (``tuned``), explained in the caption.
UNGUARANTEED = "†"


def group_tables(rows: Sequence[SummaryRow]) -> list[Table]:
    """One Rich table per instance group: algorithm, runs, median and quartiles of the
    group's measure (queries, pulls or regret), and what applies to its kind: fraction
    correct with its 95 % Clopper–Pearson interval and violations of the
    recommendations (cbai, safe-bai), unsafe actions and the exploration length T' (safe
    kinds), budget stops (when any), median wall time and median queries / lower bound
    (cbai). A spec whose regime carries no guarantee is marked :data:`UNGUARANTEED`."""
    from rich import box

    from cbai_cli.kinds import get

    tables = []
    for group, members in by_group(rows).items():
        first = members[0]
        caption = f"instance: {markup_safe(first.instance)}; median and quartiles of the {METRIC_CAPTIONS[first.metric]}"
        if first.lower_bound is not None:
            caption += f"; lower bound (Thm 1, at the noise level): {_number(first.lower_bound)}"
        if any(row.guaranteed is False for row in members):
            caption += f"; {UNGUARANTEED} no correctness guarantee (its regime's intervals)"
        table = Table(title=markup_safe(group), caption=caption, header_style="bold", title_justify="left", caption_justify="left",
                      box=box.SIMPLE_HEAD, show_edge=False)
        columns: list[tuple[str, Callable[[SummaryRow], str]]] = [
            ("algorithm", lambda row: row.display_name + (f" {UNGUARANTEED}" if row.guaranteed is False else "")),
            ("runs", lambda row: str(row.runs)),
            ("median", lambda row: _number(row.median)),
            ("q25–q75", lambda row: f"{_number(row.q25)}–{_number(row.q75)}"),
        ]
        kind = get(first.kind)
        if kind.judges_answers:
            columns += [("correct", lambda row: _fraction(row.fraction_correct)),
                        ("95% CI", lambda row: _interval(row.correct_low, row.correct_high)),
                        ("violations", lambda row: _count(row.violations))]
        if kind.unsafe_label is not None:
            columns += [(kind.unsafe_label, lambda row: "—" if row.unsafe_actions is None else _count(row.unsafe_actions))]
        if any(row.median_exploration_rounds is not None for row in members):
            columns += [("T′ median", lambda row: _number(row.median_exploration_rounds))]
        if any(row.budget_stops for row in members):
            columns += [("budget stops", lambda row: str(row.budget_stops))]
        columns += [("wall ms", lambda row: _number(1000 * row.median_wall_s, 3))]
        if any(row.lower_bound is not None for row in members):
            columns += [("× lower bound", lambda row: "—" if row.ratio_to_lower_bound is None
                         else f"{row.ratio_to_lower_bound:,.1f}")]
        for position, (column, _) in enumerate(columns):
            table.add_column(column, justify="left" if position == 0 else "right")
        for row in members:
            table.add_row(*(cell(row) for _, cell in columns))
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
    from cbai_cli.io.render import print_json

    print_json(json_document(records, rows))


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
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def show_comparison(records: Sequence[dict], title: str | None, *, as_json: bool = False, as_csv: bool = False,
                    plot: Path | None = None) -> None:
    """Summarise records and render them: tables on stdout (or JSON, or CSV), then the
    figure when ``plot`` is given. Duplicate run keys are shown once.

    The figure comes last, so a figure that cannot be drawn or written (no records, a
    full disk) is reported as one line after the results are on stdout: they are
    never lost to it.
    """
    from cbai_cli.compare.study import deduplicate
    from cbai_cli.compare.summary import sort_records, summarize

    records = sort_records(deduplicate(records))
    rows = summarize(records)
    if as_json:
        print_json_document(records, rows)
    elif as_csv:
        sys.stdout.write(csv_text(records))
    else:
        out = table_console()
        if title:  # from the command line or a study file: no markup, no control characters
            out.print(f"[bold]{markup_safe(title)}[/bold]")
        for table in group_tables(rows):
            out.print(table)
            out.print()
    if plot is not None:
        from cbai_cli.compare.plot import plot_comparison

        sys.stdout.flush()
        from cbai_cli.contracts.validation import safe_text

        plot_comparison(rows, records, plot, safe_text(title) if title else title)
