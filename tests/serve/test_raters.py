"""Simulated raters against a real server, until the study stops.

Each rater is a thread that asks ``/api/next``, answers from the hidden φ (which the test
reads from the instance file; the study has none) with its own seeded noise, and sends
every fifth answer twice with the same key, as a page does after a lost connection.
Nothing may be refused, lost or doubled: the answers the server acknowledged are exactly
the answers of ``/api/log``, and its recommendation is the one a fresh process replaying
the journal computes. The same holds when the server is killed with SIGKILL mid-study and
started again: the raters retry the request under way (with its key) until it answers.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
import urllib.error
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.kinds import load
from tests.serve.conftest import Server, binary_instance, cbai, gaussian_instance, start_study

#: The most a simulated study may take; they stop in seconds.
DEADLINE_SECONDS = 240
#: Failures of the connection (the server killed, or not started yet): retried.
LOST = (urllib.error.URLError, ConnectionError, http.client.HTTPException, TimeoutError)


class Raters:
    """``count`` simulated raters of a study whose instance (with its truth) is ``instance``."""

    def __init__(self, server: Server, instance: Path, count: int, seed: int) -> None:
        truth = load(instance)
        self.means = truth.truth.means(truth.problem.arms)
        self.sigma = getattr(truth.noise, "sigma", None)
        self.binary = truth.noise.kind == "binary"
        self.labels = answer_labels(server.study) if self.binary else {}
        self.server = server
        self.count, self.seed = count, seed
        self.acknowledged: list[tuple[int, str, float]] = []
        self.refused: list[tuple[dict, object]] = []
        self.failures: list[BaseException] = []
        self.lock = threading.Lock()
        self.deadline = time.monotonic() + DEADLINE_SECONDS
        self.threads = [threading.Thread(target=self._run, args=(index,), daemon=True) for index in range(count)]

    def start(self) -> Raters:
        for thread in self.threads:
            thread.start()
        return self

    def join(self) -> None:
        for thread in self.threads:
            thread.join(max(0.0, self.deadline - time.monotonic()) + 5)
        assert not any(thread.is_alive() for thread in self.threads), "raters still running at the deadline"
        assert not self.failures, self.failures

    def call(self, method: str, path: str, body: dict | None = None):
        """A request, sent again while the server cannot be reached."""
        while True:
            try:
                return self.server.call(method, path, body, timeout=20)
            except LOST:
                if time.monotonic() > self.deadline:
                    raise
                time.sleep(0.05)

    def _answer(self, query: dict, rng: np.random.Generator) -> tuple[object, float]:
        """What the rater sends for the query, and the observation it stands for."""
        mean = float(self.means[query["arm"]])
        if self.binary:
            value = 1.0 if rng.random() < (1 + mean) / 2 else -1.0
            return self.labels[value], value
        value = mean + self.sigma * float(rng.standard_normal())
        return value, value

    def _run(self, index: int) -> None:
        name = f"rater {index}"
        rng = np.random.default_rng([self.seed, index])
        answered = 0
        try:
            while time.monotonic() < self.deadline:
                status, reply = self.call("GET", f"/api/next?rater={name.replace(' ', '%20')}")
                assert status == 200, reply
                if reply["done"]:
                    return
                query = reply["query"]
                if query is None:  # a round waits for other raters' answers
                    time.sleep(0.01)
                    continue
                given, value = self._answer(query, rng)
                answered += 1
                body = {"id": query["id"], "rater": name, "answer": given, "key": f"{name}/{answered}"}
                for _ in range(2 if answered % 5 == 0 else 1):
                    status, recorded = self.call("POST", "/api/answer", body)
                    if status != 200 or recorded.get("recorded") is not True:
                        with self.lock:
                            self.refused.append((body, recorded))
                        return
                with self.lock:
                    self.acknowledged.append((query["id"], name, value))
            raise AssertionError(f"{name}: the study did not stop within {DEADLINE_SECONDS} s")
        except BaseException as error:  # noqa: BLE001  (reported by join)
            self.failures.append(error)


def answer_labels(study: Path) -> dict[float, str]:
    """The answer label of each binary observation, from the study's own questions."""
    from cbai_cli.session.session import Session

    with Session.open(study, writable=False) as session:
        questions = session.questions
        return dict(zip(questions.observations, questions.answers))


def check_nothing_lost_nor_doubled(server: Server, raters: Raters) -> dict:
    """The invariants after the study stopped; the server's status."""
    assert raters.refused == []
    status, log = server.call("GET", "/api/log")
    assert status == 200
    logged = Counter((record["id"], record["rater"], record["value"]) for record in log["records"]
                     if record["kind"] == "answer" and not record["undone"])
    assert logged == Counter(raters.acknowledged)
    assert all(record["kind"] == "answer" for record in log["records"])
    status, served = server.call("GET", "/api/status")
    assert status == 200 and served["done"] and served["stopped"] == "solved"
    replayed = cbai("session", "status", server.study, "--json")
    assert replayed.returncode == 0, replayed.stderr
    fresh = json.loads(replayed.stdout)
    for key in ("done", "recommended", "guaranteed", "answered", "surplus"):
        assert served[key] == fresh[key], key
    assert served["answered"] + served["surplus"] == sum(logged.values())
    return served


def study_of(kind: str, folder: Path) -> tuple[Path, Path]:
    """The instance (with its truth) and a new study of it: Gaussian answers to ACOL's rounds
    (raters wait for each other at the end of a round), or yes/no answers to G-ACOL."""
    if kind == "gaussian":
        instance = gaussian_instance(folder / "irr.yaml")
        return instance, start_study(instance, folder / "irr.db", "acol")
    instance = binary_instance(folder / "two.yaml")
    return instance, start_study(instance, folder / "two.db", "g-acol")


@pytest.mark.parametrize("kind, count", [("gaussian", 2), ("gaussian", 4), ("gaussian", 8), ("binary", 4)])
def test_raters_answer_until_the_study_stops_and_nothing_is_lost_or_doubled(tmp_path, serve, kind, count):
    instance, study = study_of(kind, tmp_path)
    server = serve(study, "--undo-seconds", "0")
    raters = Raters(server, instance, count, seed=count).start()
    raters.join()
    served = check_nothing_lost_nor_doubled(server, raters)
    assert served["recommended"] == (3 if kind == "gaussian" else 1)
    assert len(served["raters"]) == count


def test_a_server_killed_mid_study_and_started_again_loses_nothing(tmp_path, serve):
    instance, study = study_of("gaussian", tmp_path)
    first = serve(study, "--undo-seconds", "0")
    raters = Raters(first, instance, 4, seed=7).start()
    while len(raters.acknowledged) < 60 and not raters.failures and time.monotonic() < raters.deadline:
        time.sleep(0.005)
    assert len(raters.acknowledged) >= 60, raters.failures
    os.kill(first.process.pid, signal.SIGKILL)
    first.process.wait()
    killed_at = len(raters.acknowledged)
    second = serve(study, "--undo-seconds", "0", port=first.port)
    raters.server = second
    raters.join()
    assert len(raters.acknowledged) > killed_at  # the raters went on with the new server
    check_nothing_lost_nor_doubled(second, raters)
