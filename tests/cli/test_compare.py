"""``cbai compare`` end to end: tables, JSON, CSV, plots, stores, study files, errors, Ctrl-C."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cbai_cli.compare.records import RECORD_KEYS

GRID = ("irrelevant-dims:d=3,eps=0.2|0.3", "regret-1d", "--algos", "g-acol:tuned:beta=0.25,maxrew-u:tuned:beta=0.25",
        "--seeds", "3", "--jobs", "1", "--no-bounds")


def compare_json(cli, *args) -> dict:
    result = cli("compare", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_table_per_group_lists_every_algorithm(cli):
    result = cli("compare", *GRID)
    assert result.exit_code == 0, result.stderr
    for title in ("irrelevant-dims:d=3,eps=0.2", "irrelevant-dims:d=3,eps=0.3", "regret-1d"):
        assert title in result.stdout
    assert result.stdout.count("g-acol:tuned:beta=0.25") == 3 and "median" in result.stdout and "100%" in result.stdout


def test_table_shows_the_ratio_to_the_lower_bound(cli):
    result = cli("compare", "regret-1d", "--algos", "g-acol:tuned:beta=0.25", "--seeds", "2", "--jobs", "1")
    assert result.exit_code == 0, result.stderr
    assert "× lower bound" in result.stdout and "lower bound (Thm 1" in result.stdout


def test_json_has_records_and_summary_with_the_stable_keys(cli):
    document = compare_json(cli, *GRID)
    assert len(document["records"]) == 3 * 3 * 2
    assert {"instance", "algorithm", "regime", "seed", "iterations", "recommended", "correct", "violation", "stopped",
            "wall_s"} <= set(document["records"][0])
    assert len(document["summary"]) == 3 * 2
    assert {"median", "q25", "q75", "fraction_correct"} <= set(document["summary"][0])


def test_json_summary_medians_match_the_records(cli):
    document = compare_json(cli, *GRID)
    for row in document["summary"]:
        runs = sorted(record["iterations"] for record in document["records"]
                      if record["group"] == row["group"] and record["spec"] == row["algorithm"])
        assert row["median"] == runs[1] and row["fraction_correct"] == 1.0


def test_csv_has_the_record_keys_as_header_and_a_row_per_run(cli):
    result = cli("compare", *GRID, "--csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 18 and tuple(rows[0]) == RECORD_KEYS
    assert {row["stopped"] for row in rows} == {"solved"}


def test_from_store_shows_the_same_results_without_running(cli, tmp_path):
    out = tmp_path / "runs.sqlite"
    ran = compare_json(cli, *GRID, "--out", out)
    shown = compare_json(cli, "--from", out)
    assert shown["summary"] == ran["summary"] and shown["records"] == ran["records"]


def test_title_option_titles_tables_shown_from_a_store(cli, tmp_path):
    out = tmp_path / "runs.jsonl"
    assert cli("compare", *GRID, "--out", out).exit_code == 0
    result = cli("compare", "--from", out, "--title", "Figure 3, once more")
    assert result.exit_code == 0 and result.stdout.startswith("Figure 3, once more")


def test_shard_stores_merge_into_one_store_equal_to_a_whole_run(cli, tmp_path):
    from cbai_cli.compare.records import stable_part

    whole = compare_json(cli, *GRID)["records"]
    for index in (1, 2):
        assert cli("compare", *GRID, "--shard", f"{index}/2", "--out", tmp_path / f"shard{index}.jsonl").exit_code == 0
    merged = compare_json(cli, "--from", tmp_path / "shard1.jsonl", "--from", tmp_path / "shard2.jsonl",
                          "--out", tmp_path / "all.sqlite")
    assert [stable_part(record) for record in merged["records"]] == [stable_part(record) for record in whole]
    assert len(compare_json(cli, "--from", tmp_path / "all.sqlite")["records"]) == len(whole)


def test_rerun_with_the_same_store_says_what_it_skips(cli, tmp_path):
    out = tmp_path / "runs.jsonl"
    cli("compare", *GRID, "--out", out)
    again = cli("compare", *GRID, "--out", out)
    assert again.exit_code == 0 and "18 of 18 runs already stored" in again.stderr


LONG = ("regret-1d", "--algos", "acol", "--subgaussian", "20000", "--seeds", "3", "--jobs", "1", "--no-bounds")


def test_a_request_estimated_past_a_billion_queries_is_warned_once_not_once_per_seed(cli):
    result = cli("compare", *LONG, "--json", "--quiet")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("cbai: warning: algorithm spec 'acol' on regret-1d: deciding arm 2 will take ")
    assert result.stderr.count("\n") == 1 and len(json.loads(result.stdout)["records"]) == 3


def test_a_request_whose_runs_are_all_stored_is_not_warned_again(cli, tmp_path):
    out = tmp_path / "runs.jsonl"
    assert cli("compare", *LONG, "--out", out, "--quiet").exit_code == 0
    again = cli("compare", *LONG, "--out", out, "--quiet")
    assert again.exit_code == 0 and again.stderr == ""


def test_quiet_writes_nothing_on_stderr(cli, tmp_path):
    out = tmp_path / "runs.jsonl"
    cli("compare", *GRID, "--out", out)
    assert cli("compare", *GRID, "--out", out, "--quiet").stderr == ""


def _other_lines(stderr: str) -> str:
    """stderr without the lines that say a spec's regime carries no guarantee."""
    return "".join(line for line in stderr.splitlines(keepends=True) if "no correctness guarantee" not in line)


def test_no_progress_bar_when_stderr_is_not_a_terminal(cli):
    result = cli("compare", *GRID)
    assert result.exit_code == 0 and _other_lines(result.stderr) == ""


def test_plot_option_writes_a_png(cli, tmp_path):
    plot = tmp_path / "figure.png"
    result = cli("compare", *GRID, "--plot", plot)
    assert result.exit_code == 0, result.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_study_file_runs_and_command_line_seeds_win(cli, tmp_path):
    study = tmp_path / "study.yaml"
    study.write_text("title: small study\nsources: [regret-1d]\nalgorithms: [g-acol:tuned]\nseeds: 5\n"
                     "options: {beta: 0.25}\n")
    document = compare_json(cli, "--config", study, "--seeds", "2", "--jobs", "1", "--no-bounds")
    assert [record["seed"] for record in document["records"]] == [0, 1]


def test_budget_stops_are_data_not_failures(cli):
    result = cli("compare", "regret-1d", "--algos", "maxrew-f:tuned:beta=0.25", "--budget", "20", "--seeds", "2",
                 "--jobs", "1", "--no-bounds", "--json")
    assert result.exit_code == 0
    assert {record["stopped"] for record in json.loads(result.stdout)["records"]} == {"budget"}


@pytest.mark.parametrize("args, message", [
    (["regret-1d", "--algos", "acl"], "did you mean 'acol'"),
    (["irrelevant-dims:d=3,eps", "--algos", "uniform"], "expected OPTION=VALUE"),
    (["irrelevant-dims:d=3|4,eps=0.1|0.2", "--algos", "uniform"], "only one parameter"),
    (["regret-1d", "--algos", "acol:tuned:beta=0.25"], "cannot use regime 'tuned'"),
    (["regret-1d", "--algos", "g-acol:tuned"], "needs --beta"),
    (["regret-1d", "--algos", "uniform", "--shard", "3/2"], "--shard"),
    (["regret-1d", "--algos", "uniform", "--plot", "figure.gif"], "--plot"),
    (["regret-1d", "--algos", "uniform", "--json", "--csv"], "choose one"),
    (["regret-1d", "--algos", "uniform", "--jobs", "0"], "--jobs"),
    (["--algos", "uniform"], "no sources"),
    (["regret-1d"], "no algorithms"),
    (["regret-1d", "--algos", "safe-lucb"], "runs on safe-regret instances, and no source is one"),
    (["amani-a:T=100", "--algos", "safe-lucb:theory"], "has no confidence regime"),
    (["amani-a:T=100", "--algos", "safe-lucb:intersect=yes,confidence-set=ellipsoid"], "finite action sets only"),
    (["amani-a:T=100,sigma=0.1", "--algos", "safe-lucb"], "noise= and sigma= do not apply"),
])
def test_bad_request_fails_before_any_run(cli, tmp_path, args, message):
    out = tmp_path / "runs.jsonl"
    result = cli("compare", *args, "--out", out)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert not out.exists() and result.stdout == ""


def test_unwritable_out_fails_before_any_run(cli, tmp_path):
    result = cli("compare", "regret-1d", "--algos", "uniform", "--out", tmp_path / "missing" / "runs.jsonl")
    assert result.exit_code == 2 and "does not exist" in result.stderr and result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_unknown_store_type_fails_before_any_run(cli, tmp_path):
    result = cli("compare", "regret-1d", "--algos", "uniform", "--out", tmp_path / "runs.csv")
    assert result.exit_code == 2 and "unknown store type" in result.stderr


SMALL = ("compare", "regret-1d", "--algos", "uniform", "--seeds", "1", "--jobs", "1", "--no-bounds")


def test_compare_out_ending_in_a_slash_is_refused(cli, tmp_path):
    result = cli(*SMALL, "--out", f"{tmp_path / 'runs.jsonl'}/")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and result.stdout == ""
    assert "--out" in result.stderr and "ends with a slash" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_compare_plot_ending_in_a_slash_is_refused(cli, tmp_path):
    result = cli(*SMALL, "--out", tmp_path / "runs.jsonl", "--plot", f"{tmp_path / 'figure.png'}/")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and result.stdout == ""
    assert "--plot" in result.stderr and "ends with a slash" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--out", "--plot"])
def test_compare_output_given_as_an_empty_path_is_refused(cli, tmp_path, monkeypatch, option):
    monkeypatch.chdir(tmp_path)  # an empty path read as a path is this folder
    result = cli(*SMALL, option, "")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and result.stdout == ""
    assert f"{option} '': an empty path names no file" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_from_takes_no_sources(cli, tmp_path):
    result = cli("compare", "regret-1d", "--from", tmp_path / "runs.jsonl")
    assert result.exit_code == 2 and "--from" in result.stderr


def test_from_an_empty_store_with_plot_says_there_is_nothing_to_show(cli, tmp_path):
    store = tmp_path / "runs.jsonl"
    store.write_text("")
    plot = tmp_path / "figure.png"
    result = cli("compare", "--from", store, "--plot", plot)
    assert result.exit_code == 2 and result.stderr == f"cbai: error: --from {store}: no run records to show\n"
    assert not plot.exists()


@pytest.mark.parametrize("name, content, reason", [
    ("runs.jsonl", b"these are not records\n", "not a cbai store: no line is a run record"),
    ("runs.sqlite", b"these are not records\n" * 10, "file is not a database"),
])
def test_from_a_file_of_garbage_is_one_line(cli, tmp_path, name, content, reason):
    (tmp_path / name).write_bytes(content)
    result = cli("compare", "--from", tmp_path / name)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and reason in result.stderr and name in result.stderr


def test_out_into_another_programs_database_fails_before_any_run(cli, tmp_path):
    import sqlite3

    out = tmp_path / "app.sqlite"
    with sqlite3.connect(out) as connection:
        connection.execute("CREATE TABLE users (id INTEGER)")
    result = cli("compare", "regret-1d", "--algos", "uniform", "--out", out)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"cbai: error: --out {out}: not a cbai store: it holds the table(s) users and no "
                             "table runs\n")


def long_compare_with_a_first_record(out) -> subprocess.Popen:
    """A 20,000-run compare on two workers in its own session, once its store holds a record."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cbai_cli", "compare", "regret-1d", "--algos", "maxrew-f:tuned:beta=0.25", "--seeds",
         "20000", "--jobs", "2", "--no-bounds", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while (not out.exists() or out.stat().st_size == 0) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    return process


def test_ctrl_c_stops_and_leaves_a_valid_store(tmp_path):
    from cbai_cli.compare.store import read_store

    out = tmp_path / "runs.jsonl"
    process = long_compare_with_a_first_record(out)
    # A terminal sends Ctrl-C to the whole foreground process group, workers included.
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    contents = read_store(out)
    assert process.returncode == 130 and "run the same command again to resume" in stderr
    assert contents.skipped_lines == 0 and 0 < len(contents.records) < 20000


def test_sigterm_stops_the_workers_and_leaves_a_valid_store(tmp_path):
    """A job scheduler's cancel (SIGTERM to the parent only) must not leave orphan workers."""
    from cbai_cli.compare.store import read_store

    out = tmp_path / "runs.jsonl"
    process = long_compare_with_a_first_record(out)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    contents = read_store(out)
    assert process.returncode == 143 and "run the same command again to resume" in stderr
    assert contents.skipped_lines == 0 and 0 < len(contents.records) < 20000
    # Every process of the session goes: the workers are terminated with the parent
    # (they would otherwise compute on as orphans for as long as their batches last).
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)



def worker_processes(parent: int) -> list[int]:
    """The pids of the spawned worker processes of ``parent`` (Linux's /proc)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [int(pid) for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the workers through Linux's /proc")
def test_a_killed_worker_ends_compare_with_one_error_line_and_a_valid_store(tmp_path):
    """The out-of-memory killer's SIGKILL to a worker: multiprocessing.Pool waited forever for its batch."""
    from cbai_cli.compare.store import read_store

    out = tmp_path / "runs.jsonl"
    process = long_compare_with_a_first_record(out)
    victim = worker_processes(process.pid)[0]
    os.kill(victim, signal.SIGKILL)
    _, stderr = process.communicate(timeout=60)
    contents = read_store(out)
    assert process.returncode == 2
    assert stderr.splitlines()[-1] == (f"cbai: error: worker process {victim} was killed by SIGKILL (the system may "
                                       "have run out of memory) before finishing its runs")
    assert "run the same command again to resume" in stderr
    assert contents.skipped_lines == 0 and 0 < len(contents.records) < 20000

SAFE_GRID = ("amani-a:T=1000", "soare-safe", "--algos", "safe-lucb:exploration=100,lingape:budget=2000",
             "--seeds", "2", "--jobs", "1")


def test_safe_kinds_get_tables_with_their_own_measures(cli):
    result = cli("compare", *SAFE_GRID)
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "cumulative regret R_T" in text and "unsafe actions" in text
    assert "pulls until the stopping rule fired" in text and "unsafe pulls" in text


def test_safe_kinds_in_json_carry_their_metric_and_regret_curves(cli):
    document = compare_json(cli, *SAFE_GRID)
    assert {row["algorithm"]: row["metric"] for row in document["summary"]} == {
        "safe-lucb:exploration=100": "regret", "lingape:budget=2000": "pulls"}
    curves = [record["regret_curve"] for record in document["records"] if record["kind"] == "safe-regret"]
    assert len(curves) == 2 and all(curve[-1][0] == 1000 for curve in curves)


def test_safe_regret_curves_are_plotted(cli, tmp_path):
    plot = tmp_path / "regret.png"
    result = cli("compare", *SAFE_GRID, "--plot", plot)
    assert result.exit_code == 0, result.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_safe_regret_curves_fit_in_a_csv_cell(cli):
    result = cli("compare", *SAFE_GRID, "--csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    curve = json.loads(next(row for row in rows if row["kind"] == "safe-regret")["regret_curve"])
    assert curve[-1][0] == 1000


@pytest.mark.parametrize("suffix", ["sqlite", "jsonl"])
def test_safe_records_are_stored_and_a_rerun_skips_them(cli, tmp_path, suffix):
    out = tmp_path / f"safe.{suffix}"
    first = compare_json(cli, *SAFE_GRID, "--out", out)
    again = cli("compare", *SAFE_GRID, "--out", out, "--json")
    assert again.exit_code == 0 and "4 of 4 runs already stored" in again.stderr
    assert json.loads(again.stdout)["summary"] == first["summary"]


def test_second_compare_on_a_jsonl_store_being_written_is_refused_with_the_writers_pid(tmp_path, cbai_process):
    """Two commands on one JSON Lines store would run the same runs and store them twice."""
    out = tmp_path / "runs.jsonl"
    first = long_compare_with_a_first_record(out)
    try:
        second = cbai_process("compare", "regret-1d", "--algos", "maxrew-f:tuned:beta=0.25", "--seeds", "20000",
                              "--jobs", "1", "--no-bounds", "--out", out)
    finally:
        os.killpg(first.pid, signal.SIGINT)
        first.communicate(timeout=60)
    assert second.returncode == 2 and second.stdout == "" and "Traceback" not in second.stderr
    pid = f" (pid {first.pid})" if os.path.exists("/proc/locks") else ""
    assert second.stderr == (f"cbai: error: --out {out} is being written by another cbai compare{pid}; wait for it "
                             "to finish or use another --out file\n")


def test_forced_bounds_are_capped(cli, tmp_path, monkeypatch):
    path = tmp_path / "random.npz"
    # One round certifies H_CLB of this instance only to within 8 % (its Theorem 1 bound is all compare keeps).
    assert cli("generate", "random", "--d", "10", "--n", "300", "--seed", "0", "-o", path).exit_code == 0
    args = (path, "--algos", "g-acol:tuned:beta=0.25", "--seeds", "1", "--jobs", "1")
    # A cap that has passed at the solver's first check: the certified lower end of one round.
    monkeypatch.setattr("cbai_cli.contracts.options.FORCED_BOUND_TIME_LIMIT", 1e-9)
    exact = compare_json(cli, *args)["records"][0]["lower_bound"]
    capped = compare_json(cli, *args, "--bounds")["records"][0]["lower_bound"]
    assert 0 < capped < exact * (1 - 1e-3)


def test_a_title_is_printed_without_its_markup_or_control_characters(cli, instance_file):
    result = cli("compare", instance_file, "--algos", "acol", "--seeds", "1", "-j", "1", "-q",
                 "--title", "\x1b[2J[/bold]X")
    assert result.exit_code == 0, result.stderr
    assert "\x1b[2J" not in result.stdout and "\\x1b[2J[/bold]X" in result.stdout


EMPTY_SHARD = ("regret-1d", "--algos", "uniform", "--seeds", "1", "--jobs", "1", "--no-bounds", "--shard", "2/3")


def test_a_shard_without_runs_says_so_in_one_line(cli):
    """One instance × one seed is one cell: shards 2/3 and 3/3 (a job array larger than the grid) hold none."""
    result = cli("compare", *EMPTY_SHARD)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ("cbai compare: shard 2/3 holds no runs: the grid has 1 cell (instance group × seed) "
                             "for 3 shards; nothing to run\n")


def test_a_shard_without_runs_prints_a_valid_empty_json_document(cli):
    document = compare_json(cli, *EMPTY_SHARD)
    assert (document["records"], document["summary"], document["schema"]) == ([], [], 1)


def _beta_of_the_run(result) -> float:
    assert result.exit_code == 0, result.stderr
    [record] = json.loads(result.stdout)["records"]
    return record["beta"]


def test_a_flag_that_a_spec_sets_otherwise_is_named_as_overridden_by_the_spec(cli):
    result = cli("compare", "regret-1d", "--algos", "g-acol:tuned:beta=0.5", "--beta", "0.25", "--seeds", "1",
                 "--jobs", "1", "--no-bounds", "--json")
    assert _beta_of_the_run(result) == 0.5  # the documented rule: a value written in a spec always applies
    assert _other_lines(result.stderr) == ("cbai compare: algorithm spec 'g-acol:tuned:beta=0.5' runs with its own beta=0.5, "
                             "not --beta 0.25 (a value written in a spec wins over one given for all algorithms)\n")


def test_a_study_option_that_a_spec_sets_otherwise_is_named_as_overridden_by_the_spec(cli, tmp_path):
    study = tmp_path / "study.yaml"
    study.write_text("sources: [regret-1d]\nalgorithms: ['g-acol:tuned:beta=0.5']\nseeds: 1\noptions: {beta: 0.25}\n")
    result = cli("compare", "--config", study, "--jobs", "1", "--no-bounds", "--json")
    assert _beta_of_the_run(result) == 0.5
    assert _other_lines(result.stderr) == (f"cbai compare: algorithm spec 'g-acol:tuned:beta=0.5' runs with its own beta=0.5, "
                             f"not beta: 0.25 of the options of {study} (a value written in a spec wins over one "
                             "given for all algorithms)\n")


def test_a_flag_equal_to_the_value_a_spec_sets_is_not_reported(cli):
    result = cli("compare", "regret-1d", "--algos", "g-acol:tuned:beta=0.5", "--beta", "0.5", "--seeds", "1",
                 "--jobs", "1", "--no-bounds", "--json")
    assert _beta_of_the_run(result) == 0.5 and _other_lines(result.stderr) == ""


def test_a_spec_without_a_guarantee_is_said_once_before_the_runs(cli):
    result = cli("compare", "irrelevant-dims:d=4,eps=0.2", "--algos", "g-acol:tuned:beta=0.25,adaptive_tuned,g-acol",
                 "--seeds", "2", "--no-bounds")
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "no correctness guarantee" in line]
    assert warnings == ["cbai: warning: algorithm spec 'g-acol:tuned:beta=0.25': tuned intervals carry no correctness "
                        "guarantee", "cbai: warning: algorithm spec 'adaptive_tuned': tuned intervals carry no "
                        "correctness guarantee"]


def test_forced_bounds_that_cannot_fit_in_memory_are_one_line(cli, monkeypatch):
    monkeypatch.setattr("cbai_cli.kinds.cbai.bounds.memory_limit", lambda: 1279)  # regret-1d: 64 · (10 + 10) · 1 = 1,280 bytes
    result = cli("compare", "regret-1d", "--algos", "g-acol", "--seeds", "1", "--jobs", "1", "--bounds")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == ("cbai: error: --bound: the bounds' design solves over K = 10 arms in d = 1 dimensions "
                             "would hold about 1,280 bytes, more than the limit of 1,279 bytes (CBAI_MEMORY_LIMIT raises it); leave out --bound "
                             "(--bounds in compare) to run without them\n")


def test_declared_options_name_the_library_defaults():
    """COMPARE_OPTIONS are parameters of CompareSettings or compare_command, and their help
    names the library's defaults."""
    import dataclasses
    import inspect

    from cbai_cli.compare.claims import DEFAULT_LEASE
    from cbai_cli.compare.command import COMPARE_OPTIONS, compare_command
    from cbai_cli.compare.plan import DEFAULT_SEEDS
    from cbai_cli.compare.study import CompareSettings

    assert f"(default {DEFAULT_SEEDS})" in COMPARE_OPTIONS["seeds"].help
    assert f"(default {DEFAULT_LEASE:g})" in COMPARE_OPTIONS["lease"].help
    names = {field.name for field in dataclasses.fields(CompareSettings)}
    assert set(COMPARE_OPTIONS) <= names | set(inspect.signature(compare_command).parameters)
