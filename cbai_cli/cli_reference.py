"""The command-line reference (docs/cli.md), made from the Typer app itself: every command
and subcommand, its arguments and options with their help and defaults, and the exit codes.

    python -m cbai_cli.cli_reference > docs/cli.md

tests/cli/test_reference.py fails when docs/cli.md is not what this prints.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from cbai_cli.contracts.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_READER_GONE, EXIT_TERMINATED

#: What each exit code of ``cbai`` means.
EXIT_CODES = (
    (0, "success"),
    (1, "`solve`: some run ended at its budget without stopping; `compare`: a run failed"),
    (EXIT_BAD_INPUT, "a user's mistake or a failing outside resource, said in one line `cbai: error: …` on stderr"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C); finished work is kept"),
    (EXIT_READER_GONE, "standard output's reader went away (`cbai algorithms | head -1`)"),
    (EXIT_TERMINATED, "terminated (SIGTERM); finished work is kept"),
)


def _cell(text: str | None) -> str:
    """``text`` on one line, safe in a Markdown table cell."""
    return " ".join((text or "").split()).replace("|", "\\|")


def _is_argument(parameter: Any) -> bool:
    """Whether ``parameter`` is a positional argument (Typer may bring its own Click classes)."""
    return getattr(parameter, "param_type_name", "") == "argument"


def _names(parameter: Any) -> str:
    if _is_argument(parameter):
        return f"`{(parameter.metavar or parameter.name).upper()}`"
    flags = [*parameter.opts, *parameter.secondary_opts]
    return ", ".join(f"`{flag}`" for flag in flags)


def _default(parameter: Any) -> str:
    if _is_argument(parameter) or getattr(parameter, "is_flag", False) and not parameter.default:
        return ""
    default = parameter.default
    if default is None or callable(default) or default == () or getattr(parameter, "show_default", None) is False:
        return ""
    return f"`{default}`"


def _command(path: str, command: Any) -> Iterator[str]:
    yield f"## `{path}`"
    yield ""
    if command.help:
        yield command.help.strip().split("\b")[0].strip()
        yield ""
    parameters = [parameter for parameter in command.params if not getattr(parameter, "hidden", False)]
    if parameters:
        yield "| argument or option | default | what it is |"
        yield "| --- | --- | --- |"
        for parameter in parameters:
            yield f"| {_names(parameter)} | {_default(parameter)} | {_cell(getattr(parameter, 'help', ''))} |"
        yield ""
    if hasattr(command, "commands"):  # a group (Typer may bring its own Click classes)
        for name, sub in command.commands.items():
            if not sub.hidden:
                yield from _command(f"{path} {name}", sub)


def reference_markdown() -> str:
    """docs/cli.md: the reference of every command, from the app's own declarations."""
    import typer

    from cbai_cli.cli.app import app

    root = typer.main.get_command(app)
    lines = ["# Command-line reference", "",
             "Made by `python -m cbai_cli.cli_reference > docs/cli.md` from the commands' own declarations "
             "(a test fails when it is stale). `cbai COMMAND --help` prints the same.", "",
             "## Exit codes", "", "| code | meaning |", "| --- | --- |"]
    lines += [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES]
    lines.append("")
    for name, command in root.commands.items():
        if not command.hidden:
            lines += list(_command(f"cbai {name}", command))
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(reference_markdown())
