"""cbai_cli.contracts.options: every option's type and range checked in one place (:meth:`Option.check`),
the check of unknown names (:func:`checked`) and of seeds (:func:`check_seed`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cbai_cli.contracts.errors import OptionError
from cbai_cli.contracts.options import OPTIONS, SESSION_OPTIONS, check_seed, checked


def test_a_bool_option_given_as_text_is_refused():
    with pytest.raises(OptionError, match=r"^--intersect must be true or false \(a bool\), got 'false'$") as caught:
        OPTIONS["intersect"].check("false")
    assert caught.value.parameter == "intersect"


def test_a_bool_option_given_as_a_number_is_refused():
    with pytest.raises(OptionError, match="--intersect must be true or false"):
        OPTIONS["intersect"].check(0)


def test_a_numpy_bool_becomes_a_python_bool():
    value = OPTIONS["intersect"].check(np.bool_(True))
    assert value is True


def test_a_float_option_given_as_text_is_refused():
    with pytest.raises(OptionError, match=r"^--delta must be a real number, got '0.05'$") as caught:
        OPTIONS["delta"].check("0.05")
    assert caught.value.parameter == "delta"


@pytest.mark.parametrize("value", [True, 0.05 + 0j, np.array([0.05]), np.array(0.05)],
                         ids=["bool", "complex", "array", "0-d array"])
def test_a_float_option_refuses_what_is_not_a_real_number(value):
    with pytest.raises(OptionError, match="--lambda must be a real number"):
        OPTIONS["ridge"].check(value)


def test_a_numpy_float_becomes_a_python_float():
    value = OPTIONS["delta"].check(np.float32(0.25))
    assert type(value) is float and value == 0.25


def test_a_huge_integer_for_a_float_option_is_an_option_error():
    with pytest.raises(OptionError, match=r"^--lambda must be a real number, got about 1e\+400$"):
        OPTIONS["ridge"].check(10**400)


def test_an_int_option_refuses_a_fraction():
    with pytest.raises(OptionError, match=r"^--budget must be an integer, got 2.5$") as caught:
        OPTIONS["budget"].check(2.5)
    assert caught.value.parameter == "budget"


def test_an_int_option_refuses_a_bool():
    with pytest.raises(OptionError, match=r"^--budget must be an integer, got True$"):
        OPTIONS["budget"].check(True)


def test_an_int_option_refuses_text():
    with pytest.raises(OptionError, match="--budget must be an integer, got '100'"):
        OPTIONS["budget"].check("100")


def test_an_int_option_takes_an_integral_float_as_a_spec_does():
    value = OPTIONS["budget"].check(100.0)
    assert type(value) is int and value == 100


def test_a_numpy_int_becomes_a_python_int_that_json_writes():
    value = OPTIONS["budget"].check(np.int64(100))
    assert type(value) is int and json.dumps(value) == "100"


def test_a_huge_integer_for_an_int_option_is_an_option_error():
    with pytest.raises(OptionError, match=r"^--budget must be at most 1e\+15, got about 1e\+400$"):
        OPTIONS["budget"].check(10**400)


def test_a_huge_negative_integer_for_an_int_option_is_an_option_error():
    with pytest.raises(OptionError, match=r"^--budget must be ≥ 1, got about -1e\+400$"):
        OPTIONS["budget"].check(-(10**400))


def test_a_str_option_refuses_a_number():
    with pytest.raises(OptionError, match=r"^--dw must be text \(ball or ellipsoid\), got 3$"):
        OPTIONS["dw"].check(3)


def test_a_numpy_str_becomes_a_python_str():
    value = OPTIONS["rule"].check(np.str_("ratio"))
    assert type(value) is str and value == "ratio"


def test_checked_refuses_an_unknown_option_as_a_request_does():
    with pytest.raises(OptionError, match=r"^unknown option\(s\) detla \(valid: delta, beta, ") as caught:
        checked({"detla": 0.1})
    assert caught.value.parameter == "detla"


def test_checked_returns_python_values_without_those_not_given():
    values = checked({"delta": np.float32(0.5), "budget": np.int32(7), "beta": None})
    assert values == {"delta": 0.5, "budget": 7}
    assert [type(value) for value in values.values()] == [float, int]


def test_the_bounds_tolerance_is_declared_in_the_open_unit_interval():
    with pytest.raises(OptionError, match=r"^--tolerance must lie in \(0, 1\), got 1.0$"):
        OPTIONS["tolerance"].check(1.0)


def test_a_numpy_seed_becomes_a_python_int():
    seed = check_seed(np.uint8(3))
    assert type(seed) is int and seed == 3


@pytest.mark.parametrize("seed", [None, -1, True, 1.0, "3", [1, 2]])
def test_a_seed_that_is_not_an_integer_of_at_least_zero_is_refused(seed):
    with pytest.raises(OptionError, match="^--seed must be an integer ≥ 0, got ") as caught:
        check_seed(seed)
    assert caught.value.parameter == "seed"


@pytest.mark.parametrize("text, expected", [("", 4 * 2**30), ("8G", 8 * 2**30), ("512M", 512 * 2**20), ("1000", 1000),
                                            ("1.5K", 1536), (" 2 GiB ", 2 * 2**30), ("1t", 2**40)])
def test_the_memory_limit_is_read_from_its_variable(monkeypatch, text, expected):
    from cbai_cli.contracts.options import memory_limit

    monkeypatch.setenv("CBAI_MEMORY_LIMIT", text)
    assert memory_limit() == expected


@pytest.mark.parametrize("text", ["lots", "-1", "0", "8Q", "0.1"])
def test_a_memory_limit_that_is_not_a_size_is_one_line(monkeypatch, text):
    from cbai_cli.contracts.options import memory_limit

    monkeypatch.setenv("CBAI_MEMORY_LIMIT", text)
    with pytest.raises(OptionError, match="CBAI_MEMORY_LIMIT=.*expected a size such as 8G"):
        memory_limit()


def test_a_refusal_names_the_variable_that_raises_the_limit_and_the_variable_raises_it(tmp_path):
    import os
    import subprocess
    import sys

    command = [sys.executable, "-m", "cbai_cli", "generate", "unit-sphere", "--d", "20", "--n", "100", "-o",
               str(tmp_path / "sphere.npz")]
    refused = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "CBAI_MEMORY_LIMIT": "1K"})
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "the limit of 1,024 bytes (CBAI_MEMORY_LIMIT raises it)" in refused.stderr
    allowed = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "CBAI_MEMORY_LIMIT": "1M"})
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.parametrize("name, value, message", [
    ("lease", 0.0, "--lease must be a number of seconds > 0 and at most 604,800 (a week), got 0.0"),
    ("lease", float("inf"), "--lease must be a number of seconds > 0 and at most 604,800 (a week), got inf"),
    ("undo_seconds", -0.5, "--undo-seconds must be a number of seconds ≥ 0 and at most 604,800 (a week), got -0.5"),
    ("undo_seconds", 604800.5, "--undo-seconds must be a number of seconds ≥ 0 and at most 604,800 (a week), got 604800.5"),
    ("count", 0, "--count must be an integer ≥ 1 and at most 10,000 (queries handed out at once), got 0"),
    ("count", 10**30, "--count must be an integer ≥ 1 and at most 10,000 (queries handed out at once), got 1e+30"),
    ("port", -1, "--port must be 0 to 65535, got -1"),
])
def test_a_session_option_out_of_range_says_its_range_in_words(name, value, message):
    with pytest.raises(OptionError) as caught:
        SESSION_OPTIONS[name].check(value)
    assert str(caught.value) == message
    assert caught.value.parameter == name


@pytest.mark.parametrize("name, value, expected", [
    ("lease", 604800, 604800.0), ("lease", np.float32(0.5), 0.5), ("undo_seconds", 0, 0.0),
    ("count", np.int64(10_000), 10_000), ("port", 0, 0), ("port", 65535, 65535),
])
def test_a_session_option_at_its_range_s_ends_is_taken_as_a_python_number(name, value, expected):
    checked_value = SESSION_OPTIONS[name].check(value)
    assert checked_value == expected and type(checked_value) is type(expected)


def test_a_session_option_is_no_option_of_a_run():
    # `cbai compare --lease` (a store's claims) and a spec's options are run options; the
    # session's are apart, so a spec such as acol:count=3 stays an unknown option
    assert not set(SESSION_OPTIONS) & {"count", "rater", "host", "port", "token", "undo_seconds"} & set(OPTIONS)
    with pytest.raises(OptionError, match="unknown option"):
        checked({"count": 3})


def test_solve_options_are_parameters_of_the_library_calls():
    """SOLVE_OPTIONS name parameters of solving and bound_file, with solving's defaults."""
    import inspect

    from cbai_cli.contracts.options import SOLVE_OPTIONS
    from cbai_cli.kinds import bound_file
    from cbai_cli.run.solving import solving

    parameters = {**inspect.signature(bound_file).parameters, **inspect.signature(solving).parameters}
    for name, option in SOLVE_OPTIONS.items():
        assert parameters[name].default == option.default, name
    assert SOLVE_OPTIONS["bound"].off == "--no-bound" and SOLVE_OPTIONS["seed"].default == 0
