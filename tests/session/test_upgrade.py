"""A study of journal schema 1 copied into the current schema, every answer kept."""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import datetime, timezone

import pytest

from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds import load
from cbai_cli.session import Session
from cbai_cli.session.journal import APPLICATION_ID
from cbai_cli.session.upgrade import upgrade

SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE queries (id INTEGER PRIMARY KEY, arm INTEGER NOT NULL, count INTEGER NOT NULL CHECK (count >= 1),
                      batch INTEGER NOT NULL, observed INTEGER NOT NULL, time TEXT NOT NULL);
CREATE TABLE observations (seq INTEGER PRIMARY KEY, query_id INTEGER NOT NULL REFERENCES queries (id),
                           value REAL NOT NULL, time TEXT NOT NULL);
"""


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="microseconds")


def _as_schema_1(study, old) -> None:
    """``study`` (one anonymous rater, answers without grace) written as cbai wrote studies
    in schema 1: observations instead of events, ``observed`` instead of ``folded``."""
    with sqlite3.connect(study) as source, sqlite3.connect(old) as target:
        target.executescript(SCHEMA_1)
        for key, value in source.execute("SELECT key, value FROM meta"):
            if key not in ("study_id", "media_folder"):
                target.execute("INSERT INTO meta VALUES (?, ?)", (key, "1" if key == "schema_version" else value))
        answers = source.execute("SELECT seq, query_id, value, time FROM events WHERE kind = 'answer' "
                                 "ORDER BY seq").fetchall()
        # schema 1 numbered observations alone, and `observed` counted them
        observed = [sum(1 for seq, *_ in answers if seq <= row[4]) for row in source.execute("SELECT * FROM queries")]
        target.executemany("INSERT INTO queries VALUES (?, ?, ?, ?, ?, ?)",
                           [(*row[:4], count, _iso(row[5]))
                            for row, count in zip(source.execute("SELECT * FROM queries"), observed)])
        target.executemany("INSERT INTO observations VALUES (?, ?, ?, ?)",
                           [(number, query, value, _iso(moment))
                            for number, (_, query, value, moment) in enumerate(answers, start=1)])
        target.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        target.execute("PRAGMA user_version = 1")


def test_a_schema_1_study_is_refused_in_one_line_and_upgraded_with_every_answer(tmp_path, instance_file, cli):
    instance = load(instance_file)
    means = instance.truth.means(instance.problem.arms)
    study, old, new = tmp_path / "s.db", tmp_path / "old.db", tmp_path / "new.db"
    with Session.start(study, instance_file, "g-acol", seed=3) as session:
        for step in range(12):
            [query] = session.ask()
            session.answer(query.id, float(means[query.arm] + 0.01 * (-1) ** step))
        session.ask()  # one query pending
        before = session.status()
        answers = [(record["id"], record["value"]) for record in session.records()]
    _as_schema_1(study, old)
    refused = cli("session", "status", old)
    assert refused.exit_code == 2 and "journal schema 1" in refused.stderr and "cbai session upgrade" in refused.stderr
    result = cli("session", "upgrade", old, "-o", new)
    assert result.exit_code == 0 and "12 answer(s)" in result.stdout, result.stderr
    with Session.open(new) as upgraded:
        assert upgraded.status() == dataclasses.replace(before, leases=())  # schema 1 had no leases
        assert [(record["id"], record["value"]) for record in upgraded.records()] == answers


def test_upgrade_refuses_a_study_of_the_current_schema_and_never_overwrites(tmp_path, instance_file):
    study = tmp_path / "s.db"
    Session.start(study, instance_file, "g-acol").close()
    with pytest.raises(OptionError, match="only schema 1 is upgraded"):
        upgrade(study, tmp_path / "new.db")
    assert not (tmp_path / "new.db").exists()
