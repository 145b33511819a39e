"""How the benchmark scripts hand over their markdown: printed, and written to ``--out``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def emit(lines: Sequence[str], out: Path | None) -> str:
    """Print ``lines`` as one markdown text and write it to ``out`` when given; the text."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out is not None:
        out.write_text(text)
    return text


def joined(documents: Sequence[dict]) -> dict:
    """Results documents as one, for one ``--render``: the first's fields, every command
    (joined for the table's caption) and every instance, in the order given."""
    return {**documents[0], "command": "`, `".join(document["command"] for document in documents),
            "instances": [item for document in documents for item in document["instances"]]}
