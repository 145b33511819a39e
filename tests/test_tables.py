"""README's headline table and the guide's table of every method are what benchmarks/tables.py
makes of their results files, and README.md stays short: at most 200 lines, none over 200
characters."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tables():
    spec = importlib.util.spec_from_file_location("tables", ROOT / "benchmarks" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_headline_table_is_made_from_its_results_file():
    module = tables()
    readme = (ROOT / "README.md").read_text()
    block = readme.split(module.MARKERS[0], 1)[1].split(module.MARKERS[1], 1)[0]
    assert block.strip() == module.table(module.RESULTS.read_text()).strip(), "run `python benchmarks/tables.py`"


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


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200
    assert max(len(line) for line in lines) <= 200


def test_the_guides_table_of_every_method_is_made_from_its_results_file():
    module = tables()
    guide = (ROOT / "docs" / "guide.md").read_text()
    block = guide.split(module.METHODS_MARKERS[0], 1)[1].split(module.METHODS_MARKERS[1], 1)[0]
    assert block.strip() == module.methods(module.METHODS_RESULTS.read_text()).strip(), "run `python benchmarks/tables.py`"
