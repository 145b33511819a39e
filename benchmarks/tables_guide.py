"""The generated tables of docs/guide.md besides README's and the guide's tables of
guaranteed.py (benchmarks/tables.py), each from its results file."""

from __future__ import annotations

from results_tables import markdown, read, recorded, tables, verbatim


def synthetic() -> str:
    """"Reproducing the paper's synthetic results": one table per instance of the output of
    benchmarks/reproduce_synthetic.py, under the instance's heading."""
    return "\n\n".join(f"#### {table.caption.lstrip('#').strip()}\n\n{markdown(table.header, table.alignment, table.rows)}"
                       for table in tables(read("reproduce_synthetic.md")))


BLOCKS = {"startup": lambda: verbatim("startup.md"), "synthetic": synthetic,
          "safe-compare": lambda: recorded("compare_safe_lucb_appendix_f.md")}
