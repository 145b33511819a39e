"""docs/cli.md is what `python -m cbai_cli.cli_reference` prints from the Typer app."""

from __future__ import annotations

from pathlib import Path

import typer

from cbai_cli.cli.app import app
from cbai_cli.cli_reference import reference_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_docs_cli_md_is_the_generated_reference():
    assert (ROOT / "docs" / "cli.md").read_text() == reference_markdown(), \
        "run `python -m cbai_cli.cli_reference > docs/cli.md`"


def test_the_reference_names_every_command_and_every_option():
    text = reference_markdown()
    root = typer.main.get_command(app)
    stack = [(f"cbai {name}", command) for name, command in root.commands.items()]
    while stack:
        path, command = stack.pop()
        assert f"## `{path}`" in text
        for parameter in command.params:
            for flag in getattr(parameter, "opts", ()):
                if flag.startswith("-"):
                    assert f"`{flag}`" in text.split(f"## `{path}`", 1)[1], (path, flag)
        stack += [(f"{path} {name}", sub) for name, sub in getattr(command, "commands", {}).items()]
