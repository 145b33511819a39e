"""The tables of ``cbai bound`` and ``cbai solve`` on ``cbai`` instances. No computation
happens here."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from rich import box
from rich.table import Table

from cbai_cli.io.render import GUESSED_TITLE, arm_label, fmt, markup_safe, quartiles, variance_text
from cbai_cli.kinds.cbai.bounds import BoundReport


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
        bracket = ("" if report.h_bernoulli_upper is None or not math.isfinite(report.h_bernoulli)
                   else f" (its true value at most {fmt(report.h_bernoulli_upper)})")
        rows.append(("H_Bern", fmt(report.h_bernoulli),
                     f"H_CLB with each yes/no answer's Bernoulli relative entropy{bracket}"))
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
        points = len(report.h_clb.top())
        table.add_row("design", ", ".join(f"arm {item['arm']}: {item['weight']:.3f}" for item in support),
                      f"top weights of the H_CLB design ({points} support point{'' if points == 1 else 's'})")
    return table


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
