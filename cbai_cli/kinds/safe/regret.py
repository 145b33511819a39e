"""The ``safe-regret`` kind: the stage-wise safe linear bandit of Safe-LUCB
(Amani, Alizadeh, Thrampoulidis, NeurIPS 2019).

An action set D_0, an unknown loss parameter μ* and the stage-wise constraint
xᵀBμ* ≤ c that every played action must satisfy (§2); a run plays T rounds and is
scored by its cumulative pseudo-regret, its unsafe actions, and the diagnostics of the
exploration phase (Lemma 1: λ_min of the exploration design against T'λ_−/2).
"""

from __future__ import annotations

from typing import Any

from cbai_cli.kinds.safe.base import SafeKind


class SafeRegretKind(SafeKind):
    name = "safe-regret"
    summary = "Safe-LUCB: action set, unknown loss μ*, stage-wise constraint xᵀBμ* ≤ c, horizon T"
    metric = ("regret", "regret")
    judges_answers = False
    unsafe_label = "unsafe actions"
    draws_curves = True
    bound_options = ("delta", "ridge", "norm_bound")

    def example(self):
        """Amani et al.'s instance A (Appendix F) over a horizon of 300."""
        from cbai_cli.kinds.cbai.families import family

        return family("amani-a").generate(T=300)

    def file_warnings(self, instance: Any) -> list[str]:
        """A horizon beyond what a run keeps in memory: the file stands, a run needs ``--T``."""
        from cbai_cli.contracts.options import HORIZON_LIMIT

        horizon = instance.problem.setting.T
        if horizon <= HORIZON_LIMIT:
            return []
        return [f"T = {horizon:,} rounds is more than a run keeps in memory (at most "
                f"{HORIZON_LIMIT:.0e}, 8 bytes a round): run this file with --T of at most that"]

    def parse(self, mapping, source):
        from cbai_cli.kinds.safe.files import safe_regret_from_mapping

        return safe_regret_from_mapping(mapping, source)

    def bound(self, instance, progress=None, **options):
        from cbai_cli.kinds import checked_bound_options
        from cbai_cli.kinds.safe.bounds import safe_regret_bounds

        given = checked_bound_options(self, options)
        return safe_regret_bounds(instance.with_run_options(given))

    def render_bound(self, report, out) -> None:
        from cbai_cli.kinds.safe.render import regret_bound_table

        out.print(regret_bound_table(report))

    def environment(self, instance, rng):
        from cbai_cli.kinds.safe.environment import SafeRegretEnvironment

        return SafeRegretEnvironment(instance.problem, rng)

    def observer(self, prepared, environment, rng, rows):
        from cbai_cli.kinds.safe.environment import RegretObserver

        return RegretObserver(prepared.instance.problem, environment)

    def score(self, prepared, seed, learner, environment, observer, loop):
        from cbai_cli.kinds.safe.environment import regret_result
        from cbai_cli.kinds.safe.solving import RegretRun

        return RegretRun.of(seed, prepared.algorithm,
                            regret_result(prepared.instance.problem, learner, environment, observer), loop.wall_s)

    def result_record(self, result) -> dict:
        """The flat record and the regret curve, as (t, R_t) pairs, for compare's plots."""
        return {**result.record(), "regret_curve": [[t, regret] for t, regret in result.curve]}

    def solve(self, prepared, results, trace_rows=(), bound=None, progress=None):
        from cbai_cli.kinds.safe.solving import SafeSolveOutcome

        truth = prepared.instance.truth
        return SafeSolveOutcome(prepared, results, {
            "horizon": prepared.instance.problem.setting.T, "x_star": truth.x_star.tolist(), "loss_star": truth.loss_star,
            "safety_gap": truth.safety_gap})

    def render_solve(self, outcome, out) -> None:
        from cbai_cli.io.render import print_notes
        from cbai_cli.kinds.safe import render

        out.print(render.regret_table(outcome))
        out.print(render.regret_summary(outcome))
        print_notes(out, list(outcome.prepared.notes))
