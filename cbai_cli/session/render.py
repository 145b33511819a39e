"""Tables and lines of the ``cbai session`` commands. No computation happens here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from cbai_cli.io.render import arm_label, fmt, markup_safe, method_text
from cbai_cli.session.session import HandedQuery, Status

#: Features shown per query before the rest is elided.
SHOWN_FEATURES = 6


def features_text(features: Sequence[float]) -> str:
    """The first features of an arm, ``…`` for the rest."""
    shown = ", ".join(fmt(value, 4) for value in features[:SHOWN_FEATURES])
    return f"({shown}{', …' if len(features) > SHOWN_FEATURES else ''})"


def rater_text(rater: str) -> str:
    """A rater id as tables show it (``—`` for anonymous)."""
    return markup_safe(rater) if rater else "—"


def queries_table(queries: Sequence[HandedQuery], question: str) -> Table:
    table = Table(title=markup_safe(question), header_style="bold")
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
        return f"done ({how}): recommended {arm_label(status.recommended, status.label)} ({guarantee})"
    held = f", {status.held} in their undo grace" if status.held else ""
    estimate = (f"; about {status.estimate.remaining:,} more answer(s) needed" if status.estimate is not None
                else "")
    return (f"running: {status.answered} answer(s) used{held}, {status.pending} query(ies) pending; "
            f"current answer {arm_label(status.recommended, status.label)} (not guaranteed yet){estimate}")


def counts_line(status: Status) -> str:
    """Raters, surplus answers, skips and leases in one line."""
    raters = ", ".join(f"{rater or 'anonymous'} {number}" for rater, number in status.raters) or "none yet"
    return (f"answers by rater: {raters}; surplus {status.surplus}, skipped {status.skipped}, "
            f"leased {len(status.leases)}")


def status_table(status: Status, labels: Sequence[str]) -> Table:
    """Every arm (with its label) and its interval and state."""
    method = markup_safe(method_text(status.algorithm, status.regime, dict(status.options)))
    table = Table(title=f"{method}, δ = {status.delta:g}, "
                        f"τ = {fmt(status.threshold)}", header_style="bold")
    for column in ("arm", "label", "lower", "upper", "state"):
        table.add_column(column, justify="left" if column in ("label", "state") else "right")
    for arm in status.arms:
        lower = "−∞" if arm.lower == float("-inf") else fmt(arm.lower)
        table.add_row(str(arm.arm), markup_safe(labels[arm.arm]), lower, fmt(arm.upper), arm.state)
    return table


def log_table(records: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="Answers, skips and undos", header_style="bold")
    for column in ("seq", "kind", "query", "label", "rater", "answer", "value", "mark", "time"):
        table.add_column(column, justify="right" if column in ("seq", "query", "value") else "left")
    for record in records:
        mark = ("surplus" if record["surplus"] else "held" if record["held"] else
                "undone" if record["undone"] else "")
        value = "" if record["value"] is None else repr(record["value"])
        table.add_row(str(record["seq"]), record["kind"], str(record["id"]), markup_safe(record["label"]),
                      rater_text(record["rater"]), markup_safe(record["answer"] or ""), value, mark, record["time"])
    return table
