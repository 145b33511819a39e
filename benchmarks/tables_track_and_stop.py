"""The generated tables of docs/track-and-stop.md, each from its results file."""

from __future__ import annotations

import re

from results_tables import markdown, read, tables

#: The three draws of ``benchmarks/guaranteed.py --fresh`` and their outputs; the irrelevant-dims
#: instances are the same in every draw, so only the first draw's are shown.
DRAWS = (("first", "guaranteed_fresh1.md"), ("held-out", "guaranteed_fresh21.md"), ("new", "guaranteed_fresh41.md"))
HEADING = re.compile(r"^#### (?P<instance>.+?), σ = (?P<sigma>[\d.]+) \(Theorem 1 bound, σ²-scaled: (?P<bound>[\d,.]+)\)")


def fresh() -> str:
    """"Instances nobody tuned on": the default on every instance of the three draws."""
    rows = []
    for draw, name in DRAWS:
        for table in tables(read(name)):
            heading = HEADING.match(table.caption)
            if heading is None or draw != DRAWS[0][0] and heading["instance"].startswith("irrelevant-dims"):
                continue
            for algorithm, regime, queries, ratio, correct, *_ in table.rows:
                rows.append((draw, heading["instance"], heading["bound"], queries, ratio, correct))
    return markdown(("draw", "instance (σ = 1)", "Theorem 1 bound", "median queries [q25, q75]", "ratio", "correct"),
                    "|---|---|---:|---:|---:|---:|", rows)


def floor() -> str:
    """"The floor of these intervals": both runs of benchmarks/ols_floor.py in one table."""
    found = tables(read("ols_floor.md"))
    return markdown(("instance", "bound", "track-and-stop (200 seeds)", "H_CLB design", "best fixed allocation",
                     "same, scale known (log λ/L²)"), found[0].alignment, [row for table in found for row in table.rows])


BLOCKS = {"fresh": fresh, "floor": floor}
