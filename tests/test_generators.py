"""The paper's instance families (Lindner et al. 2022, §4.1–4.2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cbai_cli.kinds.cbai.bounds import at_least_set, compute_bounds
from cbai_cli.contracts.errors import InstanceError, OptionError, UnknownNameError
from cbai_cli.kinds.cbai.families import FAMILIES, family, generate_instance, make_noise
from cbai_cli.kinds.cbai.family_declarations import DECLARATIONS, families_help, generate_options
from cbai_cli.kinds.cbai.noise import BinaryNoise


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


def test_unit_sphere_refuses_one_dimension_where_its_only_points_are_plus_and_minus_one():
    with pytest.raises(OptionError, match=r"^unit-sphere: d must be ≥ 2 \(the unit sphere of R¹ is the two points ±1, "
                                          r"so its arms would repeat\), got 1$"):
        family("unit-sphere").generate(d=1, n=5)


@pytest.mark.parametrize("eta0", [-1e-17, -1.25e-12, "-1e-300"])
def test_soare_safe_refuses_an_eta0_whose_forced_exploration_scale_rounds_to_zero(eta0):
    """γ_FE = 0.4·|η₀| (12 decimals) was 0 and the library raised a traceback."""
    with pytest.raises(OptionError, match=r"eta0 = .* is too close to 0: the forced-exploration scale γ_FE = 0\.4·\|η₀\| "
                                          r"rounds to 0 at 12 decimals; give eta0 ≤ -1.3e-12$"):
        family("soare-safe").generate(eta0=eta0)


def test_soare_safe_refuses_an_eta0_the_instance_reader_would_refuse():
    with pytest.raises(OptionError, match=r"^soare-safe: eta0 must be at least -1e\+100, got -1e\+300$"):
        family("soare-safe").generate(eta0=-1e300)


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


# --------------------------------------------------------------------------- #
# Known answers: every family that declares them, at its defaults and below
# --------------------------------------------------------------------------- #

# Parameter values beyond the defaults, for families that take parameters. Extremes on
# purpose: d = 1 (no irrelevant arm), ε near 1 and a small ε (H_CLB = 10⁴).
MORE_PARAMETERS: dict[str, list[dict]] = {
    "irrelevant-dims": [{"d": 1, "eps": 0.5}, {"d": 3, "eps": 0.2}, {"d": 4, "eps": 0.9}, {"d": 25, "eps": 0.01}],
}


def _known_answer_cases():
    """(family, params) for every registered family; those declaring no answers are
    skipped here, with the reason, rather than left out."""
    for name, fam in FAMILIES.items():
        if fam.known_answers() is None:
            if fam.kind != "cbai":
                why = f"a {fam.kind} instance, outside compute_bounds"
            else:
                why = "instances drawn at random, no closed form" if fam.seeded else "no closed form"
            yield pytest.param(name, {}, id=name, marks=pytest.mark.skip(reason=f"{name} declares no known answers ({why})"))
            continue
        for params in [{}, *MORE_PARAMETERS.get(name, [])]:
            label = ",".join(f"{key}={value}" for key, value in params.items()) or "defaults"
            yield pytest.param(name, params, id=f"{name}[{label}]")


@pytest.mark.parametrize("name, params", list(_known_answer_cases()))
def test_generated_instance_has_its_declared_answers(name, params):
    fam = family(name)
    answers = fam.known_answers(**params)
    instance = fam.generate(**params)
    report = compute_bounds(instance)
    # Truth of the instance itself.
    assert instance.best_arm == answers.best_arm
    assert tuple(np.flatnonzero(instance.feasible)) == answers.feasible
    assert tuple(np.flatnonzero(at_least_set(instance))) == answers.at_least
    # What `cbai bound` computes.
    assert report.best_arm == answers.best_arm
    assert (report.n_feasible, report.n_at_least) == (len(answers.feasible), len(answers.at_least))
    # The designs are certified to a relative gap of 1e-6.
    for computed, declared in [(report.h_clb, answers.h_clb), (report.h_clb_bar, answers.h_clb_bar)]:
        if declared is not None:
            assert computed.value == pytest.approx(declared, rel=1e-5)
            assert computed.gap <= 1e-6
    for computed, declared in [(report.h_clb, answers.h_clb_weights), (report.h_clb_bar, answers.h_clb_bar_weights)]:
        if declared is not None:
            np.testing.assert_allclose(computed.weights, declared, atol=1e-4)
    if answers.c_min is not None:
        assert report.c_min == pytest.approx(answers.c_min, rel=1e-12)
    if answers.prop1_bound is not None:
        assert report.prop1_bound == pytest.approx(answers.prop1_bound, rel=1e-12)


def test_families_with_random_instances_declare_no_answers():
    assert family("unit-sphere").known_answers(seed=4) is None
    assert family("random").known_answers(seed=4) is None


def test_known_answers_check_parameters_like_generate():
    with pytest.raises(OptionError, match="eps must lie in"):
        family("irrelevant-dims").known_answers(eps=1.5)


def test_irrelevant_dims_answer_is_the_readme_value():
    """README's `cbai bound` table: d = 10, ε = 0.05 gives H_CLB = 400, H̄_CLB = 409 (= 400 + 9)."""
    answers = family("irrelevant-dims").known_answers(d=10, eps=0.05)
    assert answers.h_clb == pytest.approx(400.0)
    assert answers.h_clb_bar == pytest.approx(409.0)
    assert answers.best_arm == 9


# --------------------------------------------------------------------------- #
# Sizes: refused up front, before anything is allocated
# --------------------------------------------------------------------------- #


def test_a_family_refuses_a_size_beyond_the_memory_limit_before_building():
    from cbai_cli.contracts.errors import OptionError

    with pytest.raises(OptionError, match=r"random: n = 1000000000000, d = 5 would take about .* of memory"):
        family("random").resolve(n=10**12)


def test_every_family_with_a_size_parameter_declares_its_size():
    for chosen in FAMILIES.values():
        sized = any(parameter.name in ("n", "d") for parameter in chosen.parameters)
        assert (chosen.size is not None) == sized, chosen.name


def test_the_default_instances_are_far_below_the_memory_limit():
    from cbai_cli.contracts.options import DEFAULT_MEMORY_LIMIT

    for chosen in FAMILIES.values():
        if chosen.size is not None:
            values = chosen.resolve()
            assert chosen.size(**{k: values[k] for k in ("n", "d") if k in values}).bytes < DEFAULT_MEMORY_LIMIT / 1000


def brute_force_closest_pair(points: np.ndarray) -> tuple[int, int]:
    """The argmin over the upper triangle of all n² squared distances (the first in row-major order)."""
    squared = np.sum((points[:, None, :] - points[None, :, :]) ** 2, axis=-1)
    squared[np.tril_indices(len(points))] = np.inf
    i, j = np.unravel_index(np.argmin(squared), squared.shape)
    return int(i), int(j)


# Points on a coarse grid, so that ties and duplicates are common.
grid_points = st.integers(1, 4).flatmap(lambda d: st.lists(
    st.lists(st.integers(-3, 3).map(lambda k: k / 4), min_size=d, max_size=d), min_size=2, max_size=30))


@pytest.mark.parametrize("screen", ["tree", "inner products"])
@given(points=grid_points)
def test_closest_pair_is_the_brute_force_argmin_ties_and_duplicates_included(screen, points):
    import cbai_cli.kinds.cbai.families as generators

    points = np.array(points, dtype=float)
    tree_dimensions = generators.TREE_DIMENSIONS if screen == "tree" else 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(generators, "TREE_DIMENSIONS", tree_dimensions)
        patch.setattr(generators, "SCREEN_BLOCK", 16)  # blocks of a few rows
        assert generators.closest_pair(points) == brute_force_closest_pair(points)


@pytest.mark.parametrize("d", [3, 30])
def test_closest_pair_of_sphere_points_is_the_brute_force_argmin(d):
    from cbai_cli.kinds.cbai.families import closest_pair

    for seed in range(5):
        points = np.random.default_rng(seed).standard_normal((300, d))
        points /= np.linalg.norm(points, axis=1, keepdims=True)
        assert closest_pair(points) == brute_force_closest_pair(points)


def test_a_million_arms_on_the_three_dimensional_sphere_fit_the_memory_limit():
    assert family("unit-sphere").resolve(d=3, n=10**6)["n"] == 10**6


# --------------------------------------------------------------------------- #
# Names, seeds and σ of the wrong type: one line each
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", [None, 3])
def test_a_family_named_by_something_other_than_a_str_is_an_unknown_name(name):
    with pytest.raises(UnknownNameError, match=f"^unknown family {name} \\(valid: irrelevant-dims, "):
        family(name)


def test_a_bool_seed_is_refused():
    with pytest.raises(OptionError, match="^random: seed must be int, got True$"):
        family("random").generate(seed=True)


def test_a_float_seed_beyond_exact_integers_is_refused():
    with pytest.raises(OptionError, match=r"^random: seed must be int, got 1e\+30$"):
        family("random").generate(seed=1e30)


def test_an_integral_float_seed_is_its_integer():
    assert family("random").generate(seed=2.0).name == "random-d5-n20-seed2"


@pytest.mark.parametrize("sigma", ["0.1", True])
def test_a_sigma_that_is_not_a_number_is_refused(sigma):
    with pytest.raises(OptionError, match=f"^--sigma must be a finite number > 0, got {sigma!r}$"):
        make_noise("gaussian", sigma, 0.05)


def test_truth_given_as_text_is_refused():
    with pytest.raises(OptionError, match=r"^truth must be True or False, got 'no'$"):
        generate_instance("regret-1d", truth="no")


def test_generate_file_writes_the_instance_and_says_so(tmp_path):
    from cbai_cli.kinds import generate_file, load

    path = tmp_path / "irr.yaml"
    warned = []
    assert generate_file("irrelevant-dims", str(path), warned.append, d=3, eps=0.2) == \
        f"wrote irrelevant-dims-d3-eps0.2 (4 arms, d = 3) to {path}"
    assert load(path).n_arms == 4 and warned == []


def test_generate_file_checks_its_output_before_it_generates(tmp_path):
    from cbai_cli.kinds import generate_file

    # the family is unknown too: the output is what is refused first
    with pytest.raises(OptionError, match="^-o .*: folder .* does not exist$"):
        generate_file("no-such-family", str(tmp_path / "missing" / "x.yaml"))


def test_generate_options_name_the_families_and_defaults_declared():
    """``cbai generate``'s options and FAMILY help are made from the declarations, and the
    families generate with the declared defaults."""
    options = generate_options()
    assert list(options) == ["d", "eps", "n", "seed", "T", "omega", "eta0", "sigma", "noise"]
    assert options["T"].help == "Horizon T (amani-a, amani-b; default 100000)."
    assert options["n"].help == "Number of arms (default 30 for unit-sphere, 20 for random)."
    assert options["eta0"].flag == "--eta0" and options["eta0"].type is float
    assert families_help() == ("irrelevant-dims, unit-sphere, regret-1d, random (cbai); amani-a, amani-b "
                               "(safe-regret); soare-safe (safe-bai)")
    assert list(FAMILIES) == list(DECLARATIONS)
    for name, chosen in FAMILIES.items():
        assert chosen.parameters == DECLARATIONS[name].parameters and chosen.kind == DECLARATIONS[name].kind
        assert {p.name: p.type for p in chosen.parameters}.items() <= {o.name: o.type for o in options.values()}.items()
        assert chosen.generate().meta["params"] == {p.name: p.default for p in DECLARATIONS[name].parameters}
