"""``cbai solve`` end to end."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

RUN_KEYS = {"seed", "iterations", "recommended", "correct", "violation", "stopped", "wall_s"}


def solve_json(cli, *args):
    result = cli("solve", *args, "--json")
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_solve_json_has_the_stable_keys(cli, instance_file):
    document = solve_json(cli, instance_file, "--algo", "acol")
    assert {"algorithm", "regime", "delta", "instance", "runs", "h_clb", "lower_bound", "prop1_bound"} <= set(document)
    assert RUN_KEYS <= set(document["runs"][0])
    assert document["runs"][0]["correct"] and document["runs"][0]["recommended"] == 3


@pytest.mark.parametrize("name", ["regret-1d.yaml", "soare-safe.yaml"])
def test_solve_json_names_the_content_hash_of_the_instance_solved(cli, name):
    from cbai_cli.kinds import load

    path = Path(__file__).resolve().parents[2] / "instances" / name
    assert solve_json(cli, path, "--runs", "1")["instance_hash"] == load(path).content_hash


def test_solve_json_leaves_the_hash_of_a_large_instance_out(cli, monkeypatch):
    monkeypatch.setattr("cbai_cli.kinds.cbai.kind.SOLVE_HASH_ENTRIES", 9)  # regret-1d has K·d = 10 entries
    path = Path(__file__).resolve().parents[2] / "instances" / "regret-1d.yaml"
    assert solve_json(cli, path, "--runs", "1")["instance_hash"] is None


def test_runs_equal_single_runs_with_those_seeds(cli, instance_file):
    many = solve_json(cli, instance_file, "--algo", "g-acol", "--runs", "3", "--seed", "5")["runs"]
    for offset, run in enumerate(many):
        single = solve_json(cli, instance_file, "--algo", "g-acol", "--seed", str(5 + offset))["runs"][0]
        assert (single["seed"], single["iterations"], single["recommended"]) == (run["seed"], run["iterations"], run["recommended"])


def test_table_shows_summary_row_for_several_runs(cli, instance_file):
    result = cli("solve", instance_file, "--algo", "uniform", "--runs", "3")
    assert result.exit_code == 0
    assert "all" in result.stdout and "H_CLB" in result.stdout


def test_budget_exhaustion_exits_with_code_one(cli, instance_file):
    result = cli("solve", instance_file, "--algo", "maxrew-f", "--budget", "200", "--json")
    assert result.exit_code == 1
    run = json.loads(result.stdout)["runs"][0]
    assert run["stopped"] == "budget" and run["iterations"] == 200


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_trace_has_one_line_per_query(cli, instance_file, tmp_path, suffix):
    trace = tmp_path / f"trace.{suffix}"
    document = solve_json(cli, instance_file, "--algo", "acol", "--trace", trace)
    lines = trace.read_text().splitlines()
    if suffix == "csv":
        rows = list(csv.DictReader(lines))
    else:
        rows = [json.loads(line) for line in lines]
    assert len(rows) == document["runs"][0]["iterations"]
    assert {"step", "arm", "observation", "uncertain", "feasible", "recommendation"} <= set(rows[0])
    assert int(rows[-1]["uncertain"]) == 0


def test_trace_does_not_change_the_result(cli, instance_file, tmp_path):
    plain = solve_json(cli, instance_file, "--algo", "g-acol-uniform", "--seed", "3")["runs"][0]
    traced = solve_json(cli, instance_file, "--algo", "g-acol-uniform", "--seed", "3", "--trace", tmp_path / "t.csv")["runs"][0]
    assert plain["iterations"] == traced["iterations"]


class OneSplitPerQuery:
    """The trace rows as cbai made them before traces were streamed: each query's sums split
    into observations in one draw per arm (``standard_normal(n)`` and its mean; a
    permutation of the ±1 values), every row kept until the run ends."""

    def __init__(self, noise, rng) -> None:
        self.noise, self.rng, self.rows, self.before = noise, rng, [], ()

    @staticmethod
    def state(learner):
        return int(learner.state.uncertain.sum()), int(learner.state.feasible.sum()), learner.recommendation()

    def asked(self, query, learner) -> None:
        self.before = self.state(learner)

    def split(self, total, n):
        if self.noise.kind == "gaussian":
            z = self.rng.standard_normal(n)
            return total / n + self.noise.sigma * (z - z.mean())
        values = -np.ones(n)
        values[:int(round((total + n) / 2))] = 1.0
        return self.rng.permutation(values)

    def told(self, query, answer, learner, used) -> None:
        after = self.state(learner)
        observations = [self.split(total, n) for total, n in zip(answer.constraint, query.counts)]
        flat = [(int(arm), float(value)) for arm, values in zip(query.arms, observations) for value in values]
        for offset, (arm, value) in enumerate(flat):
            self.rows.append((used + offset + 1, arm, value, *(after if offset == len(flat) - 1 else self.before)))


def trace_written_at_once(path, request, seed: int, suffix: str) -> bytes:
    """The trace file of ``cbai solve PATH --seed SEED`` as written before traces were streamed."""
    from cbai_cli.kinds import load
    from cbai_cli.run.simulate import drive, prepare, run_streams, start_run
    from cbai_cli.run.solving import TRACE_COLUMNS

    prepared = prepare(request, load(path))
    learner, environment, _ = start_run(prepared, seed)
    tracer = OneSplitPerQuery(prepared.instance.noise, run_streams(seed)[2])
    drive(learner, environment, prepared.budget, tracer)
    text = io.StringIO()
    if suffix == "csv":
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(TRACE_COLUMNS)
        writer.writerows(tracer.rows)
    else:
        text.writelines(json.dumps(dict(zip(TRACE_COLUMNS, row))) + "\n" for row in tracer.rows)
    return text.getvalue().encode()


SHIPPED = Path(__file__).resolve().parents[2] / "instances"
TRACED = [  # round-based (whole rounds per query) and adaptive algorithms, Gaussian and ±1 noise
    ("regret-1d.yaml", "acol", {"subgaussian": 3.0}, 0),
    ("irrelevant-dims-d10-eps0.05.yaml", "uniform", {}, 2),
    ("irrelevant-dims-d10-eps0.05.yaml", "oracle", {}, 0),
    ("random-d5-n20-seed0.yaml", "acol", {}, 4),
    ("random-d5-n20-seed0.yaml", "g-acol", {}, 0),
    ("unit-sphere-d30-n30-seed0.npz", "greedy-maxvar", {"regime": "tuned", "beta": 0.25}, 1),
    ("BINARY", "acol", {"subgaussian": 3.0}, 0),
    ("BINARY", "adaptive-uniform", {}, 1),
]


@pytest.mark.parametrize("chunk", [None, 1000], ids=["chunk-default", "chunk-1000"])
@pytest.mark.parametrize("name, algorithm, options, seed", TRACED, ids=[f"{c[0].split('.')[0]}-{c[1]}" for c in TRACED])
def test_trace_is_byte_identical_to_the_trace_written_at_once(cli, tmp_path, monkeypatch, name, algorithm, options,
                                                            seed, chunk):
    from cbai_cli.run.simulate import RunRequest

    if chunk is not None:  # rounds longer than a piece: split and written piece by piece
        monkeypatch.setattr("cbai_cli.kinds.cbai.noise.TRACE_CHUNK", chunk)
        monkeypatch.setattr("cbai_cli.run.solving.TRACE_FLUSH_CHARS", 10 * chunk)
    path = SHIPPED / name
    if name == "BINARY":
        path = tmp_path / "binary.yaml"
        assert cli("generate", "regret-1d", "--noise", "binary", "-o", path).exit_code == 0
    options = dict(options)
    regime = options.pop("regime", None)
    flags = [word for option, value in options.items() for word in (f"--{option}", str(value))]
    suffix = "jsonl" if algorithm == "uniform" else "csv"
    trace = tmp_path / f"t.{suffix}"
    result = cli("solve", path, "--algo", algorithm, *(["--regime", regime] if regime else []), *flags,
                 "--seed", seed, "--trace", trace)
    assert result.exit_code == 0, result.stderr
    assert trace.read_bytes() == trace_written_at_once(path, RunRequest.of(algorithm, regime, **options), seed, suffix)


def test_a_round_reaches_the_trace_in_pieces_of_at_most_the_chunk(monkeypatch):
    from cbai_cli.kinds import load
    from cbai_cli.run.simulate import RunRequest, prepare, run_once

    class Pieces(list):
        def extend(self, rows):
            self.append(len(rows))

    monkeypatch.setattr("cbai_cli.kinds.cbai.noise.TRACE_CHUNK", 500)
    prepared = prepare(RunRequest.of("acol", subgaussian=3.0), load(SHIPPED / "regret-1d.yaml"))
    pieces = Pieces()
    result = run_once(prepared, 0, tracer_rows=pieces)
    assert sum(pieces) == result.iterations and max(pieces) == 500


@pytest.mark.parametrize("args, message", [
    (["--algo", "acl"], "did you mean 'acol'"),
    (["--algo", "acol", "--regime", "tuned", "--beta", "0.25"], "cannot use regime"),
    (["--algo", "g-acol", "--regime", "tuned"], "needs --beta"),
    (["--algo", "acol", "--delta", "0"], "--delta"),
    (["--algo", "acol", "--delta", "1"], "--delta"),
    (["--algo", "acol", "--runs", "0"], "--runs"),
    (["--algo", "acol", "--lambda", "1"], "--lambda"),
    (["--algo", "g-acol", "--subgaussian", "-1"], "--subgaussian"),
    (["--algo", "acol", "--trace", "t.txt"], "--trace"),
    (["--algo", "acol", "--budget", "0"], "--budget"),
    (["--algo", "acol", "--seed", "-1"], "--seed must be an integer ≥ 0, got -1"),
    (["--algo", "g-acol", "--seed", "-1", "--runs", "2"], "--seed must be an integer ≥ 0, got -1"),
])
def test_solve_bad_options(cli, instance_file, args, message):
    result = cli("solve", instance_file, *args)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("content, message", [
    ("arms: [[1, 2], [3]]\nconstraint: [1, 1]\nthreshold: 0\nnoise: {kind: binary}\n", "arms"),
    ("arms: [[1, .nan]]\nreward: [1, 1]\nconstraint: [1, 1]\nthreshold: 0\nnoise: {kind: gaussian, sigma: 1}\n", "NaN"),
    ("arms: [[1, 1]]\nreward: [1, 1]\nconstraint: [1, 1]\nthreshold: 0\nnoise: {kind: binary}\n", "binary feedback"),
    ("arms: [[1, 1]]\nreward: [1, 1]\nconstraint: [1, 1]\nthreshold: 0\nnoise: {kind: gaussian, sigma: -2}\n", "sigma"),
    ("arms: [[1, 1]\n", "not valid YAML"),
])
def test_solve_bad_files(cli, tmp_path, content, message):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    result = cli("solve", path, "--algo", "acol")
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_missing_file_through_a_subprocess(cbai_process, tmp_path):
    process = cbai_process("solve", tmp_path / "nope.npz", "--algo", "acol")
    assert process.returncode == 2
    assert process.stderr.count("\n") == 1 and "no such file" in process.stderr
    assert "Traceback" not in process.stderr


def test_solve_through_a_subprocess(cbai_process, instance_file):
    process = cbai_process("solve", instance_file, "--algo", "g-acol", "--regime", "tuned", "--beta", "0.25", "--json")
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["runs"][0]["correct"]


def test_g_acol_with_the_ols_regime_answers_right(cli, instance_file):
    document = solve_json(cli, instance_file, "--algo", "g-acol", "--regime", "ols", "--runs", "2")
    assert document["regime"] == "ols"
    assert all(run["correct"] and run["stopped"] == "solved" for run in document["runs"])


def test_the_ols_regime_has_no_norm_bound(cli, instance_file):
    result = cli("solve", instance_file, "--algo", "g-acol", "--regime", "ols", "--S", "2")
    assert result.exit_code == 2 and "--S" in result.stderr


BOUND_KEYS = ("h_clb", "lower_bound", "lower_bound_noise", "lower_bound_kl", "lower_bound_kl_noise", "prop1_bound")


def test_no_bound_keeps_the_bound_keys_as_null_with_a_note(cli, instance_file):
    document = solve_json(cli, instance_file, "--algo", "g-acol", "--no-bound")
    assert all(key in document and document[key] is None for key in BOUND_KEYS)
    assert "the bounds were not computed (--no-bound)" in document["notes"]


def test_no_bound_leaves_the_runs_unchanged(cli, instance_file):
    with_bounds = solve_json(cli, instance_file, "--algo", "g-acol", "--runs", "2")
    without = solve_json(cli, instance_file, "--algo", "g-acol", "--runs", "2", "--no-bound")
    strip = lambda runs: [{k: v for k, v in run.items() if k != "wall_s"} for run in runs]  # noqa: E731
    assert strip(with_bounds["runs"]) == strip(without["runs"])
    assert with_bounds["h_clb"] is not None


def test_large_instance_skips_the_bounds_and_says_why(cli, instance_file, monkeypatch):
    monkeypatch.setattr("cbai_cli.kinds.cbai.bounds.AUTO_BOUND_ENTRIES", 7)  # fewer than the K·d of any instance
    document = solve_json(cli, instance_file, "--algo", "g-acol")
    assert all(document[key] is None for key in BOUND_KEYS)
    assert any("arm entries, more than 7 (--bound computes them" in note for note in document["notes"])
    table = cli("solve", instance_file, "--algo", "g-acol")
    assert "not computed" in table.stdout and "--bound computes them" in table.stdout


def test_bound_flag_computes_the_bounds_of_a_large_instance(cli, instance_file, monkeypatch):
    monkeypatch.setattr("cbai_cli.kinds.cbai.bounds.AUTO_BOUND_ENTRIES", 7)
    document = solve_json(cli, instance_file, "--algo", "g-acol", "--bound")
    assert all(document[key] is not None for key in BOUND_KEYS) and document["notes"] == []


def test_forced_bounds_that_cannot_fit_in_memory_are_refused_before_the_runs(cli, instance_file, monkeypatch):
    monkeypatch.setattr("cbai_cli.kinds.cbai.bounds.memory_limit", lambda: 1000)  # the designs of 5 arms in d = 4: 64 · (5 + 5) · 4 = 2,560 bytes
    import cbai_cli.run.simulate

    ran, run_batch = [], cbai_cli.run.simulate._run_batch
    monkeypatch.setattr("cbai_cli.run.simulate._run_batch", lambda *args: ran.append(args) or run_batch(*args))
    result = cli("solve", instance_file, "--algo", "g-acol", "--bound")
    assert result.exit_code == 2 and result.stdout == "" and ran == []
    assert result.stderr == ("cbai: error: --bound: the bounds' design solves over K = 5 arms in d = 4 dimensions "
                             "would hold about 2,560 bytes, more than the limit of 1,000 bytes (CBAI_MEMORY_LIMIT raises it); leave out --bound "
                             "(--bounds in compare) to run without them\n")
    assert cli("solve", instance_file, "--algo", "g-acol", "--no-bound").exit_code == 0 and len(ran) == 1


@pytest.fixture
def random_file(tmp_path, cli):
    """An instance whose design solves need several rounds (so that a cap can stop them)."""
    path = tmp_path / "random.npz"
    assert cli("generate", "random", "--d", "6", "--n", "100", "--seed", "0", "-o", path).exit_code == 0
    return path


def test_forced_bounds_are_capped_and_say_so(cli, random_file, monkeypatch):
    # A cap that has passed at the solver's first check stands in for 60 s on a large instance.
    monkeypatch.setattr("cbai_cli.contracts.options.FORCED_BOUND_TIME_LIMIT", 1e-9)
    capped = solve_json(cli, random_file, "--algo", "g-acol", "--bound")
    assert capped["time_limit_reached"] is True
    assert any("time limit of 1e-09 s was reached" in note for note in capped["notes"])
    low, high = capped["intervals"]["h_clb"]
    assert low <= high == capped["h_clb"]


def test_bounds_of_the_size_rule_are_not_capped(cli, random_file, monkeypatch):
    monkeypatch.setattr("cbai_cli.contracts.options.FORCED_BOUND_TIME_LIMIT", 1e-9)
    document = solve_json(cli, random_file, "--algo", "g-acol")
    assert document["time_limit_reached"] is False and document["notes"] == []


LONG = (SHIPPED / "regret-1d.yaml", "--algo", "acol", "--subgaussian", "20000")  # ~1.2e12 queries in rounds, < 1 s


def test_a_run_estimated_past_a_billion_queries_is_warned_on_stderr_with_json_on_stdout(cli):
    result = cli("solve", *LONG, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("cbai: warning: deciding arm 2 will take at least about 2.4e+11 queries")
    assert result.stderr.count("\n") == 1 and json.loads(result.stdout)["runs"][0]["stopped"] == "solved"


def test_a_budget_below_the_estimate_is_not_warned(cli):
    result = cli("solve", *LONG, "--budget", "1000000", "--json")
    assert result.exit_code == 1 and result.stderr == ""


def test_usual_runs_are_not_warned(cli, instance_file):
    for algorithm in ("acol", "g-acol", "track-and-stop"):
        result = cli("solve", instance_file, "--algo", algorithm)
        assert result.exit_code == 0 and result.stderr == ""
