"""Every measured number in the prose of README.md and docs/*.md (a ratio, a percentage, a time,
a count of queries; the rule: benchmarks/prose_numbers.py) is found in the results file or
generated block its paragraph's marker names, so a rerun that changes it makes this fail."""

from __future__ import annotations

import functools
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def prose_numbers():
    """benchmarks/prose_numbers.py, loaded once (the benchmarks folder is no package)."""
    spec = importlib.util.spec_from_file_location("prose_numbers", ROOT / "benchmarks" / "prose_numbers.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


PAGES = prose_numbers().pages()


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_measured_number_of_a_page_is_found_where_its_paragraph_says(page):
    found = prose_numbers().page_problems(page)
    assert not found, "\n".join(found)


def copy(tmp_path: Path, page: str, text: str) -> Path:
    """A copy of the repository's results files with ``page`` (README.md or docs/NAME) holding ``text``."""
    shutil.copytree(ROOT / "benchmarks" / "results", tmp_path / "benchmarks" / "results")
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / page).write_text(text)
    return tmp_path


def test_a_changed_number_in_a_copy_of_a_page_is_caught(tmp_path):
    module = prose_numbers()
    text = (ROOT / "docs" / "speed.md").read_text()
    assert "5.0 µs a query compiled against 145 µs" in text
    root = copy(tmp_path, "docs/speed.md", text.replace("against 145 µs", "against 146 µs"))
    found = module.page_problems(root / "docs" / "speed.md", root)
    assert len(found) == 1 and "146 µs is in none of speed_history.md" in found[0]


def test_an_unmarked_measured_number_is_caught():
    module = prose_numbers()
    text = "Intro.\n\nThe default took 5.60× the bound, 12.5 % more, in 3.1 ms and 1,008 queries.\n"
    found = [line for unit in module.units("docs/x.md", text) for line in module.problems(unit)]
    assert [line.split(": ", 1)[1] for line in found] == [
        f"{number} has no <!-- numbers: … --> marker" for number in ("5.60×", "12.5 %", "3.1 ms", "1,008 queries")]
    assert all(line.startswith("docs/x.md:3:") for line in found)


def test_settings_parameters_and_code_are_not_measurements():
    module = prose_numbers()
    text = ("With δ = 0.05, d = 9, 200 seeds, seed 7, σ = 1 and κ = ½ (`--lease 300`, `80%`), a 4 × 200 grid "
            "[link](../benchmarks/results/x_5s.md).\n\n```console\n$ took 5 s\n```\n")
    assert [unit.measured() for unit in module.units("docs/x.md", text)] == [[]]


def test_a_derived_number_is_checked_against_its_operands(tmp_path):
    module = prose_numbers()
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "r.md").write_text("| rule | ratio |\n|---|---:|\n| a | 5.60× |\n| b | 5.77× |\n")
    marker = "<!-- numbers: r.md; 3 % = 100 * (1 - 5.60 / 5.77) -->"
    right = module.Unit("docs/x.md", 1, f"a is 3 % below b (5.60× against 5.77×)\n{marker}")
    assert module.problems(right, tmp_path) == []
    wrong = module.Unit("docs/x.md", 1, f"a is 4 % below b (5.60× against 5.77×)\n{marker.replace('3 %', '4 %')}")
    assert "4 % is not" in module.problems(wrong, tmp_path)[0]
    unknown = module.Unit("docs/x.md", 1, f"a is 3 % below b (5.61× against 5.77×)\n{marker.replace('5.60', '5.61')}")
    assert [line for line in module.problems(unknown, tmp_path) if "5.61" in line]


def test_a_stale_setting_or_a_missing_source_is_caught():
    module = prose_numbers()
    stale = module.Unit("docs/x.md", 1, "a lease of 300 s\n<!-- numbers: not measured: 200 s -->")
    assert any("200 s is not in the paragraph" in line for line in module.problems(stale))
    missing = module.Unit("docs/x.md", 1, "it took 5.0 µs\n<!-- numbers: no_such_file.md -->")
    assert any("no results file no_such_file.md" in line for line in module.problems(missing))


def test_normalised_numbers():
    module = prose_numbers()
    assert module.normal("1,008.50") == "1008.5" and module.normal("2.00") == "2" and module.normal("429.0") == "429"
    assert module.numbers_in("| 1,008: 5.60× |") == {"1008", "5.6"}


def test_a_setting_with_a_thousands_separator_and_a_number_broken_across_lines_are_declared():
    module = prose_numbers()
    unit = module.Unit("docs/x.md", 1, "a budget of 4,000 pulls and a factor of 1.45\ntimes, chosen\n"
                       "<!-- numbers: not measured: 4,000 pulls, 1.45 times -->")
    assert module.Marker.parse("not measured: 4,000 pulls, 1.45 times").settings == ("4,000 pulls", "1.45 times")
    assert module.problems(unit) == []


def test_a_json_results_files_raw_lists_do_not_count_as_quoted_figures():
    module = prose_numbers()
    document = '{"command": "x --seeds 200", "median": 1017.5, "pairs": [1, 2], "queries": ' + str(list(range(100, 130))) + "}"
    found = module.numbers_in_json(document)
    assert {"200", "1017.5", "1", "2"} <= found and "115" not in found


def test_a_bare_decimal_of_two_places_is_measured_unless_it_is_a_parameters_value():
    module = prose_numbers()
    text = "The variance is 0.848 at δ = 0.05 (β=0.25), 3.901 against 3.8, with 5.60× and a 0.5 share.\n"
    assert [unit.measured() for unit in module.units("docs/x.md", text)] == [["0.848", "3.901", "5.60×"]]
