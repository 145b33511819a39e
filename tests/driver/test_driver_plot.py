"""Pictures are written atomically and are valid PNG files."""

import numpy as np

from cbai_cli.driver.bandit import build_bandit
from cbai_cli.driver.dynamics import rollout
from cbai_cli.driver.plot import plot_penalty_study, plot_policies, plot_trajectories
from cbai_cli.driver.scenarios import scenario

PNG = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG
    assert b"IEND" in data[-12:]


def test_plots_are_valid_png_and_leave_no_temporary_files(tmp_path):
    env = scenario("different-environment").environment
    actions = np.random.default_rng(0).uniform(-1, 1, size=(6, 20, 2))
    trajectories = rollout(env.agent_start, actions)
    bandit = build_bandit(actions, "different-environment")

    one = plot_trajectories(tmp_path / "one.png", trajectories[0], env.traffic.trajectories, title="one")
    many = plot_trajectories(tmp_path / "many.png", trajectories[:3], env.traffic.trajectories, labels=["a", "b", "c"])
    cars = env.traffic.trajectories
    policies = plot_policies(tmp_path / "policies.png", trajectories, bandit.feasible, cars, highlight=2)
    study = plot_penalty_study(
        tmp_path / "penalty.png",
        np.array([0.0, 1.0, 2.0]),
        np.array([[-0.1, -0.2, -0.3], [-0.5, -0.6, -0.7]]),
        np.array([[5.0, 0.5, 0.1], [3.0, 2.0, 0.2]]),
        np.array([-0.15, -0.55]),
        ["base", "different-environment"],
    )
    for path in (one, many, policies, study):
        assert_png(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.png", "one.png", "penalty.png", "policies.png"]

    # overwriting an existing file replaces it whole
    before = one.read_bytes()
    plot_trajectories(tmp_path / "one.png", trajectories[1], env.traffic.trajectories)
    assert_png(one)
    assert one.read_bytes() != before
