"""cbai_cli.compare.study: settings of the wrong type are refused in one line when made."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbai_cli.compare.study import CompareSettings, plan_comparison
from cbai_cli.contracts.errors import OptionError


def test_a_single_source_given_as_a_str_is_refused_rather_than_read_letter_by_letter():
    with pytest.raises(OptionError, match=r"^sources must be a sequence of names \(SOURCES\) such as \('regret-1d',\), "
                                          r"got 'regret-1d'$") as caught:
        CompareSettings(sources="regret-1d")
    assert caught.value.parameter == "sources"


def test_a_single_algorithm_given_as_a_str_is_refused():
    with pytest.raises(OptionError, match=r"^algorithms must be a sequence of names \(--algos\) such as \('acol',\)"):
        CompareSettings(sources=("regret-1d",), algorithms="acol")


def test_an_algorithm_that_is_not_a_str_is_refused():
    with pytest.raises(OptionError, match=r"^algorithms must be names \(--algos\) given as str, got 3$"):
        CompareSettings(sources=("regret-1d",), algorithms=("acol", 3))


def test_a_source_given_as_a_path_is_its_text():
    assert CompareSettings(sources=[Path("instances/regret-1d.yaml")]).sources == ("instances/regret-1d.yaml",)


def test_options_that_are_not_a_mapping_are_refused():
    with pytest.raises(OptionError, match=r"^options must be a mapping of option names to values"):
        CompareSettings(sources=("regret-1d",), options=[("delta", 0.1)])


def test_bounds_given_as_text_are_refused():
    with pytest.raises(OptionError, match="^bounds must be True, False or None, got 'no'$"):
        CompareSettings(sources=("regret-1d",), bounds="no")


def test_an_unknown_option_is_refused_as_a_request_does():
    settings = CompareSettings(sources=("regret-1d",), algorithms=("acol",), seeds=1, jobs=1, options={"detla": 0.1})
    with pytest.raises(OptionError, match=r"^unknown option\(s\) detla \(valid: ") as caught:
        plan_comparison(settings)
    assert caught.value.parameter == "detla"


@pytest.mark.parametrize("suffix", [".jsonl", ".sqlite"])
def test_showing_an_empty_store_says_so_in_one_line(tmp_path, suffix):
    import sqlite3

    from cbai_cli.compare.study import merge_stores

    store = tmp_path / f"empty{suffix}"
    if suffix == ".jsonl":
        store.write_text("")
    else:
        sqlite3.connect(store).close()
    with pytest.raises(OptionError, match=f"^--from {store}: no run records to show$"):
        merge_stores([store])


def test_a_sweep_too_long_to_be_a_file_name_is_read_as_a_generator_spec():
    from cbai_cli.compare.sources import parse_source

    values = "|".join(f"{0.1 + step / 1000:.3f}" for step in range(200))
    groups = parse_source(f"irrelevant-dims:d=4,eps={values}", 0)
    assert len(groups) == 200
