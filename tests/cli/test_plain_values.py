"""Plain command-line values are read without Pydantic, with the values Typer's own conversion gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cbai_cli.typer_adapter.plain_values import NOT_PLAIN, PLAIN_TEXTS, plain_value

typer_coercion = pytest.importorskip("typer._coercion")
typer_models = pytest.importorskip("typer.models")

ROOT = Path(__file__).resolve().parents[2]


def typer_value(annotation, value):
    """What Typer's Pydantic conversion makes of ``value`` for a parameter of ``annotation``."""
    descriptor = typer_coercion.resolve_type_descriptor(annotation, typer_models.OptionInfo())
    return typer_coercion.build_runtime_param(descriptor)._coerce_value(value, param=None, ctx=None)


def same_as_typer(annotation, value) -> None:
    plain = plain_value(annotation, value)
    if plain is not NOT_PLAIN:
        expected = typer_value(annotation, value)
        # repr: the same type (int, float, list of them) and the same sign of a zero
        assert repr(plain) == repr(expected) and type(plain) is type(expected)


def test_plain_values_by_hand():
    assert plain_value(int, "10") == 10 and plain_value(int, "-3") == -3 and plain_value(int, "007") == 7
    assert plain_value(float, "1") == 1.0 and type(plain_value(float, "1")) is float
    assert plain_value(float, "0.05") == 0.05 and plain_value(str, "a b") == "a b"
    assert plain_value(list[str], ("x", "y")) == ["x", "y"] and plain_value(list[int], []) == []
    # left to Typer: other forms, other types, a text where a list is read
    for annotation, value in ((int, "1e3"), (int, " 1"), (int, "1.0"), (float, "inf"), (float, "1e-3"),
                              (float, ".5"), (Path, "x"), (bool, "yes"), (list[str], "x"), (list[int], ("1", "a"))):
        assert plain_value(annotation, value) is NOT_PLAIN


@pytest.mark.parametrize("annotation", list(PLAIN_TEXTS))
@given(data=st.data())
def test_plain_texts_convert_as_typer_does(annotation, data):
    pattern = PLAIN_TEXTS[annotation][0].pattern
    same_as_typer(annotation, data.draw(st.from_regex(pattern, fullmatch=True)))
    same_as_typer(annotation, data.draw(st.text()))


@given(items=st.lists(st.from_regex(PLAIN_TEXTS[int][0].pattern, fullmatch=True) | st.text(), max_size=4))
def test_plain_lists_convert_as_typer_does(items):
    same_as_typer(list[int], tuple(items))
    same_as_typer(list[str], tuple(items))


def test_surrogate_escaped_text_is_kept():
    same_as_typer(str, "\udcff.yaml")
    assert plain_value(str, "\udcff.yaml") == "\udcff.yaml"


def test_a_bound_with_plain_values_imports_no_pydantic():
    code = ("import sys; from cbai_cli.entry import main; sys.argv = ['cbai', 'bound', "
            "'instances/regret-1d.yaml', '--delta', '0.1', '--json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('pydantic')), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_values_typer_converts_keep_its_messages(cli, instance_file):
    result = cli("bound", instance_file, "--delta", "abc")
    assert result.exit_code == 2
    assert result.stderr == ("cbai bound: error: Invalid value for '--delta': Input should be a valid number, "
                             "unable to parse string as a number\n")
    assert cli("bound", instance_file, "--delta", "1e-2", "--json").exit_code == 0
