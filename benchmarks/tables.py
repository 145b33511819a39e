"""Every generated block of README.md and docs/*.md: the tables of measured numbers, each made
from its results file under benchmarks/results/. A block stands between the marker comments
``<!-- NAME -->`` and ``<!-- /NAME -->`` of its page; this module writes what stands there.
README's headline (for each instance, the Theorem 1 lower bound and the default's median queries,
their ratio and the fraction of runs right) and the guide's table of every algorithm ×
guaranteed regime on the four instances are made here from outputs of benchmarks/guaranteed.py;
every other page's blocks are made by its module beside this one (tables_ols.py, …).

    python benchmarks/tables.py            # writes every block
    python benchmarks/tables.py --check    # names the blocks that are not what their results files give,
                                           # and the prose numbers not found where their paragraph says
                                           # (benchmarks/prose_numbers.py)

tests/test_tables.py fails when a block is not what this makes of its results file.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the page modules beside this one

import prose_numbers
import tables_binary
import tables_driver
import tables_figures
import tables_guide
import tables_ols
import tables_safe
import tables_track_and_stop
from results_tables import column, guaranteed_sections, recorded, verbatim

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "guaranteed_1000seeds_default.md"
#: The results file of the guide's table of every method.
METHODS_RESULTS = ROOT / "benchmarks" / "results" / "guaranteed_20seeds.md"
def methods(results: str) -> str:
    """Every algorithm × regime of ``results`` (rows, in the first instance's order) against
    every instance (columns): median queries and, in brackets, the ratio to the bound."""
    found = guaranteed_sections(results)
    header = "| algorithm:regime | " + " | ".join(
        f"{heading['instance']}, σ = {heading['sigma']} (bound {heading['bound']})" for heading, _ in found) + " |"
    rows = [header, "|---|" + "---:|" * len(found)]
    cells = [{(row[0], row[1]): f"{median(table, row)} ({column(table, row, 'ratio to bound')})" for row in table.rows}
             for _, table in found]
    for key in dict.fromkeys(key for table in cells for key in table):
        rows.append(f"| {key[0]}:{key[1]} | " + " | ".join(table.get(key, "—") for table in cells) + " |")
    seeds = re.search(r"(\d[\d,]*) seeds, δ = ([\d.]+)", results)
    return "\n".join(rows) + (f"\n\nMedian queries over {seeds.group(1)} seeds at δ = {seeds.group(2)} (ratio to the Theorem 1 "
                              f"bound): [{METHODS_RESULTS.name}](../benchmarks/results/{METHODS_RESULTS.name})"
                              if seeds else "")


def median(table, row) -> str:
    """The median queries of ``row`` of a guaranteed.py table, without its quartiles."""
    return column(table, row, "median queries [q25, q75]").split(" [")[0]


def table(results: str, algorithm: str = "track-and-stop", regime: str = "ols") -> str:
    """The headline table of ``results`` (the text of a guaranteed.py output): one row per
    instance, for ``algorithm`` with ``regime``: median queries, its ratio to Theorem 1 and, where
    the output has it, to Theorem 1's kl form (docs/lower-bound.md), and the runs right."""
    seeds = re.search(r"(\d[\d,]*) seeds, δ = ([\d.]+)", results)
    kl = "ratio to kl bound" in results
    rows = ["| instance | σ | Theorem 1 bound | median queries | ratio | " + ("ratio to kl form | " if kl else "") + "right |",
            "|---|---:|---:|---:|---:|" + ("---:|" if kl else "") + "---:|"]
    for heading, found in guaranteed_sections(results):
        for row in found.rows:
            if list(row[:2]) == [algorithm, regime]:
                shown = [median(found, row), column(found, row, "ratio to bound"),
                         *([column(found, row, "ratio to kl bound")] if kl else []), column(found, row, "correct")]
                rows.append(f"| {heading['instance']} | {heading['sigma']} | {heading['bound']} | " + " | ".join(shown) + " |")
    caption = (f"`{algorithm}` with `{regime}` (the default), {seeds.group(1)} seeds, δ = {seeds.group(2)}: "
               f"[{RESULTS.relative_to(ROOT)}]({RESULTS.relative_to(ROOT)})" if seeds else "")
    return "\n".join(rows) + ("\n\n" + caption if caption else "")


@dataclass(frozen=True)
class Block:
    """The generated block ``name`` of ``page`` (a path from the repository's root) and how it is made."""

    page: str
    name: str
    make: Callable[[], str]

    @property
    def markers(self) -> tuple[str, str]:
        return f"<!-- {self.name} -->", f"<!-- /{self.name} -->"

    def current(self) -> str:
        """What stands between the block's markers in its page now."""
        page = (ROOT / self.page).read_text()
        return page.split(self.markers[0], 1)[1].split(self.markers[1], 1)[0].strip()

    def write(self) -> None:
        """Replace what stands between the markers by what the results file gives."""
        path = ROOT / self.page
        page = path.read_text()
        start, end = page.index(self.markers[0]) + len(self.markers[0]), page.index(self.markers[1])
        path.write_text(page[:start] + "\n" + self.make().strip() + "\n" + page[end:])


def page_blocks(page: str, makers: dict[str, Callable[[], str]]) -> list[Block]:
    return [Block(page, name, make) for name, make in makers.items()]


BLOCKS: tuple[Block, ...] = (
    Block("README.md", "headline", lambda: table(RESULTS.read_text())),
    Block("README.md", "headline-binary", tables_binary.headline_drivers),
    Block("docs/guide.md", "methods", lambda: methods(METHODS_RESULTS.read_text())),
    *page_blocks("docs/guide.md", tables_guide.BLOCKS),
    *page_blocks("docs/ols.md", tables_ols.BLOCKS),
    *page_blocks("docs/track-and-stop.md", tables_track_and_stop.BLOCKS),
    Block("docs/sweeps.md", "threads", lambda: recorded("bench_threads_split.md")),
    Block("docs/sessions.md", "estimate-driver", lambda: verbatim("session_estimate_driver.md")),
    Block("docs/sessions.md", "estimate-random", lambda: verbatim("session_estimate_random.md")),
    *page_blocks("docs/driver.md", tables_driver.BLOCKS),
    *page_blocks("docs/figure-tables.md", tables_figures.BLOCKS),
    *page_blocks("docs/safe.md", tables_safe.BLOCKS),
    *page_blocks("docs/binary.md", tables_binary.BLOCKS),
)


def stale(blocks: tuple[Block, ...] = BLOCKS) -> list[Block]:
    """The blocks whose page does not hold what their results file gives."""
    return [block for block in blocks if block.current() != block.make().strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every stale block")
    args = parser.parse_args()
    if args.check:
        found = stale()
        for block in found:
            print(f"{block.page}: <!-- {block.name} --> is not what its results file gives", file=sys.stderr)
        prose = prose_numbers.check()
        for line in prose:
            print(line, file=sys.stderr)
        raise SystemExit(1 if found or prose else 0)
    for block in BLOCKS:
        block.write()


if __name__ == "__main__":
    main()
