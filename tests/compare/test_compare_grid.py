"""Grid expansion: sources, sweeps, algorithm specs, study files, seeds, run keys, shards."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbai_cli.compare.plan import build_grid, build_plan, parse_shard
from cbai_cli.compare.sources import parse_sources
from cbai_cli.compare.specs import parse_algorithm, parse_algorithms, split_algorithm_specs
from cbai_cli.compare.study_file import load_study
from cbai_cli.contracts.errors import CbaiError, OptionError
from cbai_cli.kinds.cbai.families import family
from cbai_cli.kinds.cbai.instance import save

from tests.compare.common import FAST_ALGORITHMS, SPHERE, SWEEP

STUDIES = sorted((Path(__file__).parents[2] / "studies").glob("*.yaml"))


def test_sweep_makes_one_group_per_value():
    groups = parse_sources(["irrelevant-dims:d=3,eps=0.02|0.05|0.1"])
    assert [group.label for group in groups] == ["irrelevant-dims:d=3,eps=0.02", "irrelevant-dims:d=3,eps=0.05",
                                                 "irrelevant-dims:d=3,eps=0.1"]
    assert [group.swept for group in groups] == [("eps", 0.02), ("eps", 0.05), ("eps", 0.1)]


def test_swept_groups_share_their_source():
    groups = parse_sources([SWEEP, "regret-1d"])
    assert {group.source for group in groups[:2]} == {SWEEP} and groups[2].source_index == 1


def test_unswept_generator_is_one_fixed_instance():
    (group,) = parse_sources(["irrelevant-dims:d=4,eps=0.1"])
    assert not group.per_seed and group.swept is None
    assert group.instance_for(7) == family("irrelevant-dims").generate(d=4, eps=0.1)


def test_seeded_family_draws_the_generate_instance_of_each_seed():
    (group,) = parse_sources([SPHERE])
    assert group.per_seed
    assert group.instance_for(3) == family("unit-sphere").generate(d=3, n=5, seed=3)


def test_explicit_seed_fixes_the_instance():
    (group,) = parse_sources(["unit-sphere:d=3,n=5,seed=2"])
    assert group.instance_for(0) == group.instance_for(9) == family("unit-sphere").generate(d=3, n=5, seed=2)


def test_sigma_in_a_spec_sets_the_noise():
    (group,) = parse_sources(["regret-1d:sigma=0.2"])
    assert group.instance_for(0).noise.sigma == 0.2


def test_folder_gives_one_group_per_instance_file_in_name_order(tmp_path):
    save(family("regret-1d").generate(), tmp_path / "b.yaml")
    save(family("irrelevant-dims").generate(d=3, eps=0.2), tmp_path / "a.npz")
    (tmp_path / "notes.txt").write_text("not an instance")
    groups = parse_sources([str(tmp_path)])
    assert [Path(group.label).name for group in groups] == ["a.npz", "b.yaml"]


def test_file_source_is_read_relative_to_the_study(tmp_path):
    save(family("regret-1d").generate(), tmp_path / "one.yaml")
    (group,) = parse_sources(["one.yaml"], base=tmp_path)
    assert group.label == "one.yaml" and group.instance_for(0).n_arms == 10


@pytest.mark.parametrize("source, message", [
    ("irrelevant-dims:d", "expected OPTION=VALUE"),
    ("irrelevant-dims:", "nothing after"),
    ("irrelevant-dims:d=3|4,eps=0.1|0.2", "only one parameter"),
    ("irrelevant-dims:q=1", "no parameter 'q'"),
    ("irrelevant-dims:d=three", "d must be int"),
    ("irrelevant-dims:eps=2", "eps must lie in (0, 1)"),
    ("irelevant-dims:d=3", "did you mean 'irrelevant-dims'"),
    ("regret-1d:noise=gaussian|binary", "cannot be swept"),
    ("missing/instance.yaml", "no such file"),
])
def test_malformed_source_is_a_one_line_error(source, message):
    with pytest.raises(CbaiError) as caught:
        parse_sources([source])
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_same_group_twice_is_an_error():
    with pytest.raises(OptionError, match="given twice"):
        parse_sources(["regret-1d", "regret-1d"])


def test_an_option_given_twice_in_an_algorithm_spec_is_an_error():
    with pytest.raises(OptionError, match="option 'beta' is given twice"):
        parse_algorithm("g-acol:tuned:beta=0.25,beta=4", dict())


def test_a_parameter_given_twice_in_a_generator_spec_is_an_error():
    with pytest.raises(OptionError, match="option 'd' is given twice"):
        parse_sources(["irrelevant-dims:d=3,d=7,eps=0.1"])


def test_an_option_of_the_bounds_is_not_an_option_of_an_algorithm_spec():
    with pytest.raises(OptionError, match="unknown option 'solver' \\(valid: delta, beta"):
        parse_algorithm("track-and-stop:ols:solver=cvxpy", dict())


def test_algorithm_spec_with_regime_and_options():
    choice = parse_algorithm("g-acol:tuned:beta=0.5,budget=100", dict())
    assert choice.label == "g-acol:tuned:beta=0.5,budget=100"
    assert (choice.request.algorithm, choice.request.regime, choice.request.get("beta"), choice.request.get("budget")) == (
        "g-acol", "tuned", 0.5, 100)


def test_shared_options_apply_only_where_they_mean_something():
    shared = dict(beta=0.25, rounding_epsilon=0.1, ridge=0.5, subgaussian=1.0)
    acol, tuned = parse_algorithms(["acol,g-acol:tuned"], shared)
    acol, tuned = acol.request.given(), tuned.request.given()
    assert (acol.get("beta"), acol.get("rounding_epsilon"), acol.get("ridge")) == (None, 0.1, None)
    assert (tuned.get("beta"), tuned.get("rounding_epsilon"), tuned.get("ridge")) == (0.25, None, 0.5)
    assert acol["subgaussian"] == tuned["subgaussian"] == 1.0


def test_a_shared_option_out_of_its_range_is_refused_even_if_no_algorithm_reads_it():
    with pytest.raises(OptionError, match="--T must be ≥ 1, got -5"):
        parse_algorithms(["acol"], dict(horizon=-5))


def test_a_shared_option_that_no_compared_algorithm_reads_is_refused():
    with pytest.raises(OptionError, match="option T=100, given for all algorithms, is read by none of those compared "
                                          "\\(acol, g-acol\\); it applies to every safe-regret algorithm"):
        parse_algorithms(["acol,g-acol"], dict(horizon=100))


def test_a_shared_option_that_a_spec_overrides_counts_as_read():
    (choice,) = parse_algorithms(["g-acol:tuned:beta=1"], dict(beta=0.25))
    assert choice.overrides == (("beta", 1.0, 0.25),)


def test_option_written_in_a_spec_wins_over_the_shared_one():
    (choice,) = parse_algorithms(["g-acol:tuned:beta=1"], dict(beta=0.25))
    assert choice.request.get("beta") == 1.0


def test_commas_continue_the_options_of_the_previous_spec():
    assert split_algorithm_specs(["g-acol:tuned:beta=0.25,budget=100,acol", "uniform"]) == [
        "g-acol:tuned:beta=0.25,budget=100", "acol", "uniform"]


@pytest.mark.parametrize("spec, message", [
    ("acl", "did you mean 'acol'"),
    ("acol:tuned", "cannot use regime 'tuned'"),
    ("g-acol:tuned:speed=3", "unknown option 'speed'"),
    ("g-acol:tuned:beta=x", "beta must be a finite number"),
    ("g-acol:a:b:c", "expected NAME[:REGIME]"),
    ("budget=3", "does not follow an algorithm spec"),
])
def test_bad_algorithm_spec_is_a_one_line_error(spec, message):
    with pytest.raises(OptionError) as caught:
        parse_algorithms([spec], dict())
    assert message in str(caught.value)


@pytest.mark.parametrize("spec, message", [
    ("g-acol:tuned", "needs --beta"),
    ("acol:lambda=1", "--lambda"),
    ("uniform:beta=0.25", "--beta only applies"),
])
def test_grid_validation_checks_each_request_like_solve(spec, message):
    with pytest.raises(OptionError, match=message.replace("-", r"\-")):
        build_grid(["regret-1d"], [spec], seeds=1)


def test_grid_validation_does_not_solve_the_oracle_design():
    grid = build_grid(["irrelevant-dims:d=3,eps=0.2"], ["oracle"], seeds=1)
    assert grid.algorithms[0].request.algorithm == "oracle"


def test_plan_order_is_group_then_seed_then_algorithm():
    plan = build_plan(build_grid([SWEEP], FAST_ALGORITHMS, seeds=2, first_seed=5))
    assert [(run.group, run.seed, run.algorithm) for run in plan.runs][:4] == [(0, 5, 0), (0, 5, 1), (0, 5, 2), (0, 6, 0)]
    assert [run.index for run in plan.runs] == list(range(12))


def test_run_keys_are_distinct_and_reproducible():
    first = build_plan(build_grid([SWEEP, SPHERE], FAST_ALGORITHMS, seeds=3))
    second = build_plan(build_grid([SWEEP, SPHERE], FAST_ALGORITHMS, seeds=3))
    keys = [run.run_key for run in first.runs]
    assert len(set(keys)) == len(keys) and keys == [run.run_key for run in second.runs]


def test_run_key_changes_with_a_shared_option():
    plain = build_plan(build_grid(["regret-1d"], ["uniform"], seeds=1))
    other = build_plan(build_grid(["regret-1d"], ["uniform"], seeds=1, shared=dict(delta=0.1)))
    assert plain.runs[0].run_key != other.runs[0].run_key


def test_shards_partition_the_plan():
    grid = build_grid([SWEEP, SPHERE], FAST_ALGORITHMS, seeds=3)
    whole = build_plan(grid).runs
    shards = [build_plan(grid, (index, 4)).runs for index in (1, 2, 3, 4)]
    merged = sorted((run for shard in shards for run in shard), key=lambda run: run.index)
    assert merged == list(whole)


def test_a_shard_keeps_all_algorithms_of_a_cell_together():
    runs = build_plan(build_grid([SWEEP], FAST_ALGORITHMS, seeds=3), (2, 2)).runs
    cells = {(run.group, run.seed) for run in runs}
    assert len(runs) == len(cells) * len(FAST_ALGORITHMS)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_bad_shard_is_rejected(text):
    with pytest.raises(OptionError, match="--shard"):
        parse_shard(text)


def test_study_file_holds_sources_algorithms_seeds_and_options(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text("title: t\nsources: [regret-1d]\nalgorithms: [uniform]\nseeds: 3\noptions: {delta: 0.1, subgaussian: 1}\n")
    study = load_study(path)
    assert (study.sources, study.algorithms, study.seeds, dict(study.options)) == (
        ("regret-1d",), ("uniform",), 3, {"delta": 0.1, "subgaussian": 1.0})


@pytest.mark.parametrize("text, message", [
    ("sources: [regret-1d]\nalgos: [acol]\n", "unknown key"),
    ("sources: [regret-1d]\nseeds: 0\n", "seeds must be an integer"),
    ("sources: [regret-1d]\noptions: {speed: 1}\n", "unknown option"),
    ("sources: [regret-1d]\noptions: {solver: cvxpy}\n", "unknown option 'solver'"),
    ("sources: {a: 1}\n", "list of strings"),
])
def test_bad_study_file_is_rejected(tmp_path, text, message):
    path = tmp_path / "study.yaml"
    path.write_text(text)
    with pytest.raises(OptionError, match=message):
        load_study(path)


PAPER_STUDIES = [path for path in STUDIES if path.name.startswith("figure")]
SAFE_STUDIES = [path for path in STUDIES if not path.name.startswith("figure")]


@pytest.mark.parametrize("path", PAPER_STUDIES, ids=[path.name for path in PAPER_STUDIES])
def test_shipped_figure_study_is_a_valid_grid_with_the_papers_seeds_and_r(path):
    study = load_study(path)
    grid = build_grid(study.sources, study.algorithms, study.seeds, shared=study.options, base=study.base)
    expected_r = 1.0 if "-r1" in path.name else None
    assert len(grid.seeds) == 30 and study.title
    assert {choice.request.given().get("subgaussian") for choice in grid.algorithms} == {expected_r}


@pytest.mark.parametrize("path", SAFE_STUDIES, ids=[path.name for path in SAFE_STUDIES])
def test_shipped_safe_study_is_a_valid_grid_of_safe_algorithms(path):
    study = load_study(path)
    grid = build_grid(study.sources, study.algorithms, study.seeds, base=study.base)
    assert study.title and len(grid.seeds) == 10 and not grid.idle_groups()
    assert {kind for choice in grid.algorithms for kind in choice.kinds} <= {"safe-regret", "safe-bai"}


def test_a_device_given_as_a_source_is_not_called_missing():
    with pytest.raises(CbaiError, match="not a regular file"):
        parse_sources(["/dev/null"])


@pytest.mark.parametrize("seeds", [2.5, True, "3", 0])
def test_seeds_that_are_not_an_integer_of_at_least_one_are_refused(seeds):
    with pytest.raises(OptionError, match=f"^--seeds must be an integer ≥ 1, got {seeds!r}$") as caught:
        build_grid([SWEEP], FAST_ALGORITHMS, seeds=seeds)
    assert caught.value.parameter == "seeds"


def test_a_first_seed_that_is_not_an_integer_is_refused():
    with pytest.raises(OptionError, match="^--first-seed must be an integer ≥ 0, got 1.5$") as caught:
        build_grid([SWEEP], FAST_ALGORITHMS, seeds=2, first_seed=1.5)
    assert caught.value.parameter == "first_seed"
