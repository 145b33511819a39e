"""A study's log as CSV: the columns of :meth:`~cbai_cli.session.session.Session.records`
in one order, for ``cbai session log --csv`` and the server's ``/api/log?format=csv``
(light: ``cbai --help`` imports it)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import IO, Any

#: The columns of the CSV log, in order (the keys of ``Session.records``).
LOG_COLUMNS = ("seq", "kind", "id", "arm", "label", "rater", "answer", "value", "surplus", "held", "undone", "time")


def _cell(value: Any) -> Any:
    """A log value as CSV writes it: floats exactly (repr), booleans as true/false, None as empty."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else value


def write_csv(records: Iterable[dict[str, Any]], out: IO[str]) -> None:
    """The header and one row per record."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LOG_COLUMNS)
    writer.writerows([_cell(record[column]) for column in LOG_COLUMNS] for record in records)
