"""Markdown tables of a comparison store in the layout of the paper's Figure 2: one table
per swept source, algorithms as rows, swept values as columns, median queries in the
cells. Not run by CI.

    python benchmarks/figure_tables.py results/figure2-r1.sqlite > tables.md
    cbai compare --config studies/figure2-r1.yaml --seeds 10 --out results/figure2-r1.sqlite --json \
        | python benchmarks/figure_tables.py - > docs/figure2-r1-tables.md

The second form tabulates exactly the runs of the study (a store may hold more).

A cell is marked † when some run of that point hit its query budget (its recorded
queries are the budget) and ‡ when half of them or more did (the median is then a lower
bound); ✗ marks a point where some run that stopped on its own was wrong. Unswept
groups get one table with a row per algorithm.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from cbai_cli.compare.store import read_store
from cbai_cli.compare.study import deduplicate
from cbai_cli.compare.summary import SummaryRow, sort_records, summarize


def cell(row: SummaryRow, wrong: int) -> str:
    """The median with its markers."""
    text = f"{row.median:,.0f}" if row.median >= 100 else f"{row.median:.3g}"
    if row.budget_stops:
        text += "‡" if 2 * row.budget_stops >= row.runs else "†"
    if wrong:
        text += "✗"
    return text


def wrong_answers(records: Sequence[dict]) -> dict[tuple[str, str], int]:
    """Runs that stopped on their own with a wrong answer, per (group, spec)."""
    counts: dict[tuple[str, str], int] = {}
    for record in records:
        if record["stopped"] != "budget" and record.get("correct") is False:
            key = (record["group"], record["spec"])
            counts[key] = counts.get(key, 0) + 1
    return counts


def tables(records: Sequence[dict]) -> str:
    rows = summarize(records)
    wrong = wrong_answers(records)
    sources: dict[str, list[SummaryRow]] = {}
    for row in rows:
        sources.setdefault(row.source if row.swept_parameter is not None else "", []).append(row)
    lines: list[str] = []
    for source, members in sources.items():
        algorithms = list(dict.fromkeys(row.algorithm for row in members))
        if source:
            parameter = members[0].swept_parameter
            values = sorted({row.swept_value for row in members})
            lookup = {(row.algorithm, row.swept_value): row for row in members}
            lines += [f"#### {source}", "", "| algorithm | " + " | ".join(f"{parameter} = {value}" for value in values) + " |",
                      "| --- |" + " ---: |" * len(values)]
            for algorithm in algorithms:
                cells = [cell(lookup[(algorithm, value)], wrong.get((lookup[(algorithm, value)].group, algorithm), 0))
                         if (algorithm, value) in lookup else "—" for value in values]
                lines.append(f"| {algorithm} | " + " | ".join(cells) + " |")
        else:
            lines += ["#### unswept groups", "", "| group | algorithm | median | q25 | q75 | correct | budget stops |",
                      "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
            for row in members:
                correct = "—" if row.fraction_correct is None else f"{row.fraction_correct:.0%}"
                lines.append(f"| {row.group} | {row.algorithm} | {row.median:,.4g} | {row.q25:,.4g} | {row.q75:,.4g} | "
                             f"{correct} | {row.budget_stops} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", help="JSONL or SQLite stores of cbai compare, or - for its --json on stdin")
    arguments = parser.parse_args()
    loaded = [json.load(sys.stdin)["records"] if path == "-" else read_store(path).records for path in arguments.stores]
    records = sort_records(deduplicate(record for records in loaded for record in records))
    print(tables(records))


if __name__ == "__main__":
    main()
