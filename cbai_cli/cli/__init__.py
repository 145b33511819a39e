"""The ``cbai`` commands: the Typer app (:mod:`.app`) and its ``session`` commands
(:mod:`.session`), each one parse, one library call and its printing (:mod:`.printing`); the
arguments and options they share (:mod:`.parameters`). What makes a command line of them (options
from the tables, values, errors as one line) is :mod:`cbai_cli.typer_adapter`;
:mod:`cbai_cli.cli_reference` makes docs/cli.md from the app."""
