"""A session fed the observations of a `cbai solve --trace` run asks what that run asked.

Real processes: `cbai solve --trace`, then `cbai session start`, the interactive loop
`cbai session ask` fed the trace's observations in order through a pipe (one observation
per line, exactly the sequential ask/tell protocol), and `cbai session log/status`.
Each case takes about 3 s (five Python processes).
"""

from __future__ import annotations

import csv
import json

import pytest


@pytest.mark.parametrize(("algorithm", "seed"), [
    (("g-acol", "--regime", "det"), 5),       # adaptive
    (("g-acol-uniform",), 7),                 # adaptive, draws from the algorithm's random stream
    (("acol",), 5),                           # round-based: a query per arm of each round
])
def test_session_fed_a_solve_trace_asks_the_same_arms_and_answers_the_same(tmp_path, cbai_process, instance_file,
                                                                           algorithm, seed):
    trace = tmp_path / "trace.csv"
    solved = cbai_process("solve", instance_file, "--algo", *algorithm, "--seed", seed, "--trace", trace, "--json")
    assert solved.returncode == 0, solved.stderr
    run = json.loads(solved.stdout)["runs"][0]
    with open(trace, newline="") as stream:
        rows = list(csv.DictReader(stream))
    study = tmp_path / "study.db"
    started = cbai_process("session", "start", instance_file, "--algo", *algorithm, "--seed", seed, "-o", study)
    assert started.returncode == 0, started.stderr

    # no undo grace: each answer is told at once, as in the simulated run
    asked = cbai_process("session", "ask", study, "--undo-seconds", "0",
                         input="".join(row["observation"] + "\n" for row in rows))
    assert asked.returncode == 0, asked.stderr

    log = json.loads(cbai_process("session", "log", study, "--json").stdout)["records"]
    status = json.loads(cbai_process("session", "status", study, "--json").stdout)
    assert [entry["arm"] for entry in log] == [int(row["arm"]) for row in rows]
    assert [entry["value"] for entry in log] == [float(row["observation"]) for row in rows]
    assert status["done"] and status["answered"] == run["iterations"] == len(rows)
    assert status["recommended"] == run["recommended"]
    assert status["pending"] == 0
