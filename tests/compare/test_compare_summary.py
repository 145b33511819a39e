"""Summaries per (group, algorithm): quartiles, fractions, ratios, order; CSV text; plots."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.compare.render import csv_text, group_tables, json_document
from cbai_cli.compare.summary import summarize


def record(group: str, spec: str, seed: int, iterations: int, *, correct: bool = True, lower_bound: float | None = 10.0,
           group_index: int = 0, algorithm_index: int = 0, swept=None, instance: str = "inst", stopped: str = "solved") -> dict:
    return {"run_key": f"{group}/{spec}/{seed}", "group": group, "source": group.split("=")[0] + "=1|2", "spec": spec,
            "algorithm": spec.split(":")[0], "regime": "tuned", "seed": seed, "iterations": iterations,
            "correct": correct, "violation": not correct, "stopped": stopped, "wall_s": 0.001 * iterations,
            "lower_bound": lower_bound, "group_index": group_index, "algorithm_index": algorithm_index,
            "swept_parameter": None if swept is None else "eps", "swept_value": swept, "instance": instance}


def test_median_and_quartiles_of_queries():
    (row,) = summarize([record("g", "a:tuned", seed, value) for seed, value in enumerate([10, 20, 30, 40, 1000])])
    assert (row.q25, row.median, row.q75) == (20.0, 30.0, 40.0)


def test_fraction_correct_violations_and_budget_stops():
    runs = [record("g", "a:tuned", 0, 5), record("g", "a:tuned", 1, 5, correct=False, stopped="budget"),
            record("g", "a:tuned", 2, 5), record("g", "a:tuned", 3, 5, correct=False)]
    (row,) = summarize(runs)
    assert (row.fraction_correct, row.violations, row.budget_stops) == (0.5, 2, 1)


def test_ratio_divides_the_median_by_the_lower_bound():
    (row,) = summarize([record("g", "a:tuned", seed, 50) for seed in range(3)])
    assert row.lower_bound == 10.0 and row.ratio_to_lower_bound == 5.0


def test_ratio_uses_the_median_bound_of_per_seed_instances():
    runs = [record("g", "a:tuned", seed, 60, lower_bound=bound, instance=f"i{seed}") for seed, bound in enumerate([10, 20, 30])]
    (row,) = summarize(runs)
    assert row.ratio_to_lower_bound == 3.0 and row.instance == "3 instances (one per seed)"


def test_no_ratio_without_bounds():
    (row,) = summarize([record("g", "a:tuned", 0, 50, lower_bound=None)])
    assert row.ratio_to_lower_bound is None


def test_rows_follow_the_grid_order_not_the_finishing_order():
    runs = [record("later", "b", 0, 1, group_index=1, algorithm_index=1), record("first", "b", 0, 1, algorithm_index=1),
            record("later", "a", 0, 1, group_index=1), record("first", "a", 0, 1)]
    assert [(row.group, row.algorithm) for row in summarize(runs)] == [("first", "a"), ("first", "b"), ("later", "a"),
                                                                       ("later", "b")]


def test_one_table_per_group_with_a_row_per_algorithm():
    runs = [record("one", "a:tuned", 0, 7), record("one", "b:tuned", 0, 9, algorithm_index=1),
            record("two", "a:tuned", 0, 8, group_index=1)]
    tables = group_tables(summarize(runs))
    assert [table.title for table in tables] == ["one", "two"] and [table.row_count for table in tables] == [2, 1]


def test_json_document_has_records_and_summary():
    runs = [record("g", "a:tuned", seed, 10 + seed) for seed in range(3)]
    document = json_document(runs, summarize(runs))
    assert document["records"] == runs
    assert {"group", "algorithm", "median", "q25", "q75", "fraction_correct"} <= set(document["summary"][0])


def test_csv_header_is_the_record_keys_and_one_row_per_run():
    runs = [{**{key: None for key in RECORD_KEYS}, **record("g", "a:tuned", seed, 10)} for seed in range(3)]
    rows = list(csv.reader(io.StringIO(csv_text(runs))))
    assert tuple(rows[0]) == RECORD_KEYS and len(rows) == 4
    assert rows[1][RECORD_KEYS.index("correct")] == "true" and rows[1][RECORD_KEYS.index("beta")] == ""


def sweep_and_strip_records() -> list[dict]:
    runs = []
    for position, eps in enumerate([0.1, 0.2, 0.3]):
        for spec_index, spec in enumerate(["a:tuned", "b:tuned"]):
            runs += [record(f"sweep:eps={eps}", spec, seed, int(100 / eps) * (spec_index + 1) + seed, swept=eps,
                            group_index=position, algorithm_index=spec_index) for seed in range(4)]
    runs += [record("fixed", "a:tuned", seed, 30 + seed, group_index=3) for seed in range(4)]
    return runs


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_plot_is_a_valid_image(tmp_path, suffix):
    from cbai_cli.compare.plot import plot_comparison

    runs = sweep_and_strip_records()
    path = tmp_path / f"figure.{suffix}"
    plot_comparison(summarize(runs), runs, path, title="test")
    if suffix == "png":
        import matplotlib.image

        image = matplotlib.image.imread(path)
        assert image.ndim == 3 and image.shape[0] > 100 and np.ptp(image) > 0
    elif suffix == "svg":
        assert ElementTree.parse(path).getroot().tag.endswith("svg")
    else:
        data = path.read_bytes()
        assert data.startswith(b"%PDF") and b"%%EOF" in data[-64:]


def test_fraction_correct_carries_its_clopper_pearson_interval():
    # 10 right of 10: [0.025^(1/10), 1] = [0.6915, 1].
    (row,) = summarize([record("g", "a:tuned", seed, 5) for seed in range(10)])
    assert (row.correct_runs, row.judged_runs) == (10, 10)
    assert row.correct_low == pytest.approx(0.025 ** 0.1) and row.correct_high == 1.0


def test_budget_stops_count_among_the_judged_runs_of_the_interval():
    runs = [record("g", "a:tuned", 0, 5), record("g", "a:tuned", 1, 5, correct=False, stopped="budget")]
    (row,) = summarize(runs)
    assert (row.correct_runs, row.judged_runs) == (1, 2) and 0.0 < row.correct_low < 0.5 < row.correct_high < 1.0


def test_no_interval_where_no_answer_is_judged():
    (row,) = summarize([{**record("g", "a:tuned", 0, 5), "correct": None}])
    assert (row.fraction_correct, row.correct_runs, row.judged_runs, row.correct_low, row.correct_high) == (None,) * 5


def test_json_summary_keys_of_the_interval():
    runs = [record("g", "a:tuned", seed, 10, correct=seed > 0) for seed in range(4)]
    (entry,) = json_document(runs, summarize(runs))["summary"]
    assert (entry["fraction_correct"], entry["correct_runs"], entry["judged_runs"]) == (0.75, 3, 4)
    assert entry["correct_low"] < 0.75 < entry["correct_high"] <= 1.0


def test_table_shows_the_interval_rounded_outwards():
    from rich.console import Console

    console = Console(width=200, record=True)
    for table in group_tables(summarize([record("g", "a:tuned", seed, 5) for seed in range(10)])):
        console.print(table)
    text = console.export_text()
    assert "95% CI" in text and "69.1–100%" in text


def test_specs_without_a_guarantee_are_marked_in_the_table_and_the_json():
    from rich.console import Console

    tuned = [record("g", "a:tuned", seed, 10) for seed in range(2)]
    det = [{**record("g", "a:det", seed, 12, algorithm_index=1), "regime": "det"} for seed in range(2)]
    safe = [{**record("g", "s", seed, 12, algorithm_index=2), "regime": None} for seed in range(2)]
    rows = summarize(tuned + det + safe)
    assert [row.guaranteed for row in rows] == [False, True, None]
    assert [entry["guaranteed"] for entry in json_document(tuned + det + safe, rows)["summary"]] == [False, True, None]
    console = Console(width=200, record=True)
    for table in group_tables(rows):
        console.print(table)
    lines = console.export_text().splitlines()
    assert [line.split()[0:2] for line in lines if line.strip().startswith(("a:", "s "))] == [
        ["a:tuned", "†"], ["a:det", "2"], ["s", "2"]]
    assert any("† no correctness guarantee" in line for line in lines)
