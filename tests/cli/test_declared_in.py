"""typer_adapter.parameters.declared_in: DECLARED parameters become the table's options in place,
the added ones go where ``**options`` is (or before ``before``), and Typer reads them."""

from __future__ import annotations

import inspect

import typer
from typer.testing import CliRunner

from cbai_cli.contracts.options import Option, option_table
from cbai_cli.typer_adapter.group import CbaiGroup
from cbai_cli.typer_adapter.parameters import DECLARED, declared_in

TABLE = option_table(
    Option("count", "--count", int, "How many.", 1, low=1.0, aliases=("-n",)),
    Option("name", "--name", str, "Who."),
    Option("loud", "--loud", bool, "Shout.", False),
    Option("tags", "--tag", str, "A tag (repeat for several).", multiple=True),
)


def command(first: str = typer.Argument(...), count=DECLARED, last: bool = typer.Option(False, "--last"), **options):
    return first, count, last, options


def test_declared_parameters_stay_in_place_and_added_ones_go_before_the_named_one():
    declared = declared_in(TABLE, "name", "tags", before="last")(command)
    parameters = inspect.signature(declared).parameters
    assert list(parameters) == ["first", "count", "name", "tags", "last"]
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters.values())
    assert parameters["count"].default.default == 1 and parameters["count"].default.param_decls == ("--count", "-n")
    assert parameters["name"].default.default is None and parameters["name"].default.help == "Who."


def test_added_options_go_last_without_before_and_typer_reads_them():
    app = typer.Typer(cls=CbaiGroup)
    seen = []

    @app.command()
    @declared_in(TABLE, "loud", "tags")
    def run(first: str = typer.Argument(...), count=DECLARED, **options) -> None:
        seen.append((first, count, options))

    app.command()(lambda: None)  # a second command: the first is named on the command line
    runner = CliRunner()
    assert runner.invoke(app, ["run", "x", "-n", "3", "--loud", "--tag", "a", "--tag", "b"]).exit_code == 0
    assert runner.invoke(app, ["run", "x"]).exit_code == 0
    assert seen == [("x", 3, {"loud": True, "tags": ["a", "b"]}), ("x", 1, {"loud": False, "tags": None})]
    result = runner.invoke(app, ["run", "x", "--count", "many"])
    assert result.exit_code == 2 and result.stderr.startswith("cbai run: error: Invalid value for '--count'")
