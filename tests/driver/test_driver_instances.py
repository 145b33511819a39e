"""Driver policies as CBAI instances (paper Section 4.3, Appendix C.2 and C.3)."""

from pathlib import Path

import numpy as np
import pytest

from cbai_cli.driver.bandit import evaluate_policies
from cbai_cli.driver.policies import build_policies
from cbai_cli.driver.cem import CEMConfig
from cbai_cli.driver.instances import (
    Feedback,
    build_arm_sets,
    check_policies,
    driver_instance,
    load_policies,
    output_paths,
    scenario_names,
    write_arm_sets,
)
from cbai_cli.driver.scenarios import SCENARIO_NAMES, UnknownScenarioError, scenario
from cbai_cli.driver.show import driver_view, show_arms, show_candidates, solved_arm
from cbai_cli.contracts.errors import CbaiError, InstanceError, OptionError
from cbai_cli.kinds.cbai.instance import Instance, load, save
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise
from cbai_cli.run.simulate import RunRequest, prepare, run_once

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / ".." / "shared" / "data" / "driver_policies_1000.npy"
FAST = CEMConfig(n_iterations=3, n_samples=10, n_elite=2)
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def random_actions() -> np.ndarray:
    # Random policies of growing amplitude: gentle ones stay feasible, wild ones
    # leave the road, so both classes occur in every scenario.
    amplitude = np.linspace(0.02, 1.0, 40)[:, None, None]
    return np.random.default_rng(7).uniform(-1, 1, size=(40, 20, 2)) * amplitude


@pytest.fixture(scope="module")
def small_policies():
    """30 policies computed the paper's way (full CEM): the small driver instance."""
    return build_policies(30, seed=0)


@pytest.mark.parametrize("name", SCENARIO_NAMES)
@pytest.mark.parametrize("feedback", [Feedback(), Feedback(rescale_rewards=True), Feedback("gaussian")])
def test_folded_rescaled_instance_keeps_every_arms_feasibility(random_actions, name, feedback):
    sc = scenario(name)
    raw = evaluate_policies(random_actions, sc)
    truly_feasible = raw @ sc.phi <= sc.tau
    instance = driver_instance(random_actions, name, feedback).instance
    assert 0 < truly_feasible.sum() < len(truly_feasible)
    np.testing.assert_array_equal(instance.feasible, truly_feasible)
    # the threshold is folded in: constant feature, phi' = (phi, -tau), tau = 0, known
    assert instance.dim == 9 and instance.threshold == 0.0 and instance.threshold_known
    np.testing.assert_allclose(instance.constraint, np.append(sc.phi, -sc.tau))
    if feedback.kind == "binary":
        assert isinstance(instance.noise, BinaryNoise)
        assert np.all(np.abs(instance.arms @ instance.constraint) < 1)
        np.testing.assert_allclose(instance.arms * instance.data["scales"][:, None], np.hstack([raw, np.ones((40, 1))]))
    else:
        assert instance.noise == GaussianNoise(0.1)
        np.testing.assert_array_equal(instance.data["scales"], np.ones(40))


@pytest.mark.parametrize("feedback", [Feedback(), Feedback("gaussian")])
def test_without_truth_the_file_keeps_the_policies_and_hides_phi(random_actions, feedback):
    with_truth = driver_instance(random_actions, "base", feedback).instance
    real = driver_instance(random_actions, "base", feedback, truth=False)
    instance = real.instance
    assert not instance.has_truth and real.feasible_arms is None and real.best_arm is None
    assert not {"phi", "tau", "feasible_arms"} & set(instance.meta)
    assert instance.meta["theta"] == with_truth.meta["theta"]
    np.testing.assert_array_equal(instance.data["actions"], random_actions)
    np.testing.assert_array_equal(instance.rewards, with_truth.rewards)
    assert instance.constraint_norm_bound == with_truth.constraint_norm_bound
    assert "no truth in the file" in real.summary() and "feasible" not in real.summary()


def test_without_truth_binary_arms_are_rescaled_by_the_norm_bound_alone(random_actions):
    sc = scenario("base")
    real = driver_instance(random_actions, "base", truth=False)
    folded = np.hstack([evaluate_policies(random_actions, sc), np.ones((40, 1))])
    bound = real.instance.constraint_norm_bound
    # The divisors depend on the arm and S only: they do not split into a feasible and an infeasible value.
    np.testing.assert_allclose(real.instance.data["scales"], bound * np.linalg.norm(folded, axis=1) + 1e-6)
    phi = np.append(sc.phi, -sc.tau)
    values = real.instance.arms @ phi
    assert np.all(np.abs(values) < 1)
    np.testing.assert_array_equal(values <= 0, folded @ phi <= 0)


def test_without_truth_gaussian_arms_are_the_unscaled_ones(random_actions):
    feedback = Feedback("gaussian")
    real = driver_instance(random_actions, "base", feedback, truth=False).instance
    np.testing.assert_array_equal(real.arms, driver_instance(random_actions, "base", feedback).instance.arms)


def test_rewards_are_unscaled_by_default_and_rescaled_on_request(random_actions):
    sc = scenario("base")
    raw = evaluate_policies(random_actions, sc)
    default = driver_instance(random_actions, "base").instance
    authors = driver_instance(random_actions, "base", Feedback(rescale_rewards=True)).instance
    np.testing.assert_allclose(default.rewards, raw @ sc.theta)
    np.testing.assert_allclose(authors.rewards, authors.arms @ np.append(sc.theta, 0.0))
    assert not np.allclose(default.rewards, authors.rewards)
    assert default.meta["rescale_rewards"] is False and authors.meta["rescale_rewards"] is True


def test_instance_file_round_trips_with_its_data(tmp_path, random_actions):
    arm_set = driver_instance(random_actions, "different-environment", seed=None, source="mine.npy")
    path = tmp_path / "d.npz"
    save(arm_set.instance, path)
    again = load(path)
    assert again == arm_set.instance
    np.testing.assert_array_equal(again.data["actions"], random_actions)
    assert again.data["raw_features"].shape == (40, 8)
    assert again.meta["scenario"] == "different-environment" and again.meta["policies"] == "mine.npy"
    assert again.meta["distinct_policies"] == again.meta["distinct_arms"] == 40
    assert again.meta["feasible_arms"] == int(again.feasible.sum())


def test_identical_policies_are_detected_and_reported(random_actions):
    repeated = np.concatenate([random_actions[:5]] * 4)
    arm_set = driver_instance(repeated, "base")
    assert arm_set.n == 20 and arm_set.distinct_policies == 5 and arm_set.distinct_arms == 5
    assert "5 distinct (15 repeated" in arm_set.summary()
    assert len(arm_set.instance.duplicate_groups) == 5


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((3, 20)), "shape"),
        (np.zeros((3, 19, 2)), "shape"),
        (np.zeros((0, 20, 2)), "shape"),
        (np.full((2, 20, 2), np.nan), "NaN"),
        (np.full((2, 20, 2), 1.5), "[-1, 1]"),
        (np.array([["a"] * 2] * 20, dtype=object)[None], "numbers"),
    ],
)
def test_bad_policy_arrays_are_rejected_in_one_line(array, message):
    with pytest.raises(InstanceError, match=message) as info:
        check_policies(array, "p.npy")
    assert "\n" not in str(info.value)


def test_policy_files_must_be_plain_npy(tmp_path):
    pickled = tmp_path / "p.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InstanceError, match="not a valid .npy file .an array of Python objects") as info:
        load_policies(pickled)
    assert "allow_pickle" not in str(info.value)
    with pytest.raises(InstanceError, match=".npy"):
        load_policies(tmp_path / "p.npz")
    with pytest.raises(InstanceError, match="no such file"):
        load_policies(tmp_path / "missing.npy")


def test_options_are_checked():
    with pytest.raises(OptionError):
        Feedback("binary", sigma=0.1)
    with pytest.raises(OptionError):
        Feedback("gaussian", rescale_rewards=True)
    with pytest.raises(OptionError):
        Feedback("bernoulli")
    with pytest.raises(OptionError):
        Feedback("gaussian", sigma=-1.0)
    with pytest.raises(UnknownScenarioError) as info:
        scenario_names("highway")
    assert isinstance(info.value, CbaiError)
    assert scenario_names("all") == SCENARIO_NAMES
    with pytest.raises(OptionError):
        output_paths("arms.txt", ["base"])


def test_all_scenarios_get_derived_file_names(tmp_path):
    paths = output_paths(tmp_path / "arms.npz", SCENARIO_NAMES)
    assert [p.name for p in paths.values()] == ["arms-base.npz", "arms-different-reward.npz",
                                                "arms-different-environment.npz"]
    assert output_paths(tmp_path / "one.npz", ["base"]) == {"base": tmp_path / "one.npz"}


def test_build_arm_sets_evaluates_one_policy_set_in_every_scenario(tmp_path):
    sets = build_arm_sets("all", n=4, seed=2, config=FAST)
    assert [s.scenario for s in sets] == list(SCENARIO_NAMES)
    for s in sets[1:]:
        np.testing.assert_array_equal(s.instance.data["actions"], sets[0].instance.data["actions"])
    assert sets[0].instance.meta["seed"] == 2 and "cem_problem" in sets[0].instance.data
    written = write_arm_sets(sets, tmp_path / "a.npz")
    assert all(path.is_file() for path in written.values())
    with pytest.raises(OptionError):
        build_arm_sets("base", n=0)


@pytest.mark.parametrize("algorithm", ["acol", "g-acol"])
def test_acol_and_g_acol_find_the_constrained_optimum_of_a_small_driver_instance(small_policies, algorithm):
    instance = driver_instance(small_policies.actions, "base").instance
    assert instance.best_arm is not None
    prepared = prepare(RunRequest.of(algorithm), instance)
    for seed in (0, 1):
        result = run_once(prepared, seed)
        assert result.stopped == "solved"
        assert result.recommended == instance.best_arm and result.correct


def test_published_policies_hold_20_distinct_arms():
    if not PUBLISHED.is_file():
        pytest.skip("shared/data/driver_policies_1000.npy is not available")
    actions = load_policies(PUBLISHED)
    arm_set = driver_instance(actions, "base", source=PUBLISHED.name)
    assert arm_set.n == 1000
    assert arm_set.distinct_policies == 20 and arm_set.distinct_arms == 20


def test_pictures_of_a_driver_instance(tmp_path, random_actions):
    instance = driver_instance(random_actions[:6], "base").instance
    view = driver_view(instance)
    assert view.trajectories.shape == (6, 21, 4)
    for path in (show_arms(view, [0, 3], tmp_path / "arms.png"), show_candidates(view, tmp_path / "all.png", 2)):
        data = path.read_bytes()
        assert data[:8] == PNG and b"IEND" in data[-12:]
    with pytest.raises(OptionError, match="does not exist"):
        show_arms(view, [6], tmp_path / "x.png")
    with pytest.raises(OptionError):
        show_arms(view, [0], tmp_path / "x.jpg")
    plain = Instance(name="x", arms=np.eye(2), constraint=np.ones(2), reward=np.ones(2), threshold=0.5)
    with pytest.raises(InstanceError, match="not a driver instance"):
        driver_view(plain)


def test_solved_arm_reads_solve_json(tmp_path):
    good = tmp_path / "run.json"
    good.write_text('{"runs": [{"recommended": 4}]}')
    assert solved_arm(good) == 4
    none = tmp_path / "none.json"
    none.write_text('{"runs": [{"recommended": null}]}')
    assert solved_arm(none) is None
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    with pytest.raises(InstanceError, match="cbai solve --json"):
        solved_arm(bad)


def test_more_policies_than_fit_in_memory_are_refused_before_the_cem():
    from cbai_cli.driver.instances import build_arm_sets
    from cbai_cli.contracts.errors import OptionError

    with pytest.raises(OptionError, match="at most .* fit"):
        build_arm_sets("base", Feedback("binary", None, False), n=99_999_999_999_999, seed=0, jobs=1)
