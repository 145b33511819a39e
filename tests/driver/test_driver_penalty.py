"""The Figure 4 penalty study (paper Section 4.3, Figure 4)."""

import numpy as np
import pytest

from cbai_cli.driver.cem import CEMConfig
from cbai_cli.driver.features import policy_features
from cbai_cli.driver.penalty import DEFAULT_PENALTIES, PenaltyStudy, penalty_study
from cbai_cli.driver.scenarios import scenario


def test_small_study_shapes_and_values():
    config = CEMConfig(n_iterations=4, n_samples=12, n_elite=3)
    names = ("base", "different-environment")
    study = penalty_study(0, penalties=(0.0, 2.0), scenarios=names, n_restarts=2, config=config)
    assert study.scenarios == ("base", "different-environment")
    assert study.penalised_reward.shape == study.penalised_constraint.shape == (2, 2)
    assert study.penalised_actions.shape == (2, 2, 20, 2)
    assert study.constrained_actions.shape == (2, 20, 2)
    assert study.threshold == 1.0
    for s, name in enumerate(study.scenarios):
        sc = scenario(name)
        f = policy_features(study.penalised_actions[s], sc.environment)
        np.testing.assert_allclose(study.penalised_reward[s], f @ sc.theta)
        np.testing.assert_allclose(study.penalised_constraint[s], f @ sc.phi)
        fc = policy_features(study.constrained_actions[s][None], sc.environment)[0]
        assert study.constrained_reward[s] == pytest.approx(fc @ sc.theta)
        assert study.constrained_feasible[s] == (fc @ sc.phi <= 1.0)
    # a subset of scenarios gives the same numbers (streams keyed by scenario index)
    alone = penalty_study(0, penalties=(0.0, 2.0), scenarios=("different-environment",), n_restarts=2, config=config)
    np.testing.assert_array_equal(alone.penalised_reward[0], study.penalised_reward[1])


def test_smallest_feasible_penalty():
    z = np.zeros
    study = PenaltyStudy(
        scenarios=("a", "b"),
        penalties=np.array([0.0, 0.5, 1.0]),
        penalised_reward=z((2, 3)),
        penalised_constraint=np.array([[3.0, 0.9, 0.2], [5.0, 4.0, 2.0]]),
        penalised_actions=z((2, 3, 20, 2)),
        constrained_reward=z(2),
        constrained_constraint=z(2),
        constrained_feasible=np.ones(2, bool),
        constrained_actions=z((2, 20, 2)),
        threshold=1.0,
    )
    np.testing.assert_array_equal(study.smallest_feasible_penalty, [0.5, np.nan])


def test_defaults_and_validation():
    assert DEFAULT_PENALTIES[0] == 0.0 and DEFAULT_PENALTIES[-1] == 2.0 and len(DEFAULT_PENALTIES) == 21
    with pytest.raises(ValueError):
        penalty_study(0, penalties=(-1.0,))
    with pytest.raises(ValueError, match="valid names"):
        penalty_study(0, scenarios=("nope",))
