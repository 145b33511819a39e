"""Allow ``python -m cbai_cli``."""

from cbai_cli.cli import main

main()
