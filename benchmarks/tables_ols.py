"""The generated tables of docs/ols.md, each from its results file."""

from __future__ import annotations

import ols_coordinates
import ols_prior
from results_tables import document, joined, markdown, read, recorded, tables

#: The instance files of ``ols_queries.md`` (made by ``cbai generate`` there) as docs/ols.md names them.
INSTANCES = {"id1.yaml": "irrelevant-dims d=10 ε=0.05, σ = 1", "us1.yaml": "unit-sphere d=10 n=20 seed 0, σ = 1",
             "r1.yaml": "regret-1d, σ = 1", "instances/irrelevant-dims-d10-eps0.05.yaml": "irrelevant-dims d=10 ε=0.05, σ = 0.05"}
ALGORITHMS = {"g-acol": "G-ACOL", "greedy-maxvar": "Greedy MaxVar", "maxrew-u": "MaxRew-U"}


def grouped(number: str) -> str:
    """``number`` with thousands separators when it is a whole number (1696 → 1,696)."""
    return f"{int(number):,}" if number.isdigit() else number


def queries() -> str:
    """"Measured queries": `det` against `ols` per instance and algorithm (ols_queries.md), the
    instance and its bound written once per instance."""
    table = tables(read("ols_queries.md"))[0]
    rows, previous = [], None
    for instance, bound, algorithm, det, ols in table.rows:
        first = instance != previous
        rows.append((INSTANCES[instance] if first else "", grouped(bound) if first else "", ALGORITHMS[algorithm], det, ols))
        previous = instance
    return markdown(("instance", "Theorem 1 bound", "algorithm", "`det` median (ratio), right", "`ols` median (ratio), right"),
                    table.alignment, rows)


def widths() -> str:
    """"Mixture against union": benchmarks/ols_widths.py's table (ols_widths.md), its instance files
    named as docs/ols.md names them."""
    table = tables(read("ols_widths.md"))[0]
    rows = [(INSTANCES[row[0]], grouped(row[1]), *row[2:]) for row in table.rows]
    return markdown(("instance", "n at stop", "rank of V", *table.header[3:]), table.alignment, rows)


BLOCKS = {"kappa": lambda: recorded("ols_kappa.md"), "widths": widths, "queries": queries,
          "coordinates-driver": lambda: ols_coordinates.render(document("ols_coordinates_driver.json")),
          "coordinates-screen": lambda: ols_coordinates.render(document("ols_coordinates_screen.json")),
          "coordinates-held-out": lambda: ols_coordinates.render(document("ols_coordinates_held_out.json")),
          "prior-given": lambda: ols_prior.render(joined("ols_prior_given.json", "ols_prior_long.json",
                                                                 "ols_prior_drivers.json")),
          "prior-draws": lambda: ols_prior.render(joined("ols_prior_fresh.json", "ols_prior_held_out.json"))}
