"""Rich tables for ``cbai solve`` and ``cbai bound`` on the safe kinds. No computation here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rich.table import Table

from cbai_cli.io.render import fmt, markup_safe, quartiles
from cbai_cli.kinds.safe.bounds import SafeBaiBounds, SafeRegretBounds
from cbai_cli.kinds.safe.solving import BaiRun, RegretRun, SafeSolveOutcome


def _checkpoint_label(t: int, horizon: int) -> str:
    """``R(10⁴)`` for powers of ten, ``R(T)`` for the horizon otherwise (the title gives T)."""
    exponent = len(str(t)) - 1
    if t == 10**exponent and exponent >= 3:
        superscript = str(exponent).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
        return f"R(10{superscript})"
    return "R(T)" if t == horizon else f"R({t:,})"


def _vector(values: Sequence[float], digits: int = 4) -> str:
    return "(" + ", ".join(f"{v:.{digits}g}" for v in values) + ")"


def _option_text(name: str, value: object) -> str:
    """``lambda 2.0``: an option in effect as a table title shows it, by its spec name."""
    from cbai_cli.contracts.options import OPTIONS

    return f"{OPTIONS[name].spec_name if name in OPTIONS else name} {value}"


def regret_table(outcome: SafeSolveOutcome) -> Table:
    """One row per seed: T', λ_min of the exploration design, regret at 10³, 10⁴, …, T, unsafe actions.

    With several runs a last row ``all`` gives the median regret and wall time and the total of unsafe actions.
    """
    results: Sequence[RegretRun] = outcome.results
    instance = outcome.instance
    options = outcome.prepared.options
    settings = [f"exploration {options['exploration']}"]
    settings += [f"D^w {options['dw']}"] if options["dw"] != "ball" else []
    settings += [f"{options['confidence_set']} confidence set"] if options["confidence_set"] != "polytope" else []
    settings += ["intersected polytopes"] if options["intersect"] else []
    settings += [_option_text(name, options[name]) for name in instance.run_options if name in options]
    table = Table(title=f"{outcome.prepared.algorithm} ({', '.join(settings)}) on {markup_safe(instance.name)} "
                        f"({instance.summary})", header_style="bold")
    table.add_column("seed", justify="right")
    table.add_column("T'", justify="right")
    table.add_column("λ_min at T'", justify="right")
    points = [t for t, _ in results[0].checkpoints]
    for t in points:
        table.add_column(_checkpoint_label(t, results[0].horizon), justify="right")
    table.add_column("unsafe", justify="right")
    table.add_column("wall s", justify="right")
    for run in results:
        table.add_row(str(run.seed), fmt(run.exploration_rounds), f"{run.lambda_min_design:.4g}",
                      *(f"{r:,.0f}" for _, r in run.checkpoints),
                      fmt(run.violations) if run.violations == 0 else f"[red]{run.violations:,}[/red]",
                      f"{run.wall_s:.2f}")
    if len(results) > 1:
        table.add_section()
        medians = [float(np.median([run.checkpoints[i][1] for run in results])) for i in range(len(points))]
        table.add_row("all", "", "", *(f"{m:,.0f}" for m in medians),
                      f"{sum(run.violations for run in results):,}", f"{np.median([r.wall_s for r in results]):.2f}")
    return table


def regret_summary(outcome: SafeSolveOutcome) -> str:
    """x*, its loss, Δ, λ_− and the lemma's target for λ_min: what the table is measured against."""
    truth = outcome.instance.truth
    run = outcome.results[0]
    inside = run.x_star_in_safe
    inside_text = "" if inside is None else f"; x* was in the estimated safe set in {inside:.0%} of phase-2 rounds (seed {run.seed})"
    return (f"x* = {_vector(truth.x_star, 6)}, loss μ*ᵀx* = {truth.loss_star:.6g}, safety gap Δ = {truth.safety_gap:.6g}; "
            f"λ_− = {run.lambda_minus:.6g}, so λ_min at T' should reach T'λ_−/2 = {run.lambda_min_target:.4g} "
            f"(§2.4){inside_text}")


def bai_table(outcome: SafeSolveOutcome) -> Table:
    """One row per seed: stopping time, answer (arm @ scale), correctness, unsafe pulls.

    With several runs a last row ``all`` gives the median τ and wall time, the fraction of
    correct answers and the total of unsafe pulls (and their share of all pulls).
    """
    results: Sequence[BaiRun] = outcome.results
    options = ", ".join(_option_text(key, value) for key, value in outcome.prepared.options.items() if key != "budget")
    instance = outcome.instance
    table = Table(title=f"{outcome.prepared.algorithm} ({options}) on {markup_safe(instance.name)} ({instance.summary})",
                  header_style="bold")
    for column, justify in (("seed", "right"), ("pulls τ", "right"), ("stopped", "left"), ("arm @ γ", "right"),
                            ("correct", "center"), ("unsafe pulls", "right"), ("wall s", "right")):
        table.add_column(column, justify=justify)
    for run in results:
        unsafe = f"{run.violations:,} ({run.unsafe_fraction:.1%})"
        table.add_row(str(run.seed), fmt(run.iterations), run.stopped, f"{run.recommended} @ {run.scale:.4g}",
                      _correct_label(run), unsafe if run.violations == 0 else f"[red]{unsafe}[/red]", f"{run.wall_s:.2f}")
    if len(results) > 1:
        median = float(np.median([run.iterations for run in results]))
        table.add_section()
        unsafe = sum(r.violations for r in results)
        table.add_row("all", f"{median:,.0f}", "", "", f"{np.mean([r.correct for r in results]):.0%}",
                      f"{unsafe:,} ({unsafe / sum(r.iterations for r in results):.1%})",
                      f"{np.median([r.wall_s for r in results]):.2f}")
    return table


def _correct_label(run: BaiRun) -> str:
    """``yes`` for k̂ = k*, ``ε-optimal`` for another arm within ε at its true safe scale, else ``no``."""
    if run.optimal:
        return "yes"
    return "ε-optimal" if run.correct else "[red]no[/red]"


def bai_summary(outcome: SafeSolveOutcome) -> str | None:
    """Quartiles of the stopping time over several runs."""
    results: Sequence[BaiRun] = outcome.results
    if len(results) < 2:
        return None
    q25, median, q75 = quartiles([run.iterations for run in results])
    return (f"{len(results)} runs: pulls τ median {median:,.0f} (quartiles {q25:,.0f} and {q75:,.0f}); "
            f"{sum(r.stopped == 'solved' for r in results)} stopped by the rule; k̂ = k* in "
            f"{sum(r.optimal for r in results)}, ε-correct in {sum(r.correct for r in results)}")


def gamma_table(outcome: SafeSolveOutcome) -> Table | None:
    """Per arm: the true safe scale γ_k against the medians of γ̄ after FE and at the end (§4.6)."""
    results: Sequence[BaiRun] = outcome.results
    if results[0].gamma_bar_fe is None:
        return None
    truth = outcome.instance.truth
    label = "median over runs" if len(results) > 1 else f"seed {results[0].seed}"
    table = Table(title=f"Safe scales: estimates γ̄ against the truth γ ({label})", header_style="bold")
    for column in ("arm", "x_kᵀμ*", "true γ_k", "γ̄ after FE", "γ̄ at the end", "γ_k x_kᵀθ*"):
        table.add_column(column, justify="right")
    fe = np.median([run.gamma_bar_fe for run in results], axis=0)
    end = np.median([run.gamma_bar for run in results], axis=0)
    for k in range(len(truth.gamma)):
        marker = " (k*)" if k == truth.optimal_safe_arm else ""
        table.add_row(f"{k}{marker}", f"{truth.safety_values[k]:.6g}", f"{truth.gamma[k]:.4g}", f"{fe[k]:.4g}",
                      f"{end[k]:.4g}", f"{truth.safe_rewards[k]:.6g}")
    return table


def lingape_note(outcome: SafeSolveOutcome) -> str | None:
    """What the scales of a LinGapE-family run mean: LinGapE ignores safety (which arms are
    unsafe at the full scale it uses); Safe-LinGapE runs stopped during forced exploration
    pulled at γ_FE only and estimated no safe scale. None otherwise."""
    from cbai_cli.algorithms.safe.lingape import LinGapEConfig

    if not isinstance(outcome.prepared.config, LinGapEConfig):  # Safe-LinGapE
        return _forced_exploration_note(outcome)
    truth = outcome.instance.truth
    unsafe = [k for k in range(len(truth.gamma)) if truth.gamma[k] < 1]
    listed = ", ".join(f"arm {k} (safe up to γ = {truth.gamma[k]:.4g})" for k in unsafe) or "none"
    return f"{outcome.prepared.algorithm} pulls every arm at full scale γ = 1, ignoring safety; unsafe at full scale: {listed}"


def _forced_exploration_note(outcome: SafeSolveOutcome) -> str | None:
    """Safe-LinGapE runs that reached their cap during forced exploration ("Price of Safety", §4)."""
    results: Sequence[BaiRun] = outcome.results
    early = sum(run.gamma_bar_fe is None for run in results)
    if not early:
        return None
    setting = outcome.instance.problem.setting
    which = "the run" if len(results) == 1 else f"all {early} runs" if early == len(results) else \
        f"{early} of {len(results)} runs"
    return (f"{outcome.prepared.algorithm}: {which} reached the pull cap during forced exploration (T_FE = "
            f"{setting.T_FE:,} pulls), "
            f"pulling arms at γ_FE = {setting.gamma_FE:g} only, so no safe scale γ̄ was estimated; the answer "
            "reported is arm 0 at γ_FE, a placeholder")


def regret_bound_table(report: SafeRegretBounds) -> Table:
    table = Table(title=f"Safe-LUCB constants for {markup_safe(report.name)}", header_style="bold")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    lam_note = "" if report.lambda_minus_exact else " (Monte Carlo estimate: D^w is cut by the action set)"
    rows = [
        ("D_0, d, T", f"{report.action_set}, {report.dim}, {report.horizon:,}", "action set, dimension, horizon"),
        ("x*", _vector(report.x_star, 6), "optimal safe action (§2.1)"),
        ("μ*ᵀx*", f"{report.loss_star:.6g}", "its loss"),
        ("Δ", f"{report.safety_gap:.6g}", "safety gap c − x*ᵀBμ* (§2.2); 0 means x* is on the constraint"),
        ("‖B‖", f"{report.B_norm:.6g}", "spectral norm of B"),
        ("r_w", f"{report.exploration_radius:.6g}", "radius c/(‖B‖S) of the safe exploration ball D^w (§2.2)"),
        ("λ_−", fmt(report.lambda_minus), "λ_min of the covariance of Unif(D^w)" + lam_note),
        ("t_δ", fmt(report.t_delta), "(8L²/λ_−) log(d/δ): exploration for λ_min ≥ T'λ_−/2 (§2.4)"),
        ("β_T", f"{report.beta_T:.7g}", "confidence radius at the last round (§2.3 step 3)"),
        ("T_Δ", fmt(report.T_delta) if report.T_delta is not None else "— (Δ = 0)",
         "Theorem 2's exploration length, --exploration gap (§2.4)"),
        ("T_0", fmt(report.T_0), "Theorem 3's exploration length, --exploration t23 (§2.4)"),
    ]
    for row in rows:
        table.add_row(*row)
    return table


def bai_bound_table(report: SafeBaiBounds) -> Table:
    table = Table(title=f"Safe BAI quantities for {markup_safe(report.name)} ({report.n_arms} arms, d = {report.dim})",
                  header_style="bold")
    for column in ("arm", "x_kᵀμ*", "true γ_k", "x_kᵀθ*", "γ_k x_kᵀθ*"):
        table.add_column(column, justify="right")
    for k in range(report.n_arms):
        marker = " (k*)" if k == report.optimal_arm else ""
        table.add_row(f"{k}{marker}", f"{report.safety_values[k]:.6g}", f"{report.true_gamma[k]:.6g}",
                      f"{report.rewards[k]:.6g}", f"{report.safe_rewards[k]:.6g}")
    return table


def bai_bound_lines(report: SafeBaiBounds) -> list[str]:
    return [
        f"optimal safe arm k* = {report.optimal_arm} (played at γ = {report.true_gamma[report.optimal_arm]:.6g}); "
        f"best arm ignoring safety = {report.unconstrained_best_arm}; η₀ = {report.eta0:g}, ε = {report.epsilon:.6g}, "
        f"γ_FE = {report.gamma_FE:g}",
        f"LinGapE complexity H_ε (§3.3): {fmt(report.complexity_full)} on the full arms; "
        f"{fmt(report.complexity_safe)} on the arms at their true safe scales γ_k·x_k (unit noise)",
    ]
