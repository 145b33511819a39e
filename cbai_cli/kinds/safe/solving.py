"""Safe algorithms as runs: their configurations, and the scored results of a run.

The registry entries of Safe-LUCB, LinGapE and Safe-LinGapE name the ``configure_*``
functions here (see :func:`cbai_cli.run.simulate.prepare`); the kinds ``safe-regret`` and
``safe-bai`` (:mod:`cbai_cli.kinds`) run them through the one loop and score them into a
:class:`RegretRun` or a :class:`BaiRun`, whose ``record()`` has the same keys for every
kind (iterations, regret, recommended, correct, violations, stopped, wall time).

- ``safe-lucb`` on ``safe-regret`` (Amani et al. 2019, §3–4 and the experiments of their
  Appendix F): regret at checkpoints, unsafe actions, exploration length T' and λ_min of
  the exploration design against Lemma 1's T'λ_−/2.
- ``lingape`` and ``safe-lingape`` on ``safe-bai`` ("Price of Safety in Linear BAI",
  §3–4): stopping time, recommended arm and scale, (ε-)correctness, unsafe pulls, γ̄
  against the true γ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cbai_cli.kinds.cbai.bounds import json_number
from cbai_cli.contracts.errors import InstanceError, OptionError
from cbai_cli.contracts.options import HORIZON_LIMIT
from cbai_cli.kinds.safe.files import SafeBaiInstance, SafeRegretInstance

# Without --budget a BAI run is capped like the library's run loop (it reports the
# anytime answer and exit code 1 if the cap is hit).
DEFAULT_MAX_STEPS = 1_000_000
# A recommended scale counts as unsafe only above the true safe scale by more than round-off.
SCALE_TOLERANCE = 1e-12


def _exploration(value: str | None, safety_gap: float) -> str | int:
    """``--exploration``: gap, t23, heuristic or a round count; the default is gap when Δ > 0 (§2.4)."""
    if value is None:
        return "gap" if safety_gap > 0 else "t23"
    if value in ("gap", "t23", "heuristic"):
        if value == "gap" and not safety_gap > 0:
            raise OptionError("--exploration gap needs a safety gap Δ > 0 (Theorem 2); this instance has Δ = 0 "
                              "(use t23 or a number of rounds)")
        return value
    try:
        rounds = int(value)
    except ValueError:
        raise OptionError(f"--exploration must be gap, t23, heuristic or a number of rounds ≥ 0, got {value!r}") from None
    if rounds < 0:
        raise OptionError(f"--exploration must be gap, t23, heuristic or a number of rounds ≥ 0, got {value!r}")
    return rounds


def _check_safe_lucb_sets(instance: SafeRegretInstance, confidence_set: str, intersect: bool) -> None:
    """The set options Safe-LUCB implements only for some action sets: the ellipsoid
    confidence set for finite sets, the intersection of past polytopes (the authors'
    ``intersectCLB.m``) for a 2-D box."""
    action_set = instance.problem.setting.action_set
    if confidence_set == "ellipsoid" and not action_set.supports_ellipsoid_confidence:
        raise OptionError("--confidence-set ellipsoid is implemented for finite action sets only "
                          f"(this instance's action set is the {action_set.label()})", "confidence_set")
    if intersect and not (action_set.supports_intersection and confidence_set == "polytope"):
        raise OptionError("--intersect needs a 2-D box action set and the polytope confidence set", "intersect")


def configure_safe_lucb(spec, regime, request, instance: SafeRegretInstance, *, solve_oracle: bool = True):
    """Safe-LUCB's configuration (Amani et al. 2019, Algorithm 1): the exploration length
    rule, the exploration set D^w and the confidence set; ``--T`` replaces the file's
    horizon, ``--delta``, ``--lambda`` and ``--S`` its δ, λ and S (§2.2). The run's budget is
    the horizon T.

    Raises :class:`OptionError` for an exploration rule the instance cannot use and
    :class:`InstanceError` when Safe-LUCB cannot run on the instance (e.g. no finite arm
    inside D^w).
    """
    from cbai_cli.algorithms.safe.exploration import build_exploration_set, exploration_length, uncapped_exploration_length
    from cbai_cli.algorithms.safe.safe_lucb import SafeLUCBConfig
    from cbai_cli.algorithms.registry import Configured

    given = request.given()
    instance = instance.with_run_options(given)
    horizon = request.get("horizon")
    if horizon is not None:
        instance = instance.with_horizon(horizon)
    elif instance.problem.setting.T > HORIZON_LIMIT:
        raise InstanceError(f"{instance.name}: T = {instance.problem.setting.T} rounds is more than a run can keep in "
                            f"memory (at most {HORIZON_LIMIT:.0e}, 8 bytes a round); give a smaller --T")
    gap = instance.truth.safety_gap
    mode = _exploration(given.get("exploration"), gap)
    dw, confidence_set, intersect = request.get("dw"), request.get("confidence_set"), bool(request.get("intersect"))
    _check_safe_lucb_sets(instance, confidence_set, intersect)
    # Theorem 2 assumes Δ known: "gap" reads it from the instance's truth, as the paper's experiments do.
    config = SafeLUCBConfig(exploration=mode, safety_gap=gap if mode == "gap" else None, dw=dw,
                            confidence_set=confidence_set, intersect=intersect)
    view = instance.problem.learner_view()
    try:
        exploration_set = build_exploration_set(view, dw)
        decided = exploration_set.lambda_minus_exact and mode != "heuristic"
        budget = (exploration_length(view, mode, exploration_set.lambda_minus, config.safety_gap)
                  if exploration_set.lambda_minus_exact or isinstance(mode, int) else None)
        uncapped = None if budget is None else uncapped_exploration_length(view, mode, exploration_set.lambda_minus,
                                                                           config.safety_gap)
    except ValueError as error:
        raise InstanceError(f"{instance.name}: safe-lucb cannot run on this instance: {error}") from None
    notes: list[str] = []
    default = " (the default when Δ > 0)" if "exploration" not in given else ""
    horizon = instance.problem.setting.T
    capped = budget is not None and uncapped > budget

    def length(symbol: str) -> str:
        """``T' = ⌈T_Δ⌉ = 10,245``, or ``T' = min(⌈T_Δ⌉ = 7,823, T) = 1,000`` when T capped it."""
        if budget is None:
            return f"T' = {symbol}"
        if capped:
            return f"T' = min({symbol} = {_count(uncapped)}, T) = {budget:,}"
        return f"T' = {symbol} = {budget:,}"

    if mode == "gap":
        notes.append(f"exploration gap{default}: {length('⌈T_Δ⌉')} from the instance's true safety gap Δ = {gap:.6g}, "
                     "which Theorem 2 takes as known")
    elif mode == "t23" and ("exploration" not in given or capped):
        default = " (the default when Δ = 0)" if "exploration" not in given else ""
        notes.append(f"exploration t23{default}: {length('⌈T_0⌉')}")
    elif mode == "heuristic":
        at_most = length("⌈T_0⌉").removeprefix("T' = ")
        notes.append("exploration heuristic (a plug-in rule for an unknown Δ; heuristic, not the paper's): T' is "
                     f"decided during the run from the plug-in gap Δ̂, at most {at_most}")
    elif isinstance(mode, int) and capped:
        notes.append(f"--exploration {_count(mode)} is more than the horizon T = {horizon:,}: T' = T, every round "
                     "explores")
    if capped and mode in ("gap", "t23"):
        notes.append(f"the horizon T = {horizon:,} caps the exploration: every round explores")
    if budget is None:
        notes.append("D^w leaves the action set, so λ_− is a Monte Carlo estimate that each run draws from its own "
                     "generator: T' is decided per run (see each run's exploration_rounds)")
    options = {"exploration": mode, "exploration_rounds": budget if decided or isinstance(mode, int) else None,
               "exploration_budget": budget, "T": horizon,
               "dw": dw, "confidence_set": confidence_set, "intersect": intersect, **_constants(instance, given)}
    return Configured(view, config, horizon, options, tuple(notes), instance=instance)


def _count(value: int) -> str:
    """A round count with thousands separators, or in floating point beyond 10¹⁵."""
    return f"{value:,}" if value < 10**15 else f"{float(value):.3g}"


def _constants(instance: SafeRegretInstance | SafeBaiInstance, given: dict[str, Any]) -> dict[str, Any]:
    """The run options given that replace constants of the file (``--delta``, ``--lambda``, …),
    as record columns; the file's constants themselves are part of the instance's record."""
    return {name: given[name] for name in instance.run_options if name in given}


def configure_lingape(spec, regime, request, instance: SafeBaiInstance, *, solve_oracle: bool = True):
    """LinGapE's configuration (Xu et al. 2018, Algorithm 1): full pulls, safety ignored;
    ``--delta``, ``--lambda`` and ``--S`` replace the file's δ_r, λ and S_θ."""
    from cbai_cli.algorithms.safe.lingape import LinGapEConfig
    from cbai_cli.algorithms.registry import Configured

    given = request.given()
    instance = instance.with_run_options(given)
    rule = request.get("rule")
    budget = request.get("budget") or DEFAULT_MAX_STEPS
    setting = instance.problem.learner_view()
    config = LinGapEConfig.from_safe_setting(setting, rule=rule)
    return Configured(setting.arms, config, budget, {"rule": rule, "budget": budget, **_constants(instance, given)},
                      instance=instance)


def configure_safe_lingape(spec, regime, request, instance: SafeBaiInstance, *, solve_oracle: bool = True):
    """Safe-LinGapE's configuration: forced exploration, then LinGapE on the safely scaled arms
    ("Price of Safety", §4); ``--delta``, ``--lambda``, ``--S``, ``--delta-s`` and ``--S-mu``
    replace the file's δ_r, λ, S_θ, δ'_s and S_μ."""
    from cbai_cli.algorithms.safe.safe_lingape import SafeLinGapEConfig
    from cbai_cli.algorithms.registry import Configured

    given = request.given()
    instance = instance.with_run_options(given)
    rule, updates = request.get("rule"), request.get("updates")
    budget = request.get("budget") or DEFAULT_MAX_STEPS
    config = SafeLinGapEConfig(rule=rule, update=updates)
    return Configured(instance.problem.learner_view(), config, budget,
                      {"rule": rule, "updates": updates, "budget": budget, **_constants(instance, given)},
                      instance=instance)


# --------------------------------------------------------------------------- results



def _vector(values: np.ndarray | None) -> list[float] | None:
    return None if values is None else [float(v) for v in values]


@dataclass(frozen=True)
class RegretRun:
    """One Safe-LUCB run, scored (the quantities of Amani et al. 2019, Appendix F).

    ``curve`` holds ``(t, R_t)`` at the points of :func:`curve_points`; ``checkpoints`` the
    powers of ten up to T (and T). ``lambda_min_design`` = ``λ_min(Σ_{s≤T'} x_s x_sᵀ)``
    against the lemma's ``T'λ_−/2``; ``x_star_in_safe``: fraction of phase-2 rounds whose
    estimated safe set contained x* (None without phase 2).
    """

    seed: int
    algorithm: str
    horizon: int
    regret: float
    curve: tuple[tuple[int, float], ...]
    checkpoints: tuple[tuple[int, float], ...]
    violations: int
    exploration_rounds: int
    lambda_minus: float
    lambda_min_design: float
    lambda_min_target: float
    x_star_in_safe: float | None
    wall_s: float

    kind = "safe-regret"
    stopped = "horizon"

    @classmethod
    def of(cls, seed: int, algorithm: str, result: Any, wall_s: float) -> RegretRun:
        """The record of a :class:`~cbai_cli.kinds.safe.environment.SafeRegretResult`."""
        horizon = result.T
        curve = result.regret_curve
        inside = result.x_star_in_safe_fraction
        return cls(
            seed=seed, algorithm=algorithm, horizon=horizon, regret=float(result.final_regret),
            curve=tuple((t, float(curve[t - 1])) for t in curve_points(horizon)),
            checkpoints=tuple((t, float(curve[t - 1])) for t in regret_checkpoints(horizon)),
            violations=int(result.n_unsafe), exploration_rounds=int(result.exploration_rounds),
            lambda_minus=float(result.lambda_minus), lambda_min_design=float(result.lambda_min_design),
            lambda_min_target=float(result.lambda_min_target),
            x_star_in_safe=None if math.isnan(inside) else float(inside), wall_s=wall_s,
        )

    @property
    def iterations(self) -> int:
        return self.horizon

    def record(self) -> dict:
        """The flat record shared by every kind (a regret run recommends nothing, so
        ``recommended``, ``correct`` and ``violation`` are None)."""
        return {"seed": self.seed, "algorithm": self.algorithm, "kind": self.kind, "iterations": self.horizon,
                "regret": self.regret, "recommended": None, "scale": None, "correct": None, "violation": None,
                "violations": self.violations, "exploration_rounds": self.exploration_rounds,
                "stopped": self.stopped, "wall_s": self.wall_s}

    def to_dict(self) -> dict:
        return {
            **self.record(),
            "regret_curve": [{"t": t, "regret": r} for t, r in self.curve],
            "exploration_rounds": self.exploration_rounds,
            "lambda_minus": self.lambda_minus,
            "lambda_min_design": json_number(self.lambda_min_design),
            "lambda_min_target": self.lambda_min_target,
            "x_star_in_safe": json_number(self.x_star_in_safe),
        }


@dataclass(frozen=True)
class BaiRun:
    """One LinGapE or Safe-LinGapE run, scored ("Price of Safety in Linear BAI", §5).

    ``correct``: the recommended arm is ε-optimal at its true safe scale,
    ``γ_{k*}x_{k*}ᵀθ* − γ_k̂ x_k̂ᵀθ* ≤ ε`` (with ε = 0: k̂ = k*); ``optimal``: k̂ = k*.
    ``stopped`` is ``solved`` when the stopping rule fired and ``budget`` when the pull cap
    ran out (then the answer is the anytime one). ``gamma_bar_fe``/``gamma_bar``: the safe
    scales after forced exploration and at the end (None for LinGapE).
    """

    seed: int
    algorithm: str
    variant: str
    iterations: int
    stopped: str
    recommended: int
    scale: float
    optimal_arm: int
    correct: bool
    optimal: bool
    violation: bool
    reward_gap: float
    violations: int
    pulls: tuple[int, ...]
    gamma_bar_fe: tuple[float, ...] | None
    gamma_bar: tuple[float, ...] | None
    wall_s: float

    kind = "safe-bai"

    @classmethod
    def of(cls, seed: int, algorithm: str, result: Any, wall_s: float) -> BaiRun:
        """The record of a :class:`~cbai_cli.kinds.safe.environment.SafeBaiResult`: ``correct`` is
        ε-correctness at the true safe scale, ``violation`` a recommended scale above the
        arm's true safe scale."""
        arm = int(result.recommended_arm)
        return cls(
            seed=seed, algorithm=algorithm, variant=result.algorithm, iterations=int(result.stopping_time),
            stopped="solved" if result.stopped else "budget", recommended=arm, scale=float(result.recommended_scale),
            optimal_arm=int(result.optimal_safe_arm), correct=bool(result.epsilon_correct), optimal=bool(result.correct),
            violation=bool(result.recommended_scale > result.true_gamma[arm] + SCALE_TOLERANCE),
            reward_gap=float(result.reward_gap), violations=int(result.n_unsafe),
            pulls=tuple(int(n) for n in result.pulls),
            gamma_bar_fe=None if result.gamma_bar_fe is None else tuple(map(float, result.gamma_bar_fe)),
            gamma_bar=None if result.gamma_bar_stop is None else tuple(map(float, result.gamma_bar_stop)),
            wall_s=wall_s,
        )

    @property
    def unsafe_fraction(self) -> float:
        return self.violations / self.iterations if self.iterations else 0.0

    def record(self) -> dict:
        """The flat record shared by every kind; ``violation``: the recommended arm at its
        recommended scale is unsafe (scale above the true γ_k̂), ``violations``: unsafe pulls."""
        return {"seed": self.seed, "algorithm": self.algorithm, "kind": self.kind, "iterations": self.iterations,
                "regret": None, "recommended": self.recommended, "scale": self.scale, "correct": self.correct,
                "violation": self.violation, "violations": self.violations, "exploration_rounds": None,
                "stopped": self.stopped, "wall_s": self.wall_s}

    def to_dict(self) -> dict:
        return {
            **self.record(),
            "variant": self.variant,
            "optimal": self.optimal,
            "optimal_arm": self.optimal_arm,
            "reward_gap": self.reward_gap,
            "unsafe_fraction": self.unsafe_fraction,
            "pulls": list(self.pulls),
            "gamma_bar_fe": None if self.gamma_bar_fe is None else list(self.gamma_bar_fe),
            "gamma_bar": None if self.gamma_bar is None else list(self.gamma_bar),
        }


def regret_checkpoints(horizon: int) -> list[int]:
    """10³, 10⁴, … up to T, and T itself (the checkpoints of Amani et al. 2019, Appendix F)."""
    points = [10**k for k in range(3, 19) if 10**k <= horizon]
    return sorted(set(points) | {horizon})


def curve_points(horizon: int) -> list[int]:
    """1-2-5 steps from 10 up to T, and T: a regret curve readable on log axes."""
    points = [m * 10**k for k in range(1, 19) for m in (1, 2, 5) if m * 10**k <= horizon]
    return sorted(set(points) | {horizon})


@dataclass(frozen=True)
class SafeSolveOutcome:
    """The runs of one ``solve`` call on a safe instance, with the instance's facts
    that its kind reports beside them (x* and Δ, or k* and the true γ)."""

    prepared: Any
    results: tuple
    facts: dict

    @property
    def instance(self):
        return self.prepared.instance

    @property
    def hit_budget(self) -> bool:
        """Whether some run ended at its pull cap without stopping (exit code 1)."""
        return any(result.stopped == "budget" for result in self.results)

    def render(self, out) -> None:
        self.prepared.kind.render_solve(self, out)

    def to_json(self) -> dict:
        instance = self.instance
        return {
            "algorithm": self.prepared.algorithm,
            "kind": instance.kind,
            "instance": instance.name,
            "instance_hash": instance.content_hash,
            "options": dict(self.prepared.options),
            "runs": [result.to_dict() for result in self.results],
            **self.facts,
            "notes": list(self.prepared.notes),
        }
