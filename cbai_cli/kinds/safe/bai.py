"""The ``safe-bai`` kind: safe best-arm identification with partial pulls
("Price of Safety in Linear BAI").

Finite arms x_k with an unknown reward θ* and an unknown safety parameter μ*; pulling
γ·x_k is safe iff γ x_kᵀμ* ≥ η₀ (§4). A run stops when its stopping rule fires and is
scored by the recommended arm and scale against the optimal safe arm, and by its
unsafe pulls.
"""

from __future__ import annotations

from cbai_cli.kinds.safe.base import SafeKind


class SafeBaiKind(SafeKind):
    name = "safe-bai"
    summary = "safe BAI: finite arms, reward θ*, safety μ*, partial pulls γ·x safe iff γxᵀμ* ≥ η₀"
    metric = ("pulls", "iterations")
    unsafe_label = "unsafe pulls"

    def example(self):
        """The safe Soare instance of ``cbai generate soare-safe`` in d = 2."""
        from cbai_cli.kinds.cbai.families import family

        return family("soare-safe").generate(d=2)

    def parse(self, mapping, source):
        from cbai_cli.kinds.safe.files import safe_bai_from_mapping

        return safe_bai_from_mapping(mapping, source)

    def bound(self, instance, progress=None, **options):
        from cbai_cli.kinds import checked_bound_options
        from cbai_cli.kinds.safe.bounds import safe_bai_bounds

        checked_bound_options(self, options)
        return safe_bai_bounds(instance)

    def render_bound(self, report, out) -> None:
        from cbai_cli.kinds.safe.render import bai_bound_lines, bai_bound_table

        out.print(bai_bound_table(report))
        for line in bai_bound_lines(report):
            out.print(line)

    def environment(self, instance, rng):
        from cbai_cli.kinds.safe.environment import SafeBaiEnvironment

        return SafeBaiEnvironment(instance.problem, rng)

    def score(self, prepared, seed, learner, environment, observer, loop):
        from cbai_cli.kinds.safe.environment import bai_result
        from cbai_cli.kinds.safe.solving import BaiRun

        return BaiRun.of(seed, prepared.algorithm, bai_result(prepared.instance.problem, learner, environment),
                         loop.wall_s)

    def solve(self, prepared, results, trace_rows=(), bound=None, progress=None):
        from cbai_cli.kinds.safe.solving import SafeSolveOutcome, _vector

        truth = prepared.instance.truth
        return SafeSolveOutcome(prepared, results, {
            "optimal_arm": truth.optimal_safe_arm, "true_gamma": _vector(truth.gamma),
            "epsilon": prepared.instance.problem.setting.epsilon})

    def render_solve(self, outcome, out) -> None:
        from cbai_cli.io.render import print_notes
        from cbai_cli.kinds.safe import render

        notes = list(outcome.prepared.notes)
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
