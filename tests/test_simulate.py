"""cbai_cli.run.simulate: a request's options and seeds are checked once, before a run, with
one-line errors; an algorithm of None is the default of the instance's kind."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.contracts.errors import OptionError, UnknownNameError
from cbai_cli.kinds.cbai.families import generate_instance
from cbai_cli.kinds import load
from cbai_cli.run.simulate import RunRequest, prepare, run_many, run_once, run_streams

REGRET = Path(__file__).resolve().parents[1] / "instances" / "regret-1d.yaml"


@pytest.fixture(scope="module")
def regret():
    return load(REGRET)


@pytest.fixture(scope="module")
def tuned(regret):
    return prepare(RunRequest.of("g-acol", "tuned", beta=0.25), regret)


def test_a_request_without_an_algorithm_runs_the_default_of_a_cbai_instance(regret):
    assert prepare(RunRequest.of(None), regret).algorithm == "track-and-stop"


def test_a_request_without_an_algorithm_runs_the_default_of_a_safe_regret_instance():
    assert prepare(RunRequest.of(None), generate_instance("amani-a", T=2000)).algorithm == "safe-lucb"


def test_an_algorithm_that_is_not_a_str_is_an_unknown_name(regret):
    with pytest.raises(UnknownNameError, match=r"^unknown algorithm 3 \(valid: acol, "):
        prepare(RunRequest.of(3), regret)


def test_a_bool_option_given_as_text_is_refused_before_a_run():
    with pytest.raises(OptionError, match="--intersect must be true or false") as caught:
        prepare(RunRequest.of("safe-lucb", intersect="false"), generate_instance("amani-a", T=2000))
    assert caught.value.parameter == "intersect"


def test_a_float_option_given_as_text_is_refused(regret):
    with pytest.raises(OptionError, match="--delta must be a real number, got '0.05'"):
        prepare(RunRequest.of("acol", delta="0.05"), regret)


def test_a_budget_with_a_fraction_is_refused(regret):
    with pytest.raises(OptionError, match="--budget must be an integer, got 2.5"):
        prepare(RunRequest.of("acol", budget=2.5), regret)


def test_a_huge_budget_is_an_option_error(regret):
    with pytest.raises(OptionError, match="--budget must be at most 1e\\+15"):
        prepare(RunRequest.of("acol", budget=10**400), regret)


def test_a_numpy_option_runs_with_the_python_value(regret):
    prepared = prepare(RunRequest.of("acol", delta=np.float64(0.1), budget=np.int64(500)), regret)
    assert type(prepared.options["delta"]) is float and type(prepared.options["budget"]) is int


def test_run_once_refuses_seed_none(tuned):
    with pytest.raises(OptionError, match="^--seed must be an integer ≥ 0, got None$") as caught:
        run_once(tuned, None)
    assert caught.value.parameter == "seed"


@pytest.mark.parametrize("seed", [-1, 1.5, 2.0, "3", [1, 2], True])
def test_run_once_refuses_a_seed_that_is_not_an_integer_of_at_least_zero(tuned, seed):
    with pytest.raises(OptionError, match="^--seed must be an integer ≥ 0"):
        run_once(tuned, seed)


def test_run_once_records_a_numpy_seed_as_a_python_int(tuned):
    result = run_once(tuned, np.int64(3))
    assert type(result.seed) is int and json.loads(json.dumps(result.to_dict()))["seed"] == 3


def test_run_once_refuses_a_negative_key_entry(tuned):
    with pytest.raises(OptionError, match="^key entry must be an integer ≥ 0, got -1$") as caught:
        run_once(tuned, 0, key=(-1,))
    assert caught.value.parameter == "key"


def test_run_many_refuses_a_single_seed_in_place_of_an_iterable(tuned):
    with pytest.raises(OptionError, match=r"^seeds must be an iterable of seeds such as range\(3\), got 3$"):
        run_many(tuned, 3)


def test_run_many_refuses_seed_none(tuned):
    with pytest.raises(OptionError, match="--seed must be an integer ≥ 0, got None"):
        run_many(tuned, [0, None])


def test_run_streams_refuses_seed_none():
    with pytest.raises(OptionError, match="--seed must be an integer ≥ 0, got None"):
        run_streams(None)


def test_a_horizon_with_a_fraction_is_an_option_error_naming_it():
    with pytest.raises(OptionError, match="^--T must be an integer, got 2.5$") as caught:
        prepare(RunRequest.of("safe-lucb", horizon=2.5), generate_instance("amani-a", T=2000))
    assert caught.value.parameter == "horizon"


def test_an_exploration_length_given_as_a_number_is_refused():
    with pytest.raises(OptionError, match=r"^--exploration must be text \(gap \| t23 \| heuristic \| N\), got 2.5$"):
        prepare(RunRequest.of("safe-lucb", exploration=2.5), generate_instance("amani-a", T=2000))
