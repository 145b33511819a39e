"""Allow ``python -m cbai_cli``."""

from cbai_cli.entry import main

main()
