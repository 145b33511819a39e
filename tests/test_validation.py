"""The shared field validators: accepted values, each rule's message, and the error type."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cbai_cli.contracts.errors import InstanceError
from cbai_cli.io.files import instance_errors
from cbai_cli.contracts.validation import (FieldError, array, flag, integer, moderate, nonnegative, numbers, positive, probability, real,
                                 safe_text, text)

NON_FINITE = [math.nan, math.inf, -math.inf]


# ---------------------------------------------------------------- FieldError


def test_field_error_reads_field_colon_rule():
    error = FieldError("lambda", "must be > 0, got 0")
    assert str(error) == "lambda: must be > 0, got 0"
    assert (error.field, error.rule) == ("lambda", "must be > 0, got 0")


def test_field_error_is_a_value_error():
    assert issubclass(FieldError, ValueError)


def test_field_error_survives_pickling():
    copy = pickle.loads(pickle.dumps(FieldError("T", "must be an integer ≥ 1, got 0")))
    assert (copy.field, copy.rule, str(copy)) == ("T", "must be an integer ≥ 1, got 0", "T: must be an integer ≥ 1, got 0")


# ---------------------------------------------------------------- array


def test_array_returns_a_read_only_float_copy():
    source = [[1, 2], [3, 4]]
    result = array(source, "B", 2)
    assert result.dtype == float and result.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert not result.flags.writeable


def test_array_copies_an_array_it_is_given():
    source = np.array([1.0, 2.0])
    result = array(source, "mu_star", 1)
    source[0] = 9.0
    assert result[0] == 1.0


@pytest.mark.parametrize("value", ["1.5", b"1", None, {"a": 1}])
def test_array_refuses_strings_mappings_and_none(value):
    with pytest.raises(FieldError, match=r"^mu_star: must be a list of numbers$"):
        array(value, "mu_star", 1)


def test_array_refuses_ragged_rows():
    with pytest.raises(FieldError, match=r"^B: must be a matrix of numbers \(a list of equal-length rows\)$"):
        array([[1.0, 2.0], [3.0]], "B", 2)


def test_array_names_the_wrong_shape():
    with pytest.raises(FieldError, match=r"^mu_star: must be a list of numbers, got shape \(1, 2\)$"):
        array([[0.1, 0.2]], "mu_star", 1)


def test_array_uses_the_given_description():
    with pytest.raises(FieldError, match=r"^arms: must be a K×d array, got shape \(2,\)$"):
        array([1.0, 2.0], "arms", 2, what="a K×d array")


@pytest.mark.parametrize("value", [[], [[]]])
def test_array_refuses_empty_arrays_by_default(value):
    with pytest.raises(FieldError, match=r"^arms: must not be empty$"):
        array(value, "arms", np.ndim(value))


def test_array_may_allow_empty_arrays():
    assert array([[]], "arms", 2, nonempty=False).shape == (1, 0)


@pytest.mark.parametrize("bad", NON_FINITE)
def test_array_refuses_non_finite_entries(bad):
    with pytest.raises(FieldError, match=r"^B: contains NaN or infinite values$"):
        array([[1.0, bad], [0.0, 1.0]], "B", 2)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3), elements=st.floats(allow_nan=False, allow_infinity=False)))
def test_array_keeps_every_finite_array(values):
    result = array(values, "x", values.ndim)
    np.testing.assert_array_equal(result, values)


@pytest.mark.parametrize("entry, shown", [
    (True, r"True \(a boolean\)"),
    (np.bool_(False), r"False \(a boolean\)"),
    (1 + 2j, r"\(1\+2j\) \(a complex number\)"),
    ("1.5", r"'1\.5' \(a string\)"),
    (b"1", r"b'1' \(a byte string\)"),
    (None, r"None \(an empty entry\)"),
    ({"a": 1}, r"a mapping"),
])
def test_array_refuses_an_entry_that_is_not_a_real_number(entry, shown):
    with pytest.raises(FieldError, match=rf"^B: must hold real numbers only, got {shown} at position \[1, 0\]$"):
        array([[1.0, 2.0], [entry, 3.0]], "B", 2)


@pytest.mark.parametrize("dtype, words", [(bool, "booleans"), (complex, "complex numbers"), (str, "strings"),
                                          (bytes, "byte strings")])
def test_array_refuses_an_array_of_a_non_real_dtype(dtype, words):
    with pytest.raises(FieldError, match=rf"^mu_star: must hold real numbers only, got an array of {words} \(dtype "):
        array(np.array([1, 0], dtype=dtype), "mu_star", 1)


def test_array_refuses_an_object_array_holding_none():
    with pytest.raises(FieldError, match=r"^mu_star: must hold real numbers only, got None \(an empty entry\) at position \[1\]$"):
        array(np.array([1.0, None], dtype=object), "mu_star", 1)


def test_array_accepts_an_object_array_of_numbers():
    assert array(np.array([1, 2.5], dtype=object), "mu_star", 1).tolist() == [1.0, 2.5]


def test_array_escapes_control_characters_of_a_string_entry():
    with pytest.raises(FieldError) as error:
        array(["\x1b[2J"], "mu_star", 1)
    assert "\x1b" not in str(error.value) and "\\x1b[2J" in str(error.value)


def test_array_refuses_an_integer_beyond_the_float_range():
    with pytest.raises(FieldError, match=r"^mu_star: must be a list of numbers$"):
        array([10**400], "mu_star", 1)


def test_numbers_keeps_any_shape_and_non_finite_values():
    result = numbers([[[1, math.inf]]], "data.x")
    assert result.shape == (1, 1, 2) and result.dtype == float


@pytest.mark.parametrize("value", [[1, True], np.array([True]), "abc", None])
def test_numbers_refuses_what_is_not_an_array_of_real_numbers(value):
    with pytest.raises(FieldError, match=r"^data\.x: must "):
        numbers(value, "data.x")


# ---------------------------------------------------------------- real


@pytest.mark.parametrize("value", [3, -2.5, np.float32(0.5), np.int64(-4), np.array(1.25)])
def test_real_accepts_python_and_numpy_numbers(value):
    result = real(value, "c")
    assert type(result) is float and result == float(value)


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.array(True)])
def test_real_refuses_booleans(value):
    with pytest.raises(FieldError, match=r"^c: must be a number, got (np\.)?(True|False)"):
        real(value, "c")


@pytest.mark.parametrize("value", ["1.5", None, [1.0]])
def test_real_refuses_what_is_not_a_number(value):
    with pytest.raises(FieldError, match=r"^c: must be a number, got "):
        real(value, "c")


@pytest.mark.parametrize("value", NON_FINITE)
def test_real_refuses_nan_and_infinity(value):
    with pytest.raises(FieldError, match=r"^eta0: must be finite, got "):
        real(value, "eta0")


def test_real_refuses_an_integer_beyond_the_float_range():
    with pytest.raises(FieldError, match=r"^threshold: must be finite, got an integer of 401 digits$"):
        real(10**400, "threshold")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_real_returns_every_finite_float_unchanged(value):
    assert real(value, "x") == value


# ---------------------------------------------------------------- positive, nonnegative, probability


def test_positive_accepts_a_positive_number():
    assert positive(np.float64(0.5), "lambda") == 0.5


@pytest.mark.parametrize("value", [0, -0.5])
def test_positive_refuses_zero_and_negatives(value):
    with pytest.raises(FieldError, match=rf"^lambda: must be > 0, got {value:g}$"):
        positive(value, "lambda")


def test_positive_refuses_a_boolean():
    with pytest.raises(FieldError, match="must be a number"):
        positive(True, "S")


def test_positive_refuses_infinity():
    with pytest.raises(FieldError, match="must be finite"):
        positive(math.inf, "S")


def test_nonnegative_accepts_zero():
    assert nonnegative(0, "R") == 0.0


def test_nonnegative_refuses_a_negative_number():
    with pytest.raises(FieldError, match=r"^R: must be ≥ 0, got -1$"):
        nonnegative(-1.0, "R")


def test_nonnegative_refuses_nan():
    with pytest.raises(FieldError, match="must be finite"):
        nonnegative(math.nan, "R")


def test_probability_accepts_a_number_inside_zero_one():
    assert probability(np.float32(0.25), "delta") == 0.25


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.1])
def test_probability_refuses_the_ends_and_outside(value):
    with pytest.raises(FieldError, match=rf"^delta: must lie in \(0, 1\), got {value:g}$"):
        probability(value, "delta")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_the_ranges_agree_with_their_definitions(value):
    for check, inside in ((positive, value > 0), (nonnegative, value >= 0), (probability, 0 < value < 1)):
        if inside:
            assert check(value, "x") == value
        else:
            with pytest.raises(FieldError):
                check(value, "x")


# ---------------------------------------------------------------- integer


@pytest.mark.parametrize("value", [5, np.int32(5), np.array(5)])
def test_integer_accepts_python_and_numpy_integers(value):
    result = integer(value, "T", 1)
    assert type(result) is int and result == 5


def test_integer_refuses_values_below_the_bound():
    with pytest.raises(FieldError, match=r"^T_FE: must be an integer ≥ 0, got -1$"):
        integer(-1, "T_FE", 0)


def test_integer_refuses_a_boolean():
    with pytest.raises(FieldError, match=r"^T: must be an integer ≥ 1, got True$"):
        integer(True, "T", 1)


def test_integer_refuses_a_float_by_default():
    with pytest.raises(FieldError, match=r"^T: must be an integer ≥ 1, got 100\.0$"):
        integer(100.0, "T", 1)


def test_integer_may_accept_an_integral_float():
    assert integer(1e5, "T", 1, integral_float=True) == 100_000


@pytest.mark.parametrize("value", [2.5, math.nan, math.inf])
def test_integer_refuses_a_fractional_or_non_finite_float_even_when_floats_are_allowed(value):
    with pytest.raises(FieldError, match=r"^T: must be an integer ≥ 1, got "):
        integer(value, "T", 1, integral_float=True)


@given(st.integers(-1000, 1000), st.integers(-10, 10))
def test_integer_accepts_exactly_the_integers_from_the_bound(value, low):
    if value >= low:
        assert integer(value, "n", low) == value
    else:
        with pytest.raises(FieldError):
            integer(value, "n", low)


# ---------------------------------------------------------------- text


def test_text_accepts_printable_unicode():
    assert text("irrelevant-dims φ ≥ 0 — ü", "name") == "irrelevant-dims φ ≥ 0 — ü"


@pytest.mark.parametrize("value, shown", [
    ("red\x1b[31m", r"'red\\x1b\[31m'"),
    ("a\rb", r"'a\\rb'"),
    ("a\nb", r"'a\\nb'"),
    ("a\x9bb", r"'a\\x9bb'"),
    ("a\x7fb", r"'a\\x7fb'"),
    ("a\u202eb", r"'a\\u202eb'"),
])
def test_text_refuses_control_characters(value, shown):
    with pytest.raises(FieldError, match=rf"^name: must not contain control characters, got {shown}$"):
        text(value, "name")


@pytest.mark.parametrize("value", [3, None, b"name", ["a"]])
def test_text_refuses_what_is_not_a_string(value):
    with pytest.raises(FieldError, match=r"^name: must be a string$"):
        text(value, "name")


def test_safe_text_escapes_controls_and_keeps_printable_text():
    assert safe_text("φ ≥ τ\x1b[31m\r\n\x85\u202e") == "φ ≥ τ\\x1b[31m\\r\\n\\x85\\u202e"
    assert safe_text("plain-name_1.yaml") == "plain-name_1.yaml"
    assert safe_text(3) == "3"


# ---------------------------------------------------------------- the file layer


def test_instance_errors_names_the_source():
    with pytest.raises(InstanceError, match=r"^f\.yaml: c: must be > 0, got 0$"):
        with instance_errors("f.yaml"):
            positive(0, "c")


def test_instance_errors_without_a_source_keeps_the_message():
    with pytest.raises(InstanceError, match=r"^c: must be > 0, got 0$"):
        with instance_errors():
            positive(0, "c")


def test_instance_errors_prefixes_an_instance_error_once():
    with pytest.raises(InstanceError, match=r"^f\.yaml: name: must be a string$"):
        with instance_errors("f.yaml"):
            raise InstanceError("name: must be a string")


def test_instance_errors_lets_other_errors_through():
    with pytest.raises(KeyError):
        with instance_errors("f.yaml"):
            raise KeyError("x")


@pytest.mark.parametrize("value, shown", [(-1e300, "-1e+300"), (np.array([3.0, -2e200, 1e150]), "-2e+200"),
                                          (np.array([[1.0], [5e101]]), "5e+101")])
def test_moderate_names_the_offending_entry_with_its_sign(value, shown):
    with pytest.raises(FieldError, match=f"got {shown.replace('+', '[+]')}$"):
        moderate(value, "c")


def test_moderate_passes_numbers_within_the_limit_and_empty_arrays():
    assert moderate(-1e100, "c") == -1e100 and moderate(np.zeros((0, 3)), "arms").shape == (0, 3)


@pytest.mark.parametrize("value, expected", [(True, True), (np.bool_(False), False), (np.array(True), True)])
def test_flag_takes_python_and_numpy_booleans(value, expected):
    assert flag(value, "threshold_known") is expected


@pytest.mark.parametrize("value, shown", [("no", "'no'"), (1, "1"), (None, "None")])
def test_flag_refuses_what_is_not_a_boolean(value, shown):
    with pytest.raises(FieldError, match=rf"^threshold_known: must be true or false, got {shown}$"):
        flag(value, "threshold_known")
