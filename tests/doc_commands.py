"""The shell commands a Markdown page shows, as :func:`commands` finds them.

The rule:

- Commands are looked for only in fenced code blocks (```` ``` ```` or ``~~~``) whose info
  string is empty or one of :data:`SHELL_LANGUAGES`; inline code in the prose and blocks of
  other languages (yaml, python, toml, …) hold none.
- A block whose fence comes right after ``<!-- not-run: REASON -->`` (blank lines between
  are allowed) is not run; the reason is required and says why (a server of another
  machine, a file cbai does not ship, …).
- A block in which some line starts with ``$ `` is a transcript: those lines are the
  commands and every other line is output. In any other block every line that is not blank
  and not a ``#`` comment is a command.
- A command that ends in ``\\`` goes on on the next line.
- A command is run when its first word is ``cbai``; any other (``python3 -m pip install``,
  ``git clone``, ``python benchmarks/…``, ``curl``, a shell variable) is not.
- A command exits with 0, except where the transcript shows output lines starting with
  ``cbai: error:`` after it: then it exits with 2 and those are its lines on stderr, where
  ``…`` stands for any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: Info strings of fenced blocks that hold shell commands (besides none at all).
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console", "shell-session"})
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\s`]*)")
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run:\s*(?P<reason>.*?)\s*-->\s*$")
_PROMPT = "$ "
_ERROR = "cbai: error:"


@dataclass(frozen=True)
class Command:
    """One command of a page.

    Attributes:
        page: the Markdown file.
        line: the 1-based line of the page the command starts on.
        text: the command as a shell would read it, continuation lines joined.
        exit_code: the exit code the page shows (2 after a ``cbai: error:`` line, else 0).
        errors: the ``cbai: error:`` lines the page shows after it, ``…`` as it is written.
    """

    page: Path
    line: int
    text: str
    exit_code: int = 0
    errors: tuple[str, ...] = ()

    @property
    def runs(self) -> bool:
        """Whether the rule runs it: its first word is ``cbai``."""
        return self.text.split(maxsplit=1)[0] == "cbai"

    @property
    def where(self) -> str:
        """``PAGE:LINE``, to name the command in a failure."""
        return f"{self.page.name}:{self.line}"


@dataclass(frozen=True)
class Block:
    """A fenced block: its info string (lower case), its first line inside the fence
    (1-based), its lines (without the fence's indentation), and the reason of the
    ``not-run`` marker before it (None without one)."""

    info: str
    line: int
    lines: tuple[str, ...]
    not_run: str | None

    @property
    def shell(self) -> bool:
        """Whether the rule looks for commands in it."""
        return self.info == "" or self.info in SHELL_LANGUAGES


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, in order."""
    found: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        indent = len(lines[index]) - len(lines[index].lstrip())  # a block inside a list item is indented
        end = next((later for later in range(index + 1, len(lines)) if _closes(lines[later], fence)), len(lines))
        inside = tuple(line[indent:] if not line[:indent].strip() else line for line in lines[index + 1:end])
        found.append(Block(opening["info"].lower(), index + 2, inside, _marker(lines[:index])))
        index = end + 1
    return found


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence``: the same character, at least as
    many times, and nothing else."""
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def _marker(before: list[str]) -> str | None:
    """The reason of a ``not-run`` marker on the last non-blank line of ``before``."""
    for line in reversed(before):
        if line.strip():
            marker = _NOT_RUN.match(line)
            if marker is None:
                return None
            if not marker["reason"]:
                raise ValueError(f"a not-run marker without its reason: {line.strip()!r}")
            return marker["reason"]
    return None


def commands(page: Path) -> tuple[list[Command], list[tuple[int, str]]]:
    """The commands of ``page`` in its order, and the blocks it marks not to run (the line
    of each and the reason)."""
    found: list[Command] = []
    skipped: list[tuple[int, str]] = []
    for block in fenced_blocks(page.read_text(encoding="utf-8")):
        if not block.shell:
            continue
        if block.not_run is not None:
            skipped.append((block.line, block.not_run))
            continue
        found.extend(_block_commands(page, block))
    return found, skipped


def _block_commands(page: Path, block: Block) -> list[Command]:
    transcript = any(line.startswith(_PROMPT) for line in block.lines)
    found: list[Command] = []
    index = 0
    while index < len(block.lines):
        line = block.lines[index]
        start = index
        index += 1
        if transcript:
            if not line.startswith(_PROMPT):
                continue
            line = line[len(_PROMPT):]
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.rstrip().endswith("\\") and index < len(block.lines):
            line = line.rstrip()[:-1].rstrip() + " " + block.lines[index].strip()
            index += 1
        errors = []
        if transcript:
            while index < len(block.lines) and not block.lines[index].startswith(_PROMPT):
                if block.lines[index].startswith(_ERROR):
                    errors.append(block.lines[index])
                index += 1
        found.append(Command(page, block.line + start, line.strip(), 2 if errors else 0, tuple(errors)))
    return found


def shows(expected: str, line: str) -> bool:
    """Whether the line ``line`` is the line ``expected`` of a page, each ``…`` in it
    standing for any text."""
    pattern = ".*".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, line) is not None
