"""The examples of docs/python.md run as written (doctests) from the repository root."""

from __future__ import annotations

import doctest
from pathlib import Path

from cbai_cli.algorithms.registry import ALGORITHMS

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of ``page``."""
    return [block.split("```", 1)[0] for block in page.read_text().split("```python\n")[1:]]


def python_guide_blocks() -> list[str]:
    """The ```python blocks of docs/python.md."""
    return python_blocks(ROOT / "docs" / "python.md")


def test_the_readmes_python_block_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    [block] = python_blocks(ROOT / "README.md")
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(doctest.DocTestParser().get_doctest(block, {}, "README.md", "README.md", 0))
    assert runner.tries >= 3 and runner.failures == 0


def test_every_block_of_the_python_guide_runs_alone(monkeypatch):
    """Each block runs as written in a fresh namespace (as pasted into a new interpreter at
    the root of a checkout), so ``python -m doctest docs/python.md`` passes too."""
    monkeypatch.chdir(ROOT)
    parser, tried = doctest.DocTestParser(), 0
    try:
        for number, block in enumerate(python_guide_blocks(), 1):
            test = parser.get_doctest(block, {}, f"python.md block {number}", "docs/python.md", 0)
            runner = doctest.DocTestRunner(verbose=False)
            runner.run(test)
            assert runner.failures == 0, f"block {number} of docs/python.md fails on its own"
            tried += runner.tries
    finally:  # the guide registers an algorithm; other tests expect the registry as shipped
        ALGORITHMS.pop("my-uniform", None)
    assert tried > 100


def test_the_guides_tables_of_algorithms_and_regimes_are_the_registrys():
    from cbai_cli.algorithms.listing import Listing

    guide = (ROOT / "docs" / "guide.md").read_text()
    block = guide.split("<!-- algorithms -->\n", 1)[1].split("<!-- /algorithms -->", 1)[0]
    assert block.strip() == Listing().to_markdown().strip(), "run `cbai algorithms --markdown` into docs/guide.md"
