"""cbai_cli.contracts.errors: the message of an unknown name."""

from __future__ import annotations

from cbai_cli.contracts.errors import unknown_name_message


def test_an_unknown_name_gets_the_closest_valid_one():
    assert unknown_name_message("family", "regret1d", ["regret-1d", "random"]) == (
        "unknown family 'regret1d'; did you mean 'regret-1d'? (valid: regret-1d, random)")


def test_a_name_that_is_not_a_str_gets_a_message_without_a_suggestion():
    assert unknown_name_message("family", None, ["regret-1d"]) == "unknown family None (valid: regret-1d)"
