"""The ``cbai`` command line: the Typer app (:mod:`.app`) and its ``session`` commands
(:mod:`.session`), each one parse, one library call and its printing; the Click group that
turns errors into one line (:mod:`.group`); the options from the tables (:mod:`.typer_options`);
plain values read without Pydantic (:mod:`.plain_values`). :mod:`cbai_cli.cli_reference`
makes docs/cli.md from the app."""
