"""README's table of headline results, made from a results file of benchmarks/guaranteed.py:
for each instance, the Theorem 1 lower bound and the default's median queries, their ratio
and the fraction of runs right.

    python benchmarks/headline.py [RESULTS.md]    # writes the table into README.md

tests/test_headline.py fails when README's table is not what this makes of the file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "guaranteed_1000seeds_default.md"
MARKERS = ("<!-- headline -->", "<!-- /headline -->")
INSTANCE = re.compile(r"^#### (?P<instance>.+?), σ = (?P<sigma>[\d.]+) \(Theorem 1 bound, σ²-scaled: (?P<bound>[\d,.]+)\)")


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


def main() -> None:
    results = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text()
    start, end = readme.index(MARKERS[0]) + len(MARKERS[0]), readme.index(MARKERS[1])
    readme_path.write_text(readme[:start] + "\n" + table(results.read_text()) + "\n" + readme[end:])


if __name__ == "__main__":
    main()
