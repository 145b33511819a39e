"""A fuzzer over instance files and option values: whatever a user feeds ``cbai bound`` and
``cbai solve --budget``, the outcome is a result (exit 0), a budget stop (exit 1) or one
line on stderr with exit code 2 — never a traceback.

Files start from the shipped instances of every kind and are mutated field by field
(dropped, retyped, reshaped, extreme values), written as YAML or NPZ, or cut short as
text. Runs go through the CLI's entry point in-process (Typer's CliRunner), which is
where a traceback would show. Derandomised in CI (see tests/conftest.py).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cbai_cli.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ("regret-1d.yaml", "random-d5-n20-seed0.yaml", "amani-b.yaml", "soare-safe.yaml")
# A run that stays short on every kind: a budget, or a short horizon for Safe-LUCB.
SOLVE_ARGS = {
    "cbai": ["--algo", "g-acol", "--regime", "tuned", "--beta", "1", "--budget", "200"],
    "safe-regret": ["--algo", "safe-lucb", "--T", "60", "--exploration", "20"],
    "safe-bai": ["--algo", "safe-lingape", "--budget", "200"],
}
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])


def shipped(name: str) -> dict:
    return yaml.safe_load((ROOT / "instances" / name).read_text())


NUMBERS = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, -1, 1e-300, 1e300, 2**63, -0.0]))
SCALARS = st.one_of(NUMBERS, st.booleans(), st.none(), st.text(max_size=8), st.sampled_from(["1.5", "nan", "\x1b[2J"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=12)


@st.composite
def mutated(draw) -> dict:
    """A shipped instance with a few fields dropped, retyped, reshaped or set to extremes."""
    mapping = shipped(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(mapping) + ["extra_field"]))
        action = draw(st.sampled_from(["drop", "value", "scale", "truncate", "transpose"]))
        current = mapping.get(key)
        try:
            array = None if isinstance(current, (bool, str, dict)) or current is None else np.asarray(current, dtype=float)
        except (TypeError, ValueError):  # a ragged or non-numeric value from an earlier mutation
            array = None
        if action == "drop":
            mapping.pop(key, None)
        elif action == "value" or array is None:
            mapping[key] = draw(VALUES)
        elif action == "scale":
            factor = draw(st.sampled_from([0.0, -1.0, 1e-300, 1e300, math.inf, math.nan]))
            with np.errstate(all="ignore"):
                mapping[key] = (array * factor).tolist()
        elif action == "truncate":
            mapping[key] = current[: draw(st.integers(0, 2))] if isinstance(current, list) else current
        else:
            mapping[key] = np.atleast_2d(array).T.tolist()
    return mapping


def write(mapping: dict, path: Path, form: str) -> Path:
    """The mapping as a YAML file, an NPZ file, or YAML text cut at a third of its length."""
    if form == "npz":
        target = path.with_suffix(".npz")
        arrays = {}
        for key, value in mapping.items():
            try:
                arrays[key] = np.asarray(value if not isinstance(value, dict) else yaml.safe_dump(value))
            except ValueError:  # ragged: store it as text, as a user's botched file would
                arrays[key] = np.asarray(str(value))
        np.savez(target, **arrays)
        return target
    text = yaml.safe_dump(mapping, allow_unicode=True)
    target = path.with_suffix(".yaml")
    target.write_text(text[: len(text) // 3] if form == "cut" else text)
    return target


def assert_clean(result, what: str) -> None:
    """A result, a budget stop, or one line on stderr with exit code 2."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{what}: traceback\n{result.stderr}")
    assert result.exit_code in (0, 1, 2), f"{what}: exit {result.exit_code}\n{result.stderr}"
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cbai"), f"{what}: not one line\n{result.stderr}"


@FUZZ
@given(mapping=mutated(), form=st.sampled_from(["yaml", "npz", "cut"]))
def test_bound_on_a_mutated_file_ends_cleanly(tmp_path, mapping, form):
    path = write(mapping, tmp_path / "fuzzed", form)
    assert_clean(CliRunner().invoke(app, ["bound", str(path), "--json"]), f"bound {mapping!r:.300}")


@FUZZ
@given(mapping=mutated(), form=st.sampled_from(["yaml", "npz"]))
def test_solve_with_a_budget_on_a_mutated_file_ends_cleanly(tmp_path, mapping, form):
    path = write(mapping, tmp_path / "fuzzed", form)
    kind = mapping.get("kind")
    kind = kind if isinstance(kind, str) and kind in SOLVE_ARGS else "cbai"
    result = CliRunner().invoke(app, ["solve", str(path), *SOLVE_ARGS[kind], "--json"])
    assert_clean(result, f"solve {mapping!r:.300}")


OPTION_VALUES = st.one_of(st.sampled_from(["0", "-1", "1e-300", "1e300", "nan", "inf", "-inf", "1", "0.5", "abc",
                                           "", "9" * 40, "2.5", "true"]),
                          st.floats(allow_nan=True, allow_infinity=True).map(repr))
# --runs and --T are left out: a huge value is a legitimately long request, not a mistake.
FLAGS = ["--delta", "--beta", "--subgaussian", "--lambda", "--S", "--epsilon", "--budget", "--seed", "--regime",
         "--exploration", "--rule", "--updates", "--dw"]


@pytest.mark.parametrize("instance, algorithm", [("regret-1d.yaml", "acol"), ("regret-1d.yaml", "g-acol"),
                                                 ("amani-b.yaml", "safe-lucb"), ("soare-safe.yaml", "lingape")])
@FUZZ
@given(options=st.lists(st.tuples(st.sampled_from(FLAGS), OPTION_VALUES), min_size=1, max_size=3))
def test_solve_with_fuzzed_options_ends_cleanly(instance, algorithm, options):
    args = ["solve", str(ROOT / "instances" / instance), "--algo", algorithm, "--json"]
    args += ["--T", "60"] if algorithm == "safe-lucb" else []
    for flag, value in options:
        args += [flag, value]
    if algorithm != "safe-lucb" and "--budget" not in args:
        args += ["--budget", "300"]
    assert_clean(CliRunner().invoke(app, args), " ".join(args))


@FUZZ
@given(options=st.lists(st.tuples(st.sampled_from(["--delta", "--epsilon", "--solver"]), OPTION_VALUES),
                        min_size=1, max_size=2))
def test_bound_with_fuzzed_options_ends_cleanly(options):
    args = ["bound", str(ROOT / "instances" / "regret-1d.yaml"), "--json"]
    for flag, value in options:
        args += [flag, value]
    assert_clean(CliRunner().invoke(app, args), " ".join(args))
