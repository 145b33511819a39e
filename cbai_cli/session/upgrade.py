"""A study of journal schema 1 (made before studies had raters) copied into a new study of
the current schema, every answer kept.

Schema 1 held ``queries (id, arm, count, batch, observed, time)`` and ``observations
(seq, query_id, value, time)``, times as ISO 8601 text. Each observation becomes an
``answer`` event of the anonymous rater, in the same order and with the same seq (schema 1
had no other events), given as the number it recorded, with no undo grace; each query
keeps its row, ``observed`` (the observations recorded when it was handed out) becoming
``folded`` (the last event folded then: the same number). The new study gets a study id of
its own; the old file is only read. The copy is then replayed, so a study this cbai would
not ask for in the same way is refused (:class:`~cbai_cli.session.session.ReplayError`)
and nothing is left behind.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from datetime import datetime
from pathlib import Path

from cbai_cli.contracts.errors import OptionError
from cbai_cli.session.journal import (APPLICATION_ID, SCHEMA_VERSION, EventRow, Journal, QueryRow, StudyFileError,
                                      create)

OLD_SCHEMA = 1


def upgrade(old: str | Path, new: str | Path) -> int:
    """Copy the schema-1 study ``old`` into the new study ``new`` (never overwritten);
    returns the number of answers copied."""
    old, new = Path(old), Path(new)
    if not old.is_file():
        raise OptionError(f"{old}: no such study")
    try:
        connection = sqlite3.connect(old.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise StudyFileError(f"{old}: cannot open the study: {error}") from None
    try:
        meta, queries, observations = _read(connection, old)
    finally:
        connection.close()
    from cbai_cli.session.session import Session

    create(new, {**meta, "schema_version": SCHEMA_VERSION, "study_id": uuid.uuid4().hex, "media_folder": None})
    try:
        journal = Journal(new)
        try:
            with journal.writing() as writer:
                writer.copy([QueryRow(*row) for row in queries],
                            [EventRow(seq, "answer", query_id, "", value, repr(value), None, moment, None, moment)
                             for seq, query_id, value, moment in observations])
        finally:
            journal.close()
        with Session.open(new) as session:
            session.status()  # replays the copy: refused here if this cbai would ask otherwise
    except BaseException:
        for leftover in (new, Path(f"{new}-wal"), Path(f"{new}-shm")):
            leftover.unlink(missing_ok=True)
        raise
    return len(observations)


def _read(connection: sqlite3.Connection, path: Path) -> tuple[dict, list[tuple], list[tuple]]:
    """The meta, query rows and observation rows of a schema-1 study (times as Unix s)."""
    try:
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if application_id != APPLICATION_ID:
            raise OptionError(f"{path}: not a cbai study")
        if version != OLD_SCHEMA:
            raise OptionError(f"{path}: a study of journal schema {version}; only schema {OLD_SCHEMA} is upgraded")
        meta = {key: json.loads(value) for key, value in connection.execute("SELECT key, value FROM meta")}
        queries = [(qid, arm, count, batch, observed, _moment(moment)) for qid, arm, count, batch, observed, moment
                   in connection.execute("SELECT id, arm, count, batch, observed, time FROM queries ORDER BY id")]
        observations = [(seq, qid, float(value), _moment(moment)) for seq, qid, value, moment
                        in connection.execute("SELECT seq, query_id, value, time FROM observations ORDER BY seq")]
    except (sqlite3.Error, ValueError, TypeError) as error:
        raise StudyFileError(f"{path}: a damaged study of schema {OLD_SCHEMA}: {error}") from None
    meta.pop("schema_version", None)
    return meta, queries, observations


def _moment(text: str) -> float:
    """An ISO 8601 time of schema 1 as Unix seconds."""
    return datetime.fromisoformat(text).timestamp()
