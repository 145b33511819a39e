"""The Python API of ``import cbai``: lazy exports, instances from arrays, solve, bound and
compare on instances held in memory, and errors that name Python parameters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cbai
from cbai_cli.contracts.options import library_message

ROOT = Path(__file__).resolve().parents[1]
ARMS = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]


def three_arms(**fields):
    return cbai.Instance.from_arrays(ARMS, reward=[0.0, 1.0], threshold=0.75, constraint=[1.0, 0.5], **fields)


def test_import_cbai_loads_nothing_heavy():
    code = "import sys, cbai; print(sorted(m for m in ('numpy', 'scipy', 'numba', 'typer') if m in sys.modules))"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert shown.stdout.strip() == "[]"


def test_every_public_name_resolves_and_dir_lists_them():
    for name in cbai.__all__:
        assert getattr(cbai, name) is not None
    assert set(dir(cbai)) == set(cbai.__all__) == {"__version__", *cbai._EXPORTS}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        cbai.nothing  # noqa: B018


def test_from_arrays_reads_theta_or_one_reward_per_arm():
    by_theta = three_arms()
    assert by_theta.reward.tolist() == [0.0, 1.0] and by_theta.reward_values is None
    per_arm = cbai.Instance.from_arrays(ARMS, reward=[3.0, 2.0, 1.0], threshold=0.75, constraint=[1.0, 0.5])
    assert per_arm.reward_values.tolist() == [3.0, 2.0, 1.0] and per_arm.best_arm == 1
    assert per_arm.rewards.tolist() == [3.0, 2.0, 1.0]


def test_from_arrays_takes_a_sigma_binary_answers_or_a_noise_model():
    assert three_arms(noise=0.2).noise.sigma == 0.2
    binary = cbai.Instance.from_arrays(ARMS, reward=[0.0, 1.0], threshold=0.1, constraint=[0.5, 0.2], noise="binary")
    assert binary.noise.kind == "binary"
    with pytest.raises(cbai.InstanceError, match="noise: 'binary'"):
        three_arms(noise="loud")


def test_from_arrays_checks_fields_as_a_file_does():
    with pytest.raises(cbai.InstanceError, match="threshold: must be finite"):
        cbai.Instance.from_arrays(ARMS, reward=[0.0, 1.0], threshold=float("inf"))
    with pytest.raises(cbai.InstanceError):
        cbai.Instance.from_arrays([[1.0, 0.0], [1.0]], reward=[0.0, 1.0], threshold=0.5)


def test_a_real_problem_without_constraint_cannot_be_simulated():
    real = cbai.Instance.from_arrays(ARMS, reward=[0.0, 1.0], threshold=0.75)
    with pytest.raises(cbai.MissingTruthError):
        cbai.solve(real)


def test_solve_is_seeded_and_gives_plain_records():
    first = cbai.solve(three_arms(), "g-acol", regime="det", runs=3, seed=5)
    again = cbai.solve(three_arms(), "g-acol", regime="det", runs=3, seed=5)
    assert [run.iterations for run in first.results] == [run.iterations for run in again.results]
    assert [record["seed"] for record in first.records()] == [5, 6, 7]
    assert all(type(record["iterations"]) is int for record in first.records())
    assert first.to_json()["algorithm"] == "g-acol"


def test_solve_runs_a_file_as_cbai_solve_does(tmp_path):
    cbai.save(three_arms(), tmp_path / "three.yaml")
    from_file = cbai.solve(tmp_path / "three.yaml", "acol", runs=2)
    assert [run.iterations for run in from_file.results] == [run.iterations for run in cbai.solve(three_arms(), "acol",
                                                                                                    runs=2).results]


@pytest.mark.parametrize("call, parameter, text", [
    (lambda: cbai.solve(three_arms(), delta=1.5), "delta", "delta must lie in (0, 1), got 1.5"),
    (lambda: cbai.solve(three_arms(), "g-acol", regime="tuned"), "beta", "regime tuned needs beta"),
    (lambda: cbai.solve(three_arms(), runs=0), "runs", "runs must be an integer ≥ 1, got 0"),
    (lambda: cbai.solve(three_arms(), seed=-1), "seed", "seed"),
])
def test_library_errors_name_parameters_not_flags(call, parameter, text):
    with pytest.raises(cbai.OptionError) as raised:
        call()
    assert text in str(raised.value) and "--" not in str(raised.value)
    assert raised.value.parameter == parameter


def test_library_message_renames_whole_flags_only():
    assert library_message("--S 2 and --S-mu 3, --delta-s 0.1, --budget x") == \
        "norm_bound 2 and safety_norm_bound 3, safety_delta 0.1, budget x"


def test_bound_of_an_instance_in_memory_equals_its_file(tmp_path):
    cbai.save(three_arms(), tmp_path / "three.yaml")
    assert cbai.bound(three_arms()).to_json() == cbai.bound(tmp_path / "three.yaml").to_json()


def test_compare_takes_instances_in_memory_beside_files_and_specs():
    compared = cbai.compare([three_arms(name="mine"), "regret-1d"], ["acol", "g-acol:det"], seeds=2, bounds=False)
    rows = compared.summary()
    assert [(row["instance"], row["algorithm"]) for row in rows] == [
        ("mine", "acol"), ("mine", "g-acol:det"), ("regret-1d", "acol"), ("regret-1d", "g-acol:det")]
    assert len(compared.records()) == 8 and all(row["fraction_correct"] == 1.0 for row in rows)


def test_compare_refuses_a_single_string():
    with pytest.raises(cbai.OptionError, match="sources must be a sequence"):
        cbai.compare("regret-1d", ["acol"], seeds=1)
    with pytest.raises(cbai.OptionError, match="algorithms must be a sequence"):
        cbai.compare(["regret-1d"], "acol", seeds=1)


def test_generate_and_algorithms():
    assert cbai.generate("unit-sphere", d=3, n=5, seed=1).n_arms == 5
    assert cbai.algorithms()["track-and-stop"]["regimes"][0] == "ols"
    assert np.isfinite(cbai.bound(cbai.generate("regret-1d")).lower_bound)
