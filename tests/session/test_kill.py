"""`kill -9` while recording loses at most the record being written and never corrupts the study.

A child process records batches of observations in a loop, one transaction per batch,
and prints a line after each; the parent kills it with SIGKILL after a number of lines
drawn from a fixed seed (so the moment of the kill falls anywhere inside a later record),
then opens and replays the study. Each value encodes its batch, the batch's size and its
position, so a partial or duplicated batch would show. About 10 s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import defaultdict

import numpy as np

from cbai_cli.session import Session

from tests.session.conftest import ROOT

CHILD = """
import sys
from cbai_cli.session import Session

with Session.open(sys.argv[1]) as session:
    batch = len({int(row["value"]) // 1000 for row in session.records()})
    while True:
        queries = session.ask(100)
        if not queries:
            break
        query = queries[0]
        size = min(3, query.remaining)
        session.tell(query.id, [1000.0 * batch + 10 * size + j for j in range(size)])
        batch += 1
        print(batch, flush=True)
"""


def test_kill_9_while_recording_never_leaves_a_partial_or_duplicated_batch(tmp_path, instance_file):
    study = tmp_path / "s.db"
    Session.start(study, instance_file, "acol", seed=0).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    moments = np.random.default_rng(2024).integers(1, 40, size=6)
    for lines in moments:
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(study)], stdout=subprocess.PIPE, text=True,
                                 env=env)
        for _ in range(lines):
            if not child.stdout.readline():
                break
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()

        with Session.open(study) as session:  # replays: no query holds more than it asked for
            values = [row["value"] for row in session.records()]
            status = session.status()
        batches = defaultdict(list)
        for value in values:
            batches[int(value) // 1000].append(int(value) % 1000)
        assert list(batches) == list(range(len(batches)))  # in order, none lost in the middle
        for members in batches.values():
            size = members[0] // 10
            assert members == [10 * size + j for j in range(size)]  # whole, once
        assert status.answered == len(values)
    assert len(values) > 0
