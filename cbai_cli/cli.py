"""The ``cbai`` command line: parse options, call the library, render.

Heavy modules (numpy-based library code, cvxpy, matplotlib) are imported inside the
commands, so ``cbai --help`` starts fast. Every :class:`~cbai_cli.errors.CbaiError`
and every usage error ends as one line on stderr with exit code 2.
"""

from __future__ import annotations

import os
import sys

# One BLAS thread unless the user says otherwise: cbai's linear algebra is small dense
# matrices, where OpenBLAS threads only contend (an optimal design at K = 1000, d = 30
# took 121 s threaded on a busy 2-core machine against 0.5 s single-threaded).
# Set before numpy is first imported, which happens inside the commands.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
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
from cbai_cli.errors import CbaiError, Terminated
from cbai_cli.safe.registry import OPTIONS as SAFE_OPTIONS, SAFE_ALGORITHMS

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
    help="Constrained linear best-arm identification and safe linear bandits: bound an instance's "
    "difficulty and solve it with ACOL or any baseline of Lindner et al. (ICML 2022), or with "
    "Safe-LUCB, LinGapE and Safe-LinGapE.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_ALGORITHM_HELP = (
    "Algorithm: " + ", ".join(ALGORITHMS) + " (cbai files); "
    + "; ".join(f"{spec.name} ({spec.kind} files)" for spec in SAFE_ALGORITHMS.values())
    + ". The authors' method strings (" + ", ".join(list(ALIASES)[:3]) + ", …) are accepted too; see `cbai algorithms`."
)
_REGIME_HELP = (
    "Confidence regime: static (round-based; default for acol, oracle, g-allocation, uniform), "
    "theory (Prop. 3, default for adaptive), det (determinant form), tuned (radius √β)."
)


def _safe_help(flag: str) -> str:
    """Help of a safe-only option, from the registry (values, default, who uses it)."""
    option = SAFE_OPTIONS[flag]
    users = ", ".join(name for name, spec in SAFE_ALGORITHMS.items() if flag in spec.options)
    return f"{option.help}: {option.values} (default {option.default}; {users})."


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
    family: str = typer.Argument(..., help="Instance family: irrelevant-dims, unit-sphere, regret-1d, random (cbai); "
                                 "amani-a, amani-b (safe-regret); soare-safe (safe-bai)."),
    output: str = typer.Option("-", "-o", "--output", help="Output file (.yaml, .yml, .npz); '-' writes YAML to stdout."),
    d: Optional[int] = typer.Option(None, "--d", help="Dimension (irrelevant-dims, unit-sphere, random, soare-safe)."),
    eps: Optional[float] = typer.Option(None, "--eps", help="Distance ε of the relevant arms from the boundary (irrelevant-dims)."),
    n: Optional[int] = typer.Option(None, "--n", help="Number of arms (unit-sphere, random)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (unit-sphere, random)."),
    horizon: Optional[int] = typer.Option(None, "--T", help="Horizon T (amani-a, amani-b; default 100000)."),
    omega: Optional[float] = typer.Option(None, "--omega", help="Angle ω of the extra arm (soare-safe; default 0.1)."),
    eta0: Optional[float] = typer.Option(None, "--eta0", help="Safety threshold η₀ < 0 (soare-safe; default −0.5)."),
    sigma: Optional[float] = typer.Option(None, "--sigma", help="Gaussian noise σ (cbai families; default 0.05)."),
    noise: Optional[str] = typer.Option(None, "--noise", help="Noise model: gaussian (default) or binary (cbai families)."),
) -> None:
    """Write one of the papers' instances (or a random one) to a file."""
    from cbai_cli.generators import family as find_family, make_noise
    from cbai_cli.kinds import save

    chosen = find_family(family)
    given = {name: value for name, value in (("d", d), ("eps", eps), ("n", n), ("seed", seed), ("T", horizon),
                                             ("omega", omega), ("eta0", eta0)) if value is not None}
    for name in given:
        chosen.parameter(name)
    if chosen.takes_noise:
        instance = chosen.generate(make_noise(noise, sigma, chosen.default_sigma), **given)
    else:
        if noise is not None or sigma is not None:
            from cbai_cli.errors import OptionError

            raise OptionError(f"--noise and --sigma do not apply to {chosen.name}: the noise is part of its "
                              f"{chosen.kind} instance (specs/safe.md)")
        instance = chosen.generate(**given)
    save(instance, output)
    if output != "-":
        summary = getattr(instance, "summary", None) or f"{instance.n_arms} arms, d = {instance.dim}"
        typer.echo(f"wrote {instance.name} ({summary}) to {output}", err=True)


@app.command()
def bound(
    path: str = typer.Argument(..., metavar="FILE", help="Instance file (.yaml, .yml, .npz, or '-' for YAML on stdin)."),
    delta: Optional[float] = typer.Option(None, "--delta", help="Confidence δ of the lower and upper bounds (cbai files; default 0.05)."),
    solver: Optional[str] = typer.Option(None, "--solver", help="Design solver: auto (default), fw (certified first-order), cvxpy (exact); cbai files."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Rounding ε in the Theorem 2 bound (cbai files; default 0.01)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """How hard an instance is. cbai: H_CLB, Theorem 1, Proposition 1, Theorem 2. safe-regret: Δ, λ_−, t_δ,
    T_Δ, T_0. safe-bai: true safe scales γ_k, the optimal safe arm, LinGapE's complexity."""
    from cbai_cli.kinds import load

    instance = load(path)
    if instance.kind != "cbai":
        from cbai_cli.errors import OptionError

        for flag, value in (("--delta", delta), ("--solver", solver), ("--epsilon", epsilon)):
            if value is not None:
                raise OptionError(f"{flag} does not apply to {instance.kind} instances "
                                  "(their constants are fields of the file)")
        _bound_safe(instance, as_json)
        return
    from cbai_cli.bounds import compute_bounds
    from cbai_cli.render import bound_table, console, print_json, print_notes

    report = compute_bounds(instance, delta=0.05 if delta is None else delta, solver=solver or "auto",
                            epsilon=0.01 if epsilon is None else epsilon)
    if as_json:
        print_json(report.to_json())
        return
    out = console()
    out.print(bound_table(report))
    print_notes(out, report.notes)


def _bound_safe(instance, as_json: bool) -> None:
    """``cbai bound`` on a safe-regret or safe-bai instance (specs/safe.md §2.4, §3.3, §4.1)."""
    from cbai_cli.render import console, print_json

    if instance.kind == "safe-regret":
        from cbai_cli.safe.bounds import safe_regret_bounds

        report = safe_regret_bounds(instance)
        if as_json:
            print_json(report.to_json())
            return
        from cbai_cli.safe.render import regret_bound_table

        console().print(regret_bound_table(report))
        return
    from cbai_cli.safe.bounds import safe_bai_bounds

    report = safe_bai_bounds(instance)
    if as_json:
        print_json(report.to_json())
        return
    from cbai_cli.safe.render import bai_bound_lines, bai_bound_table

    out = console()
    out.print(bai_bound_table(report))
    for line in bai_bound_lines(report):
        out.print(line)


@app.command()
def solve(
    path: str = typer.Argument(..., metavar="FILE", help="Instance file (.yaml, .yml, .npz, or '-' for YAML on stdin)."),
    algo: str = typer.Option(..., "--algo", "-a", help=_ALGORITHM_HELP),
    regime: Optional[str] = typer.Option(None, "--regime", help=_REGIME_HELP),
    delta: Optional[float] = typer.Option(None, "--delta", help="Target error probability δ ∈ (0, 1) (cbai files; default 0.05)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the first run."),
    runs: int = typer.Option(1, "--runs", help="Run seeds seed, seed+1, …, seed+runs−1."),
    beta: Optional[float] = typer.Option(None, "--beta", help="Tuned regime: radius √β (the paper's β is 0.25)."),
    subgaussian: Optional[float] = typer.Option(None, "--subgaussian", help="Sub-Gaussian scale R (default: σ, or 1 for binary; the paper used 1)."),
    ridge: Optional[float] = typer.Option(None, "--lambda", help="Ridge λ of the adaptive design matrix (default 0.1)."),
    norm_bound: Optional[float] = typer.Option(None, "--S", help="Bound S ≥ ‖φ‖ (default: the instance's, else 1)."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Rounding ε of round-based algorithms (default 0.01)."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Stop after this many queries (pulls) and give the anytime answer."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write one line per query to FILE (.csv or .jsonl); single run only."),
    exploration: Optional[str] = typer.Option(None, "--exploration", help=_safe_help("--exploration")),
    horizon: Optional[int] = typer.Option(None, "--T", help=_safe_help("--T")),
    rule: Optional[str] = typer.Option(None, "--rule", help=_safe_help("--rule")),
    updates: Optional[str] = typer.Option(None, "--updates", help=_safe_help("--updates")),
    dw: Optional[str] = typer.Option(None, "--dw", help=_safe_help("--dw")),
    confidence_set: Optional[str] = typer.Option(None, "--confidence-set", help=_safe_help("--confidence-set")),
    intersect: Optional[bool] = typer.Option(None, "--intersect", help=_safe_help("--intersect"), show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of a table."),
) -> None:
    """Run an algorithm on an instance's simulated feedback and score it."""
    from cbai_cli.errors import OptionError
    from cbai_cli.kinds import load
    from cbai_cli.safe.registry import algorithm_for_kind, owners

    if runs < 1:
        raise OptionError(f"--runs must be ≥ 1, got {runs}")
    instance = load(path)
    safe_spec = algorithm_for_kind(algo, instance.kind)
    if safe_spec is not None:
        cbai_only = (("--regime", regime), ("--delta", delta), ("--beta", beta), ("--subgaussian", subgaussian),
                     ("--lambda", ridge), ("--S", norm_bound), ("--epsilon", epsilon), ("--trace", trace))
        safe_spec.check_options([flag for flag, value in cbai_only if value is not None])
        from cbai_cli.safe.solving import SafeRunSpec

        request = SafeRunSpec(algorithm=algo, exploration=exploration, rule=rule, updates=updates, horizon=horizon,
                              budget=budget, dw=dw, confidence_set=confidence_set, intersect=intersect)
        _solve_safe(instance, request, range(seed, seed + runs), as_json)
        return
    safe_only = (("--exploration", exploration), ("--T", horizon), ("--rule", rule), ("--updates", updates),
                 ("--dw", dw), ("--confidence-set", confidence_set), ("--intersect", intersect))
    for flag, value in safe_only:
        if value is not None:
            raise OptionError(f"{flag} does not apply to {algo} (it is an option of {', '.join(owners(flag))})")
    from cbai_cli.solving import solve_instance, write_trace

    if trace is not None:
        if runs != 1:
            raise OptionError("--trace records one run; use it without --runs")
        if trace.suffix.lower() not in (".csv", ".jsonl"):
            raise OptionError(f"--trace must end in .csv or .jsonl, got {trace.name!r}")
    from cbai_cli.simulate import RunSpec

    request = RunSpec(algorithm=algo, regime=regime, delta=0.05 if delta is None else delta, beta=beta,
                      subgaussian=subgaussian, ridge=ridge, norm_bound=norm_bound, rounding_epsilon=epsilon,
                      budget=budget)
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


def _solve_safe(instance, request, seeds: range, as_json: bool) -> None:
    """``cbai solve`` on a safe-regret or safe-bai instance; exit code 1 if a BAI run hit its pull cap."""
    from cbai_cli.render import console, print_json, print_notes
    from cbai_cli.safe import render
    from cbai_cli.safe.solving import solve_instance

    outcome = solve_instance(instance, request, seeds)
    if as_json:
        print_json(outcome.to_json())
    else:
        out = console()
        notes = list(outcome.prepared.notes)
        if instance.kind == "safe-regret":
            out.print(render.regret_table(outcome))
            out.print(render.regret_summary(outcome))
        else:
            out.print(render.bai_table(outcome))
            summary = render.bai_summary(outcome)
            if summary:
                out.print(summary)
            gammas = render.gamma_table(outcome)
            if gammas is not None:
                out.print(gammas)
            notes += [note for note in (render.lingape_note(outcome),) if note]
        if outcome.hit_budget:
            notes.append("some run reached its pull cap (--budget) before stopping: its answer is the anytime one")
        print_notes(out, notes)
    if outcome.hit_budget:
        raise typer.Exit(1)


@app.command("algorithms")
def list_algorithms() -> None:
    """List the registered algorithms: CBAI ones with their style and regimes, safe ones with their options."""
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
    safe = Table(title="Safe-bandit algorithms", header_style="bold")
    for column in ("name", "instance kind", "options (default)", "description"):
        safe.add_column(column)
    for spec in SAFE_ALGORITHMS.values():
        options = ", ".join(f"{flag} {SAFE_OPTIONS[flag].values} ({SAFE_OPTIONS[flag].default})" for flag in spec.options)
        safe.add_row(spec.name, spec.kind, options, spec.summary)
    console().print(safe)


_SOURCES_HELP = (
    "Instance files, folders (every .yaml/.yml/.npz inside) or generator specs such as "
    "irrelevant-dims:d=10,eps=0.02|0.05 (one parameter may list values: a sweep) or unit-sphere:d=30,n=30 "
    "(a fresh instance per seed)."
)
_ALGOS_HELP = (
    "Algorithm specs NAME[:REGIME][:OPTION=VALUE,...], comma-separated or repeated: "
    "acol, g-acol:tuned:beta=0.25, g-acol:theory, maxrew-f:tuned:beta=0.25,budget=100000. "
    "Options: beta, subgaussian, lambda, S, epsilon, budget, delta. Safe algorithms (on safe-regret and "
    "safe-bai instances) take no regime and their solve options without dashes: "
    "safe-lucb:exploration=0, safe-lingape:updates=dynamic,rule=ratio."
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
    plot: Optional[Path] = typer.Option(None, "--plot", metavar="FILE", help="Write a figure (.png, .pdf or .svg): median queries (pulls, regret) with IQR against the swept parameter; regret curves for safe-regret groups.", show_default=False),
    title: Optional[str] = typer.Option(None, "--title", help="Title of the tables and figure (default: the study file's title, if any).", show_default=False),
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
        show_comparison(merged.records, title, as_json=as_json, as_csv=as_csv, plot=plot)
        return
    settings = CompareSettings(sources=tuple(sources or ()), algorithms=tuple(algos or ()), seeds=seeds,
                               first_seed=first_seed, config=config, options=options, jobs=jobs, shard=shard,
                               scheduler=scheduler, out=out, bounds=bounds)
    planned = plan_comparison(settings)
    idle = planned.grid.idle_groups()
    if idle and not quiet:
        typer.echo(f"cbai compare: no algorithm given runs on {', '.join(sorted({group.kind for group in idle}))} "
                   f"instances; skipping {', '.join(group.label for group in idle)}", err=True)
    if planned.stored and not quiet:
        typer.echo(f"cbai compare: {len(planned.stored)} of {len(planned.plan.runs)} runs already stored in {out}; "
                   f"running the other {len(planned.pending)}", err=True)
    from cbai_cli.compare.render import progress_bar

    stored_now = RecordCounter()
    try:
        with progress_bar(len(planned.pending), enabled=not quiet and sys.stderr.isatty()) as progress:
            result = run_comparison(planned, progress, on_record=stored_now)
    except KeyboardInterrupt as interrupt:
        if out is not None:
            typer.echo(f"cbai compare: {stored_now.count} new runs are stored in {out}; run the same command again to resume",
                       err=True)
        if isinstance(interrupt, Terminated):
            typer.echo("cbai: terminated", err=True)
            raise typer.Exit(143) from None
        raise
    show_comparison(result.records, title or result.title, as_json=as_json, as_csv=as_csv, plot=plot)


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

