"""Tables of README.md and docs/guide.md made from results files of benchmarks/guaranteed.py:
README's headline (for each instance, the Theorem 1 lower bound and the default's median
queries, their ratio and the fraction of runs right) and the guide's table of every
algorithm × guaranteed regime on the four instances.

    python benchmarks/tables.py     # writes both tables

tests/test_tables.py fails when a table is not what this makes of its results file.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "guaranteed_1000seeds_default.md"
MARKERS = ("<!-- headline -->", "<!-- /headline -->")
#: The guide's table of every method: its results file and markers.
METHODS_RESULTS = ROOT / "benchmarks" / "results" / "guaranteed_20seeds.md"
METHODS_MARKERS = ("<!-- methods -->", "<!-- /methods -->")
INSTANCE = re.compile(r"^#### (?P<instance>.+?), σ = (?P<sigma>[\d.]+) \(Theorem 1 bound, σ²-scaled: (?P<bound>[\d,.]+)\)")


def sections(results: str) -> list[tuple[re.Match, list[list[str]]]]:
    """Each instance of ``results`` (its heading's match) with its table's rows (cells)."""
    found: list[tuple[re.Match, list[list[str]]]] = []
    for line in results.splitlines():
        heading = INSTANCE.match(line)
        if heading:
            found.append((heading, []))
        elif line.startswith("#### "):  # a section of another kind (the tuned regime's)
            found.append((None, []))
        elif found and found[-1][0] is not None and line.startswith("| ") and not line.startswith("| algorithm"):
            found[-1][1].append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return [(heading, rows) for heading, rows in found if heading is not None]


def methods(results: str) -> str:
    """Every algorithm × regime of ``results`` (rows, in the first instance's order) against
    every instance (columns): median queries and, in brackets, the ratio to the bound."""
    found = sections(results)
    header = "| algorithm:regime | " + " | ".join(
        f"{heading['instance']}, σ = {heading['sigma']} (bound {heading['bound']})" for heading, _ in found) + " |"
    rows = [header, "|---|" + "---:|" * len(found)]
    cells = [{(row[0], row[1]): f"{row[2].split(' [')[0]} ({row[3]})" for row in table} for _, table in found]
    for key in dict.fromkeys(key for table in cells for key in table):
        rows.append(f"| {key[0]}:{key[1]} | " + " | ".join(table.get(key, "—") for table in cells) + " |")
    seeds = re.search(r"(\d[\d,]*) seeds, δ = ([\d.]+)", results)
    return "\n".join(rows) + (f"\n\nMedian queries over {seeds.group(1)} seeds at δ = {seeds.group(2)} (ratio to the Theorem 1 "
                              f"bound): [{METHODS_RESULTS.name}](../benchmarks/results/{METHODS_RESULTS.name})"
                              if seeds else "")


def table(results: str, algorithm: str = "track-and-stop", regime: str = "ols") -> str:
    """The headline table of ``results`` (the text of a guaranteed.py output): one row per
    instance, for ``algorithm`` with ``regime``."""
    seeds = re.search(r"(\d[\d,]*) seeds, δ = ([\d.]+)", results)
    rows = ["| instance | σ | Theorem 1 bound | median queries | ratio | right |", "|---|---:|---:|---:|---:|---:|"]
    instance = None
    for line in results.splitlines():
        found = INSTANCE.match(line)
        if found:
            instance = found
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if instance is not None and len(cells) >= 5 and cells[:2] == [algorithm, regime]:
            median = cells[2].split(" [")[0]
            rows.append(f"| {instance['instance']} | {instance['sigma']} | {instance['bound']} | {median} | {cells[3]} "
                        f"| {cells[4]} |")
    caption = (f"`{algorithm}` with `{regime}` (the default), {seeds.group(1)} seeds, δ = {seeds.group(2)}: "
               f"[{RESULTS.relative_to(ROOT)}]({RESULTS.relative_to(ROOT)})" if seeds else "")
    return "\n".join(rows) + ("\n\n" + caption if caption else "")


def write_block(path: Path, markers: tuple[str, str], text: str) -> None:
    """Replace what stands between ``markers`` in ``path`` by ``text``."""
    page = path.read_text()
    start, end = page.index(markers[0]) + len(markers[0]), page.index(markers[1])
    path.write_text(page[:start] + "\n" + text + "\n" + page[end:])


def main() -> None:
    write_block(ROOT / "README.md", MARKERS, table(RESULTS.read_text()))
    write_block(ROOT / "docs" / "guide.md", METHODS_MARKERS, methods(METHODS_RESULTS.read_text()))


if __name__ == "__main__":
    main()
