"""SQLite errors: the file's surroundings failing, or its contents not cbai's."""

from __future__ import annotations

import sqlite3

import pytest

from cbai_cli.io.databases import resource_failure


def error_of(path) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as caught:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            connection.execute("SELECT name FROM sqlite_master").fetchall()
        finally:
            connection.close()
    return caught.value


def test_a_file_that_cannot_be_opened_is_a_resource_failure(tmp_path):
    assert resource_failure(error_of(tmp_path / "missing" / "study.db"))  # SQLITE_CANTOPEN


def test_a_file_of_garbage_is_not_a_resource_failure(tmp_path):
    path = tmp_path / "garbage.db"
    path.write_bytes(b"these are not records\n" * 100)
    assert not resource_failure(error_of(path))  # SQLITE_NOTADB
