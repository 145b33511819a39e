"""The arguments and options several commands share, and the options of a run.

``cbai solve``, ``cbai bound``, ``cbai compare`` and ``cbai session start`` add the options
of a run (:data:`~cbai_cli.contracts.options.OPTIONS`) through :func:`with_run_options`, so
they accept exactly the same flags with the same ranges, defaults and help.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

import typer

from cbai_cli.algorithms.registry import algorithm_help, option_users
from cbai_cli.contracts.options import OPTIONS, QUIET_HELP, Option
from cbai_cli.numerics.confidence import regimes_help
from cbai_cli.typer_adapter.parameters import declared_in


def with_run_options(table: Mapping[str, Option], names: Iterable[str], kinds: tuple[str, ...] | None = None):
    """:func:`~cbai_cli.typer_adapter.parameters.declared_in` ``table``, adding the run options
    ``names`` of :data:`~cbai_cli.contracts.options.OPTIONS`: None when not given (their defaults
    depend on the algorithm and the instance), their help naming the range, the default and the
    algorithms that read them (of ``kinds`` only, when given)."""
    def composed(option: Option) -> Option:
        users = option_users(option.name, kinds)
        return replace(option, default=None, help=f"{option.help} ({option.range_text() or 'switch'}; default "
                       f"{option.default_text}" + (f"; {users}" if users else "") + ").")
    runs = {name: composed(OPTIONS[name]) for name in names}
    return declared_in({**table, **runs}, *runs)


def instance_argument():
    """The argument ``FILE`` of the commands that read an instance."""
    return typer.Argument(..., metavar="FILE", help="Instance file (.yaml, .yml, .npz, or '-' for YAML on stdin).")


def study_argument():
    """The argument ``STUDY`` of the ``cbai session`` commands."""
    return typer.Argument(..., metavar="STUDY", help="The study file (SQLite) made by `cbai session start`.")


def algo_option(kinds: tuple[str, ...] | None = None):
    """The Typer option ``--algo/-a`` (None: the instance kind's default), of ``kinds`` only when given."""
    return typer.Option(None, "--algo", "-a", show_default=False,
                        help=algorithm_help(with_defaults=True, kinds=kinds))


def regime_option():
    """The Typer option ``--regime`` (None: the algorithm's default)."""
    return typer.Option(None, "--regime", help=regimes_help())


def json_option(help: str = "Print one JSON document instead of tables."):
    """The Typer option ``--json``."""
    return typer.Option(False, "--json", help=help)


def quiet_option(more: str = ""):
    """The Typer option ``-q/--quiet`` (:data:`~cbai_cli.contracts.options.QUIET_HELP`, then ``more``)."""
    return typer.Option(False, "--quiet", "-q", help=f"{QUIET_HELP} {more}".strip())
