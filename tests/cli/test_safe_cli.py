"""``cbai generate``, ``bound``, ``solve`` and ``algorithms`` on the safe kinds, end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from cbai_cli.kinds import load

SHIPPED = Path(__file__).resolve().parents[2] / "instances"
AMANI_A, AMANI_B, SOARE = SHIPPED / "amani-a.yaml", SHIPPED / "amani-b.yaml", SHIPPED / "soare-safe.yaml"
REGRET_RUN_KEYS = {"seed", "iterations", "regret", "regret_curve", "violations", "exploration_rounds", "stopped",
                   "wall_s", "lambda_min_design", "lambda_min_target", "lambda_minus"}
BAI_RUN_KEYS = {"seed", "iterations", "recommended", "scale", "correct", "optimal", "violations", "unsafe_fraction",
                "stopped", "gamma_bar_fe", "gamma_bar", "pulls", "wall_s"}


def one_line_error(result, message: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def solve_json(cli, *args, code: int = 0) -> dict:
    result = cli("solve", *args, "--json")
    assert result.exit_code == code, result.stderr
    return json.loads(result.stdout)


# ---------------------------------------------------------------- generate


@pytest.mark.parametrize("family, args, kind, check", [
    ("amani-a", ["--T", "5000"], "safe-regret", lambda i: i.problem.setting.T == 5000 and i.truth.safety_gap > 3),
    ("amani-b", [], "safe-regret", lambda i: i.problem.setting.T == 100_000 and i.truth.safety_gap == 0),
    ("soare-safe", ["--d", "4", "--omega", "0.2", "--eta0", "-0.3"], "safe-bai",
     lambda i: i.n_arms == 5 and i.problem.setting.eta0 == -0.3 and i.truth.gamma[1] == pytest.approx(0.3)),
])
@pytest.mark.parametrize("suffix", ["yaml", "npz"])
def test_generate_writes_a_loadable_file(cli, tmp_path, family, args, kind, check, suffix):
    path = tmp_path / f"{family}.{suffix}"
    result = cli("generate", family, *args, "-o", path)
    assert result.exit_code == 0, result.stderr
    assert f"wrote {family}" in result.stderr
    instance = load(path)
    assert instance.kind == kind and check(instance)


def test_generate_to_stdout_is_yaml_of_the_kind(cli):
    result = cli("generate", "soare-safe")
    assert result.exit_code == 0
    document = yaml.safe_load(result.stdout)
    assert document["kind"] == "safe-bai" and document["eta0"] == -0.5 and document["T_FE"] == 800


@pytest.mark.parametrize("args, message", [
    (["amani-a", "--sigma", "0.1"], "--noise and --sigma do not apply"),
    (["amani-b", "--noise", "binary"], "--noise and --sigma do not apply"),
    (["amani-b", "--d", "3"], "has no parameter 'd'"),
    (["amani-a", "--T", "0"], "T must be ≥ 1"),
    (["soare-safe", "--eta0", "0.2"], "eta0 must be < 0"),
    (["soare-safe", "--eta0", "-1e-17"], "eta0 = -1e-17 is too close to 0"),
    (["soare-safe", "--eta0", "-1e300"], "eta0 must be at least -1e+100, got -1e+300"),
    (["soare-safe", "--d", "1"], "d must be ≥ 2"),
    (["soare-safe", "--omega", "0"], "omega must lie in (0, π/2)"),
    (["soare-safe", "--T", "10"], "has no parameter 'T'"),
    (["amani", "--T", "10"], "did you mean"),
])
def test_generate_bad_options(cli, args, message):
    one_line_error(cli("generate", *args), message)


def test_generate_through_a_subprocess(cbai_process, tmp_path):
    path = tmp_path / "a.npz"
    process = cbai_process("generate", "amani-a", "--T", "2000", "-o", path)
    assert process.returncode == 0, process.stderr
    assert load(path).problem.setting.T == 2000


# ---------------------------------------------------------------- bound


def test_bound_safe_regret_json_has_the_paper_constants(cli):
    result = cli("bound", AMANI_A, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert {"safety_gap", "lambda_minus", "t_delta", "T_delta", "T_0", "beta_T", "x_star", "B_norm"} <= set(document)
    assert document["safety_gap"] == pytest.approx(3.166087, abs=5e-7)
    assert document["lambda_minus"] == pytest.approx(0.0381875, abs=5e-8)
    assert document["t_delta"] == pytest.approx(2219.9, abs=0.05)
    assert document["T_delta"] == pytest.approx(10244.3, abs=0.05)


def test_bound_safe_regret_table_mentions_every_quantity(cli):
    result = cli("bound", AMANI_B)
    assert result.exit_code == 0
    for label in ("Δ", "λ_−", "t_δ", "T_Δ", "T_0", "β_T", "x*", "Δ = 0"):
        assert label in result.stdout


def test_bound_safe_bai_json_and_table(cli):
    document = json.loads(cli("bound", SOARE, "--json").stdout)
    assert document["true_gamma"] == [1.0, 0.5, 1.0, 1.0] and document["optimal_arm"] == 0
    assert document["lingape_complexity"] > 0 and document["lingape_complexity_safe"] > document["lingape_complexity"]
    table = cli("bound", SOARE).stdout
    for label in ("true γ_k", "k*", "LinGapE complexity"):
        assert label in table


@pytest.mark.parametrize("option", [["--delta", "0.1"], ["--solver", "fw"], ["--epsilon", "0.1"]])
def test_bound_rejects_cbai_options_on_safe_files(cli, option):
    one_line_error(cli("bound", SOARE, *option),
                   f"{option[0]} does not apply to safe-bai instances (cbai bound reads no option there)")


def test_bound_safe_regret_reads_the_run_constants_as_options(cli):
    """t_δ = (8L²/λ_−) log(d/δ) follows --delta; λ_− = c²/((d+2)S²‖B‖²) follows --S; β_T
    follows --lambda; the file's values give the file's constants."""
    file_values = json.loads(cli("bound", AMANI_A, "--json").stdout)
    same = json.loads(cli("bound", AMANI_A, "--json", "--delta", "0.01", "--lambda", "1", "--S", "1").stdout)
    assert same == file_values
    other = json.loads(cli("bound", AMANI_A, "--json", "--delta", "0.1", "--S", "2").stdout)
    assert other["lambda_minus"] == pytest.approx(file_values["lambda_minus"] / 4)
    assert other["t_delta"] == pytest.approx(4 * file_values["t_delta"] * math.log(20) / math.log(200))
    assert json.loads(cli("bound", AMANI_A, "--json", "--lambda", "2").stdout)["beta_T"] != file_values["beta_T"]
    one_line_error(cli("bound", AMANI_A, "--solver", "fw"),
                   "--solver does not apply to safe-regret instances (cbai bound reads --delta, --lambda, --S there)")


def test_bound_through_a_subprocess(cbai_process):
    process = cbai_process("bound", AMANI_B, "--json")
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["T_delta"] is None


# ---------------------------------------------------------------- solve


def test_solve_safe_lucb_json(cli):
    document = solve_json(cli, AMANI_A, "--algo", "safe-lucb", "--T", "1500", "--exploration", "300")
    assert document["kind"] == "safe-regret" and document["horizon"] == 1500
    run = document["runs"][0]
    assert REGRET_RUN_KEYS <= set(run)
    assert run["exploration_rounds"] == 300 and run["iterations"] == 1500 and run["violations"] == 0
    assert run["regret_curve"][-1] == {"t": 1500, "regret": run["regret"]}
    assert [point["t"] for point in run["regret_curve"]] == [10, 20, 50, 100, 200, 500, 1000, 1500]


@pytest.mark.parametrize("path, args, given, code", [
    (AMANI_A, ["--algo", "safe-lucb", "--T", "1200", "--exploration", "200"], ["--delta", "0.01", "--lambda", "1", "--S", "1"],
     0),
    (SOARE, ["--algo", "lingape", "--budget", "800"], ["--delta", "0.001", "--lambda", "1", "--S", "2"], 1),
    (SOARE, ["--algo", "safe-lingape", "--budget", "1500"],
     ["--delta", "0.001", "--lambda", "1", "--S", "2", "--delta-s", "0.001", "--S-mu", "1"], 1),
])
def test_the_files_constants_given_as_options_change_nothing_but_the_options_shown(cli, path, args, given, code):
    plain, explicit = solve_json(cli, path, *args, code=code), solve_json(cli, path, *args, *given, code=code)
    assert [run | {"wall_s": 0} for run in plain["runs"]] == [run | {"wall_s": 0} for run in explicit["runs"]]
    shown = {name: value for name, value in explicit["options"].items() if name not in plain["options"]}
    assert len(shown) == len(given) // 2 and set(shown) <= {"delta", "ridge", "norm_bound", "safety_delta",
                                                            "safety_norm_bound"}


def test_run_constants_reach_the_algorithms(cli):
    """A larger δ_r stops LinGapE sooner on the same noise; --delta-s and --S-mu change
    Safe-LinGapE's γ̄ (a larger δ'_s, or a smaller S_μ, narrows the safety radius)."""
    strict = solve_json(cli, SOARE, "--algo", "lingape", "--seed", "3")["runs"][0]["iterations"]
    loose = solve_json(cli, SOARE, "--algo", "lingape", "--seed", "3", "--delta", "0.5")["runs"][0]["iterations"]
    assert loose < strict
    fe = ["--algo", "safe-lingape", "--budget", "900"]
    gamma = solve_json(cli, SOARE, *fe, code=1)["runs"][0]["gamma_bar_fe"]
    assert solve_json(cli, SOARE, *fe, "--delta-s", "0.3", code=1)["runs"][0]["gamma_bar_fe"][1] > gamma[1]
    assert solve_json(cli, SOARE, *fe, "--S-mu", "3", code=1)["runs"][0]["gamma_bar_fe"][1] < gamma[1]


def test_solve_safe_lucb_table(cli):
    result = cli("solve", AMANI_B, "--algo", "safe-lucb", "--T", "1200", "--exploration", "t23", "--runs", "2")
    assert result.exit_code == 0, result.stderr
    for label in ("R(10³)", "R(T)", "unsafe", "λ_min at T'", "all", "safety gap Δ = 0"):
        assert label in result.stdout


@pytest.mark.parametrize("algo, extra", [("lingape", ["--rule", "ratio"]), ("safe-lingape", ["--updates", "dynamic"])])
def test_solve_bai_json(cli, algo, extra):
    document = solve_json(cli, SOARE, "--algo", algo, *extra)
    run = document["runs"][0]
    assert BAI_RUN_KEYS <= set(run) and run["stopped"] == "solved"
    assert run["correct"] and run["recommended"] == 0 and document["true_gamma"] == [1.0, 0.5, 1.0, 1.0]
    if algo == "lingape":
        assert run["scale"] == 1.0 and run["violations"] > 0 and run["gamma_bar"] is None
    else:
        assert run["violations"] == 0 and run["gamma_bar"][1] <= 0.5


def test_solve_bai_table_shows_gamma_estimates(cli):
    result = cli("solve", SOARE, "--algo", "safe-lingape", "--budget", "1500", "--runs", "2")
    assert result.exit_code == 1  # both runs reach the cap before stopping
    for label in ("pulls τ", "arm @ γ", "unsafe pulls", "γ̄ after FE", "true γ_k", "pull cap"):
        assert label in result.stdout


@pytest.mark.parametrize("path, algo, extra", [
    (AMANI_A, "safe-lucb", ["--T", "800", "--exploration", "100"]),
    (SOARE, "lingape", []),
    (SOARE, "safe-lingape", ["--rule", "ratio", "--budget", "1200"]),
])
def test_runs_equal_single_runs_with_those_seeds(cli, path, algo, extra):
    code = 1 if "--budget" in extra else 0
    many = solve_json(cli, path, "--algo", algo, *extra, "--runs", "3", "--seed", "4", code=code)["runs"]
    for offset, run in enumerate(many):
        single = solve_json(cli, path, "--algo", algo, *extra, "--seed", str(4 + offset), code=code)["runs"][0]
        run.pop("wall_s"), single.pop("wall_s")
        assert single == run


def test_step_cap_exits_with_code_one(cli):
    document = solve_json(cli, SOARE, "--algo", "lingape", "--budget", "50", code=1)
    assert document["runs"][0]["stopped"] == "budget" and document["runs"][0]["iterations"] == 50


@pytest.mark.parametrize("path, args, message", [
    (SOARE, ["--algo", "safe-lucb"], "algorithm 'safe-lucb' runs on safe-regret instances, but this is a safe-bai"),
    (AMANI_A, ["--algo", "lingape"], "runs on safe-bai instances, but this is a safe-regret instance"),
    (AMANI_A, ["--algo", "acol"], "algorithm 'acol' runs on cbai instances"),
    (SHIPPED / "regret-1d.yaml", ["--algo", "safe-lingape"], "but this is a cbai instance"),
    (SOARE, ["--algo", "safe-lingap"], "did you mean 'safe-lingape'"),
    (SHIPPED / "regret-1d.yaml", ["--algo", "acol", "--rule", "greedy"], "--rule does not apply to acol"),
    (SHIPPED / "regret-1d.yaml", ["--algo", "g-acol", "--exploration", "10"], "--exploration does not apply to g-acol"),
    (AMANI_A, ["--algo", "safe-lucb", "--regime", "theory"], "--regime does not apply to safe-lucb"),
    (AMANI_A, ["--algo", "safe-lucb", "--rule", "greedy"], "--rule does not apply to safe-lucb"),
    (AMANI_A, ["--algo", "safe-lucb", "--budget", "10"], "--budget does not apply to safe-lucb"),
    (SOARE, ["--algo", "lingape", "--updates", "dynamic"], "--updates does not apply to lingape"),
    (SOARE, ["--algo", "lingape", "--T", "10"], "--T does not apply to lingape"),
    (SOARE, ["--algo", "lingape", "--delta-s", "0.1"], "--delta-s does not apply to lingape"),
    (SOARE, ["--algo", "lingape", "--S-mu", "2"], "--S-mu does not apply to lingape"),
    (AMANI_A, ["--algo", "safe-lucb", "--delta-s", "0.1"], "--delta-s does not apply to safe-lucb"),
    (AMANI_A, ["--algo", "safe-lucb", "--delta", "1"], "--delta must lie in (0, 1), got 1"),
    (AMANI_A, ["--algo", "safe-lucb", "--S", "0.5"], "--S: 0.5 is below ‖mu_star‖ = 0.905392 (Assumption 2)"),
    (SOARE, ["--algo", "safe-lingape", "--S", "1.5"], "--S: 1.5 is below ‖theta_star‖ = 2"),
    (SOARE, ["--algo", "safe-lingape", "--S-mu", "0.5"], "--S-mu: 0.5 is below ‖mu_star‖ = 1"),
    (SOARE, ["--algo", "lingape", "--lambda", "1e-16"], "--lambda: 1e-16 is 1e+16 times smaller than L² = 1"),
    (AMANI_A, ["--algo", "safe-lucb", "--lambda", "1e200"], "--lambda: must lie within ±1e+100"),
    (SOARE, ["--algo", "safe-lingape", "--trace", "t.csv"], "--trace does not apply to safe-lingape"),
    (SOARE, ["--algo", "safe-lingape", "--rule", "best"], "--rule must be greedy or ratio"),
    (SOARE, ["--algo", "safe-lingape", "--updates", "often"], "--updates must be static or dynamic"),
    (SOARE, ["--algo", "lingape", "--budget", "0"], "--budget must be ≥ 1"),
    (AMANI_A, ["--algo", "safe-lucb", "--exploration", "soon"], "--exploration must be gap, t23, heuristic or a number"),
    (AMANI_A, ["--algo", "safe-lucb", "--exploration", "-1"], "--exploration must be gap, t23, heuristic or a number"),
    (AMANI_B, ["--algo", "safe-lucb", "--exploration", "gap"], "needs a safety gap Δ > 0"),
    (AMANI_A, ["--algo", "safe-lucb", "--T", "0"], "--T must be ≥ 1"),
    (AMANI_A, ["--algo", "safe-lucb", "--dw", "cube"], "--dw must be ball or ellipsoid"),
    (AMANI_A, ["--algo", "safe-lucb", "--confidence-set", "ellipsoid"], "finite action sets only"),
    (AMANI_A, ["--algo", "safe-lucb", "--intersect", "--confidence-set", "ellipsoid"], "finite action sets only"),
    (AMANI_A, ["--algo", "safe-lucb", "--confidence-set", "ellipsoid"], "(this instance's action set is the box [−1, 1]^2)"),
    (SOARE, ["--algo", "safe-lingape", "--dw", "ball"], "--dw does not apply to safe-lingape"),
    (SHIPPED / "regret-1d.yaml", ["--algo", "acol", "--intersect"], "--intersect does not apply to acol"),
])
def test_solve_mismatches_and_bad_options(cli, path, args, message):
    one_line_error(cli("solve", path, *args), message)


def _edit(source: Path, old: str, new: str, target: Path) -> Path:
    text = source.read_text()
    assert old in text
    target.write_text(text.replace(old, new))
    return target


@pytest.mark.parametrize("source, old, new, algo, message", [
    (SOARE, "eta0: -0.5", "eta0: 0.0", "safe-lingape", "eta0: must be < 0"),
    (SOARE, "eta0: -0.5", "eta0: .nan", "lingape", "eta0: must be finite"),
    (SOARE, "theta_star: [2.0, 0.0, 0.0]", "theta_star: [2.0, 0.0]", "lingape", "theta_star: length 2"),
    (SOARE, "mu_star: [0.0, -1.0, 0.0]", "mu_star: [0.0, .nan, 0.0]", "lingape", "mu_star: contains NaN"),
    (SOARE, "- [0.0, 0.0, 1.0]", "- [0.0, 1.0]", "lingape", "arms: must be a matrix"),
    (AMANI_A, "kind: box", "kind: sphere", "safe-lucb", "action_set.kind: must be 'box', 'ball' or 'finite'"),
    (AMANI_A, "- [0.6, 1.8]", "- [0.6, 1.8, 0.0]", "safe-lucb", "B: must be a matrix"),
    (AMANI_A, "c: 0.9", "c: -0.9", "safe-lucb", "c: must be > 0"),
    (AMANI_A, "kind: safe-regret", "kind: safe-regrets", "safe-lucb", "kind: unknown instance kind 'safe-regrets'"),
    (AMANI_A, "lambda: 1.0", "lambda: 1.0e-20", "safe-lucb", "lambda: 1e-20 is 2e+20 times smaller than L² = 2"),
    (SOARE, "lambda: 1.0", "lambda: 1.0e-16", "lingape", "set lambda to at least 1e-12"),
])
def test_solve_bad_files_of_the_safe_kinds(cli, tmp_path, source, old, new, algo, message):
    path = _edit(source, old, new, tmp_path / "bad.yaml")
    one_line_error(cli("solve", path, "--algo", algo), message)


def test_solve_through_a_subprocess(cbai_process):
    process = cbai_process("solve", SOARE, "--algo", "safe-lingape", "--json")
    assert process.returncode == 0, process.stderr
    run = json.loads(process.stdout)["runs"][0]
    assert run["correct"] and run["violations"] == 0


def test_bad_file_through_a_subprocess(cbai_process, tmp_path):
    path = _edit(AMANI_A, "kind: box", "kind: sphere", tmp_path / "bad.yaml")
    process = cbai_process("solve", path, "--algo", "safe-lucb")
    assert process.returncode == 2 and process.stderr.count("\n") == 1 and "action_set.kind" in process.stderr


# ---------------------------------------------------------------- safety over seeds


@pytest.mark.parametrize("path, algo, extra, code", [
    (AMANI_A, "safe-lucb", ["--T", "1500", "--exploration", "200"], 0),
    (AMANI_A, "safe-lucb", ["--T", "1500", "--exploration", "0"], 0),
    (AMANI_B, "safe-lucb", ["--T", "1500", "--exploration", "0"], 0),
    (AMANI_B, "safe-lucb", ["--T", "1500"], 0),
    (SOARE, "safe-lingape", ["--budget", "2500"], 1),
    (SOARE, "safe-lingape", ["--budget", "2500", "--updates", "dynamic"], 1),
])
def test_safe_algorithms_never_act_unsafely_over_20_seeds(cli, path, algo, extra, code):
    """Every shipped safe instance, short horizons (--T for regret, --budget for BAI)."""
    runs = solve_json(cli, path, "--algo", algo, *extra, "--runs", "20", code=code)["runs"]
    assert len(runs) == 20 and all(run["violations"] == 0 for run in runs)


def test_plain_lingape_pulls_unsafely_on_soare_safe(cli):
    runs = solve_json(cli, SOARE, "--algo", "lingape", "--budget", "300", "--runs", "5", code=1)["runs"]
    assert all(run["violations"] > 0 for run in runs)


# ---------------------------------------------------------------- listings and help


def test_algorithms_lists_the_safe_algorithms(cli):
    from cbai_cli.algorithms.registry import names_for

    result = cli("algorithms")
    assert result.exit_code == 0
    for name in names_for("safe-regret") + names_for("safe-bai"):
        assert name in result.stdout
    assert "safe-regret" in result.stdout and "safe-bai" in result.stdout


def test_solve_help_lists_the_safe_algorithms_and_options(cli):
    from cbai_cli.algorithms.registry import entries, names_for
    from cbai_cli.contracts.options import OPTIONS

    text = " ".join(cli("solve", "--help").stdout.split())
    safe = names_for("safe-regret") + names_for("safe-bai")
    for name in safe:
        assert name in text
    for option in {option for name in safe for option in entries()[name].options}:
        assert OPTIONS[option].flag in text


def test_safe_lucb_set_options_reach_the_algorithm(cli):
    """--intersect, --dw and --confidence-set are Safe-LUCB's §2.5 variants: the options in
    effect are reported, the title names them, and the run stays safe."""
    result = cli("solve", AMANI_B, "--algo", "safe-lucb", "--T", "2000", "--exploration", "0", "--intersect",
                 "--dw", "ellipsoid", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["options"]["intersect"] is True and document["options"]["dw"] == "ellipsoid"
    assert document["runs"][0]["violations"] == 0
    plain = json.loads(cli("solve", AMANI_B, "--algo", "safe-lucb", "--T", "2000", "--exploration", "0",
                           "--json").stdout)
    assert plain["runs"][0]["regret"] != document["runs"][0]["regret"]
    table = cli("solve", AMANI_B, "--algo", "safe-lucb", "--T", "2000", "--exploration", "0", "--intersect")
    assert "intersected polytopes" in " ".join(table.stdout.split())


def test_heuristic_exploration_decides_its_length_during_the_run(cli):
    """--exploration heuristic (a plug-in rule, not the paper's): T' is reported per run, at
    most the budget ⌈T_0⌉ given in the options, and the note says it is not the paper's."""
    result = cli("solve", AMANI_B, "--algo", "safe-lucb", "--T", "3000", "--exploration", "heuristic", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["options"]["exploration_rounds"] is None
    assert 0 < document["runs"][0]["exploration_rounds"] <= document["options"]["exploration_budget"]
    assert any("not the paper's" in note for note in document["notes"])


def test_safe_lingape_capped_during_forced_exploration_is_not_called_lingape(cli):
    """The note told LinGapE apart by a γ̄ that Safe-LinGapE has not yet estimated during forced
    exploration, and said it ignored safety."""
    result = cli("solve", SOARE, "--algo", "safe-lingape", "--budget", "300")
    assert result.exit_code == 1, result.stderr
    text = " ".join(result.stdout.split())
    assert "ignoring safety" not in text
    assert ("safe-lingape: the run reached the pull cap during forced exploration (T_FE = 800 pulls), pulling arms at "
            "γ_FE = 0.2 only, so no safe scale γ̄ was estimated") in text


def test_safe_lucb_note_says_when_the_horizon_caps_the_gap_exploration(cli):
    notes = solve_json(cli, AMANI_A, "--algo", "safe-lucb", "--T", "1000")["notes"]
    assert notes[0].startswith("exploration gap (the default when Δ > 0): T' = min(⌈T_Δ⌉ = 7,823, T) = 1,000 from")
    assert "the horizon T = 1,000 caps the exploration: every round explores" in notes


def test_safe_lucb_notes_an_exploration_count_beyond_the_horizon(cli):
    notes = solve_json(cli, AMANI_A, "--algo", "safe-lucb", "--T", "1500", "--exploration",
                       "99999999999999999999999")["notes"]
    assert "--exploration 1e+23 is more than the horizon T = 1,500: T' = T, every round explores" in notes
