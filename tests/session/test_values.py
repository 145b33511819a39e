"""Observations as typed, in the algorithm's units (binary: y ∈ {−1, +1}, Appendix C)."""

from __future__ import annotations

import pytest

from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds.cbai.answers import observation


@pytest.mark.parametrize(("text", "value"), [("yes", 1.0), ("Y", 1.0), ("1", 1.0), ("+1", 1.0), (1.0, 1.0),
                                             ("no", -1.0), ("0", -1.0), ("-1", -1.0), (-1.0, -1.0)])
def test_binary_words_and_numbers_map_to_plus_or_minus_one(text, value):
    assert observation("binary", text) == value


@pytest.mark.parametrize(("text", "value"), [("0.25", 0.25), (" -3e-2 ", -0.03), ("−1.5", -1.5), (2, 2.0)])
def test_gaussian_observations_are_finite_numbers(text, value):
    assert observation("gaussian", text) == value


@pytest.mark.parametrize("text", ["yes", "nan", "-inf", "1e400", "", "0x10"])
def test_gaussian_noise_refuses_what_is_not_a_finite_number(text):
    with pytest.raises(OptionError):
        observation("gaussian", text)


@pytest.mark.parametrize("text", ["1_0", "1_000.5", "-2_5e1_0"])
def test_gaussian_noise_refuses_underscores_between_digits(text):
    """Python's float() reads '1_0' as 10; a person who typed it may have meant 1.0."""
    with pytest.raises(OptionError, match=r"is not a number \(Gaussian noise takes numbers written without '_' "
                                          r"between digits\)$"):
        observation("gaussian", text)


def test_a_refused_value_is_shown_cut_to_forty_characters():
    with pytest.raises(OptionError, match=r"^'7{40}…' is not a finite number"):
        observation("gaussian", "7" * 100_000)
