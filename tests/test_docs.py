"""The examples of docs/python.md run as written (doctests) from the repository root."""

from __future__ import annotations

import doctest
from pathlib import Path

from cbai_cli.algorithms.registry import ALGORITHMS

ROOT = Path(__file__).resolve().parents[1]


def test_python_guide_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    try:
        failures, tried = doctest.testfile(str(ROOT / "docs" / "python.md"), module_relative=False,
                                           globs={"tmp": tmp_path}, optionflags=doctest.ELLIPSIS,
                                           raise_on_error=False, verbose=False)
    finally:  # the guide registers an algorithm; other tests expect the registry as shipped
        ALGORITHMS.pop("my-uniform", None)
    assert tried > 10
    assert failures == 0


def test_the_readme_tables_of_algorithms_and_regimes_are_the_registrys():
    from cbai_cli.cli.listing import Listing

    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- algorithms -->\n", 1)[1].split("<!-- /algorithms -->", 1)[0]
    assert block.strip() == Listing().to_markdown().strip(), "run `cbai algorithms --markdown` into README.md"
