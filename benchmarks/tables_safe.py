"""The generated tables of docs/safe.md, each from its results file (the output of the
reproduction scripts, whose tables the page shows without their wall-time column)."""

from __future__ import annotations

import re

from results_tables import markdown, read, recorded, tables


def without_wall_time(name: str, index: int, header: tuple[str, ...]) -> str:
    """Table ``index`` of ``name`` under the page's ``header``, its last column (wall seconds) left out."""
    table = tables(read(name))[index]
    return markdown(header, "|" + "---|" * len(header), [row[:len(header)] for row in table.rows])


def appendix_f_shape() -> str:
    """The shape diagnostics of Appendix F, each run named without its source in brackets; a run
    that does not explore (T' = 0) has no design after T' to measure (—)."""
    regret, shape = tables(read("safe_lucb_appendix_f.md"))[:2]
    header = ("instance", "run", "log-log slope of R_t (t ≥ 10^4)", "R_T − R_T'", "slope of R_t − R_T'",
              "λ_min(Σxxᵀ) after T'", "T'λ_−/2", "x* ∈ D_t^s")
    rows = [(instance, re.sub(r" \(.*\)$", "", run), slope, post, post_slope,
             *((design, target) if explored[2] != "0" else ("—", "—")), inside)
            for (instance, run, slope, post, post_slope, design, target, inside), explored in zip(shape.rows, regret.rows)]
    return markdown(header, shape.alignment, rows)


def figure1(panel: int, keep: tuple[str, ...] = ()) -> str:
    """Panel ``panel`` of Figure 1 (0: (a), 1: (b), 3: (c)/(d)); of (b) only the rows ``keep``."""
    table = tables(read("pos_figure1.md"))[panel]
    rows = [row for row in table.rows if not keep or row[0] in keep]
    return markdown(table.header, table.alignment, rows)


BLOCKS = {
    "appendix-f": lambda: without_wall_time("safe_lucb_appendix_f.md", 0, (
        "instance", "run", "T'", "R(10^3)", "R(10^4)", "R(2·10^4)", "R(5·10^4)", "R(10^5)", "unsafe")),
    "appendix-f-shape": appendix_f_shape,
    "heuristic": lambda: recorded("safe_lucb_heuristic.md"),
    "table1": lambda: without_wall_time("pos_table1.md", 0, (
        "algorithm", "τ", "unsafe pulls", "unsafe fraction", "k̂ = k*", "ε-correct", "γ̄₂ after FE", "γ̄₂ at stop")),
    "figure1-a": lambda: figure1(0),
    "figure1-b": lambda: figure1(1, ("γ̄₂ / γ₂",)),
    "figure1-cd": lambda: figure1(3),
    "timing": lambda: recorded("bench_safe.md"),
}
