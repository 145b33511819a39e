"""The ``cbai`` command line: parse options, call the library, render.

Heavy modules (numpy-based library code, cvxpy, matplotlib) are imported inside the
commands, so ``cbai --help`` starts fast. The options of runs are declared once, in
:mod:`cbai_cli.contracts.options`, and added to ``solve``, ``bound`` and ``compare`` from there.
Every :class:`~cbai_cli.contracts.errors.CbaiError` and every usage error ends as one line on
stderr with exit code 2 (:mod:`cbai_cli.typer_adapter.group`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cbai_cli import __version__
from cbai_cli.algorithms.registry import run_option_names
from cbai_cli.cli.parameters import (algo_option, instance_argument, json_option, quiet_option, regime_option,
                                     with_run_options)
from cbai_cli.cli.printing import say, show, warn
from cbai_cli.cli.session import session_app
from cbai_cli.compare.command import COMPARE_OPTIONS
from cbai_cli.contracts.options import DRIVER_OPTIONS, SOLVE_OPTIONS
from cbai_cli.kinds.cbai.family_declarations import families_help, generate_options
from cbai_cli.typer_adapter.group import CbaiGroup
from cbai_cli.typer_adapter.parameters import DECLARED, declared_in

app = typer.Typer(
    cls=CbaiGroup,
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cbai {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Constrained linear best-arm identification and safe linear bandits: bound an instance's difficulty
    and solve it with ACOL or any baseline of Lindner et al. (ICML 2022), or with Safe-LUCB, LinGapE and
    Safe-LinGapE."""
    from cbai_cli.numerics.blas_threads import pin_blas_threads_by_default

    pin_blas_threads_by_default()


def _reporting(command: str, quiet: bool, total: int | None = None, unit: str = ""):
    """The progress display of ``command`` on stderr (none with ``quiet``)."""
    from cbai_cli.run.progress import ProgressStyle, reporting

    return reporting(command, ProgressStyle.for_stderr(quiet), total, unit)


#: The options of ``cbai generate`` that the families declare (``--d``, ``--T``, ``--sigma``).
FAMILY_OPTIONS = generate_options()


@app.command()
@declared_in(FAMILY_OPTIONS, *FAMILY_OPTIONS, before="no_truth")
def generate(
    family: str = typer.Argument(..., help=f"Instance family: {families_help()}."),
    output: str = typer.Option("-", "-o", "--output", help="Output file (.yaml, .yml, .npz); '-' writes YAML to stdout."),
    no_truth: bool = typer.Option(False, "--no-truth", help="Leave out the hidden constraint φ: the file of a real "
                                  "problem, for `cbai session` (cbai families)."),
    **parameters,
) -> None:
    """Write one of the papers' instances (or a random one) to a file."""
    from cbai_cli.kinds import generate_file

    wrote = generate_file(family, output, warn, truth=not no_truth, **parameters)
    if wrote is not None:
        say(wrote)


@app.command()
@with_run_options(SOLVE_OPTIONS, ("delta", "ridge", "norm_bound", "solver", "rounding_epsilon", "time_limit"))
def bound(
    path: str = instance_argument(),
    as_json: bool = json_option(),
    guess=DECLARED,
    quiet: bool = quiet_option(),
    **options,
) -> None:
    """How hard an instance is. cbai: H_CLB, Theorem 1, Proposition 1, Theorem 2. safe-regret: Δ, λ_−, t_δ,
    T_Δ, T_0. safe-bai: true safe scales γ_k, the optimal safe arm, LinGapE's complexity."""
    from cbai_cli.kinds import bound_file

    with _reporting("bound", quiet) as progress:
        outcome = bound_file(path, guess, warn, progress=progress, **options)
    show(outcome, as_json)


@app.command()
@with_run_options(SOLVE_OPTIONS, run_option_names())
def solve(
    path: str = instance_argument(),
    algo: Optional[str] = algo_option(),
    regime: Optional[str] = regime_option(),
    seed=DECLARED, runs=DECLARED, trace=DECLARED,
    as_json: bool = json_option(),
    bound=DECLARED, guess=DECLARED,
    quiet: bool = quiet_option(),
    **options,
) -> None:
    """Run an algorithm on an instance's simulated feedback and score it."""
    from cbai_cli.run.simulate import RunRequest
    from cbai_cli.run.solving import solving

    # the trace is written while the run goes, and renamed into place once the result is shown
    with _reporting("solve", quiet, runs, "runs") as progress:
        with solving(path, RunRequest.of(algo, regime, **options), seed, runs, trace, bound, warn=warn,
                     guess=guess, progress=progress) as outcome:
            progress.close()  # the display leaves the terminal before the results are printed
            show(outcome, as_json)
    if outcome.hit_budget:
        raise typer.Exit(1)


@app.command("algorithms")
def list_algorithms(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document ({\"algorithms\": [...]}) instead of "
                                 "tables."),
    as_markdown: bool = typer.Option(False, "--markdown", help="Print the algorithms and the regimes as markdown "
                                     "tables (those of the README)."),
) -> None:
    """List the registered algorithms: instance kinds, style, regimes and options."""
    from cbai_cli.algorithms.listing import Listing
    from cbai_cli.contracts.errors import OptionError

    if as_json and as_markdown:
        raise OptionError("choose one of --json and --markdown")
    if as_markdown:
        typer.echo(Listing().to_markdown())
        return
    show(Listing(), as_json)


@app.command()
@with_run_options(COMPARE_OPTIONS, run_option_names())
def compare(
    sources: Optional[list[str]] = typer.Argument(None, metavar="SOURCES", show_default=False, help=(
        "Instance files, folders (every .yaml/.yml/.npz inside) or generator specs such as "
        "irrelevant-dims:d=10,eps=0.02|0.05 (one parameter may list values: a sweep) or unit-sphere:d=30,n=30 "
        "(a fresh instance per seed).")),
    algorithms=DECLARED, seeds=DECLARED, first_seed=DECLARED, config=DECLARED, jobs=DECLARED, shard=DECLARED,
    scheduler=DECLARED, out=DECLARED, lease=DECLARED, from_stores=DECLARED,
    bounds=DECLARED, as_json=DECLARED, as_csv=DECLARED, plot=DECLARED, title=DECLARED, quiet=DECLARED,
    **options,
) -> None:
    """Run many algorithms × seeds × instances in parallel, resumably, and summarise them."""
    from cbai_cli.compare.command import compare_command
    from cbai_cli.compare.render import check_outputs
    from cbai_cli.compare.study import CompareSettings

    check_outputs(as_json, as_csv, plot, out)  # the text as typed: a trailing slash still shows
    out = Path(out) if out is not None else None
    settings = CompareSettings(sources=tuple(sources or ()), algorithms=tuple(algorithms or ()), seeds=seeds,
                               first_seed=first_seed, config=config, options=options, jobs=jobs, shard=shard,
                               scheduler=scheduler, out=out, bounds=bounds, lease=lease)
    compare_command(settings, from_stores or (), title, as_json=as_json, as_csv=as_csv,
                    plot=Path(plot) if plot is not None else None, quiet=quiet,
                    echo=say, warn=warn)


@app.command("driver-arms")
@declared_in(DRIVER_OPTIONS, *DRIVER_OPTIONS, before="quiet")
def driver_arms(quiet: bool = quiet_option("Nor the summary."), **options) -> None:
    """Driving policies as CBAI arms (paper §4.3): build a driver instance, or draw its policies.

    Build: run n constrained/penalised CEMs on randomly perturbed problems (or read --policies) and write the
    scenario's instance: 9-dim arms (f1..f8, 1) with the threshold folded in, binary feedback, per-arm
    rewards θᵀf. Show: `cbai driver-arms --show FILE.npz --arm 17 -o fig.png`, or
    `cbai solve FILE.npz --algo g-acol --regime tuned --beta 1 --json > run.json` then
    `cbai driver-arms --show FILE.npz --solved run.json -o fig.png`.
    """
    from cbai_cli.driver.command import driver_arms as run
    from cbai_cli.driver.instances import DEFAULT_N_POLICIES

    # only the CEM runs take long: drawing and imported policies show no progress
    drawing_or_imported = options["show"] is not None or options["policies"] is not None
    with _reporting("driver-arms", quiet or drawing_or_imported, options["n"] or DEFAULT_N_POLICIES,
                    "policies") as progress:
        lines = run(**{**options, "arms": options["arms"] or ()}, progress=progress.update)
    for line in [] if quiet else lines:
        say(line)


app.add_typer(session_app, name="session")


def main() -> None:
    """Console-script entry point."""
    app()
