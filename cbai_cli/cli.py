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


@app.command("driver-arms")
def driver_arms(
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Instance file to write (.npz recommended, or .yaml); "
                                          "with --scenario all, one file per scenario named FILE-base.npz, FILE-different-reward.npz, "
                                          "FILE-different-environment.npz. With --show: the picture (.png, .pdf, .svg)."),
    n: Optional[int] = typer.Option(None, "--n", help="Number of candidate policies, one CEM each (default 1000, the paper's)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Root seed; policy i uses child i of SeedSequence(seed) (default 0)."),
    scenario: Optional[str] = typer.Option(None, "--scenario", help="base, different-reward, different-environment, or all (default base)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Worker processes for the CEM runs (default 1; any value gives the same policies)."),
    feedback: Optional[str] = typer.Option(None, "--feedback", help="binary (default: yes/no answers, arms rescaled per arm so φᵀx ∈ [−1, 1]) or gaussian (no rescaling)."),
    sigma: Optional[float] = typer.Option(None, "--sigma", help="Noise σ of --feedback gaussian (default 0.1)."),
    rescale_rewards: bool = typer.Option(False, "--rescale-rewards", help="Compute rewards on the rescaled arms, as the authors' code did "
                                         "(default: θᵀ of the unscaled features)."),
    policies: Optional[Path] = typer.Option(None, "--policies", help="Evaluate these action sequences (.npy, n × 20 × 2, in [−1, 1]) instead of running the CEM."),
    show: Optional[Path] = typer.Option(None, "--show", help="Draw policies of this driver instance file instead of building one; needs -o PICTURE."),
    arm: Optional[list[int]] = typer.Option(None, "--arm", metavar="K", help="With --show: draw this arm's policy (repeat for several)."),
    highlight: Optional[int] = typer.Option(None, "--highlight", help="With --show: draw all candidates, green if feasible and red if not, this arm on top."),
    solved: Optional[str] = typer.Option(None, "--solved", help="With --show: highlight the arm recommended in `cbai solve FILE --json` output (a file, or - for stdin)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no summary."),
) -> None:
    """Driving policies as CBAI arms (paper §4.3): build a driver instance, or draw its policies.

    Build: run n constrained/penalised CEMs on randomly perturbed problems (or read --policies) and write the
    scenario's instance: 9-dim arms (f1..f8, 1) with the threshold folded in, binary feedback, per-arm
    rewards θᵀf. Show: `cbai driver-arms --show FILE.npz --arm 17 -o fig.png`, or
    `cbai solve FILE.npz --algo g-acol --regime tuned --beta 1 --json > run.json` then
    `cbai driver-arms --show FILE.npz --solved run.json -o fig.png`.
    """
    from cbai_cli.errors import OptionError

    if show is not None:
        building = {"--n": n, "--seed": seed, "--scenario": scenario, "--jobs": jobs, "--feedback": feedback,
                    "--sigma": sigma, "--policies": policies, "--rescale-rewards": rescale_rewards or None}
        given = [name for name, value in building.items() if value is not None]
        if given:
            raise OptionError(f"{', '.join(given)} build an instance; they do not apply with --show")
        if output is None:
            raise OptionError("--show needs -o PICTURE (.png, .pdf or .svg)")
        picked = [name for name, value in (("--arm", arm or None), ("--highlight", highlight), ("--solved", solved)) if value is not None]
        if len(picked) > 1:
            raise OptionError(f"use one of --arm, --highlight and --solved, not {' and '.join(picked)}")
        from cbai_cli.driver.show import check_figure_path, driver_view, show_arms, show_candidates, solved_arm
        from cbai_cli.instance import load

        check_figure_path(output)
        view = driver_view(load(show), str(show))
        if arm:
            written = show_arms(view, arm, output)
            what = ", ".join(view.label(a) for a in arm)
        else:
            chosen = solved_arm(solved) if solved is not None else highlight
            written = show_candidates(view, output, chosen)
            what = f"{view.instance.n_arms} candidates, {int(view.feasible.sum())} feasible" + (
                "" if chosen is None else f"; highlighted {view.label(chosen)}")
            if solved is not None and chosen is None:
                what += "; the run answered 'no feasible arm', nothing highlighted"
        if not quiet:
            typer.echo(f"drew {view.scenario.name}: {what} to {written}", err=True)
        return
    if arm or highlight is not None or solved is not None:
        raise OptionError("--arm, --highlight and --solved draw pictures: use them with --show FILE")
    if output is None:
        raise OptionError("give -o FILE.npz for the instance (or --show FILE to draw one)")
    if policies is not None and (n is not None or jobs is not None or seed is not None):
        raise OptionError("--policies replaces the CEM: --n, --seed and --jobs do not apply")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from cbai_cli.driver.instances import DEFAULT_N_POLICIES, Feedback, build_arm_sets, output_paths, scenario_names, write_arm_sets

    choice = scenario if scenario is not None else "base"
    settings = Feedback(feedback if feedback is not None else "binary", sigma, rescale_rewards)
    paths = output_paths(output, scenario_names(choice))  # bad names fail before the CEM runs
    stderr = Console(stderr=True)
    bar = Progress(TextColumn("CEM policies"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("eta"), TimeRemainingColumn(), console=stderr, disable=quiet or policies is not None or not stderr.is_terminal)
    total = n if n is not None else DEFAULT_N_POLICIES
    with bar:
        task = bar.add_task("cem", total=total)
        arm_sets = build_arm_sets(choice, settings, n=total, seed=seed if seed is not None else 0,
                                  jobs=jobs if jobs is not None else 1, policies_file=policies,
                                  progress=lambda done, _: bar.update(task, completed=done))
    write_arm_sets(arm_sets, output)
    if not quiet:
        for arm_set in arm_sets:
            typer.echo(f"{arm_set.summary()}; wrote {paths[arm_set.scenario]}", err=True)


def main() -> None:
    """Console-script entry point."""
    app()

