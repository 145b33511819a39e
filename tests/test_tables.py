"""Every generated block of README.md and docs/ (a table of measured numbers between marker
comments) is what benchmarks/tables.py makes of its results file; results files name no path
of the machine they were made on; and README.md stays short: at most 200 lines, none over 200
characters."""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def tables():
    """benchmarks/tables.py, loaded once (the benchmarks folder is no package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("benchmark_tables", ROOT / "benchmarks" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BLOCKS = tables().BLOCKS


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{block.page}:{block.name}" for block in BLOCKS])
def test_a_generated_block_is_what_its_results_file_gives(block):
    assert block.current() == block.make().strip(), f"run `python benchmarks/tables.py` ({block.page}, {block.name})"


def test_every_marked_block_of_the_pages_is_generated():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    # Made elsewhere: the registry's table (`cbai algorithms --markdown`, kept equal by tests/test_docs.py).
    elsewhere = {("docs/guide.md", "algorithms")}
    generated = {(block.page, block.name) for block in BLOCKS}
    for page in pages:
        name = str(page.relative_to(ROOT))
        for marker in re.findall(r"<!-- /([\w-]+) -->", page.read_text()):
            assert (name, marker) in generated | elsewhere, f"{name}: <!-- {marker} --> has no generator"


def test_a_changed_number_makes_a_block_stale(tmp_path):
    module = tables()
    block = next(block for block in module.BLOCKS if block.name == "headline")
    page = tmp_path / "README.md"
    text = (ROOT / "README.md").read_text()
    made = block.make().strip()
    number = re.search(r"\| (\d[\d,]*) \|", made).group(1)
    page.write_text(text.replace(made, made.replace(f"| {number} |", f"| {number}1 |", 1)))
    moved = module.Block(str(page), block.name, block.make)
    assert module.stale((moved,)) == [moved]
    assert module.stale((block,)) == []


def test_results_files_name_no_path_of_the_machine():
    for path in sorted((ROOT / "benchmarks" / "results").iterdir()):
        text = path.read_text(errors="replace")
        assert "/tmp/" not in text and "/work/" not in text, path.name


def test_the_table_reads_every_instance_of_a_results_file():
    results = ("`python benchmarks/guaranteed.py`: 7 seeds, δ = 0.1, R = σ\n\n"
               "#### toy, σ = 1 (Theorem 1 bound, σ²-scaled: 10)\n\n"
               "| algorithm | regime | median queries [q25, q75] | ratio to bound | correct | budget stops | µs/query |\n"
               "|---|---|---:|---:|---:|---:|---:|\n"
               "| maxrew-u | ols | 40 [30, 50] | 4.00× | 100% | 0 | 7 |\n"
               "| track-and-stop | ols | 30 [20, 40] | 3.00× | 100% | 0 | 7 |\n")
    lines = tables().table(results).splitlines()
    assert lines[2] == "| toy | 1 | 10 | 30 | 3.00× | 100% |"
    assert "7 seeds, δ = 0.1" in lines[-1]


def test_results_tables_reads_a_table_with_its_caption():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from results_tables import after
    from results_tables import tables as read_tables

    text = "# a\n\n`cmd`:\n\n| x | y |\n|---|---:|\n| 1 | 2 |\n\n## b\n\n| z |\n|---|\n| 3 |\n"
    first, second = read_tables(text)
    assert (first.caption, first.header, first.alignment, first.rows) == ("`cmd`:", ("x", "y"), "|---|---:|", (("1", "2"),))
    assert second.caption == "## b" and second.rows == (("3",),)
    assert [table.header for table in after(text, "## b")] == [("z",)]


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200
    assert max(len(line) for line in lines) <= 200


def test_the_lower_bound_pages_table_of_delta_is_the_formulas():
    """docs/lower-bound.md's table is computed, not measured: each row against the formulas,
    log(1/(2.4δ)) and kl(δ, 1 − δ) = (1 − 2δ)·log((1 − δ)/δ), to the page's three decimals."""
    import math

    text = (ROOT / "docs" / "lower-bound.md").read_text()
    rows = [line for line in text.splitlines() if re.match(r"^\| (0\.\d+|10⁻⁴) \|", line)]
    assert len(rows) == 5
    for row in rows:
        delta_text, relaxed, kl, ratio = [cell.strip() for cell in row.strip("|").split("|")]
        delta = 1e-4 if delta_text == "10⁻⁴" else float(delta_text)
        exact = (1 - 2 * delta) * math.log((1 - delta) / delta)
        assert float(relaxed) == pytest.approx(math.log(1 / (2.4 * delta)), abs=5e-4)
        assert float(kl) == pytest.approx(exact, abs=5e-4)
        assert float(ratio) == pytest.approx(exact / math.log(1 / (2.4 * delta)), abs=5e-3)
