"""Instance files: fields, validation, YAML/NPZ round trips, the learner's view."""

from __future__ import annotations

import io

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cbai_cli.contracts.errors import InstanceError, MissingTruthError
from cbai_cli.kinds.cbai.instance import Instance, from_mapping, load, save
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise


def base_mapping(**changes):
    mapping = {
        "schema_version": 1,
        "kind": "cbai",
        "name": "t",
        "arms": [[1.0, 0.0], [0.0, 1.0]],
        "reward": [1.0, 2.0],
        "constraint": [0.5, 1.5],
        "threshold": 1.0,
        "noise": {"kind": "gaussian", "sigma": 0.1},
    }
    mapping.update(changes)
    return mapping


def test_yaml_round_trip_is_exact(tmp_path, irrelevant_dims):
    path = tmp_path / "inst.yaml"
    save(irrelevant_dims, path)
    assert load(path) == irrelevant_dims
    assert load(path).arms.tobytes() == irrelevant_dims.arms.tobytes()


def test_npz_round_trip_is_exact(tmp_path, irrelevant_dims):
    path = tmp_path / "inst.npz"
    save(irrelevant_dims, path)
    assert load(path) == irrelevant_dims


def test_yaml_to_npz_to_yaml_keeps_text(tmp_path, irrelevant_dims):
    save(irrelevant_dims, tmp_path / "a.yaml")
    save(load(tmp_path / "a.yaml"), tmp_path / "b.npz")
    save(load(tmp_path / "b.npz"), tmp_path / "c.yaml")
    assert (tmp_path / "a.yaml").read_text() == (tmp_path / "c.yaml").read_text()


@settings(max_examples=30, deadline=None)
@given(arms=hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 4)),
                       elements=st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)))
def test_round_trip_of_arbitrary_floats(tmp_path_factory, arms):
    folder = tmp_path_factory.mktemp("rt")
    instance = Instance(name="h", arms=arms, constraint=np.ones(arms.shape[1]), reward_values=np.arange(arms.shape[0], dtype=float),
                        threshold=0.3, noise=GaussianNoise(0.2), meta={"seed": 3})
    for suffix in ("yaml", "npz"):
        save(instance, folder / f"i.{suffix}")
        assert load(folder / f"i.{suffix}") == instance


def test_reward_values_replace_theta():
    instance = from_mapping(base_mapping(reward=None, reward_values=[3.0, -1.0]))
    assert instance.rewards.tolist() == [3.0, -1.0]


def test_unknown_threshold_is_folded_into_a_constant_feature():
    instance = from_mapping(base_mapping(threshold_known=False))
    problem, truth = instance.problem, instance.truth
    assert problem.arms.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    assert problem.threshold == 0.0
    assert truth.constraint.tolist() == [0.5, 1.5, -1.0]
    np.testing.assert_allclose(truth.gaps(problem.arms), instance.gaps)


def test_best_arm_and_correctness_with_duplicates():
    instance = from_mapping(base_mapping(arms=[[1.0, 0.0], [0.0, 0.5], [1.0, 0.0]], reward=[1.0, 0.0]))
    assert instance.best_arm == 0
    assert instance.is_correct(2)
    assert not instance.is_correct(1)
    assert instance.duplicate_groups == [[0, 2]]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), k=st.integers(1, 30), d=st.integers(1, 4))
def test_duplicate_groups_are_the_rows_equal_in_features_and_reward(data, k, d):
    """Against the definition (one lexicographic sort of every row): copies among few
    distinct values, −0.0 beside 0.0, groups in the rows' order, arms increasing."""
    values = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5])
    arms = data.draw(hnp.arrays(float, (k, d), elements=values))
    reward = data.draw(hnp.arrays(float, d, elements=values))
    instance = Instance(name="t", arms=arms, reward=reward, constraint=np.ones(d), threshold=0.5,
                        noise=GaussianNoise(1.0))
    rows = np.hstack([arms, (arms @ reward)[:, None]])
    _, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    expected = [np.flatnonzero(inverse.ravel() == group).tolist() for group in np.flatnonzero(counts > 1)]
    assert instance.duplicate_groups == expected


def test_no_feasible_arm_makes_none_the_right_answer():
    instance = from_mapping(base_mapping(threshold=-5.0))
    assert instance.best_arm is None
    assert instance.is_correct(None)
    assert not instance.is_correct(0)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"arms": [[1.0, 0.0], [0.0]]}, "arms: must be a K×d array"),
        ({"arms": []}, "arms"),
        ({"constraint": [1.0]}, "constraint: length 1 does not match"),
        ({"reward": [1.0, 2.0, 3.0]}, "reward: length 3"),
        ({"reward_values": [1.0, 2.0]}, "exactly one of reward"),
        ({"arms": [[1.0, float("nan")], [0.0, 1.0]]}, "NaN"),
        ({"threshold": float("inf")}, "threshold: must be finite"),
        ({"noise": {"kind": "gaussian", "sigma": -1}}, "noise.sigma: must be > 0"),
        ({"noise": {"kind": "gaussian"}}, "noise.sigma: required"),
        ({"noise": {"kind": "poisson"}}, "noise.kind"),
        ({"noise": {"kind": "binary"}}, "binary feedback needs every constraint value"),
        ({"colour": "red"}, "unknown field(s) colour"),
        ({"schema_version": 7}, "schema_version: 7 is not supported"),
        ({"schema_version": "1"}, "schema_version: must be the number 1, got '1' (a str)"),
        ({"noise": {"kind": "gaussian", "sigma": 1e200}}, "noise.sigma: must lie within ±1e+100"),
        ({"kind": "safe-bai"}, "kind"),
        ({"threshold_known": "maybe"}, "threshold_known"),
        ({"constraint_norm_bound": 0}, "constraint_norm_bound"),
    ],
)
def test_validation_names_the_field(changes, message):
    with pytest.raises(InstanceError, match=None) as error:
        from_mapping(base_mapping(**changes), "file.yaml")
    assert message in str(error.value)
    assert str(error.value).startswith("file.yaml: ")
    assert "\n" not in str(error.value)


def test_a_missing_threshold_is_an_error_not_zero():
    mapping = base_mapping()
    del mapping["threshold"]
    with pytest.raises(InstanceError, match=r"^file\.yaml: threshold: required field is missing$"):
        from_mapping(mapping, "file.yaml")


def test_a_constraint_norm_bound_below_the_norm_of_phi_is_an_error():
    # ‖(0.5, 1.5)‖ = 1.58114
    with pytest.raises(InstanceError, match=r"^file\.yaml: constraint_norm_bound: 1\.5 is below ‖φ‖ = 1\.58114$"):
        from_mapping(base_mapping(constraint_norm_bound=1.5), "file.yaml")


def test_a_constraint_norm_bound_covers_the_folded_threshold():
    # The learner's φ is (0.5, 1.5, −1) when τ = 1 is unknown: ‖·‖ = 1.87083.
    with pytest.raises(InstanceError, match=r"constraint_norm_bound: 1\.6 is below ‖\(φ, −τ\)‖ \(the threshold is folded in\) = 1\.87083$"):
        from_mapping(base_mapping(constraint_norm_bound=1.6, threshold_known=False), "file.yaml")


def test_a_constraint_norm_bound_equal_to_the_norm_up_to_round_off_is_accepted():
    norm = float(np.linalg.norm([0.5, 1.5]))
    assert from_mapping(base_mapping(constraint_norm_bound=norm - 1e-12)).constraint_norm_bound == norm - 1e-12


@pytest.mark.parametrize("name", ["red\x1b[31m", "a\rb", "two\nlines", "c1\x9bcontrol", "bidi\u202eoverride"])
def test_a_name_with_control_characters_is_refused(name):
    with pytest.raises(InstanceError, match=r"^file\.yaml: name: must not contain control characters, got '") as error:
        from_mapping(base_mapping(name=name), "file.yaml")
    assert str(error.value).isprintable()


def test_building_an_instance_with_control_characters_in_its_name_is_refused():
    with pytest.raises(InstanceError, match=r"^name: must not contain control characters"):
        Instance(name="\x1b[2J", arms=np.eye(2), constraint=np.ones(2), reward=np.ones(2))


def test_a_name_with_unicode_letters_and_symbols_is_kept():
    assert from_mapping(base_mapping(name="φ ≥ τ — Bäckerei")).name == "φ ≥ τ — Bäckerei"


def test_a_file_without_name_is_named_after_the_file_with_controls_escaped():
    mapping = base_mapping()
    del mapping["name"]
    assert from_mapping(mapping, "dir/evil\x1b[31m.yaml").name == "evil\\x1b[31m"


def test_an_unknown_field_with_control_characters_is_escaped_in_the_message():
    with pytest.raises(InstanceError) as error:
        from_mapping(base_mapping(**{"x\x1b[2J": 1}), "file.yaml")
    assert str(error.value).startswith("file.yaml: unknown field(s) x\\x1b[2J; ")


@pytest.mark.parametrize("field, value, shown", [
    ("arms", [[1.0, True], [0.0, 1.0]], "True (a boolean) at position [0, 1]"),
    ("arms", [[1.0, 0.0], [None, 1.0]], "None (an empty entry) at position [1, 0]"),
    ("constraint", [0.5, "1.5"], "'1.5' (a string) at position [1]"),
    ("reward", [1j, 2.0], "1j (a complex number) at position [0]"),
])
def test_an_array_entry_that_is_not_a_real_number_names_the_field(field, value, shown):
    with pytest.raises(InstanceError) as error:
        from_mapping(base_mapping(**{field: value}), "file.yaml")
    assert str(error.value) == f"file.yaml: {field}: must hold real numbers only, got {shown}"


@pytest.mark.parametrize("dtype, words", [(bool, "booleans"), (complex, "complex numbers"), (str, "strings")])
def test_an_npz_array_of_a_non_real_dtype_names_the_field(tmp_path, dtype, words):
    arrays = {key: np.asarray(value) for key, value in base_mapping().items() if key != "noise"}
    arrays["arms"] = np.array([[1, 0], [0, 1]], dtype=dtype)
    arrays["__json__noise"] = np.array('{"kind": "gaussian", "sigma": 0.1}')
    np.savez(tmp_path / "x.npz", **arrays)
    with pytest.raises(InstanceError, match=rf"x\.npz: arms: must hold real numbers only, got an array of {words} \(dtype"):
        load(tmp_path / "x.npz")


def test_a_data_array_with_a_boolean_names_its_entry():
    with pytest.raises(InstanceError, match=r"^file\.yaml: data\.actions: must hold real numbers only, got True \(a boolean\) at position \[1\]$"):
        from_mapping(base_mapping(data={"actions": [0.5, True]}), "file.yaml")


def test_binary_noise_accepts_values_inside_minus_one_one():
    instance = from_mapping(base_mapping(constraint=[0.5, -0.9], noise={"kind": "binary"}))
    assert isinstance(instance.noise, BinaryNoise)


@pytest.mark.parametrize("content, message", [
    ("arms: [1, 2\n", "not valid YAML"),
    ("- 1\n- 2\n", "expected a mapping"),
])
def test_malformed_yaml_is_one_line(tmp_path, content, message):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(InstanceError) as error:
        load(path)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_missing_file_and_bad_extension(tmp_path):
    with pytest.raises(InstanceError, match="no such file"):
        load(tmp_path / "nope.yaml")
    with pytest.raises(InstanceError, match="unknown file type"):
        load(tmp_path / "inst.txt")


def test_corrupt_npz_is_reported_without_numpy_advice(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(InstanceError, match=r"bad\.npz: not a valid \.npz file \(not a zip archive\)$") as error:
        load(path)
    assert "allow_pickle" not in str(error.value)


def test_stdin_and_stdout_are_yaml(monkeypatch, capsys, irrelevant_dims):
    save(irrelevant_dims, "-")
    text = capsys.readouterr().out
    assert yaml.safe_load(text)["kind"] == "cbai"
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert load("-") == irrelevant_dims


def test_write_is_atomic_and_leaves_no_temporary_files(tmp_path, irrelevant_dims):
    save(irrelevant_dims, tmp_path / "x.yaml")
    save(irrelevant_dims, tmp_path / "x.yaml")
    assert [p.name for p in tmp_path.iterdir()] == ["x.yaml"]


def test_writing_into_missing_folder_fails_cleanly(tmp_path, irrelevant_dims):
    with pytest.raises(InstanceError, match="does not exist"):
        save(irrelevant_dims, tmp_path / "no" / "x.yaml")


def test_data_arrays_travel_with_the_instance(tmp_path):
    actions = np.arange(24, dtype=float).reshape(2, 6, 2) / 7
    instance = from_mapping(base_mapping(data={"actions": actions.tolist()}))
    for suffix in ("yaml", "npz"):
        save(instance, tmp_path / f"d.{suffix}")
        loaded = load(tmp_path / f"d.{suffix}")
        assert loaded == instance
        np.testing.assert_array_equal(loaded.data["actions"], actions)
    assert instance.content_hash == from_mapping(base_mapping()).content_hash


def test_building_an_instance_with_a_bad_array_names_the_field():
    with pytest.raises(InstanceError, match=r"^constraint: contains NaN or infinite values$"):
        Instance(name="t", arms=np.eye(2), constraint=[1.0, float("nan")], reward=np.ones(2))


def test_an_array_field_that_is_not_a_list_names_the_field():
    with pytest.raises(InstanceError, match=r"^file\.yaml: arms: must be a K×d array of numbers \(a list of equal-length rows\)$"):
        from_mapping(base_mapping(arms=None), "file.yaml")


@pytest.mark.parametrize("field, value", [("arms", [[1.0e299], [2.0]]), ("constraint", [1.0e150]),
                                          ("reward", [-1.0e120]), ("threshold", 2.5e299)])
def test_numbers_that_overflow_the_linear_algebra_are_rejected(field, value):
    from cbai_cli.kinds.cbai.instance import from_mapping

    mapping = {"schema_version": 1, "kind": "cbai", "name": "big", "arms": [[0.1], [0.5]], "reward": [1.0],
               "constraint": [1.0], "threshold": 0.3, "noise": {"kind": "gaussian", "sigma": 0.05}, field: value}
    with pytest.raises(InstanceError, match=f"{field}: must lie within ±1e\\+100"):
        from_mapping(mapping, "big.yaml")


def without_constraint(**changes):
    mapping = base_mapping(**changes)
    del mapping["constraint"]
    return mapping


@pytest.mark.parametrize("suffix", ["yaml", "npz"])
def test_a_file_without_constraint_round_trips_exactly(tmp_path, suffix):
    instance = from_mapping(without_constraint(threshold_known=False, constraint_norm_bound=2.0), "real.yaml")
    save(instance, tmp_path / f"real.{suffix}")
    again = load(tmp_path / f"real.{suffix}")
    assert again == instance and not again.has_truth and again.constraint is None
    assert "constraint" not in again.to_mapping()


def test_a_file_without_constraint_keeps_the_learners_view():
    instance = from_mapping(without_constraint(threshold_known=False))
    assert instance.problem.arms.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    assert instance.rewards.tolist() == [1.0, 2.0]
    assert instance.duplicate_groups == []


@pytest.mark.parametrize("reader", ["truth", "gaps", "feasible", "best_arm", "boundary_arms"])
def test_reading_the_truth_of_a_file_without_it_is_one_line_naming_file_and_field(reader):
    instance = from_mapping(without_constraint(), "study/cookies.yaml")
    with pytest.raises(MissingTruthError) as error:
        getattr(instance, reader)
    message = str(error.value)
    assert message.startswith("study/cookies.yaml: constraint: missing; ") and "\n" not in message
    assert "`cbai session start study/cookies.yaml --algo NAME`" in message


def test_without_truth_drops_only_the_constraint(irrelevant_dims):
    real = irrelevant_dims.without_truth()
    expected = irrelevant_dims.to_mapping()
    del expected["constraint"]
    assert real.to_mapping() == expected and irrelevant_dims.has_truth


def test_the_content_hash_tells_a_file_without_truth_from_one_with_it():
    assert from_mapping(without_constraint()).content_hash != from_mapping(base_mapping()).content_hash


def test_binary_noise_without_truth_is_not_checked_against_phi():
    instance = from_mapping(without_constraint(arms=[[5.0, 0.0], [0.0, 5.0]], noise={"kind": "binary"}))
    assert instance.noise.kind == "binary"


def small(**changes):
    """Two arms in R², θ = (1, 2), φ = (1, 1), τ = 0.5: arm 0 has g = 0.5, arm 1 has g = 0.5."""
    fields = dict(name="x", arms=[[1.0, 0.0], [0.0, 1.0]], reward=[1.0, 2.0], constraint=[1.0, 1.0], threshold=0.5)
    return Instance(**{**fields, **changes})


def read_only_view(rows):
    base = np.array(rows, dtype=float)
    view = base.view()
    view.setflags(write=False)
    return base, view


def test_an_instance_built_from_a_read_only_view_does_not_follow_its_base():
    base, view = read_only_view([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    instance = Instance(name="x", arms=view, reward=[1.0, 2.0], constraint=[1.0, 1.0], threshold=1.5)
    base[1] = [100.0, 100.0]
    assert instance.arms.tolist() == [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]


def test_a_read_only_array_with_nan_is_refused():
    _, view = read_only_view([[float("nan"), 0.0], [0.0, 1.0]])
    with pytest.raises(InstanceError, match=r"^arms: contains NaN or infinite values$"):
        small(arms=view)


def test_a_read_only_array_beyond_the_magnitude_limit_is_refused():
    _, view = read_only_view([[1e300, 0.0], [0.0, 1.0]])
    with pytest.raises(InstanceError, match=r"^arms: must lie within ±1e\+100"):
        small(arms=view)


@pytest.mark.parametrize("cached", ["gaps", "feasible", "rewards", "boundary_arms"])
def test_a_cached_array_of_an_instance_is_read_only(cached):
    with pytest.raises(ValueError, match="read-only"):
        getattr(small(), cached)[:] = 0


def test_the_folded_constraint_of_an_unknown_threshold_is_read_only():
    instance = small(threshold_known=False)
    assert instance.truth.constraint.tolist() == [1.0, 1.0, -0.5]
    with pytest.raises(ValueError, match="read-only"):
        instance.truth.constraint[:] = 0


def test_an_instance_does_not_follow_the_data_arrays_it_was_given():
    source = np.arange(3.0)
    instance = small(data={"a": source})
    source[0] = 99.0
    assert instance.data["a"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="read-only"):
        instance.data["a"][0] = 5.0


def test_an_instance_does_not_follow_the_meta_it_was_given():
    meta = {"params": {"n": [1, 2]}}
    instance = small(meta=meta)
    meta["params"]["n"].append(3)
    meta["seed"] = 4
    assert instance.meta == {"params": {"n": [1, 2]}}


def test_data_given_as_lists_is_kept_as_float_arrays():
    assert small(data={"a": [1, 2]}).data["a"].dtype == float


@pytest.mark.parametrize("changes, message", [
    ({"noise": None}, "noise: must be a noise model, GaussianNoise(sigma) or BinaryNoise(), got None"),
    ({"threshold_known": "no"}, "threshold_known: must be true or false, got 'no'"),
    ({"threshold": "1.5"}, "threshold: must be a number, got '1.5'"),
    ({"threshold": None}, "threshold: must be a number, got None"),
    ({"threshold": np.array([1.5])}, "threshold: must be a number, got array([1.5])"),
    ({"threshold": 10**400}, "threshold: must be finite, got an integer of 401 digits"),
    ({"threshold": 1e200}, "threshold: must lie within ±1e+100"),
    ({"constraint_norm_bound": "2"}, "constraint_norm_bound: must be a number, got '2'"),
    ({"constraint_norm_bound": 0}, "constraint_norm_bound: must be > 0, got 0"),
    ({"arms": None}, "arms: must be a K×d array of numbers"),
    ({"data": {"a": "hi"}}, "data.a: must be an array of numbers"),
    ({"data": [1, 2]}, "data: must be a mapping of names to arrays"),
    ({"meta": [1]}, "meta: must be a mapping"),
    ({"meta": {"f": print}}, "meta: must hold only plain values"),
])
def test_the_constructor_checks_a_field_as_a_file_is_checked(changes, message):
    with pytest.raises(InstanceError) as error:
        small(**changes)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_numpy_bool_threshold_known_is_stored_as_a_bool():
    assert small(threshold_known=np.bool_(False)).threshold_known is False


def test_a_file_without_meta_and_data_has_empty_ones():
    instance = from_mapping(base_mapping())
    assert instance.meta == {} and instance.data == {}
