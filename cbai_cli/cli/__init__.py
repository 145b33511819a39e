"""The ``cbai`` command line: the Typer app (:mod:`.app`), its Click group (:mod:`.group`),
the run options as Typer options (:mod:`.typer_options`) and the tables it prints (:mod:`.render`)."""
