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

import numpy as np
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


def test_the_optimism_table_has_one_row_per_kappa_and_one_column_per_instance(monkeypatch):
    tables()
    import tables_track_and_stop

    results = ("`python benchmarks/ols_versions.py … --optimism 0 1`:\n\n"
               "| κ | instance | bound | median / bound | mean / bound | runs > 3 × median | right | seconds |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|\n"
               "| 0 | random:d=5,n=20,seed=4,sigma=1 | 10.0 | 3.100 | 3.2 | 0 | 9/9 | 1 |\n"
               "| 0 | irrelevant-dims:d=10,eps=0.05,sigma=1 | 20.0 | 2.900 | 3.0 | 0 | 9/9 | 1 |\n"
               "| 1 | random:d=5,n=20,seed=4,sigma=1 | 10.0 | 2.800 | 2.9 | 0 | 9/9 | 1 |\n"
               "| 1 | irrelevant-dims:d=10,eps=0.05,sigma=1 | 20.0 | 2.700 | 2.8 | 0 | 9/9 | 1 |\n")
    monkeypatch.setattr(tables_track_and_stop, "read", lambda name: results)
    assert tables_track_and_stop.optimism().splitlines() == [
        "| κ | random d=5 s4 | irrelevant-dims d=10 |", "|---|---:|---:|", "| 0 | 3.100 | 2.900 |", "| 1 | 2.800 | 2.700 |"]


def test_the_optimism_hook_of_ols_versions_sets_the_answer_rules_kappa():
    """``ols_versions.py --optimism κ`` runs :class:`AnswerOptimism` at κ: the learner's κ is the
    given one, and at the algorithm's own κ the runs are the default's, pull for pull."""
    tables()
    import ols_versions

    from cbai_cli.algorithms.track_and_stop import OPTIMISM, TrackAndStop
    from cbai_cli.compare.sources import parse_source
    from cbai_cli.run.simulate import RunRequest, prepare, run_many

    instance = parse_source("random:d=3,n=6,seed=1,sigma=1", 0)[0].instance_for(0)
    prepared = prepare(RunRequest.of("track-and-stop", "ols", delta=0.05), instance)
    learner = ols_versions.with_optimism(prepared, 0.25).make_algorithm(np.random.default_rng(0))
    assert isinstance(learner, TrackAndStop) and learner.optimism == 0.25
    assert ols_versions.with_optimism(prepared, None) is prepared
    same = run_many(ols_versions.with_optimism(prepared, OPTIMISM), range(3))
    assert [run.iterations for run in same] == [run.iterations for run in run_many(prepared, range(3))]


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


def test_a_later_documents_runs_of_a_rule_replace_the_earlier_ones():
    tables()  # puts benchmarks/ on the path
    import report

    def runs(*queries):
        return {"queries": list(queries), "right": len(queries)}

    first = {"command": "python benchmarks/x.py a b --rules r,s", "date": "2026-12-05", "seeds": 2,
             "instances": [{"source": "a", "bound": 1.0, "rules": {"r": runs(5, 6), "s": runs(7, 8)}},
                           {"source": "b", "bound": 2.0, "rules": {"r": runs(1, 2), "s": runs(3, 4)}}]}
    again = {"command": "python benchmarks/x.py b --rules r", "date": "2026-12-06", "seeds": 2,
             "instances": [{"source": "b", "bound": 2.0, "rules": {"r": runs(9, 9)}}]}
    both = report.overlaid([first, again])
    assert both["command"] == "python benchmarks/x.py a b --rules r,s`, `python benchmarks/x.py b --rules r"
    assert both["date"] == "2026-12-05, 2026-12-06"
    assert [item["rules"] for item in both["instances"]] == [{"r": runs(5, 6), "s": runs(7, 8)},
                                                             {"r": runs(9, 9), "s": runs(3, 4)}]
    assert first["instances"][1]["rules"]["r"] == runs(1, 2)  # the documents themselves are left alone
    with pytest.raises(ValueError, match="c is not an instance"):
        report.overlaid([first, {**again, "instances": [{"source": "c", "bound": 1.0, "rules": {}}]}])
    with pytest.raises(ValueError, match="3 seeds replace 2"):
        report.overlaid([first, {**again, "instances": [{"source": "a", "bound": 1.0, "rules": {"s": runs(1, 1, 1)}}]}])
