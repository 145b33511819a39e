"""Candidate policies: one CEM solution per perturbed problem (paper Section 4.3, Appendix C.3)."""

import numpy as np
import pytest

from cbai_cli.driver.duplicates import count_distinct
from cbai_cli.driver.policies import ARM_PROBLEMS, Candidate, build_policies, make_policy, policy_streams


def test_policy_set_shapes_and_provenance(policies):
    assert len(policies) == 12
    assert policies.actions.shape == (12, 20, 2)
    assert np.all(np.abs(policies.actions) <= 1)
    assert policies.theta.shape == policies.phi.shape == (12, 8)
    assert policies.tau.shape == policies.feasible.shape == policies.problem.shape == (12,)
    assert set(policies.problem) <= set(range(len(ARM_PROBLEMS)))
    # every coordinate is perturbed: no perturbed theta equals an unperturbed one
    assert not np.any(policies.theta == 0.0)
    assert count_distinct(policies.actions) == 12


def test_policy_set_arrays_are_read_only(policies):
    with pytest.raises(ValueError):
        policies.actions[0, 0, 0] = 0.5


def test_policy_i_does_not_depend_on_n(fast_cem):
    five = build_policies(5, seed=11, config=fast_cem)
    ten = build_policies(10, seed=11, config=fast_cem)
    np.testing.assert_array_equal(five.actions, ten.actions[:5])
    np.testing.assert_array_equal(five.theta, ten.theta[:5])


def test_the_stream_of_policy_i_is_child_i_of_the_seed():
    assert policy_streams(11, 3)[2].spawn_key == (2,)


def test_workers_give_bit_identical_results(fast_cem):
    calls = []
    serial = build_policies(6, seed=3, config=fast_cem)
    parallel = build_policies(6, seed=3, config=fast_cem, jobs=2, progress=lambda done, n: calls.append((done, n)))
    np.testing.assert_array_equal(serial.actions, parallel.actions)
    np.testing.assert_array_equal(serial.problem, parallel.problem)
    np.testing.assert_array_equal(serial.tau, parallel.tau)
    assert calls == [(k, 6) for k in range(1, 7)]


def test_progress_called_once_per_policy_serially(fast_cem):
    calls = []
    build_policies(3, seed=0, config=fast_cem, progress=lambda done, n: calls.append((done, n)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize(("arguments", "message"), [
    ({"n": 0, "seed": 1}, "n: must be an integer ≥ 1"),
    ({"n": 2, "seed": -1}, "seed: must be an integer ≥ 0"),
    ({"n": 2, "seed": 1, "jobs": 0}, "jobs: must be an integer ≥ 1"),
    ({"n": True, "seed": 1}, "n: must be an integer ≥ 1"),
])
def test_bad_arguments_are_value_errors_naming_the_argument(arguments, message):
    with pytest.raises(ValueError, match=message):
        build_policies(**arguments)


def test_failing_progress_callback_stops_the_workers(fast_cem):
    def boom(done, n):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        build_policies(40, seed=3, config=fast_cem, jobs=2, progress=boom)


def test_make_policy_returns_candidate(fast_cem):
    child = policy_streams(4, 3)[1]
    a = make_policy(child, fast_cem)
    b = make_policy(np.random.SeedSequence(4, spawn_key=(1,)), fast_cem)
    assert isinstance(a, Candidate)
    np.testing.assert_array_equal(a.actions, b.actions)
    assert a.actions.shape == (20, 2) and a.theta.shape == a.phi.shape == (8,)
