"""``cbai driver-arms`` end to end: build, import, draw, and the instance works with bound/solve."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.kinds.cbai.instance import load

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / ".." / "shared" / "data" / "driver_policies_1000.npy"
PNG = b"\x89PNG\r\n\x1a\n"


def one_error_line(result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cbai")
    return lines[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A 6-policy base instance written by the command (6 full CEM runs)."""
    from typer.testing import CliRunner

    from cbai_cli.cli.app import app

    path = tmp_path_factory.mktemp("driver") / "arms.npz"
    result = CliRunner().invoke(app, ["driver-arms", "--n", "6", "--seed", "3", "-o", str(path)])
    assert result.exit_code == 0, result.stderr
    return path, result


def test_build_writes_an_ordinary_instance_and_a_summary(built):
    path, result = built
    instance = load(path)
    assert instance.n_arms == 6 and instance.dim == 9
    assert instance.meta["generator"] == "driver-arms" and instance.meta["seed"] == 3
    assert instance.data["actions"].shape == (6, 20, 2)
    # no progress bar when stderr is not a terminal; one summary line
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "6 distinct" in lines[0] and "feasible" in lines[0] and str(path) in lines[0]
    assert result.stdout == ""


def test_bound_and_solve_work_unchanged_on_the_output(cli, built):
    path, _ = built
    bound = cli("bound", path, "--json")
    assert bound.exit_code == 0, bound.stderr
    assert json.loads(bound.stdout)["h_clb"] is not None
    solved = cli("solve", path, "--algo", "g-acol", "--regime", "tuned", "--beta", "1", "--runs", "2", "--json")
    assert solved.exit_code == 0, solved.stderr
    runs = json.loads(solved.stdout)["runs"]
    assert all(run["stopped"] == "solved" for run in runs)


def test_policies_round_trip(cli, built, tmp_path):
    path, _ = built
    original = load(path)
    exported = tmp_path / "policies.npy"
    np.save(exported, original.data["actions"])
    again = tmp_path / "again.npz"
    result = cli("driver-arms", "--policies", exported, "-o", again)
    assert result.exit_code == 0, result.stderr
    imported = load(again)
    np.testing.assert_array_equal(imported.arms, original.arms)
    np.testing.assert_array_equal(imported.rewards, original.rewards)
    np.testing.assert_array_equal(imported.data["actions"], original.data["actions"])
    assert imported.meta["policies"] == "policies.npy" and imported.meta["seed"] is None


def test_published_policies_report_20_distinct_arms(cli, tmp_path):
    if not PUBLISHED.is_file():
        pytest.skip("shared/data/driver_policies_1000.npy is not available")
    out = tmp_path / "paper.npz"
    result = cli("driver-arms", "--policies", PUBLISHED, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "20 distinct (980 repeated" in result.stderr and "20 distinct arms" in result.stderr
    assert load(out).meta["distinct_arms"] == 20


def test_all_scenarios_and_gaussian_feedback(cli, built, tmp_path):
    path, _ = built
    policies = tmp_path / "p.npy"
    np.save(policies, load(path).data["actions"])
    result = cli("driver-arms", "--policies", policies, "--scenario", "all", "--feedback", "gaussian",
                 "--sigma", "0.2", "-o", tmp_path / "g.npz")
    assert result.exit_code == 0, result.stderr
    for name in ("base", "different-reward", "different-environment"):
        instance = load(tmp_path / f"g-{name}.npz")
        assert instance.meta["scenario"] == name and instance.noise.sigma == 0.2
    assert len(result.stderr.strip().splitlines()) == 3


@pytest.mark.parametrize(
    ("array", "word"),
    [(np.zeros((5, 20)), "shape"), (np.zeros((5, 2, 20)), "shape"),
     (np.full((1, 20, 2), np.nan), "NaN"), (np.full((1, 20, 2), -2.0), "[-1, 1]")],
)
def test_bad_policy_files_fail_with_one_line(cli, tmp_path, array, word):
    policies = tmp_path / "bad.npy"
    np.save(policies, array)
    line = one_error_line(cli("driver-arms", "--policies", policies, "-o", tmp_path / "x.npz"))
    assert word in line and "bad.npy" in line
    assert not (tmp_path / "x.npz").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("--scenario", "highway"),
        ("--feedback", "bernoulli"),
        ("--sigma", "0.1"),
        ("--n", "0"),
        ("--jobs", "0"),
        ("--feedback", "gaussian", "--rescale-rewards"),
        ("--feedback", "gaussian", "--sigma", "1e300"),
        ("--arm", "1"),
    ],
)
def test_bad_options_fail_with_one_line_before_any_work(cli, tmp_path, args):
    one_error_line(cli("driver-arms", *args, "-o", tmp_path / "x.npz"))
    assert not list(tmp_path.iterdir())


@pytest.fixture(scope="module")
def built_without_truth(built, tmp_path_factory):
    """The policies of ``built`` written again with --no-truth (no CEM: --policies)."""
    from typer.testing import CliRunner

    from cbai_cli.cli.app import app

    folder = tmp_path_factory.mktemp("real")
    np.save(folder / "p.npy", load(built[0]).data["actions"])
    path = folder / "real.npz"
    result = CliRunner().invoke(app, ["driver-arms", "--policies", str(folder / "p.npy"), "--no-truth", "-o", str(path)])
    assert result.exit_code == 0, result.stderr
    return path, result


def test_no_truth_writes_a_file_without_constraint_that_keeps_the_policies(built, built_without_truth):
    path, result = built_without_truth
    instance, original = load(path), load(built[0])
    assert not instance.has_truth and "constraint" not in instance.to_mapping()
    np.testing.assert_array_equal(instance.data["actions"], original.data["actions"])
    assert "no truth in the file" in result.stderr


def test_show_draws_an_arm_of_a_file_without_truth(cli, built_without_truth, tmp_path):
    path, _ = built_without_truth
    picture = tmp_path / "arm.png"
    result = cli("driver-arms", "--show", path, "--arm", "2", "-o", picture)
    assert result.exit_code == 0, result.stderr
    assert picture.read_bytes()[:8] == PNG and "arm 2 (reward " in result.stderr


def test_show_candidates_of_a_file_without_truth_is_one_line(cli, built_without_truth, tmp_path):
    path, _ = built_without_truth
    line = one_error_line(cli("driver-arms", "--show", path, "--highlight", "0", "-o", tmp_path / "x.png"))
    assert "constraint: missing" in line


def test_bound_refuses_a_driver_file_without_truth(cli, built_without_truth):
    path, _ = built_without_truth
    assert "constraint: missing" in one_error_line(cli("bound", path))


def test_unknown_scenario_names_the_valid_ones(cli, tmp_path):
    line = one_error_line(cli("driver-arms", "--scenario", "highway", "-o", tmp_path / "x.npz"))
    assert "highway" in line and "different-environment" in line and "all" in line


@pytest.mark.parametrize(("args", "name"), [
    (("--n", "2"), "arms.npz"),
    (("--n", "2", "--scenario", "all"), "arms.npz"),
    (("--show", "missing.npz", "--arm", "0"), "arms.png"),
], ids=["build", "all-scenarios", "show"])
def test_driver_arms_output_ending_in_a_slash_is_refused(cli, tmp_path, monkeypatch, args, name):
    monkeypatch.chdir(tmp_path)
    line = one_error_line(cli("driver-arms", *args, "-o", f"{tmp_path / name}/"))
    assert "-o" in line and "ends with a slash" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [("--n", "2"), ("--show", "missing.npz", "--arm", "0")], ids=["build", "show"])
def test_driver_arms_output_given_as_an_empty_path_is_refused(cli, tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)  # an empty path read as a path is this folder
    line = one_error_line(cli("driver-arms", *args, "-o", ""))
    assert line.endswith("-o '': an empty path names no file")
    assert list(tmp_path.iterdir()) == []


def test_show_draws_arms_and_the_solved_arm(cli, built, tmp_path):
    path, _ = built
    arms = tmp_path / "arms.png"
    result = cli("driver-arms", "--show", path, "--arm", "1", "--arm", "4", "-o", arms)
    assert result.exit_code == 0, result.stderr
    assert arms.read_bytes()[:8] == PNG
    run = tmp_path / "run.json"
    solved = cli("solve", path, "--algo", "g-acol", "--regime", "tuned", "--beta", "1", "--json")
    run.write_text(solved.stdout)
    recommended = json.loads(solved.stdout)["runs"][0]["recommended"]
    picture = tmp_path / "solved.png"
    result = cli("driver-arms", "--show", path, "--solved", run, "-o", picture)
    assert result.exit_code == 0, result.stderr
    assert picture.read_bytes()[:8] == PNG
    assert f"highlighted arm {recommended}" in result.stderr
    piped = cli("driver-arms", "--show", path, "--solved", "-", "-o", tmp_path / "piped.png", input=solved.stdout)
    assert piped.exit_code == 0, piped.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--arm", "99", "-o", "x.png"),
        ("--arm", "0", "-o", "x.jpg"),
        ("--arm", "0"),
        ("--arm", "0", "--highlight", "1", "-o", "x.png"),
        ("--n", "5", "-o", "x.png"),
        ("--no-truth", "-o", "x.png"),
    ],
)
def test_show_rejects_bad_requests_with_one_line(cli, built, tmp_path, args):
    path, _ = built
    args = tuple(str(tmp_path / a) if a.startswith("x.") else a for a in args)
    one_error_line(cli("driver-arms", "--show", path, *args))


def test_show_needs_a_driver_instance(cli, instance_file, tmp_path):
    line = one_error_line(cli("driver-arms", "--show", instance_file, "--highlight", "0", "-o", tmp_path / "x.png"))
    assert "not a driver instance" in line


def test_real_process(cbai_process, tmp_path):
    env_ok = cbai_process("driver-arms", "--n", "3", "--seed", "1", "-o", tmp_path / "p.npz")
    assert env_ok.returncode == 0, env_ok.stderr
    assert "3 policies, 3 distinct" in env_ok.stderr and load(tmp_path / "p.npz").n_arms == 3
    bad = cbai_process("driver-arms", "--scenario", "highway", "-o", tmp_path / "q.npz")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "Traceback" not in bad.stderr
    picture = cbai_process("driver-arms", "--show", tmp_path / "p.npz", "--highlight", "0", "-o", tmp_path / "p.png")
    assert picture.returncode == 0, picture.stderr
    assert (tmp_path / "p.png").read_bytes()[:8] == PNG
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_solved_json_nested_past_the_parsers_depth_is_refused_in_one_line(cli, tmp_path):
    from cbai_cli.driver.show import solved_arm
    from cbai_cli.contracts.errors import InstanceError

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(InstanceError, match="not the output of `cbai solve --json`"):
        solved_arm(deep)


def test_solved_output_that_is_a_pipe_is_refused_before_it_is_read(tmp_path):
    from cbai_cli.driver.show import solved_arm
    from cbai_cli.contracts.errors import InstanceError

    pipe = tmp_path / "solved.json"
    os.mkfifo(pipe)
    with pytest.raises(InstanceError, match="not a regular file"):
        solved_arm(pipe)


def solved_on(cli, instance, tmp_path) -> Path:
    """``cbai solve INSTANCE --json`` output (tuned G-ACOL) in a file."""
    run = tmp_path / f"run-{Path(instance).stem}.json"
    run.write_text(cli("solve", instance, "--algo", "g-acol", "--regime", "tuned", "--beta", "1", "--json").stdout)
    return run


def test_show_refuses_a_solved_run_on_an_instance_of_another_name(cli, built, tmp_path):
    path, _ = built
    run = tmp_path / "other.json"
    run.write_text(cli("solve", REPO / "instances" / "regret-1d.yaml", "--json").stdout)
    line = one_error_line(cli("driver-arms", "--show", path, "--solved", run, "-o", tmp_path / "x.png"))
    assert f"the run was on instance 'regret-1d', but {path} is 'driver-base'" in line
    assert not (tmp_path / "x.png").exists()


def test_show_refuses_a_solved_run_recommending_an_arm_the_instance_lacks(cli, built, tmp_path):
    path, _ = built
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"instance": "driver-base", "runs": [{"seed": 0, "recommended": 6}]}))
    line = one_error_line(cli("driver-arms", "--show", path, "--solved", run, "-o", tmp_path / "x.png"))
    assert "the run recommends arm 6, but" in line and "has arms 0 to 5: the run was on another instance" in line


def test_show_refuses_a_solved_run_on_another_file_of_the_same_scenario(cli, built, tmp_path):
    path, _ = built
    other = tmp_path / "other.npz"
    assert cli("driver-arms", "--n", "6", "--seed", "4", "-o", other).exit_code == 0
    assert load(other).name == load(path).name and load(other).n_arms == load(path).n_arms
    line = one_error_line(cli("driver-arms", "--show", path, "--solved", solved_on(cli, other, tmp_path),
                              "-o", tmp_path / "x.png"))
    assert f"the run was on another instance named 'driver-base' (content hash {load(other).content_hash}" in line
    assert not (tmp_path / "x.png").exists()


def test_show_accepts_a_solved_run_on_the_same_instance_in_another_format(cli, built, tmp_path):
    from cbai_cli.kinds import save

    path, _ = built
    copy = tmp_path / "copy.yaml"
    save(load(path), copy)
    run = solved_on(cli, copy, tmp_path)
    assert json.loads(run.read_text())["instance_hash"] == load(path).content_hash
    result = cli("driver-arms", "--show", path, "--solved", run, "-o", tmp_path / "x.png")
    assert result.exit_code == 0, result.stderr


def test_show_refuses_a_solved_run_on_a_safe_instance(cli, built, tmp_path):
    path, _ = built
    run = tmp_path / "safe.json"
    run.write_text(cli("solve", REPO / "instances" / "soare-safe.yaml", "--json").stdout)
    line = one_error_line(cli("driver-arms", "--show", path, "--solved", run, "-o", tmp_path / "x.png"))
    assert "the run was on a safe-bai instance; --solved needs the `cbai solve --json` output of a driver" in line


def test_show_says_which_of_several_solved_runs_it_highlights(cli, built, tmp_path):
    path, _ = built
    run = tmp_path / "runs.json"
    run.write_text(json.dumps({"instance": "driver-base", "runs": [{"seed": 5, "recommended": 2},
                                                                   {"seed": 6, "recommended": 3}]}))
    result = cli("driver-arms", "--show", path, "--solved", run, "-o", tmp_path / "x.png")
    assert result.exit_code == 0, result.stderr
    assert "highlighted arm 2 (" in result.stderr and "the answer of the first of 2 runs (seed 5)" in result.stderr


def test_show_of_a_safe_instance_says_show_needs_a_driver_instance(cli, tmp_path):
    line = one_error_line(cli("driver-arms", "--show", REPO / "instances" / "amani-a.yaml", "-o", tmp_path / "x.png"))
    assert line.endswith("amani-a.yaml: --show needs a driver instance (kind: cbai, written by `cbai driver-arms`), "
                         "got a safe-regret instance")


def test_show_with_one_build_option_names_it_in_the_singular(cli, built, tmp_path):
    path, _ = built
    line = one_error_line(cli("driver-arms", "--show", path, "--jobs", "2", "-o", tmp_path / "x.png"))
    assert line.endswith("--jobs applies only when building an instance, not with --show")


def test_an_output_that_is_a_device_is_named_whole(cli):
    result = cli("driver-arms", "-o", "/dev/full")
    assert result.exit_code == 2
    assert "-o /dev/full: an instance file's name must end in .npz" in result.stderr


def test_declared_defaults_are_the_library_defaults():
    """``--help`` names the defaults of DRIVER_OPTIONS; the library applies its own constants."""
    import inspect

    from cbai_cli.contracts.options import DRIVER_OPTIONS
    from cbai_cli.driver.command import driver_arms
    from cbai_cli.driver.instances import DEFAULT_GAUSSIAN_SIGMA, DEFAULT_N_POLICIES, Feedback, build_arm_sets

    defaults = {"n": DEFAULT_N_POLICIES, "seed": inspect.signature(build_arm_sets).parameters["seed"].default,
                "jobs": inspect.signature(build_arm_sets).parameters["jobs"].default,
                "feedback": Feedback().kind, "sigma": DEFAULT_GAUSSIAN_SIGMA, "scenario": "base"}
    for name, default in defaults.items():
        help = DRIVER_OPTIONS[name].help
        assert f"default {default}" in help or help.startswith(f"{default} (default")
    assert set(DRIVER_OPTIONS) <= set(inspect.signature(driver_arms).parameters)
