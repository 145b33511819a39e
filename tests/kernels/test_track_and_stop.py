"""The compiled Track-and-Stop rule against the rule written with the class's methods."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbai_cli.algorithms.base import AlgorithmConfig
from cbai_cli.algorithms.track_and_stop import OPTIMISM, TrackAndStop
from cbai_cli.confidence import ConfidenceSettings
from cbai_cli.generators import generate_instance
from cbai_cli.kernels.track_and_stop import track_and_stop_arm
from cbai_cli.protocol import Query


def compiled_pull(learner: TrackAndStop) -> tuple[int, bool]:
    design, state = learner.design, learner.state
    arm, forced = track_and_stop_arm(design.arms, learner.problem.rewards, learner.problem.threshold,
                                     state.uncertain, state.feasible, state.last_upper, design.inverse,
                                     design.norms2, design.predictions, design.n_samples, OPTIMISM)
    return int(arm), bool(forced)


@settings(max_examples=25, deadline=None)
@given(family=st.sampled_from(["random", "unit-sphere"]), seed=st.integers(0, 10_000),
       regime=st.sampled_from(["ols", "det"]))
def test_compiled_rule_pulls_what_the_methods_pull_at_every_step(family, seed, regime):
    instance = generate_instance(family, d=4, n=12, seed=seed, sigma=1.0)
    config = AlgorithmConfig(regime=regime, confidence=ConfidenceSettings(delta=0.05, subgaussian=1.0))
    learner = TrackAndStop(instance.problem, config, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    for _ in range(120):
        if learner.done:
            break
        forced_before = learner.forced_pulls
        reference = learner.select_in_numpy()
        forced = learner.forced_pulls > forced_before
        assert compiled_pull(learner) == (reference, forced)
        answer = instance.constraint @ instance.arms[reference] + rng.standard_normal()
        learner.tell(Query.pull(reference), _answer(answer))


def _answer(value: float):
    from cbai_cli.protocol import Answer

    return Answer(np.array([value]))


def test_declines_when_no_arm_is_relevant():
    instance = generate_instance("random", d=3, n=5, seed=0, sigma=1.0)
    config = AlgorithmConfig(regime="det", confidence=ConfidenceSettings(delta=0.05, subgaussian=1.0))
    learner = TrackAndStop(instance.problem, config, np.random.default_rng(0))
    learner.state.uncertain[:] = False
    assert compiled_pull(learner) == (-1, False)


@pytest.mark.parametrize("regime", ["ols", "det"])
def test_select_counts_forced_pulls_as_the_methods_do(regime):
    instance = generate_instance("unit-sphere", d=5, n=10, seed=3, sigma=1.0)
    config = AlgorithmConfig(regime=regime, confidence=ConfidenceSettings(delta=0.05, subgaussian=1.0))
    compiled, reference = (TrackAndStop(instance.problem, config, np.random.default_rng(0)) for _ in range(2))
    for _ in range(60):
        arm = compiled.select()
        assert arm == reference.select_in_numpy()
        for learner in (compiled, reference):
            learner.tell(Query.pull(arm), _answer(float(instance.constraint @ instance.arms[arm])))
    assert compiled.forced_pulls == reference.forced_pulls > 0
