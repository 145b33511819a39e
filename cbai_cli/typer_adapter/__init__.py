"""What turns cbai's declarations and errors into a Typer command line, no command of its own:
the parameters made from the option tables (:mod:`.parameters`), values read without Pydantic
(:mod:`.plain_values`), and the Click group that ends every error as one line and an exit code
(:mod:`.group`). The commands are in :mod:`cbai_cli.cli`."""
