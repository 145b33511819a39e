"""cbai_cli.kinds: looking a kind up, and the options of ``bound`` checked alike on every
path (``cbai bound``'s :func:`bound_file` and a kind's own ``bound``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbai_cli.contracts.errors import OptionError, UnknownNameError
from cbai_cli.kinds.cbai.families import generate_instance
from cbai_cli.kinds import bound_file, get

REGRET = Path(__file__).resolve().parents[2] / "instances" / "regret-1d.yaml"


def test_an_unknown_kind_is_an_unknown_name_listing_the_kinds():
    with pytest.raises(UnknownNameError, match=r"^unknown instance kind 'cbia'; did you mean 'cbai'\? "
                                               r"\(valid: cbai, safe-regret, safe-bai\)$"):
        get("cbia")


def test_a_kind_named_by_a_number_is_an_unknown_name():
    with pytest.raises(UnknownNameError, match="^unknown instance kind 3 "):
        get(3)


def test_bound_file_refuses_an_unknown_option_as_a_request_does():
    with pytest.raises(OptionError, match=r"^unknown option\(s\) detla \(valid: ") as caught:
        bound_file(REGRET, detla=0.1)
    assert caught.value.parameter == "detla"


def test_bound_file_takes_options_not_given_as_none():
    assert bound_file(REGRET, delta=None, solver=None, rounding_epsilon=None, time_limit=None).report.delta == 0.05


def test_a_safe_kinds_bound_refuses_an_option_it_does_not_read():
    with pytest.raises(OptionError, match="^--delta does not apply to safe-bai instances") as caught:
        get("safe-bai").bound(generate_instance("soare-safe"), delta=0.1)
    assert caught.value.parameter == "delta"


def test_a_safe_regret_bound_refuses_an_unknown_option():
    with pytest.raises(OptionError, match=r"^unknown option\(s\) horizn "):
        get("safe-regret").bound(generate_instance("amani-a", T=2000), horizn=10)
