"""Markdown tables read out of a results file under benchmarks/results/ and written back as
Markdown: what benchmarks/tables.py builds the pages' generated blocks from.

A table is a run of lines that start with ``|``; its caption is the last non-empty line
before it that is not part of a table (a heading, a command, a sentence).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


@dataclass(frozen=True)
class Table:
    """One Markdown table: ``caption`` the line before it, ``header`` its first row's cells,
    ``alignment`` its second row as written, ``rows`` the cells of every later row."""

    caption: str
    header: tuple[str, ...]
    alignment: str
    rows: tuple[tuple[str, ...], ...]


def cells(line: str) -> tuple[str, ...]:
    """The cells of one table row, stripped."""
    return tuple(cell.strip() for cell in line.strip().removeprefix("|").removesuffix("|").split("|"))


def tables(text: str) -> list[Table]:
    """Every table of ``text``, in order."""
    found: list[Table] = []
    lines = text.splitlines()
    caption, start = "", None
    for number, line in enumerate([*lines, ""]):
        if line.startswith("|"):
            if start is None:
                start = number
            continue
        if start is not None:
            block = lines[start:number]
            found.append(Table(caption, cells(block[0]), block[1].strip(), tuple(cells(row) for row in block[2:])))
            start = None
        if line.strip():
            caption = line.strip()
    return found


#: The heading of an instance's section in an output of benchmarks/guaranteed.py.
GUARANTEED_HEADING = re.compile(
    r"^#### (?P<instance>.+?), σ = (?P<sigma>[\d.]+) \(Theorem 1 bound, σ²-scaled: (?P<bound>[\d,.]+)\)")


def guaranteed_sections(text: str) -> list[tuple[re.Match, Table]]:
    """Each instance's section of an output of benchmarks/guaranteed.py: its heading's match
    and its table (a section of another kind, the tuned regime's, left out)."""
    return [(heading, table) for table in tables(text) if (heading := GUARANTEED_HEADING.match(table.caption))]


def column(table: Table, row: tuple[str, ...], name: str) -> str:
    """The cell of ``row`` (a row of ``table``) in the column headed ``name``."""
    return row[table.header.index(name)]


def read(name: str) -> str:
    """The text of the results file ``name`` (a path under benchmarks/results/)."""
    return (RESULTS / name).read_text()


def after(text: str, heading: str) -> list[Table]:
    """The tables of ``text`` after its first line that starts with ``heading``, up to the next
    heading of the same or a higher level."""
    lines = text.splitlines()
    start = next(number for number, line in enumerate(lines) if line.startswith(heading))
    level = len(heading) - len(heading.lstrip("#")) if heading.startswith("#") else 0
    end = next((number for number in range(start + 1, len(lines))
                if level and lines[number].startswith("#") and
                len(lines[number]) - len(lines[number].lstrip("#")) <= level), len(lines))
    return tables("\n".join(lines[start + 1:end]))


def markdown(header: tuple[str, ...] | list[str], alignment: str, rows) -> str:
    """A Markdown table of ``header``, the alignment row ``alignment`` and ``rows`` (cells)."""
    return "\n".join(["| " + " | ".join(header) + " |", alignment,
                      *("| " + " | ".join(row) + " |" for row in rows)])


def recorded(name: str, index: int = 0) -> str:
    """Table ``index`` of the results file ``name`` as it stands there."""
    table = tables(read(name))[index]
    return markdown(table.header, table.alignment, table.rows)


def verbatim(name: str) -> str:
    """The whole results file ``name`` as it stands (a results file written as the page shows it)."""
    return read(name).strip()


def document(name: str) -> dict:
    """The JSON results document ``name`` (a script's ``--json``)."""
    return json.loads((RESULTS / name).read_text())


def overlaid(*names: str) -> dict:
    """The results documents ``names`` with a later one's runs of a rule replacing the earlier's
    (``report.overlaid``)."""
    import report  # benchmarks/report.py

    return report.overlaid([document(name) for name in names])


def joined(*names: str) -> dict:
    """The results documents ``names`` as one, as a script's ``--render`` joins them."""
    import report  # benchmarks/report.py

    return report.joined([document(name) for name in names])
