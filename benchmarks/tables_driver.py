"""The generated tables of docs/driver.md, each from its results file."""

from __future__ import annotations

from figure5_driver import TUNED_ALGORITHMS, markdown_table, summary_table
from results_tables import document, recorded


def figure5(name: str) -> str:
    """Figure 5 as a table from the per-run results document ``name`` of benchmarks/figure5_driver.py:
    every √β and seed it holds."""
    runs = document(name)["runs"]
    points = [key.split("/") for key in runs if not key.startswith("acol/")]
    grid = sorted({float(value) for _, value in points})
    seeds = max(len(seeds) for seeds in runs.values())
    return markdown_table(grid, summary_table(runs, grid, list(TUNED_ALGORITHMS), seeds), list(TUNED_ALGORITHMS))


BLOCKS = {"speed": lambda: recorded("bench_driver.md"), "figure4": lambda: recorded("figure4_penalty.md"),
          "figure5-paper-arms": lambda: figure5("figure5_paper_arms.json"),
          "figure5-own": lambda: figure5("figure5_own500.json")}
