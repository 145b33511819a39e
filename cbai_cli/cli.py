"""The ``cbai`` command line: parse options, call the library, render.

Heavy modules (numpy-based library code, cvxpy, matplotlib) are imported inside the
commands, so ``cbai --help`` starts fast. Every :class:`~cbai_cli.errors.CbaiError`
and every usage error ends as one line on stderr with exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

try:  # Typer ≥ 0.20 vendors Click as typer._click; older releases use Click itself.
    from typer import _click as click
except ImportError:  # pragma: no cover
    import click

from cbai_cli import __version__
from cbai_cli.algorithms.registry import ALGORITHMS, ALIASES
from cbai_cli.errors import CbaiError

EXIT_BAD_INPUT = 2


class CbaiGroup(TyperGroup):
    """Turns user errors and usage errors into one line on stderr and exit code 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except CbaiError as error:
            click.echo(f"cbai: error: {error}", err=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            code = super().main(args, prog_name or "cbai", complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as error:
            click.echo(error.format_message())
            code = 0
        except click.exceptions.UsageError as error:
            message = error.format_message().replace("\n", " ")
            command = f"cbai {error.ctx.info_name}: " if error.ctx is not None and error.ctx.parent is not None else "cbai: "
            click.echo(f"{command}error: {message}", err=True)
            code = EXIT_BAD_INPUT
        except (typer.Abort, KeyboardInterrupt):
            click.echo("cbai: interrupted", err=True)
            code = 130
        except click.exceptions.ClickException as error:
            click.echo(f"cbai: error: {error.format_message()}", err=True)
            code = error.exit_code
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=CbaiGroup,
    help="Constrained linear best-arm identification: bound an instance's difficulty and solve it "
    "with ACOL or any baseline of Lindner et al. (ICML 2022).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_ALGORITHM_HELP = "Algorithm: " + ", ".join(ALGORITHMS) + ". The authors' method strings (" + ", ".join(
    list(ALIASES)[:3]) + ", …) are accepted too; see `cbai algorithms`."
_REGIME_HELP = (
    "Confidence regime: static (round-based; default for acol, oracle, g-allocation, uniform), "
    "theory (Prop. 3, default for adaptive), det (determinant form), tuned (radius √β)."
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cbai {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Constrained linear best-arm identification from the shell."""


@app.command()
def generate(
    family: str = typer.Argument(..., help="Instance family: irrelevant-dims, unit-sphere, regret-1d, random (see below)."),
    output: str = typer.Option("-", "-o", "--output", help="Output file (.yaml, .yml, .npz); '-' writes YAML to stdout."),
    d: Optional[int] = typer.Option(None, "--d", help="Dimension (irrelevant-dims, unit-sphere, random)."),
    eps: Optional[float] = typer.Option(None, "--eps", help="Distance ε of the relevant arms from the boundary (irrelevant-dims)."),
    n: Optional[int] = typer.Option(None, "--n", help="Number of arms (unit-sphere, random)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (unit-sphere, random)."),
    sigma: Optional[float] = typer.Option(None, "--sigma", help="Gaussian noise σ (default 0.05)."),
    noise: str = typer.Option("gaussian", "--noise", help="Noise model: gaussian or binary."),
) -> None:
    """Write one of the paper's instances (or a random one) to a file."""
    from cbai_cli.generators import family as find_family, make_noise
    from cbai_cli.instance import save

    chosen = find_family(family)
    given = {name: value for name, value in (("d", d), ("eps", eps), ("n", n), ("seed", seed)) if value is not None}
    for name in given:
        chosen.parameter(name)
    instance = chosen.generate(make_noise(noise, sigma, chosen.default_sigma), **given)
    save(instance, output)
    if output != "-":
        typer.echo(f"wrote {instance.name} ({instance.n_arms} arms, d = {instance.dim}) to {output}", err=True)


@app.command()
def bound(
    path: str = typer.Argument(..., metavar="FILE", help="Instance file (.yaml, .yml, .npz, or '-' for YAML on stdin)."),
    delta: float = typer.Option(0.05, "--delta", help="Confidence δ of the lower and upper bounds."),
    solver: str = typer.Option("auto", "--solver", help="Design solver: auto, fw (certified first-order), cvxpy (exact)."),
    epsilon: float = typer.Option(0.01, "--epsilon", help="Rounding ε in the Theorem 2 bound."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """How many constraint queries any method needs: H_CLB, Theorem 1, Proposition 1, Theorem 2."""
    from cbai_cli.bounds import compute_bounds
    from cbai_cli.instance import load
    from cbai_cli.render import bound_table, console, print_json, print_notes

    report = compute_bounds(load(path), delta=delta, solver=solver, epsilon=epsilon)
    if as_json:
        print_json(report.to_json())
        return
    out = console()
    out.print(bound_table(report))
    print_notes(out, report.notes)


@app.command()
def solve(
    path: str = typer.Argument(..., metavar="FILE", help="Instance file (.yaml, .yml, .npz, or '-' for YAML on stdin)."),
    algo: str = typer.Option(..., "--algo", "-a", help=_ALGORITHM_HELP),
    regime: Optional[str] = typer.Option(None, "--regime", help=_REGIME_HELP),
    delta: float = typer.Option(0.05, "--delta", help="Target error probability δ ∈ (0, 1)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the first run."),
    runs: int = typer.Option(1, "--runs", help="Run seeds seed, seed+1, …, seed+runs−1."),
    beta: Optional[float] = typer.Option(None, "--beta", help="Tuned regime: radius √β (the paper's β is 0.25)."),
    subgaussian: Optional[float] = typer.Option(None, "--subgaussian", help="Sub-Gaussian scale R (default: σ, or 1 for binary; the paper used 1)."),
    ridge: Optional[float] = typer.Option(None, "--lambda", help="Ridge λ of the adaptive design matrix (default 0.1)."),
    norm_bound: Optional[float] = typer.Option(None, "--S", help="Bound S ≥ ‖φ‖ (default: the instance's, else 1)."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Rounding ε of round-based algorithms (default 0.01)."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Stop after this many queries and give the anytime answer."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write one line per query to FILE (.csv or .jsonl); single run only."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """Run an algorithm on an instance's simulated feedback and score its answer."""
    from cbai_cli.errors import OptionError
    from cbai_cli.instance import load
    from cbai_cli.solving import solve_instance, write_trace

    if runs < 1:
        raise OptionError(f"--runs must be ≥ 1, got {runs}")
    if trace is not None:
        if runs != 1:
            raise OptionError("--trace records one run; use it without --runs")
        if trace.suffix.lower() not in (".csv", ".jsonl"):
            raise OptionError(f"--trace must end in .csv or .jsonl, got {trace.name!r}")
    from cbai_cli.simulate import RunSpec

    instance = load(path)
    request = RunSpec(algorithm=algo, regime=regime, delta=delta, beta=beta, subgaussian=subgaussian, ridge=ridge,
                      norm_bound=norm_bound, rounding_epsilon=epsilon, budget=budget)
    outcome = solve_instance(instance, request, seeds=range(seed, seed + runs), trace=trace is not None)
    if trace is not None:
        write_trace(trace, outcome.trace_rows)
    if as_json:
        from cbai_cli.render import print_json

        print_json(outcome.to_json())
    else:
        from cbai_cli.render import console, print_notes, solve_table

        out = console()
        out.print(solve_table(outcome.prepared, outcome.results, instance.name))
        out.print(outcome.bound_line())
        print_notes(out, outcome.notes)
    if any(result.stopped == "budget" for result in outcome.results):
        raise typer.Exit(1)


@app.command("algorithms")
def list_algorithms() -> None:
    """List the registered algorithms, their style and the regimes they accept."""
    from cbai_cli.render import console
    from rich.table import Table

    table = Table(title="CBAI algorithms", header_style="bold")
    for column in ("name", "style", "regimes (default first)", "description"):
        table.add_column(column)
    for spec in ALGORITHMS.values():
        table.add_row(spec.name, spec.style, ", ".join(spec.regimes), spec.summary)
    console().print(table)
    aliases = ", ".join(f"{name} → {alias.target} ({alias.regime})" for name, alias in ALIASES.items())
    console().print(f"Aliases from the authors' code: {aliases}")


_SOURCES_HELP = (
    "Instance files, folders (every .yaml/.yml/.npz inside) or generator specs such as "
    "irrelevant-dims:d=10,eps=0.02|0.05 (one parameter may list values: a sweep) or unit-sphere:d=30,n=30 "
    "(a fresh instance per seed)."
)
_ALGOS_HELP = (
    "Algorithm specs NAME[:REGIME][:OPTION=VALUE,...], comma-separated or repeated: "
    "acol, g-acol:tuned:beta=0.25, g-acol:theory, maxrew-f:tuned:beta=0.25,budget=100000. "
    "Options: beta, subgaussian, lambda, S, epsilon, budget, delta."
)


@app.command()
def compare(
    sources: Optional[list[str]] = typer.Argument(None, metavar="SOURCES", help=_SOURCES_HELP, show_default=False),
    algos: Optional[list[str]] = typer.Option(None, "--algos", "-a", metavar="SPEC[,SPEC...]", help=_ALGOS_HELP, show_default=False),
    seeds: Optional[int] = typer.Option(None, "--seeds", metavar="N", help="Seeds per instance group (default 10).", show_default=False),
    first_seed: Optional[int] = typer.Option(None, "--first-seed", metavar="S", help="First seed (default 0): seeds S, S+1, …", show_default=False),
    config: Optional[Path] = typer.Option(None, "--config", metavar="STUDY.yaml", help="Study file (YAML) with sources, algorithms, seeds and options; command-line values win.", show_default=False),
    delta: Optional[float] = typer.Option(None, "--delta", help="Target error probability δ (default 0.05).", show_default=False),
    beta: Optional[float] = typer.Option(None, "--beta", help="Tuned regime: radius √β (the paper's β is 0.25); applies to the specs in the tuned regime.", show_default=False),
    subgaussian: Optional[float] = typer.Option(None, "--subgaussian", help="Sub-Gaussian scale R (default σ; the paper used 1).", show_default=False),
    ridge: Optional[float] = typer.Option(None, "--lambda", help="Ridge λ of adaptive algorithms (default 0.1).", show_default=False),
    norm_bound: Optional[float] = typer.Option(None, "--S", help="Bound S ≥ ‖φ‖ for the theory and det regimes.", show_default=False),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Rounding ε of round-based algorithms (default 0.01).", show_default=False),
    budget: Optional[int] = typer.Option(None, "--budget", help="Query budget of every run (anytime answer when spent).", show_default=False),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", metavar="J", help="Worker processes (default: the number of cores; 1 runs here).", show_default=False),
    shard: Optional[str] = typer.Option(None, "--shard", metavar="I/N", help="Run only shard i of n (i/n, 1 ≤ i ≤ n), e.g. one per job of a Slurm array.", show_default=False),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", metavar="ADDRESS", help="Run on a Dask cluster at this address (pip install 'cbai[dask]').", show_default=False),
    out: Optional[Path] = typer.Option(None, "--out", "-o", metavar="FILE", help="Store records as they finish (.jsonl or .sqlite); re-running skips stored runs.", show_default=False),
    from_stores: Optional[list[Path]] = typer.Option(None, "--from", metavar="FILE", help="Show the tables and plots of stores (repeat to merge shards) without running anything; with --out, also copy their records into that store.", show_default=False),
    bounds: bool = typer.Option(True, "--bounds/--no-bounds", help="Compute each instance's lower bound for the ratio column."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document (records and summary) instead of tables."),
    as_csv: bool = typer.Option(False, "--csv", help="Print one CSV row per run instead of tables."),
    plot: Optional[Path] = typer.Option(None, "--plot", metavar="FILE", help="Write a figure (.png, .pdf or .svg): median queries with IQR against the swept parameter.", show_default=False),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or messages on stderr."),
) -> None:
    """Run many algorithms × seeds × instances in parallel, resumably, and summarise them."""
    from cbai_cli.compare.execute import pin_blas_threads_by_default

    pin_blas_threads_by_default()
    from cbai_cli.compare.render import check_outputs, show_comparison
    from cbai_cli.compare.study import CompareSettings, RecordCounter, plan_comparison, run_comparison
    from cbai_cli.errors import OptionError

    check_outputs(as_json, as_csv, plot)
    options = {"delta": delta, "beta": beta, "subgaussian": subgaussian, "lambda": ridge, "S": norm_bound,
               "epsilon": epsilon, "budget": budget}
    given = [name for name, value in (("SOURCES", sources or None), ("--algos", algos or None), ("--config", config),
                                      ("--seeds", seeds), ("--first-seed", first_seed), ("--shard", shard),
                                      ("--scheduler", scheduler), ("--jobs", jobs)) if value is not None]
    given += [f"--{name}" for name, value in options.items() if value is not None]
    if from_stores:
        if given:
            raise OptionError(f"--from shows stores as they are; it takes no {', '.join(given)}")
        from cbai_cli.compare.study import merge_stores

        merged = merge_stores(from_stores, out)
        if merged.skipped_lines and not quiet:
            typer.echo(f"cbai compare: skipped {merged.skipped_lines} unreadable line(s)", err=True)
        if out is not None and not quiet:
            typer.echo(f"cbai compare: copied {merged.copied} new records into {out}", err=True)
        show_comparison(merged.records, None, as_json=as_json, as_csv=as_csv, plot=plot)
        return
    settings = CompareSettings(sources=tuple(sources or ()), algorithms=tuple(algos or ()), seeds=seeds,
                               first_seed=first_seed, config=config, options=options, jobs=jobs, shard=shard,
                               scheduler=scheduler, out=out, bounds=bounds)
    planned = plan_comparison(settings)
    if planned.stored and not quiet:
        typer.echo(f"cbai compare: {len(planned.stored)} of {len(planned.plan.runs)} runs already stored in {out}; "
                   f"running the other {len(planned.pending)}", err=True)
    from cbai_cli.compare.render import progress_bar

    stored_now = RecordCounter()
    try:
        with progress_bar(len(planned.pending), enabled=not quiet and sys.stderr.isatty()) as progress:
            result = run_comparison(planned, progress, on_record=stored_now)
    except KeyboardInterrupt:
        if out is not None:
            typer.echo(f"cbai compare: {stored_now.count} new runs are stored in {out}; run the same command again to resume",
                       err=True)
        raise
    show_comparison(result.records, result.title, as_json=as_json, as_csv=as_csv, plot=plot)


def main() -> None:
    """Console-script entry point."""
    app()

