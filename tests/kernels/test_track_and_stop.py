"""The compiled Track-and-Stop rule against the same rule written in numpy (here, as the
test's reference)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.algorithms.base import AlgorithmConfig
from cbai_cli.algorithms.track_and_stop import OPTIMISM, TrackAndStop
from cbai_cli.numerics.confidence import ConfidenceSettings
from cbai_cli.kinds.cbai.families import generate_instance
from cbai_cli.numerics.kernels.threads import NEVER
from cbai_cli.numerics.kernels.track_and_stop import companion_vertex, track_and_stop_arm
from cbai_cli.contracts.protocol import Answer, Query

#: The options of the rule tested here: the ``vertex-or-target`` step (under ``ols`` the default is ``rollout``).
VERTEX_OR_TARGET = {"step": "vertex-or-target"}


def numpy_pull(learner: TrackAndStop) -> tuple[int, bool]:
    """(arm, forced) of the rule of TrackAndStop's docstring, step by step in numpy."""
    state, design, problem = learner.state, learner.design, learner.problem
    possible = state.uncertain | state.feasible
    half_widths = state.last_upper - design.predictions
    with np.errstate(invalid="ignore"):
        optimistic = np.where(np.isfinite(half_widths), design.predictions - OPTIMISM * half_widths, -np.inf)
    predicted = possible & ((optimistic <= problem.threshold) | state.feasible)
    relevant = state.uncertain
    if predicted.any():
        candidates = np.flatnonzero(predicted)
        answer = candidates[np.argmax(problem.rewards[candidates])]
        relevant = state.uncertain & (problem.rewards >= problem.rewards[answer])
    if float(design.norms2[relevant].max()) > problem.dim / np.sqrt(max(design.n_samples, 1)):
        return int(np.argmax(design.gain(problem.arms[design.max_variance_arm(relevant)]))), True
    candidates = np.flatnonzero(relevant)
    gaps = np.abs(design.predictions[candidates] - problem.threshold)
    gaps = np.maximum(gaps, 1e-6 * (float(gaps.max()) or 1.0))
    target = candidates[np.argmax(design.norms2[candidates] / gaps**2)]
    products = problem.arms @ (design.inverse @ problem.arms[target])
    vertex = int(np.argmax(products * products))
    gains = products**2 / (1.0 + design.norms2)
    return (vertex if gains[vertex] > gains[target] else int(target)), False


def compiled_pull(learner: TrackAndStop) -> tuple[int, bool]:
    design, state = learner.design, learner.state
    arm, forced, _ = track_and_stop_arm(design.arms, learner.problem.rewards, learner.problem.threshold,
                                        state.uncertain, state.feasible, state.last_upper, design.inverse,
                                        design.norms2, design.predictions, design.n_samples, OPTIMISM,
                                        design.block, NEVER, -1, np.empty(0))
    return int(arm), bool(forced)


@settings(max_examples=25, deadline=None)
@given(family=st.sampled_from(["random", "unit-sphere"]), seed=st.integers(0, 10_000),
       regime=st.sampled_from(["ols", "det"]))
def test_compiled_rule_pulls_what_the_methods_pull_at_every_step(family, seed, regime):
    instance = generate_instance(family, d=4, n=12, seed=seed, sigma=1.0)
    config = AlgorithmConfig(regime=regime, confidence=ConfidenceSettings(delta=0.05, subgaussian=1.0),
                             own_options=VERTEX_OR_TARGET)
    learner = TrackAndStop(instance.problem, config, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    for _ in range(120):
        if learner.done:
            break
        reference, forced = numpy_pull(learner)
        assert compiled_pull(learner) == (reference, forced)
        answer = instance.constraint @ instance.arms[reference] + rng.standard_normal()
        learner.tell(Query.pull(reference), _answer(answer))


def _answer(value: float) -> Answer:
    return Answer(np.array([value]))


@pytest.mark.parametrize("regime", ["ols", "det"])
def test_select_counts_forced_pulls_as_the_rule_does(regime):
    instance = generate_instance("unit-sphere", d=5, n=10, seed=3, sigma=1.0)
    config = AlgorithmConfig(regime=regime, confidence=ConfidenceSettings(delta=0.05, subgaussian=1.0),
                             own_options=VERTEX_OR_TARGET)
    learner = TrackAndStop(instance.problem, config, np.random.default_rng(0))
    forced = 0
    for _ in range(60):
        reference, was_forced = numpy_pull(learner)
        forced += was_forced
        assert learner.select() == reference
        learner.tell(Query.pull(reference), _answer(float(instance.constraint @ instance.arms[reference])))
    assert learner.forced_pulls == forced > 0


def test_the_companion_vertex_is_the_first_largest_square():
    assert companion_vertex(np.array([1.0, -3.0, 3.0, 2.0])) == 1
    assert companion_vertex(np.array([np.nan, np.nan])) == 0
    assert companion_vertex(np.array([0.0, -0.0, np.nan, 1e-200])) == 0


@settings(max_examples=25, deadline=None)
@given(family=st.sampled_from(["random", "unit-sphere"]), seed=st.integers(0, 10_000))
def test_a_pull_from_the_predicted_targets_products_is_the_pull_of_a_pass(family, seed):
    """With the products aᵀA⁻¹y of the right target in companion, the rule pulls what its own
    pass over the arms pulls; with another target's, it ignores them."""
    instance = generate_instance(family, d=4, n=12, seed=seed, sigma=1.0)
    config = AlgorithmConfig(regime="ols", confidence=ConfidenceSettings(delta=0.05, subgaussian=1.0),
                             own_options=VERTEX_OR_TARGET)
    learner = TrackAndStop(instance.problem, config, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    for _ in range(60):
        if learner.done:
            break
        design, state, problem = learner.design, learner.state, learner.problem
        inputs = (design.arms, problem.rewards, problem.threshold, state.uncertain, state.feasible,
                  state.last_upper, design.inverse, design.norms2, design.predictions, design.n_samples,
                  OPTIMISM, design.block, NEVER)
        arm, forced, target = track_and_stop_arm(*inputs, -1, np.empty(0))
        if not forced:
            companion = np.dot(design.arms, np.dot(design.inverse, design.arms[target]))
            assert track_and_stop_arm(*inputs, target, companion) == (arm, False, target)
            misleading = np.zeros(problem.n_arms)
            misleading[(arm + 1) % problem.n_arms] = 1.0
            assert track_and_stop_arm(*inputs, (target + 1) % problem.n_arms, misleading) == (arm, False, target)
        observation = instance.constraint @ instance.arms[arm] + rng.standard_normal()
        learner.tell(Query.pull(arm), _answer(observation))
