"""The arms' D-optimal design and coordinates (cbai_cli.numerics.design.d_optimal; docs/ols.md,
"The prior's shape"): hand-computed designs, the Kiefer–Wolfowitz certificate on random arm
sets, and runs that do not depend on the units of the features."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cbai_cli.compare.sources import parse_source
from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds import from_mapping
from cbai_cli.numerics.design.d_optimal import LEVERAGE_SLACK, d_optimal_arms, d_optimal_weights
from cbai_cli.run.simulate import RunRequest, prepare, run_many


def leverages(arms: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(K,) x_aᵀG⁺x_a under the design's information matrix G."""
    return np.einsum("kd,de,ke->k", arms, np.linalg.pinv(arms.T @ (weights[:, None] * arms)), arms)


def test_two_axes_of_different_lengths_by_hand():
    # x1 = (1, 0), x2 = (0, 2): w = (½, ½), G = diag(½, 2), x̃1 = (√2, 0), x̃2 = (0, √2) up to a rotation
    arms = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert d_optimal_weights(arms) == pytest.approx([0.5, 0.5])
    whitened = d_optimal_arms(arms)
    assert whitened @ whitened.T == pytest.approx(2.0 * np.eye(2))


def test_three_arms_by_hand():
    # (1,0), (0,1), (1,1): det G = a(2 − 3a) for weights (a, a, 1 − 2a), largest at a = 1/3, where
    # G = [[2/3, 1/3], [1/3, 2/3]], det 1/3 and every leverage is 2 = r
    arms = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    weights = d_optimal_weights(arms)
    assert leverages(arms, weights).max() <= 2.0 * (1.0 + LEVERAGE_SLACK)
    assert math.log(np.linalg.det(arms.T @ (weights[:, None] * arms))) >= math.log(1 / 3) - 2 * LEVERAGE_SLACK


def test_one_direction_is_the_longest_arm_and_zero_arms_stay_zero():
    arms = np.array([[0.0, 0.0], [1.0, 2.0], [-2.0, -4.0], [0.5, 1.0]])
    assert d_optimal_weights(arms).tolist() == [0.0, 0.0, 1.0, 0.0]
    assert np.linalg.norm(d_optimal_arms(arms), axis=1) == pytest.approx([0.0, 0.5, 1.0, 0.25])
    assert d_optimal_arms(np.zeros((3, 2))).tolist() == np.zeros((3, 2)).tolist()


@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 40), st.integers(0, 2**32 - 1))
def test_every_leverage_is_at_most_the_rank_within_the_slack(d, r, extra, seed):
    # Kiefer–Wolfowitz: at the D-optimal design max_a x_aᵀG⁺x_a = r; the solver stops within
    # the slack, so its design is D-optimal within r·log(1 + slack) in log det
    rng = np.random.default_rng(seed)
    r = min(r, d)
    arms = rng.standard_normal((r + extra, r)) @ (rng.standard_normal((r, d)) * rng.uniform(0.01, 100.0, d))
    weights = d_optimal_weights(arms)
    assert weights.min() >= 0.0 and weights.sum() == pytest.approx(1.0)
    assert leverages(arms, weights).max() <= r * (1.0 + LEVERAGE_SLACK) * (1.0 + 1e-9)
    assert d_optimal_weights(arms).tolist() == weights.tolist()  # the same arms, the same design
    whitened = d_optimal_arms(arms)
    # x̃_aᵀx̃_b = x_aᵀG⁺x_b: the arms' inner products under the design's information
    gram = arms @ np.linalg.pinv(arms.T @ (weights[:, None] * arms)) @ arms.T
    assert whitened @ whitened.T == pytest.approx(gram, rel=1e-6, abs=1e-6 * r)


@pytest.mark.parametrize("units", [[100.0, 0.01, 3.0, 1.0], [1e-3, 1e-3, 1e3, 1e3], [1e200, 1e-200, 1e300, 1.0]])
def test_the_coordinates_do_not_depend_on_the_features_units(units):
    arms = np.random.default_rng(1).standard_normal((30, 4))
    whitened, rescaled = d_optimal_arms(arms), d_optimal_arms(arms * units)
    assert rescaled @ rescaled.T == pytest.approx(whitened @ whitened.T, rel=1e-9, abs=1e-9)
    scaled = arms * units / np.max(units)  # the features' inner products do change (in units that do not overflow)
    assert np.abs(arms @ arms.T / np.abs(arms @ arms.T).max() - scaled @ scaled.T / np.abs(scaled @ scaled.T).max()).max() > 0.1


def test_other_linear_maps_of_the_features_move_the_coordinates_by_at_most_the_slack():
    # two designs within the slack of D-optimal, not one: their information matrices may differ slightly
    rng = np.random.default_rng(2)
    arms = rng.standard_normal((30, 4))
    whitened, mapped = d_optimal_arms(arms), d_optimal_arms(arms @ rng.standard_normal((4, 4)))
    assert np.abs(whitened @ whitened.T - mapped @ mapped.T).max() <= 0.05 * np.abs(whitened @ whitened.T).max()


def rescaled(instance, units: np.ndarray):
    """The instance with feature j multiplied by units[j] and φ_j divided by it (the same means)."""
    mapping = dict(instance.to_mapping())
    mapping["arms"] = (instance.problem.arms * units).tolist()
    mapping["constraint"] = (instance.truth.constraint / units).tolist()
    mapping["reward_values"] = instance.problem.rewards.tolist()
    del mapping["reward"]
    return from_mapping(mapping)


def test_runs_in_the_d_optimal_coordinates_ask_the_same_whatever_the_units():
    instance = parse_source("unit-sphere:d=4,n=12,seed=3,sigma=1", 0)[0].instance_for(0)
    other = rescaled(instance, np.array([100.0, 0.01, 3.0, 1.0]))
    queries = {}
    for coordinates in ("d-optimal", "features"):
        for name, variant in (("as drawn", instance), ("rescaled", other)):
            prepared = prepare(RunRequest.of("track-and-stop", "ols", coordinates=coordinates), variant)
            queries[coordinates, name] = [result.iterations for result in run_many(prepared, range(5))]
    assert queries["d-optimal", "as drawn"] == queries["d-optimal", "rescaled"]
    assert queries["features", "as drawn"] != queries["features", "rescaled"]


@pytest.mark.parametrize("algorithm", ["track-and-stop", "g-acol", "maxrew-u"])
def test_the_d_optimal_coordinates_are_the_default_under_ols_only(algorithm):
    instance = parse_source("unit-sphere:d=3,n=6,seed=1,sigma=1", 0)[0].instance_for(0)
    for regime, coordinates in (("ols", "d-optimal"), ("det", "features")):
        prepared = prepare(RunRequest.of(algorithm, regime), instance)
        assert prepared.options["coordinates"] == coordinates
        learner = prepared.make_algorithm(np.random.default_rng(0))
        assert (learner.problem.arms is instance.problem.arms) == (coordinates == "features")
    with pytest.raises(OptionError, match=r"^--coordinates d-optimal needs --regime ols \(this run uses 'det'\)$"):
        prepare(RunRequest.of(algorithm, "det", coordinates="d-optimal"), instance)


def test_the_runs_of_a_request_share_one_computation_of_the_coordinates():
    instance = parse_source("unit-sphere:d=3,n=6,seed=1,sigma=1", 0)[0].instance_for(0)
    prepared = prepare(RunRequest.of("track-and-stop", "ols"), instance)
    first, second = (prepared.make_algorithm(np.random.default_rng(seed)) for seed in (0, 1))
    assert first.problem.arms is second.problem.arms and not first.problem.arms.flags.writeable
    assert first.config.confidence.arm_bound == pytest.approx(np.linalg.norm(first.problem.arms, axis=1).max())
