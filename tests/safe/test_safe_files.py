"""Instance files of the safe kinds: round trips, kind dispatch, validation (cbai_cli/kinds/safe/files.py)."""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pytest

from cbai_cli.kinds.cbai import instance as cbai_instance
from cbai_cli.contracts.errors import InstanceError
from cbai_cli.io.files import read_mapping, yaml_text
from cbai_cli.kinds.cbai.families import family
from cbai_cli.kinds import KINDS, from_mapping, load, save
from cbai_cli.kinds.safe.files import SafeBaiInstance, SafeRegretInstance, amani_a, soare_safe
from cbai_cli.kinds.safe.paper_instances import instance_a, price_of_safety_instance

BALL = {
    "kind": "safe-regret", "name": "ball", "action_set": {"kind": "ball", "radius": 1.5},
    "mu_star": [0.3, -0.2, 0.1], "B": [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.5]], "c": 0.4, "T": 500,
    "noise": {"kind": "gaussian", "sigma": 0.1}, "S": 1.0, "L": 1.5, "R": 0.1, "lambda": 1.0, "delta": 0.05,
}
FINITE = {
    **BALL, "name": "finite", "action_set": {"kind": "finite", "arms": [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0],
                                                                  [0.0, 0.0, 0.1], [1.0, 1.0, 0.0]]},
}


def regret_mapping() -> dict:
    return copy.deepcopy(amani_a(1000).to_mapping())


def bai_mapping() -> dict:
    return copy.deepcopy(soare_safe(3, 0.1, -0.5).to_mapping())


@pytest.fixture(params=["amani-a", "amani-b", "ball", "finite", "soare-safe", "soare-safe-d5"])
def safe_instance(request):
    name = request.param
    if name in ("ball", "finite"):
        return from_mapping(BALL if name == "ball" else FINITE)
    if name == "soare-safe-d5":
        return family("soare-safe").generate(d=5, omega=0.2, eta0=-0.1)
    return family(name).generate()


@pytest.mark.parametrize("suffix", [".yaml", ".npz"])
def test_round_trip_is_exact(safe_instance, tmp_path, suffix):
    path = tmp_path / f"instance{suffix}"
    save(safe_instance, path)
    loaded = load(path)
    assert type(loaded) is type(safe_instance)
    assert loaded == safe_instance
    assert loaded.to_mapping() == safe_instance.to_mapping()
    for name in ("mu_star", "B", "arms", "theta_star"):
        if hasattr(safe_instance.problem, name):
            assert np.array_equal(getattr(loaded.problem, name), getattr(safe_instance.problem, name))


def test_yaml_to_npz_to_yaml_gives_the_same_fields(safe_instance, tmp_path):
    save(safe_instance, tmp_path / "a.yaml")
    save(load(tmp_path / "a.yaml"), tmp_path / "b.npz")
    save(load(tmp_path / "b.npz"), tmp_path / "c.yaml")
    # NPZ keeps nested mappings as key-sorted JSON, so only the order of meta's keys may change.
    assert read_mapping(tmp_path / "a.yaml") == read_mapping(tmp_path / "c.yaml")
    text = (tmp_path / "a.yaml").read_text()
    assert text.split("meta:")[0] == (tmp_path / "c.yaml").read_text().split("meta:")[0]


def test_file_carries_schema_version_kind_name_and_meta(tmp_path):
    instance = family("soare-safe").generate(eta0=-0.4)
    save(instance, tmp_path / "s.yaml")
    mapping = read_mapping(tmp_path / "s.yaml")
    assert mapping["schema_version"] == 1 and mapping["kind"] == "safe-bai"
    assert mapping["name"] == "soare-safe-d3-omega0.1-eta0-0.4"
    assert mapping["meta"] == {"generator": "soare-safe", "params": {"d": 3, "omega": 0.1, "eta0": -0.4}}


def test_generators_match_the_library_builders():
    a = family("amani-a").generate(T=5000)
    reference = instance_a(5000)
    assert isinstance(a, SafeRegretInstance) and a.problem.setting.T == 5000
    assert np.array_equal(a.problem.mu_star, reference.mu_star)
    assert np.array_equal(a.problem.setting.B, reference.setting.B)
    assert (a.problem.setting.c, a.problem.setting.L, a.problem.noise_sd) == (reference.setting.c, reference.setting.L,
                                                                              reference.noise_sd)
    s = family("soare-safe").generate()
    paper = price_of_safety_instance()
    assert isinstance(s, SafeBaiInstance)
    assert np.array_equal(s.problem.setting.arms, paper.setting.arms)
    assert s.problem.setting.T_FE == 800 and s.problem.setting.gamma_FE == 0.2
    assert s.problem.setting.epsilon == pytest.approx(2 * (1 - math.cos(0.1)), abs=0)


def test_soare_safe_keeps_forced_exploration_safe_near_zero_threshold():
    instance = family("soare-safe").generate(eta0=-0.1)
    assert instance.problem.setting.gamma_FE == 0.04
    assert np.all(instance.problem.setting.gamma_FE * (instance.problem.setting.arms @ instance.problem.mu_star) >= -0.1)


def test_missing_kind_means_cbai_and_cbai_loader_still_works(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("arms: [[1.0], [2.0]]\nreward: [1.0]\nconstraint: [1.0]\nthreshold: 1.5\n"
                    "noise: {kind: gaussian, sigma: 0.1}\n")
    via_kinds = load(path)
    assert isinstance(via_kinds, cbai_instance.Instance) and via_kinds.kind == "cbai"
    assert via_kinds == cbai_instance.load(path)
    assert via_kinds.name == "c"


def test_cbai_loader_rejects_safe_files(tmp_path):
    save(family("amani-b").generate(T=10), tmp_path / "b.yaml")
    with pytest.raises(InstanceError, match="kind: expected 'cbai' here, got 'safe-regret'"):
        cbai_instance.load(tmp_path / "b.yaml")


def test_unknown_kind_lists_the_valid_kinds():
    with pytest.raises(InstanceError) as error:
        from_mapping({**regret_mapping(), "kind": "safe-regrets"}, "x.yaml")
    message = str(error.value)
    assert message.startswith("x.yaml: kind:") and "did you mean 'safe-regret'" in message
    for kind in KINDS:
        assert kind in message


def test_with_horizon_and_content_hash():
    instance = family("amani-a").generate()
    shorter = instance.with_horizon(2000)
    assert shorter.problem.setting.T == 2000 and instance.problem.setting.T == 100_000
    assert shorter.content_hash != instance.content_hash
    renamed = from_mapping({**instance.to_mapping(), "name": "other"})
    assert renamed.content_hash == instance.content_hash and renamed != instance
    with pytest.raises(InstanceError, match="T: must be an integer ≥ 1"):
        instance.with_horizon(0)


def _set(mapping: dict, path: str, value) -> dict:
    keys = path.split(".")
    target = mapping
    for key in keys[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return mapping


_DELETE = object()


@pytest.mark.parametrize("path, value, message", [
    ("foo", 1, "unknown field(s) foo; valid fields for safe-regret"),
    ("B", _DELETE, "B: required field is missing"),
    ("schema_version", 2, "schema_version: 2 is not supported"),
    ("name", 3, "name: must be a string"),
    ("name", "amani\x1b[31m", "name: must not contain control characters, got 'amani\\x1b[31m'"),
    ("meta", [1], "meta: must be a mapping"),
    ("action_set", "box", "action_set: must be a mapping"),
    ("action_set.kind", "sphere", "action_set.kind: must be 'box', 'ball' or 'finite', got 'sphere'"),
    ("action_set.radius", 1.0, "action_set: unknown key(s) radius for a box"),
    ("action_set.half_width", 0.0, "action_set.half_width: must be > 0"),
    ("action_set.half_width", _DELETE, "action_set.half_width: required for a box"),
    ("action_set", {"kind": "finite", "arms": [[0.0, 0.0, 0.0]]}, "action_set.arms: rows have length 3"),
    ("mu_star", [float("nan"), 0.1], "mu_star: contains NaN"),
    ("mu_star", [[0.1, 0.2]], "mu_star: must be a list of numbers"),
    ("mu_star", "abc", "mu_star: must be a list of numbers"),
    ("B", [[1.0, 2.0], [3.0]], "B: must be a matrix of numbers"),
    ("B", [[1.0, 2.0, 0.0], [3.0, 1.0, 0.0]], "B: must be 2×2"),
    ("B", [[1.0, float("inf")], [0.0, 1.0]], "B: contains NaN or infinite values"),
    ("c", 0.0, "c: must be > 0"),
    ("c", "high", "c: must be a number"),
    ("T", 2.5, "T: must be an integer ≥ 1, got 2.5"),
    ("T", True, "T: must be an integer ≥ 1"),
    ("T", 0, "T: must be an integer ≥ 1"),
    ("noise", {"kind": "binary"}, "noise.kind: the safe kinds support only 'gaussian' noise"),
    ("noise.sigma", -0.1, "noise.sigma: must be ≥ 0"),
    ("noise.scale", 1.0, "noise: unknown key(s) scale"),
    ("S", 0.5, "S: 0.5 is below ‖mu_star‖"),
    ("L", 1.0, "L: 1.0 is below max ‖x‖"),
    ("R", -1.0, "R: must be ≥ 0"),
    ("lambda", 0.0, "lambda: must be > 0"),
    ("delta", 1.0, "delta: must lie in (0, 1)"),
])
def test_safe_regret_validation_is_one_line_naming_the_field(path, value, message):
    assert_one_line_error(_set(regret_mapping(), path, value), "a.yaml", message)


@pytest.mark.parametrize("path, value, message", [
    ("theta", [1.0], "unknown field(s) theta; valid fields for safe-bai"),
    ("eta0", 0.0, "eta0: must be < 0"),
    ("eta0", 0.3, "eta0: must be < 0"),
    ("eta0", float("nan"), "eta0: must be finite"),
    ("theta_star", [2.0, 0.0], "theta_star: length 2 does not match the arms' dimension d = 3"),
    ("mu_star", [0.0, float("nan"), 0.0], "mu_star: contains NaN"),
    ("arms", [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], "arms: must span R^d"),
    ("arms", [[1.0, 0.0, 0.0]], "arms: need at least 2 arms"),
    ("arms", [[1.0, 0.0], [0.0, 1.0, 0.0]], "arms: must be a matrix"),
    ("gamma_FE", 0.0, "gamma_FE: must lie in (0, 1]"),
    ("gamma_FE", 0.9, "gamma_FE: forced exploration at γ_FE = 0.9 is unsafe for arm 1"),
    ("T_FE", -1, "T_FE: must be an integer ≥ 0"),
    ("delta_r", 0.0, "delta_r: must lie in (0, 1)"),
    ("delta_s", 1.5, "delta_s: must lie in (0, 1)"),
    ("epsilon", -0.1, "epsilon: must be ≥ 0"),
    ("safety_noise", _DELETE, "safety_noise: required field is missing"),
    ("safety_noise.sigma", "x", "safety_noise.sigma: must be a number"),
    ("S_mu", 0.5, "S_mu: 0.5 is below ‖mu_star‖"),
    ("S_theta", 0.0, "S_theta: must be > 0"),
    ("name", "soare\r", "name: must not contain control characters, got 'soare\\r'"),
])
def test_safe_bai_validation_is_one_line_naming_the_field(path, value, message):
    assert_one_line_error(_set(bai_mapping(), path, value), "s.npz", message)


def assert_one_line_error(mapping, source: str, message: str) -> None:
    """Loading ``mapping`` fails with one line that starts with the file and holds ``message``."""
    with pytest.raises(InstanceError) as error:
        from_mapping(mapping, source)
    text = str(error.value)
    assert text.startswith(f"{source}: ") and message in text and "\n" not in text


_TINY_RIDGE = {  # an action set, a ridge λ more than 1e12 below its L², and the L the refusal names
    "box": (lambda: _set(regret_mapping(), "lambda", 1e-20), "L = 1.414, the largest norm of an action of the box"),
    "ball": (lambda: {**BALL, "action_set": {"kind": "ball", "radius": 2.0e6}, "L": 2.0e6},
             "L = 2e+06, the largest norm of an action of the ball"),
    "finite": (lambda: {**FINITE, "lambda": 1e-14}, "L = 1.414, the largest norm of an action of the 5 arms"),
}


@pytest.mark.parametrize("action_set", _TINY_RIDGE)
def test_safe_regret_ridge_more_than_1e12_below_the_largest_squared_action_norm_is_refused(action_set):
    """Safe-LUCB's A⁻¹ lost its digits (a math domain error at λ = 1e-20 on amani-a)."""
    mapping, largest = _TINY_RIDGE[action_set]
    assert_one_line_error(mapping(), "a.yaml", largest)


def test_safe_bai_ridge_more_than_1e12_below_the_largest_squared_arm_norm_is_refused():
    """LinGapE stopped after one pull of each arm, on the wrong arm, at λ = 1e-16."""
    assert_one_line_error(_set(bai_mapping(), "lambda", 1e-16), "s.npz",
                          "lambda: 1e-16 is 1e+16 times smaller than L² = 1 (L = 1, the largest norm of an arm), "
                          "more than 1e+12")


def test_the_least_ridge_a_refusal_names_is_accepted():
    with pytest.raises(InstanceError) as error:
        from_mapping(_set(regret_mapping(), "lambda", 2e-12))
    least = float(str(error.value).split("set lambda to at least ")[1].split(" ")[0])
    assert least == 2.01e-12
    assert from_mapping(_set(regret_mapping(), "lambda", least)).problem.setting.lam == least


def test_zero_forced_exploration_needs_no_safe_scale():
    mapping = _set(_set(bai_mapping(), "gamma_FE", 0.9), "T_FE", 0)
    assert from_mapping(mapping).problem.setting.T_FE == 0


def test_integral_float_round_counts_are_accepted():
    assert from_mapping(_set(regret_mapping(), "T", 1000.0)).problem.setting.T == 1000


def test_yaml_written_by_hand_loads(tmp_path):
    path = tmp_path / "hand.yaml"
    path.write_text(yaml_text(FINITE))
    instance = load(path)
    assert instance.name == "finite" and instance.problem.setting.action_set.arms.shape == (5, 3)


def test_a_safe_bai_instance_built_directly_refuses_a_ridge_too_small_for_its_arms():
    problem = bai_mapping_problem().with_setting(lam=1e-16)
    with pytest.raises(InstanceError, match=r"^lambda: 1e-16 is 1e\+16 times smaller than L² = 1"):
        SafeBaiInstance(problem)


def test_a_safe_bai_instance_built_directly_refuses_an_unsafe_forced_exploration():
    problem = bai_mapping_problem().with_setting(gamma_FE=0.9)
    with pytest.raises(InstanceError, match=r"^gamma_FE: forced exploration at γ_FE = 0.9 is unsafe for arm 1"):
        SafeBaiInstance(problem)


def test_a_safe_regret_instance_built_directly_refuses_numbers_beyond_the_magnitude_limit():
    problem = instance_a(1000).with_setting(c=1e200)
    with pytest.raises(InstanceError, match=r"^c: must lie within ±1e\+100"):
        SafeRegretInstance(problem)


def test_a_safe_instance_built_directly_refuses_control_characters_in_its_name():
    with pytest.raises(InstanceError, match=r"^name: must not contain control characters"):
        SafeRegretInstance(dataclasses.replace(instance_a(1000), name="a\x1b[31m"))


def test_a_safe_instance_built_directly_refuses_a_problem_of_the_other_kind():
    with pytest.raises(InstanceError, match=r"^problem: must be a SafeRegretProblem, got SafeBaiProblem$"):
        SafeRegretInstance(bai_mapping_problem())


@pytest.mark.parametrize("meta, message", [([1], "meta: must be a mapping"),
                                           ({"f": print}, "meta: must hold only plain values")])
def test_a_safe_instance_built_directly_checks_its_meta(meta, message):
    with pytest.raises(InstanceError, match=f"^{message}"):
        SafeRegretInstance(instance_a(1000), meta)


def test_a_safe_instance_does_not_follow_the_meta_it_was_given():
    meta = {"params": {"T": [1000]}}
    instance = SafeRegretInstance(instance_a(1000), meta)
    meta["params"]["T"].append(2000)
    assert instance.meta == {"params": {"T": [1000]}}


@pytest.mark.parametrize("field", ["safety_values", "gamma", "rewards", "safe_rewards"])
def test_the_cached_truth_of_a_safe_bai_instance_is_read_only(field):
    with pytest.raises(ValueError, match="read-only"):
        getattr(soare_safe(3, 0.1, -0.5).truth, field)[0] = 0.0


def test_the_cached_optimal_action_of_a_safe_regret_instance_is_read_only():
    with pytest.raises(ValueError, match="read-only"):
        amani_a(1000).truth.x_star[0] = 0.0


def bai_mapping_problem():
    """The library problem of ``bai_mapping()``: Soare et al.'s instance, d = 3, ω = 0.1, η₀ = −0.5."""
    return price_of_safety_instance(d=3, omega=0.1, eta0=-0.5, gamma_FE=0.2)
