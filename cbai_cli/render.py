"""Rich tables and JSON documents for the CLI. No computation happens here."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rich.console import Console
from rich import box
from rich.table import Table

from cbai_cli.bounds import BoundReport

#: What the titles of ``bound`` and ``solve`` add when the instance's constraint is a guess.
GUESSED_TITLE = " — for a guessed constraint"


def markup_safe(value: object) -> str:
    """A string from a file (an instance name, a meta value) ready for a Rich table or
    ``console.print``: control characters escaped (:func:`~cbai_cli.validation.safe_text`)
    and square brackets escaped, so ``[/x]`` is printed, not read as markup (which fails)."""
    from rich.markup import escape

    from cbai_cli.validation import safe_text

    return escape(safe_text(value))


def console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def fmt(value: float | None, digits: int = 6) -> str:
    """A number for a table: ∞ for infinity, — for missing."""
    if value is None:
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    if isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    return f"{value:.{digits}g}"


def variance_text(variance: float) -> str:
    """σ² as text; one that underflowed (σ below 1.5e−154 squares to a subnormal or to 0)
    says so rather than read as σ² = 0."""
    if variance >= sys.float_info.min:
        return f"{variance:g}"
    return f"< {sys.float_info.min:.1e} (σ² underflows: the σ²-scaled bounds read 0)"


def arm_label(arm: int | None, label: str | None = None) -> str:
    """An arm as tables show it: its index, with its label (``meta.labels``) when it has one."""
    if arm is None:
        return "no feasible arm"
    return str(arm) if label is None else f"{arm} ({markup_safe(label)})"


#: The version of the shape of every JSON document the command line prints (its keys and
#: their meaning); docs/cli.md says what may change within one.
JSON_SCHEMA = 1


def print_json(document: dict) -> None:
    """One JSON document on stdout (infinities are already None), opening with the cbai
    version that wrote it and :data:`JSON_SCHEMA`, so that a script can check both."""
    from cbai_cli import __version__

    stamped = {"cbai_version": __version__, "schema": JSON_SCHEMA, **document}
    sys.stdout.write(json.dumps(stamped, indent=2, allow_nan=False) + "\n")


def bound_table(report: BoundReport, top: int = 5) -> Table:
    title = f"Bounds for {markup_safe(report.name)}" + (GUESSED_TITLE if report.guessed_constraint else "")
    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    best = arm_label(report.best_arm, report.best_arm_label)
    rows = [
        ("K, d", f"{report.n_arms}, {report.dim}" + (f" (rank {report.rank})" if report.rank < report.dim else ""), "arms, dimension"),
        ("x*", best, "constrained-optimal arm" + (f", reward {fmt(report.best_reward)}" if report.best_arm is not None else "")),
        ("|X≥(x*)|", fmt(report.n_at_least), "arms at least as rewarding as x*"),
        ("feasible arms", fmt(report.n_feasible), "arms with φᵀx ≤ τ"),
        ("H_CLB", fmt(report.h_clb.value), f"Definition 2 (relative gap {report.h_clb.gap:.1e}, {report.h_clb.solver})"),
        ("lower bound", fmt(report.lower_bound), f"Theorem 1: 2 log(1/(2.4δ))·H_CLB, unit noise, δ = {report.delta:g}"),
    ]
    if report.lower_bound_noise is not None:
        rows.append(("lower bound (σ²)", fmt(report.lower_bound_noise), f"Theorem 1 scaled by the noise variance σ² = {variance_text(report.noise_variance)}"))
    rows.append(("lower bound (kl)", fmt(report.lower_bound_kl), "Theorem 1 unrelaxed: 2 kl(δ, 1 − δ)·H_CLB, unit noise"))
    if report.lower_bound_kl_noise is not None:
        rows.append(("lower bound (kl, σ²)", fmt(report.lower_bound_kl_noise), "the same scaled by σ²"))
    if report.lower_bound_bernoulli is not None:
        rows.append(("H_Bern", fmt(report.h_bernoulli), "H_CLB with each yes/no answer's Bernoulli relative entropy"))
        rows.append(("lower bound (yes/no)", fmt(report.lower_bound_bernoulli), "Theorem 1 for yes/no answers: 2 log(1/(2.4δ))·H_Bern"))
        rows.append(("lower bound (yes/no, kl)", fmt(report.lower_bound_bernoulli_kl), "the same unrelaxed: 2 kl(δ, 1 − δ)·H_Bern"))
    rows += [
        ("H̄_CLB", fmt(report.h_clb_bar.value), "the same min-max over all arms"),
        ("C⁺_min", fmt(report.c_min), "min |φᵀx − τ|: distance of the closest arm to the boundary"),
        ("Prop. 1 bound", fmt(report.prop1_bound), "d/(C⁺_min)²: worst case over instances like this one"),
        ("ACOL bound", fmt(report.acol_upper_bound), f"Theorem 2 upper bound on ACOL's queries (ε = {report.epsilon:g})"),
    ]
    for row in rows:
        table.add_row(*row)
    support = report.h_clb.top(top)
    if support:
        table.add_row("design", ", ".join(f"arm {item['arm']}: {item['weight']:.3f}" for item in support),
                      f"top weights of the H_CLB design ({len(report.h_clb.top())} support points)")
    return table


def print_notes(out: Console, notes: Sequence[str]) -> None:
    for note in notes:
        out.print(f"[yellow]note:[/yellow] {note}")


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    q25, median, q75 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q25), float(median), float(q75)


def solve_table(prepared, results: Sequence, name: str, guessed_constraint: bool = False) -> Table:
    """The runs of ``cbai solve``, one row each (and their median when there are several);
    ``guessed_constraint``: the instance's constraint is a guess, which the title says."""
    # A light box and short headers so that the table fits an 80-column terminal.
    title = f"{prepared.algorithm} ({prepared.regime}) on {markup_safe(name)}"
    title += GUESSED_TITLE if guessed_constraint else ""
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD,
                  padding=(0, 1), collapse_padding=True, pad_edge=False)
    for column, justify in (("seed", "right"), ("algorithm", "left"), ("regime", "left"), ("queries", "right"),
                            ("arm", "right"), ("correct", "center"), ("violates", "center"),
                            ("stopped", "left"), ("wall s", "right")):
        table.add_column(column, justify=justify)
    for result in results:
        table.add_row(str(result.seed), prepared.algorithm, prepared.regime, fmt(result.iterations),
                      arm_label(result.recommended, result.label), "yes" if result.correct else "[red]no[/red]",
                      "[red]yes[/red]" if result.violation else "no", result.stopped, f"{result.wall_s:.3f}")
    if len(results) > 1:
        q25, median, q75 = quartiles([r.iterations for r in results])
        fraction = np.mean([r.correct for r in results])
        table.add_section()
        table.caption = f"{len(results)} runs: median queries {fmt(median)}, quartiles {fmt(q25)} and {fmt(q75)}"
        table.add_row("all", "", "", fmt(median), "",
                      f"{fraction:.0%}", f"{np.mean([r.violation for r in results]):.0%}", "",
                      f"{np.median([r.wall_s for r in results]):.3f}")
    return table


def algorithms_table(out: Console, entries: Sequence[Any], aliases: Mapping[str, Any]) -> None:
    """``cbai algorithms``: one row per registered algorithm (``entries``), then the
    authors' ``aliases``."""
    table = Table(title="Algorithms (options: cbai algorithms --json, or cbai solve --help)", header_style="bold")
    for column in ("name", "instance kinds", "style", "regimes (default first)", "description"):
        table.add_column(column, no_wrap=column in ("name", "instance kinds"))
    for entry in entries:
        table.add_row(entry.name, ", ".join(entry.kinds), entry.style, ", ".join(entry.regimes) or "—", entry.summary)
    out.print(table)
    aliases = ", ".join(f"{name} → {alias.target} ({alias.regime})" for name, alias in aliases.items())
    out.print(f"Aliases from the authors' code: {aliases}")
