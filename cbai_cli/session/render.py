"""Tables and lines of the ``cbai session`` commands. No computation happens here."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from cbai_cli.render import arm_label, fmt, markup_safe
from cbai_cli.session.journal import ObservationRow
from cbai_cli.session.session import HandedQuery, Status

#: Features shown per query before the rest is elided.
SHOWN_FEATURES = 6


def features_text(features: Sequence[float]) -> str:
    """The first features of an arm, ``…`` for the rest."""
    shown = ", ".join(fmt(value, 4) for value in features[:SHOWN_FEATURES])
    return f"({shown}{', …' if len(features) > SHOWN_FEATURES else ''})"


def queries_table(queries: Sequence[HandedQuery]) -> Table:
    table = Table(title="Queries to answer", header_style="bold")
    for column in ("id", "arm", "label", "count", "remaining", "features"):
        table.add_column(column, justify="right" if column in ("id", "arm", "count", "remaining") else "left")
    for query in queries:
        table.add_row(str(query.id), str(query.arm), markup_safe(query.label), str(query.count), str(query.remaining),
                      features_text(query.features))
    return table


def outcome_line(status: Status) -> str:
    """``done: recommended arm 3 (guaranteed at δ = 0.05)`` or the counts of a running study."""
    if status.done:
        guarantee = f"guaranteed at δ = {status.delta:g}" if status.guaranteed else "no guarantee"
        how = "stopped by its rule" if status.stopped == "solved" else "budget spent"
        return f"done ({how}): recommended {arm_label(status.recommended)} ({guarantee})"
    return (f"running: {status.answered} observation(s) recorded, {status.pending} query(ies) pending; "
            f"current answer {arm_label(status.recommended)} (not guaranteed yet)")


def status_table(status: Status) -> Table:
    table = Table(title=f"{status.algorithm} ({status.regime or 'no regime'}), δ = {status.delta:g}",
                  header_style="bold")
    for column in ("arm", "lower", "upper", "state"):
        table.add_column(column, justify="left" if column == "state" else "right")
    for arm in status.arms:
        lower = "−∞" if arm.lower == float("-inf") else fmt(arm.lower)
        table.add_row(str(arm.arm), lower, fmt(arm.upper), arm.state)
    return table


def log_table(rows: Sequence[ObservationRow]) -> Table:
    table = Table(title="Observations", header_style="bold")
    for column in ("seq", "query", "value", "time"):
        table.add_column(column, justify="left" if column == "time" else "right")
    for row in rows:
        table.add_row(str(row.seq), str(row.query_id), repr(row.value), row.time)
    return table
