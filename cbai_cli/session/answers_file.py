"""Answers recorded from a file (``cbai session record STUDY --file ANSWERS.csv``, ``-`` for
stdin): a CSV with the header ``id,value`` and one query id and observation a line; every
problem with the file is one line naming it."""

from __future__ import annotations

import csv
import io
from pathlib import Path


def read_answers(path: Path) -> list[tuple[str, str]]:
    """The ``(id, value)`` rows of an answers CSV file (header ``id,value``)."""
    from cbai_cli.contracts.errors import OptionError

    if str(path) == "-":
        from cbai_cli.io.files import YAML_CHARACTER_LIMIT, read_stdin

        # an endless stdin stops at the limit
        text = read_stdin(YAML_CHARACTER_LIMIT + 1, "--file -", OptionError).removeprefix("\ufeff")
        if len(text) > YAML_CHARACTER_LIMIT:
            raise OptionError(f"--file -: more than {YAML_CHARACTER_LIMIT:,} characters on stdin, more than any "
                              "answers file cbai reads")
        return _answer_rows(text, path)
    from cbai_cli.io.outputs import is_device_or_pipe

    if is_device_or_pipe(path):
        raise OptionError(f"--file {path}: not a regular file (a pipe or a device), so not an answers file")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark: spreadsheets' "CSV UTF-8"
    except (OSError, UnicodeDecodeError) as error:
        raise OptionError(f"--file {path}: cannot read: {getattr(error, 'strerror', None) or error}") from None
    return _answer_rows(text, path)


def _answer_rows(text: str, path: Path) -> list[tuple[str, str]]:
    """The ``(id, value)`` rows of an answers CSV text read from ``path`` (named in messages)."""
    from cbai_cli.contracts.errors import OptionError

    reader = csv.reader(io.StringIO(text))
    try:
        header = [cell.strip().lower() for cell in next(reader, [])]
    except csv.Error as error:
        raise OptionError(f"--file {path}: line 1: {error}") from None
    if header != ["id", "value"]:
        raise OptionError(f"--file {path}: the first line must be the header id,value")
    rows = []
    try:
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != 2:
                raise OptionError(f"--file {path}: line {line} has {len(row)} field(s), not 2 (id,value)")
            rows.append((row[0], row[1]))
    except csv.Error as error:  # a field over the csv module's limit, a stray quote
        raise OptionError(f"--file {path}: line {reader.line_num}: {error}") from None
    if not rows:
        raise OptionError(f"--file {path}: no observation after the header")
    return rows
