"""The paper's instance families (specs/cbai.md §7)."""

from __future__ import annotations

import numpy as np
import pytest

from cbai_cli.errors import InstanceError, OptionError, UnknownNameError
from cbai_cli.generators import FAMILIES, family, make_noise
from cbai_cli.noise import BinaryNoise


def test_irrelevant_dims_matches_the_paper():
    instance = family("irrelevant-dims").generate(d=4, eps=0.1)
    expected = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0.9], [0, 0, 0, 1.1]])
    np.testing.assert_allclose(instance.arms, expected)
    assert instance.threshold == 1.0
    assert instance.best_arm == 3
    assert instance.feasible.tolist() == [True, True, True, True, False]
    assert instance.noise.sigma == 0.05


def test_unit_sphere_uses_the_closest_pair():
    instance = family("unit-sphere").generate(d=5, n=12, seed=3)
    arms = instance.arms
    np.testing.assert_allclose(np.linalg.norm(arms, axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(instance.reward), 1.0)
    distances = np.linalg.norm(arms[:, None] - arms[None], axis=-1) + np.eye(12) * 9
    i, j = sorted(np.unravel_index(np.argmin(distances), distances.shape))
    np.testing.assert_allclose(instance.constraint, arms[i] - arms[j])
    assert instance.threshold == 0.0


def test_regret_1d_answer_is_0_2():
    instance = family("regret-1d").generate()
    assert instance.arms[instance.best_arm, 0] == pytest.approx(0.2)


def test_random_family_has_a_feasible_arm_for_many_seeds():
    for seed in range(20):
        assert family("random").generate(d=3, n=4, seed=seed).feasible.any()


@pytest.mark.parametrize("name", ["unit-sphere", "random"])
def test_seeded_families_are_deterministic(name):
    assert family(name).generate(seed=5) == family(name).generate(seed=5)
    assert family(name).generate(seed=5) != family(name).generate(seed=6)
    assert family(name).seeded


def test_unknown_family_suggests_the_closest():
    with pytest.raises(UnknownNameError, match="did you mean 'unit-sphere'"):
        family("unit-spher")


def test_parameter_a_family_does_not_have_is_rejected():
    with pytest.raises(OptionError, match="has no parameter 'eps'"):
        family("unit-sphere").generate(eps=0.1)


@pytest.mark.parametrize("params", [{"d": 0}, {"eps": 1.5}, {"eps": "x"}, {"d": 2.5}])
def test_bad_parameter_values(params):
    with pytest.raises(OptionError):
        family("irrelevant-dims").generate(**params)


def test_binary_noise_is_refused_where_constraint_values_leave_minus_one_one():
    with pytest.raises(InstanceError, match="binary feedback"):
        family("irrelevant-dims").generate(make_noise("binary", None, 0.05))


def test_binary_noise_is_accepted_on_the_1d_instance():
    assert isinstance(family("regret-1d").generate(make_noise("binary", None, 0.05)).noise, BinaryNoise)


def test_noise_options_are_checked():
    with pytest.raises(OptionError, match="--sigma must be"):
        make_noise("gaussian", -1.0, 0.05)
    with pytest.raises(OptionError, match="makes no sense"):
        make_noise("binary", 0.1, 0.05)


def test_every_family_generates_with_defaults():
    for name, fam in FAMILIES.items():
        assert fam.generate().meta["generator"] == name
