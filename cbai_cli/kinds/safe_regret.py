"""The ``safe-regret`` kind: the stage-wise safe linear bandit of Safe-LUCB
(Amani, Alizadeh, Thrampoulidis, NeurIPS 2019).

An action set D_0, an unknown loss parameter μ* and the stage-wise constraint
xᵀBμ* ≤ c that every played action must satisfy (§2); a run plays T rounds and is
scored by its cumulative pseudo-regret, its unsafe actions, and the diagnostics of the
exploration phase (Lemma 1: λ_min of the exploration design against T'λ_−/2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cbai_cli.kinds.base import InstanceKind

# The options of the request type of cbai 0.1 for safe runs (``SafeRunSpec``): a store's
# run keys hash them, so stores written then still resume.
SAFE_IDENTITY_OPTIONS = ("exploration", "rule", "updates", "horizon", "budget", "dw", "confidence_set", "intersect")


@dataclass
class RegretObserver:
    """Follows a Safe-LUCB run: the cumulative regret after every round, λ_min of the
    exploration design when phase 1 ends, and how often x* lay in the estimated safe set.

    It reads the truth (x*, the environment's regret), as scoring does; the algorithm
    never sees it.
    """

    environment: object
    x_star: np.ndarray
    horizon: int
    lam: float
    curve: np.ndarray = field(init=False)
    exploring: bool = True
    lambda_min_design: float = math.nan
    inside: int = 0
    step: int = 0

    def __post_init__(self) -> None:
        self.curve = np.empty(self.horizon)

    def _design_lambda_min(self, learner) -> float:
        """λ_min(Σ_s x_s x_sᵀ) of the data so far: the design matrix without the ridge."""
        gram = learner.state.A
        return float(np.linalg.eigvalsh(gram - self.lam * np.eye(gram.shape[0]))[0])

    def start(self, learner) -> None:
        # T' is read from the algorithm's phase before every action: with the heuristic
        # exploration rule it is decided during phase 1.
        if self.exploring and learner.phase == 2:
            self.exploring = False
            self.lambda_min_design = self._design_lambda_min(learner)

    def asked(self, query, learner) -> None:
        if self.step == 0:
            self.start(learner)
        if not self.exploring:
            self.inside += learner.in_estimated_safe_set(self.x_star)

    def told(self, query, answer, learner, used: int) -> None:
        self.curve[self.step] = self.environment.cumulative_regret
        self.step += 1
        self.start(learner)

    def finish(self, learner) -> None:
        if self.exploring:
            self.lambda_min_design = self._design_lambda_min(learner)


class SafeRegretKind(InstanceKind):
    name = "safe-regret"
    summary = "Safe-LUCB: action set, unknown loss μ*, stage-wise constraint xᵀBμ* ≤ c, horizon T"
    metric = ("regret", "regret")
    judges_answers = False
    unsafe_label = "unsafe actions"
    draws_curves = True
    identity_options = SAFE_IDENTITY_OPTIONS

    def parse(self, mapping, source):
        from cbai_cli.safe.files import safe_regret_from_mapping

        return safe_regret_from_mapping(mapping, source)

    def bound(self, instance, **options):
        from cbai_cli.safe.bounds import safe_regret_bounds

        return safe_regret_bounds(instance)

    def render_bound(self, report, out) -> None:
        from cbai_cli.safe.render import regret_bound_table

        out.print(regret_bound_table(report))

    def environment(self, instance, rng):
        from cbai_cli.safe.environment import SafeRegretEnvironment

        return SafeRegretEnvironment(instance.problem, rng)

    def observer(self, prepared, environment, rng, rows):
        problem = prepared.instance.problem
        return RegretObserver(environment, environment.truth.x_star, problem.T, problem.lam)

    def score(self, prepared, seed, learner, environment, observer, loop):
        from cbai_cli.safe.solving import RegretRun, curve_points, regret_checkpoints

        observer.finish(learner)
        horizon = prepared.instance.problem.T
        curve = observer.curve
        exploration_rounds = learner.exploration_rounds
        inside = observer.inside / (horizon - exploration_rounds) if horizon > exploration_rounds else None
        return RegretRun(
            seed=seed, algorithm=prepared.algorithm, horizon=horizon, regret=float(curve[-1]),
            curve=tuple((t, float(curve[t - 1])) for t in curve_points(horizon)),
            checkpoints=tuple((t, float(curve[t - 1])) for t in regret_checkpoints(horizon)),
            violations=int(environment.n_unsafe), exploration_rounds=int(exploration_rounds),
            lambda_minus=float(learner.lambda_minus), lambda_min_design=float(observer.lambda_min_design),
            lambda_min_target=exploration_rounds * learner.lambda_minus / 2.0,
            x_star_in_safe=inside, wall_s=loop.wall_s,
        )

    def solve(self, prepared, results, trace_rows=()):
        from cbai_cli.safe.solving import SafeSolveOutcome

        truth = prepared.instance.truth
        return SafeSolveOutcome(prepared, results, {
            "horizon": prepared.instance.problem.T, "x_star": truth.x_star.tolist(), "loss_star": truth.loss_star,
            "safety_gap": truth.safety_gap})

    def render_solve(self, outcome, out) -> None:
        from cbai_cli.render import print_notes
        from cbai_cli.safe import render

        out.print(render.regret_table(outcome))
        out.print(render.regret_summary(outcome))
        print_notes(out, list(outcome.prepared.notes))
