"""Measured numbers in the prose of README.md and docs/*.md: each one is found in the results
file or generated block its paragraph names, so a rerun that changes it makes a test fail.

What counts as a measured number. Outside code fences, inline code spans, HTML comments, link
targets and generated blocks (between ``<!-- NAME -->`` and ``<!-- /NAME -->``, checked by
benchmarks/tables.py), a number is measured when it is written in one of these shapes:

- a ratio: digits followed at once by ``×`` (``5.60×``, ``2×``; ``4 × 200``, with spaces, is a product);
- a percentage: ``3 %``, ``4.8%``;
- a time: digits, a space or none, then ns, µs, ms, s, min or h (``5.0 µs``, ``0.6–0.9 s``: each end
  of a range is a number);
- a count of queries stated as a measurement: digits followed by queries, answers, pulls or samples
  (``429 queries``);
- a factor written out: digits followed by ``times`` (``1.53 times``);
- a bare decimal of two or more places (``3.901``, ``0.848``), unless it is a parameter's value
  written after ``=`` (``δ = 0.05``).

A number in such a shape that is a setting of a run, not its outcome (the 80 % of a constraint, a
lease of 300 s, a 60 s cap), or a constant worked out by hand, is declared so in its paragraph's
marker (below). A number in no
such shape (δ = 0.05, d = 9, 200 seeds, seed 7, σ = 1, κ = ½, a count without its unit) is not checked.

The marker. A paragraph (a run of non-blank lines), list item or table that holds a measured
number holds one comment ``<!-- numbers: CLAUSE; CLAUSE … -->`` (anywhere in it; invisible
once rendered). A clause is one of:

- sources, separated by spaces: a results file (a path under benchmarks/results/), a generated
  block of the same page (``#factor``) or of another page (``guide.md#methods``, ``README.md#headline``);
- a derived number, ``NUMBER = EXPRESSION`` (``3 % = 100 * (1 - 5.60 / 5.77)``): EXPRESSION is
  arithmetic (+ − * / and parentheses) over numbers, each found in the sources (powers of ten
  such as 1, 100 and 1000 need not be: they change units); its value, rounded
  as NUMBER is written, is NUMBER;
- ``not measured: NUMBER, NUMBER …``: numbers of the paragraph that no run measured: a setting
  of a run (a lease of 300 s) or a constant worked out by hand (kl(δ, 1 − δ)/log(1/(2.4δ)) = 1.2498);
  a derived number's expression may use them.

Every measured number of the paragraph must be found, as written, in one of its sources, or be a
derived number or a setting of its marker; every derived number and setting of a marker must
stand in its paragraph. "As written": the number's digits equal a number of the source once
thousands separators (``,``, thin and narrow spaces) and trailing zeros after a decimal point are
dropped (``1,008.50`` is ``1008.5``); the unit is not compared (a source's column header often
carries it). In a JSON results file the elements of long lists of numbers (the queries of every
seed) do not count: such a list holds nearly every count by chance.

    python benchmarks/prose_numbers.py --check   # names every unmarked, unfound or stale number
                                                 # (python benchmarks/tables.py --check runs it too)

tests/test_prose_numbers.py runs the same check on every page.
"""

from __future__ import annotations

import argparse
import ast
import json
import operator
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: Pages made by a command, not written by hand.
GENERATED_PAGES = frozenset({"docs/cli.md"})

NUMBER = r"\d[\d,\u2009\u202f]*(?:\.\d+)?"
#: One measured number: its digits (group "digits") and, after them, its unit.
MEASURED = re.compile(
    rf"(?<![\w.,^/=-])(?P<digits>{NUMBER})(?:(?P<ratio>×)"
    rf"|\s?(?P<unit>%|ns\b|µs\b|ms\b|s\b|min\b|h\b|(?:queries|answers|pulls|samples|times)\b)"
    rf"|(?=[–-]{NUMBER}\s?(?:%|ns\b|µs\b|ms\b|s\b|min\b|h\b|×)))")
#: A bare decimal of two or more places (a median ratio 3.901, a variance 0.848), not written as a
#: parameter's value after ``=`` (δ = 0.05).
DECIMAL = re.compile(r"(?<![\w.,^/=-])(?<!=\s)(?<!=)\d+\.\d{2,}(?![\d.])")
MARKER = re.compile(r"<!--\s*numbers:(?P<body>.*?)-->", re.S)
#: What is not prose: HTML comments, inline code, link targets.
HIDDEN = re.compile(r"<!--.*?-->|`[^`\n]*`|\]\([^)\s]*\)", re.S)
BLOCK = re.compile(r"^<!-- (/?)([\w-]+) -->\s*$")
ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")


def normal(digits: str) -> str:
    """``digits`` without thousands separators and trailing zeros after a decimal point."""
    plain = re.sub(r"[,\u2009\u202f]", "", digits)
    return plain.rstrip("0").rstrip(".") if "." in plain else plain


def numbers_in(text: str) -> set[str]:
    """Every number written in ``text``, normalised (a results file, a generated block)."""
    return {normal(found) for found in re.findall(rf"(?<![\d.]){NUMBER}", text.replace("−", "-"))}


#: A JSON list of more numbers than this is raw data (the queries of every seed), not a figure
#: that prose quotes: a list of hundreds of integers holds nearly every count by chance.
RAW_LIST = 20


def numbers_in_json(text: str) -> set[str]:
    """The numbers of a JSON results file that prose may quote: every number and every number
    written in a string, but not the elements of lists of more than :data:`RAW_LIST` numbers."""
    found: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            if len(value) > RAW_LIST and all(isinstance(item, (int, float)) for item in value):
                return
            for item in value:
                walk(item)
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, (int, float)):
            found.add(normal(repr(value)))
        elif isinstance(value, str):
            found.update(numbers_in(value))

    walk(json.loads(text))
    return found


@dataclass(frozen=True)
class Unit:
    """One paragraph, list item or table of ``page``: its text and its first line (1-based)."""

    page: str
    line: int
    text: str

    def measured(self) -> list[str]:
        """Every measured number of the unit as written (digits and unit), in order."""
        prose = HIDDEN.sub(" ", self.text)
        found = [(match.start(), match.end(), match.group(0).strip()) for match in MEASURED.finditer(prose)]
        found += [(match.start(), match.end(), match.group(0)) for match in DECIMAL.finditer(prose)
                  if not any(start <= match.start() < end for start, end, _ in found)]
        return [number for _, _, number in sorted(found)]

    def markers(self) -> list[str]:
        return [found.group("body").strip() for found in MARKER.finditer(self.text)]


def blocks(text: str) -> dict[str, str]:
    """Every generated block of a page: its name and what stands between its markers."""
    found = {}
    for name in re.findall(r"^<!-- /([\w-]+) -->\s*$", text, re.M):
        found[name] = text.split(f"<!-- {name} -->", 1)[1].split(f"<!-- /{name} -->", 1)[0]
    return found


def units(page: str, text: str) -> list[Unit]:
    """The paragraphs, list items and tables of ``text`` outside code fences and generated blocks."""
    closed = set(blocks(text))
    found: list[Unit] = []
    current: list[str] = []
    start, fence, block = 0, False, None

    def close() -> None:
        if current:
            found.append(Unit(page, start, "\n".join(current)))
            current.clear()

    for number, line in enumerate(text.splitlines(), 1):
        marker = BLOCK.match(line.strip())
        if line.lstrip().startswith("```"):
            close()
            fence = not fence
        elif marker and marker.group(2) in closed and not fence:
            close()
            block = None if marker.group(1) else marker.group(2)
        elif fence or block:
            continue
        elif not line.strip() or line.startswith("#"):
            close()
            if line.startswith("#"):
                found.append(Unit(page, number, line))
        else:
            if ITEM.match(line) and current:
                close()
            if not current:
                start = number
            current.append(line)
    close()
    return found


OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(expression: str, known: set[str]) -> float:
    """The value of ``expression`` (numbers, + − * / and parentheses); every number in it must
    be in ``known`` (normalised), else ValueError names it."""

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        raise ValueError(f"not arithmetic: {ast.unparse(node)}")

    tree = ast.parse(expression.replace("−", "-").replace("×", "*"), mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            written = ast.get_source_segment(expression, node) or str(node.value)
            # Powers of ten (a percentage, one minus a ratio, a change of unit) are arithmetic, not sources.
            if normal(written) not in known and not re.fullmatch(r"10*", written):
                raise ValueError(f"{written} is in none of the sources")
    return value(tree.body)


def agrees(written: str, value: float) -> bool:
    """Whether ``value`` rounded as ``written`` (digits only) is ``written``."""
    plain = re.sub(r"[,\u2009\u202f]", "", written)
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return abs(abs(value) - float(plain)) <= 0.5 * 10 ** -decimals + 1e-12


def digits(number: str) -> str:
    return re.match(NUMBER, number).group(0)


@dataclass(frozen=True)
class Marker:
    """A unit's marker, parsed: its sources, derived numbers and settings."""

    sources: tuple[str, ...]
    derived: dict[str, str]
    settings: tuple[str, ...]

    @classmethod
    def parse(cls, body: str) -> Marker:
        sources, derived, settings = [], {}, []
        for clause in (clause.strip() for clause in body.split(";")):
            if clause.startswith("not measured:"):
                # a comma and a space part settings; a comma between digits is a thousands separator
                settings += [number.strip() for number in re.split(r",\s+", clause.removeprefix("not measured:"))]
            elif "=" in clause:
                number, expression = clause.split("=", 1)
                derived[number.strip()] = expression.strip()
            else:
                sources += clause.split()
        return cls(tuple(sources), derived, tuple(settings))


def source_text(source: str, page: str, root: Path) -> str:
    """The text of ``source``: a results file, ``#block`` of ``page`` or ``other.md#block``."""
    if "#" in source:
        name, block = source.split("#", 1)
        where = root / page if not name else root / ("README.md" if name == "README.md" else f"docs/{name}")
        found = blocks(where.read_text())
        if block not in found:
            raise ValueError(f"no generated block {source}")
        return found[block]
    path = RESULTS if root == ROOT else root / "benchmarks" / "results"
    if not (path / source).is_file():
        raise ValueError(f"no results file {source}")
    return (path / source).read_text()


def squeezed(text: str) -> str:
    """``text`` without white space (a line may break between a number and its unit)."""
    return re.sub(r"\s", "", text)


def problems(unit: Unit, root: Path = ROOT) -> list[str]:
    """What is wrong with the measured numbers of ``unit``: one line each."""
    where = f"{unit.page}:{unit.line}"
    measured = unit.measured()
    bodies = unit.markers()
    if not bodies:
        return [f"{where}: {number} has no <!-- numbers: … --> marker" for number in measured]
    found: list[str] = []
    known: set[str] = set()
    derived: dict[str, str] = {}
    settings: set[str] = set()
    for body in bodies:
        marker = Marker.parse(body)
        for source in marker.sources:
            try:
                text = source_text(source, unit.page, root)
                known |= numbers_in_json(text) if source.endswith(".json") else numbers_in(text)
            except (ValueError, OSError) as error:
                found.append(f"{where}: {error}")
        derived |= marker.derived
        settings |= set(marker.settings)
    for number, expression in derived.items():
        try:
            value = evaluate(expression, known | {normal(digits(number)) for number in settings})
        except (ValueError, SyntaxError, ZeroDivisionError) as error:
            found.append(f"{where}: {number} = {expression}: {error}")
            continue
        if not agrees(digits(number), value):
            found.append(f"{where}: {number} is not {expression} (= {value:.4g})")
    prose = squeezed(HIDDEN.sub(" ", unit.text))
    for number in [*derived, *settings]:
        if squeezed(number) not in prose:
            found.append(f"{where}: the marker's {number} is not in the paragraph")
    declared = {squeezed(number) for number in [*derived, *settings]}
    for number in measured:
        if squeezed(number) not in declared and normal(digits(number)) not in known:
            found.append(f"{where}: {number} is in none of {' '.join(s for b in bodies for s in Marker.parse(b).sources)}")
    return found


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every page of docs/ written by hand."""
    return [root / "README.md", *(path for path in sorted((root / "docs").glob("*.md"))
                                  if str(path.relative_to(root)) not in GENERATED_PAGES)]


def page_problems(path: Path, root: Path = ROOT) -> list[str]:
    """Every problem of the page ``path`` (under ``root``)."""
    page = str(path.relative_to(root))
    return [line for unit in units(page, path.read_text())
            for line in problems(unit, root)]


def check(root: Path = ROOT) -> list[str]:
    """Every problem of every page under ``root``."""
    return [line for path in pages(root) for line in page_problems(path, root)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 naming every number not found where its paragraph says")
    parser.parse_args()
    found = check()
    for line in found:
        print(line, file=sys.stderr)
    raise SystemExit(1 if found else 0)


if __name__ == "__main__":
    main()
