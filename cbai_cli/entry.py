"""The ``cbai`` console script.

Loading the command line (numpy, Typer, the registry and every command's options) takes
a few tenths of a second before :class:`~cbai_cli.typer_adapter.group.CbaiGroup` handles a
Ctrl-C; this entry point imports nothing heavy itself, so an interrupt while the rest loads
ends like one while a command runs: ``cbai: interrupted`` and exit code 130, not a traceback.
"""

from __future__ import annotations

import sys

from cbai_cli.contracts.errors import EXIT_INTERRUPTED


def main() -> None:
    """Load the command line and run it."""
    try:
        from cbai_cli.cli.app import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("cbai: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
