"""`cbai session ask` driven through a pipe by a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from cbai_cli.session import Session
from tests.session.conftest import ROOT


def test_ask_records_each_answer_says_a_bad_one_and_stops_on_q(tmp_path, cbai_process, binary_file):
    study = tmp_path / "s.db"
    assert cbai_process("session", "start", binary_file, "--algo", "g-acol", "-o", study).returncode == 0
    asked = cbai_process("session", "ask", study, input="yes\nmaybe\nno\nq\n")
    assert asked.returncode == 0, asked.stderr
    assert "not recorded: 'maybe' is not a binary observation" in asked.stdout
    assert "Resume with: cbai session ask" in asked.stdout
    log = json.loads(cbai_process("session", "log", study, "--json").stdout)["records"]
    assert [entry["value"] for entry in log] == [1.0, -1.0]
    assert [entry["id"] for entry in log] == [1, 2]


def test_ask_runs_until_done_and_json_prints_the_final_status(tmp_path, cbai_process, instance_file):
    study = tmp_path / "s.db"
    assert cbai_process("session", "start", instance_file, "--algo", "g-acol", "-o", study).returncode == 0
    answers = "".join(f"{value}\n" for value in np.full(200, -0.5))
    asked = cbai_process("session", "ask", study, "--json", "--undo-seconds", "0", input=answers)
    assert asked.returncode == 0, asked.stderr
    final = json.loads(asked.stdout)
    assert final["done"] and 0 < final["answered"] < 200 and final["recommended"] in range(5)
    assert "done (stopped by its rule)" in asked.stderr


def test_ask_on_a_driver_instance_draws_the_trajectory_to_judge(tmp_path, cbai_process):
    policies = tmp_path / "policies.npy"
    np.save(policies, np.random.default_rng(0).uniform(-1, 1, (3, 20, 2)))
    driver = tmp_path / "driver.npz"
    assert cbai_process("driver-arms", "--policies", policies, "-o", driver, "-q").returncode == 0
    study = tmp_path / "drive.db"
    assert cbai_process("session", "start", driver, "--algo", "g-acol", "-o", study).returncode == 0
    asked = cbai_process("session", "ask", study, "--pictures", tmp_path, input="no\nq\n")
    assert asked.returncode == 0, asked.stderr
    assert f"picture: {tmp_path / 'drive-query-1.png'}" in asked.stdout
    assert (tmp_path / "drive-query-1.png").stat().st_size > 1000


def _stopped_while_asking(study, binary_file, answers, signum) -> tuple[int, str, str]:
    """Start a study, answer ``answers`` in `cbai session ask`, send ``signum`` while the
    next question waits; (exit code, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run([sys.executable, "-m", "cbai_cli", "session", "start", str(binary_file), "--algo", "g-acol",
                    "-o", str(study)], check=True, capture_output=True, env=env)
    asking = subprocess.Popen([sys.executable, "-m", "cbai_cli", "session", "ask", str(study)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for value in answers:
        _read_until_prompt(asking.stdout)
        asking.stdin.write(value + "\n")
        asking.stdin.flush()
    _read_until_prompt(asking.stdout)  # the next question is waiting for an answer
    asking.send_signal(signum)
    rest, errors = asking.communicate(timeout=120)
    return asking.returncode, rest, errors


def test_ctrl_c_while_waiting_for_an_answer_keeps_every_recorded_answer(tmp_path, binary_file):
    study = tmp_path / "s.db"
    code, rest, errors = _stopped_while_asking(study, binary_file, ("yes", "no", "yes"), signal.SIGINT)
    assert code == 130, errors
    assert "Resume with: cbai session ask" in rest
    assert "cbai: interrupted" in errors and "Traceback" not in errors
    with Session.open(study) as session:
        status = session.status()
        assert status.answered + status.held == 3  # answers in their undo grace are told when it ends
        assert [row["value"] for row in session.records()] == [1.0, -1.0, 1.0]


def _read_until_prompt(stream) -> None:
    """Reads the child's output up to the end of an answer prompt (which has no newline)."""
    seen = ""
    while not seen.endswith("q to stop): "):
        char = stream.read(1)
        assert char, f"the child ended before prompting; it printed {seen!r}"
        seen += char


def test_ask_with_standard_input_closed_is_one_line(tmp_path, cbai_process, binary_file):
    study = tmp_path / "s.db"
    assert cbai_process("session", "start", binary_file, "--algo", "g-acol", "-o", study).returncode == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    asked = subprocess.run(f"{sys.executable} -m cbai_cli session ask {study} <&-", shell=True, capture_output=True,
                           text=True, env=env)
    assert asked.returncode == 2
    assert asked.stderr == "cbai: error: standard input is closed: there is nothing to read answers from\n"


def test_ask_stops_in_one_line_when_the_study_cannot_be_written(tmp_path, cbai_process, binary_file, monkeypatch):
    import io
    import sqlite3

    from cbai_cli.session import interactive, journal
    from cbai_cli.session.journal import StudyFileError

    study = tmp_path / "s.db"
    assert cbai_process("session", "start", binary_file, "--algo", "g-acol", "-o", study).returncode == 0
    monkeypatch.setattr(journal, "BUSY_TIMEOUT_MS", 50)
    holder = sqlite3.connect(study, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StudyFileError, match="locked"):
            interactive.run(study, io.StringIO("yes\nno\n"), io.StringIO())
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_sigterm_while_waiting_for_an_answer_says_so_and_keeps_every_answer(tmp_path, binary_file):
    study = tmp_path / "s.db"
    code, rest, errors = _stopped_while_asking(study, binary_file, ("yes", "no"), signal.SIGTERM)
    assert code == 143, errors
    assert "Resume with: cbai session ask" in rest
    assert errors.strip().splitlines()[-1] == "cbai: terminated" and "Traceback" not in errors
    with Session.open(study) as session:
        assert [row["value"] for row in session.records()] == [1.0, -1.0]
