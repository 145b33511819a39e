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
