"""cbai_cli.algorithms.registry: entries that cannot run are refused when registered or
named in one line when run, and the registry is read through a read-only view."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbai_cli.algorithms.registry import ALGORITHMS, AlgorithmEntry, entries, for_kind, register, resolve
from cbai_cli.contracts.errors import OptionError, UnknownNameError
from cbai_cli.kinds import load
from cbai_cli.run.simulate import RunRequest, prepare, run_once

REGRET = Path(__file__).resolve().parents[2] / "instances" / "regret-1d.yaml"
UNIFORM = ("cbai_cli.algorithms.adaptive_uniform", "AdaptiveUniform")


@pytest.fixture
def registered():
    """Names registered by a test, removed afterwards: other tests expect the shipped registry."""
    names: list[str] = []
    yield names
    for name in names:
        ALGORITHMS.pop(name, None)


def test_reads_of_an_unknown_regime_is_the_error_of_check_regime():
    with pytest.raises(OptionError, match=r"^algorithm 'g-acol' cannot use regime 'bogus' \(it accepts: ") as caught:
        entries()["g-acol"].reads("bogus")
    assert caught.value.parameter == "regime"


def test_register_refuses_a_name_that_is_not_a_str():
    with pytest.raises(ValueError, match="^an algorithm's name must be a non-empty str, got None$"):
        register(AlgorithmEntry(None, *UNIFORM, "s", ("cbai",), "adaptive"))


def test_register_refuses_an_empty_name():
    with pytest.raises(ValueError, match="^an algorithm's name must be a non-empty str, got ''$"):
        register(AlgorithmEntry("", *UNIFORM, "s", ("cbai",), "adaptive"))


def test_register_refuses_an_unknown_instance_kind():
    with pytest.raises(ValueError, match=r"^z2: unknown instance kind\(s\) \['nokind'\]"):
        register(AlgorithmEntry("z2", *UNIFORM, "s", ("nokind",), "adaptive"))


def test_register_refuses_an_unknown_regime_style():
    with pytest.raises(ValueError, match="^z4: regime style must be None or its style 'adaptive', got 'bogus'$"):
        register(AlgorithmEntry("z4", *UNIFORM, "s", ("cbai",), "adaptive", ("delta",), regime_style="bogus"))


def test_register_refuses_a_regime_style_other_than_the_style():
    with pytest.raises(ValueError, match="^z6: regime style must be None or its style 'adaptive', got 'round'$"):
        register(AlgorithmEntry("z6", *UNIFORM, "s", ("cbai",), "adaptive", ("delta",), regime_style="round"))


def test_a_class_that_cannot_be_imported_is_an_option_error_naming_the_entry(registered):
    register(AlgorithmEntry("z5", "no.such.module", "Cls", "s", ("cbai",), "adaptive", ("delta", "ridge", "budget"),
                            regime_style="adaptive"))
    registered.append("z5")
    prepared = prepare(RunRequest.of("z5", "det"), load(REGRET))
    with pytest.raises(OptionError, match="^algorithm 'z5': its class no.such.module:Cls cannot be imported: ") as caught:
        run_once(prepared, 0)
    assert caught.value.parameter == "algorithm"


def test_a_missing_class_in_a_module_is_an_option_error_naming_the_entry(registered):
    register(AlgorithmEntry("z7", "cbai_cli.algorithms.adaptive_uniform", "NoSuchClass", "s", ("cbai",), "adaptive",
                            ("delta", "ridge", "budget"), regime_style="adaptive"))
    registered.append("z7")
    with pytest.raises(OptionError, match="^algorithm 'z7': its class cbai_cli.algorithms.adaptive_uniform:NoSuchClass"):
        run_once(prepare(RunRequest.of("z7", "det"), load(REGRET)), 0)


def test_entries_cannot_be_changed_through_their_view():
    with pytest.raises(TypeError):
        entries()["mine"] = entries()["acol"]


def test_a_name_that_is_not_a_str_is_an_unknown_name():
    with pytest.raises(UnknownNameError, match=r"^unknown algorithm \['acol'\] \(valid: "):
        resolve(["acol"])


def test_for_kind_takes_none_as_the_default_of_the_kind():
    assert for_kind(None, "safe-bai")[0].name == "safe-lingape"


def test_every_entry_lists_its_default_regime_first():
    from cbai_cli.algorithms.registry import entries

    for entry in entries().values():
        if entry.regimes:
            assert entry.regimes[0] == entry.default_regime, entry.name
    assert entries()["track-and-stop"].regimes[0] == "ols"


def test_the_algorithms_table_shows_each_default_regime_first():
    from io import StringIO

    from rich.console import Console

    from cbai_cli.algorithms.listing import Listing

    out = StringIO()
    Listing().render(Console(file=out, width=300))
    row = next(line for line in out.getvalue().splitlines() if "track-and-stop" in line)
    assert "ols, theory, det, tuned" in row
