"""What the commands print: an outcome on stdout, a warning or a line for the user on stderr."""

from __future__ import annotations

import typer


def show(outcome, as_json: bool) -> None:
    """A command's outcome on stdout (:func:`cbai_cli.io.render.show`: JSON or tables)."""
    from cbai_cli.io.render import show as render

    render(outcome, as_json)


def warn(text: str) -> None:
    """One warning line on stderr (never on stdout, which may carry JSON)."""
    from cbai_cli.contracts.validation import safe_text

    typer.echo(f"cbai: warning: {safe_text(text)}", err=True)


def say(text: str) -> None:
    """One line for the user on stderr (never on stdout, which may carry JSON)."""
    typer.echo(text, err=True)
