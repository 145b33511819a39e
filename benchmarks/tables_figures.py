"""The generated tables of docs/figure-tables.md: every point of the paper's Figures 2 and 3, as
benchmarks/figure_tables.py printed them for each study (one results file per study)."""

from __future__ import annotations

from results_tables import read

STUDIES = ("figure2-r1", "figure2-rsigma", "figure3-r1", "figure3-rsigma")


def output(study: str) -> str:
    """The tables of ``study``'s results file: its text from the first table's heading on."""
    text = read(f"{study}_tables.md")
    return text[text.index("\n####") + 1:].strip()


BLOCKS = {study: (lambda study=study: output(study)) for study in STUDIES}
