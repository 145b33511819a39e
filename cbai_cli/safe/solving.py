"""``cbai solve`` on the safe kinds as a library call: check a request, run seeds, score them.

One run is one call of :func:`run_once` on ``(prepared request, instance, seed, key)``:
it derives the environment's noise and the algorithm's generator from
``SeedSequence(seed, spawn_key=key)`` through :func:`cbai_cli.simulate.run_streams`,
exactly as CBAI runs do, so a run depends on nothing else and ``--runs N`` gives the
same results as N single runs. :meth:`RegretRun.record` and :meth:`BaiRun.record` are
flat dictionaries with the same keys for every kind (iterations, regret, recommended,
correct, violations, stopped, wall time), for executors that run many of them.

- ``safe-lucb`` on ``safe-regret`` (specs/safe.md §2): regret at checkpoints, unsafe
  actions, exploration length T' and λ_min of the exploration design (§2.6).
- ``lingape`` and ``safe-lingape`` on ``safe-bai`` (§3–4): stopping time, recommended arm
  and scale, (ε-)correctness, unsafe pulls, γ̄ against the true γ (§4.6).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cbai_cli.errors import InstanceError, OptionError
from cbai_cli.safe.files import SafeBaiInstance, SafeRegretInstance
from cbai_cli.safe.registry import OPTIONS, SafeAlgorithmSpec, algorithm_for_kind
from cbai_cli.simulate import run_streams
from cbai_cli.bounds import json_number

# Without --budget a BAI run is capped like the library's run loop (it reports the
# anytime answer and exit code 1 if the cap is hit).
DEFAULT_MAX_STEPS = 1_000_000
# A recommended scale counts as unsafe only above the true safe scale by more than round-off.
SCALE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class SafeRunSpec:
    """What a user asks for on a safe instance; ``None`` means "not given".

    The fields are those of the options registered in :data:`cbai_cli.safe.registry.OPTIONS`.
    """

    algorithm: str
    exploration: str | None = None
    rule: str | None = None
    updates: str | None = None
    horizon: int | None = None
    budget: int | None = None
    dw: str | None = None
    confidence_set: str | None = None
    intersect: bool | None = None

    def given(self) -> list[str]:
        """The flags of the options that were given."""
        return [option.flag for option in OPTIONS.values() if getattr(self, option.field) is not None]


@dataclass(frozen=True)
class PreparedSafeRun:
    """A validated :class:`SafeRunSpec` bound to an instance: ready to run many seeds.

    Attributes:
        spec: the registered algorithm.
        instance: the instance as run (with ``--T`` applied).
        config: the library configuration (``SafeLUCBConfig``, ``LinGapEConfig`` or
            ``SafeLinGapEConfig``).
        max_steps: the pull cap of BAI runs (None for regret runs, which play T rounds).
        options: the options in effect, as plain values (for headers and records).
        notes: remarks for the user (defaults chosen, truth read for T_Δ).
    """

    spec: SafeAlgorithmSpec
    instance: SafeRegretInstance | SafeBaiInstance
    config: Any
    max_steps: int | None
    options: dict
    notes: tuple[str, ...] = ()

    @property
    def algorithm(self) -> str:
        return self.spec.name


def _choice(value: str | None, flag: str, default: str) -> str:
    """A registered option with a fixed list of values (``OPTIONS[flag].choices``)."""
    if value is None:
        return default
    allowed = OPTIONS[flag].choices
    if value not in allowed:
        raise OptionError(f"{flag} must be {' or '.join(allowed)}, got {value!r}")
    return value


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
    """The set options Safe-LUCB implements only for some action sets (§2.5a, §2.5b step 5)."""
    from cbai_cli.safe.problems import BoxSet, FiniteSet

    action_set = instance.problem.action_set
    if confidence_set == "ellipsoid" and not isinstance(action_set, FiniteSet):
        raise OptionError("--confidence-set ellipsoid is implemented for finite action sets only "
                          f"(this instance's action set is a {type(action_set).__name__})")
    if intersect and not (isinstance(action_set, BoxSet) and action_set.d == 2 and confidence_set == "polytope"):
        raise OptionError("--intersect needs a 2-D box action set and the polytope confidence set")


def prepare(request: SafeRunSpec, instance: SafeRegretInstance | SafeBaiInstance) -> PreparedSafeRun:
    """Check a request against the algorithm and the instance and fill in defaults.

    Raises :class:`OptionError` for an algorithm of another kind, an option the algorithm
    does not use, or an option value out of range; :class:`InstanceError` when the
    instance cannot be run by the algorithm (e.g. no finite arm inside D^w).
    """
    from cbai_cli.safe.lingape import LinGapEConfig
    from cbai_cli.safe.safe_lingape import SafeLinGapEConfig
    from cbai_cli.safe.safe_lucb import SafeLUCB, SafeLUCBConfig

    spec = algorithm_for_kind(request.algorithm, instance.kind)
    if spec is None:  # a CBAI algorithm on a CBAI instance is not ours to run
        raise OptionError(f"{request.algorithm!r} is a CBAI algorithm; run it through cbai_cli.solving")
    spec.check_options(request.given())
    if request.horizon is not None and request.horizon < 1:
        raise OptionError(f"--T must be ≥ 1, got {request.horizon}")
    if request.budget is not None and request.budget < 1:
        raise OptionError(f"--budget must be ≥ 1, got {request.budget}")
    notes: list[str] = []
    if spec.name == "safe-lucb":
        if request.horizon is not None:
            instance = instance.with_horizon(request.horizon)
        gap = instance.truth.safety_gap
        mode = _exploration(request.exploration, gap)
        dw = _choice(request.dw, "--dw", "ball")
        confidence_set = _choice(request.confidence_set, "--confidence-set", "polytope")
        intersect = bool(request.intersect)
        _check_safe_lucb_sets(instance, confidence_set, intersect)
        # Theorem 2 assumes Δ known: "gap" reads it from the instance's truth, as the paper's experiments do.
        config = SafeLUCBConfig(exploration=mode, safety_gap=gap if mode == "gap" else None, dw=dw,
                                confidence_set=confidence_set, intersect=intersect)
        try:
            # Constructing once checks that Safe-LUCB can run here (e.g. a finite set needs an
            # arm inside D^w) and gives T'; the generator only feeds a possible Monte Carlo λ_−.
            probe = SafeLUCB(instance.problem.learner_view(), config, np.random.default_rng(0))
        except ValueError as error:
            raise InstanceError(f"{instance.name}: safe-lucb cannot run on this instance: {error}") from None
        default = " (the default when Δ > 0)" if request.exploration is None else ""
        if mode == "gap":
            notes.append(f"exploration gap{default}: T' = ⌈T_Δ⌉ = {probe.exploration_rounds:,} from the instance's "
                         f"true safety gap Δ = {gap:.6g}, which Theorem 2 takes as known")
        elif mode == "t23" and request.exploration is None:
            notes.append(f"exploration t23 (the default when Δ = 0): T' = ⌈T_0⌉ = {probe.exploration_rounds:,}")
        elif mode == "heuristic":
            notes.append(f"exploration heuristic (specs/safe.md §2.4 proposal; heuristic, not the paper's): T' is "
                         f"decided during the run from the plug-in gap Δ̂, at most ⌈T_0⌉ = {probe.exploration_rounds:,}")
        # With the heuristic T' is only known after a run: the options give its budget ⌈T_0⌉.
        decided = mode != "heuristic"
        options = {"exploration": mode, "exploration_rounds": probe.exploration_rounds if decided else None,
                   "exploration_budget": probe.exploration_budget, "T": instance.problem.T,
                   "dw": dw, "confidence_set": confidence_set, "intersect": intersect}
        return PreparedSafeRun(spec, instance, config, None, options, tuple(notes))
    rule = _choice(request.rule, "--rule", "greedy")
    max_steps = request.budget if request.budget is not None else DEFAULT_MAX_STEPS
    if spec.name == "lingape":
        config = LinGapEConfig.from_safe_setting(instance.problem.learner_view(), rule=rule)
        options = {"rule": rule, "budget": max_steps}
    else:
        updates = _choice(request.updates, "--updates", "static")
        config = SafeLinGapEConfig(rule=rule, update=updates)
        options = {"rule": rule, "updates": updates, "budget": max_steps}
    return PreparedSafeRun(spec, instance, config, max_steps, options, tuple(notes))


# --------------------------------------------------------------------------- results



def _vector(values: np.ndarray | None) -> list[float] | None:
    return None if values is None else [float(v) for v in values]


@dataclass(frozen=True)
class RegretRun:
    """One Safe-LUCB run, scored (specs/safe.md §2.6).

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
    """One LinGapE or Safe-LinGapE run, scored (specs/safe.md §4.6).

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
    """10³, 10⁴, … up to T, and T itself (specs/safe.md §2.6)."""
    points = [10**k for k in range(3, 19) if 10**k <= horizon]
    return sorted(set(points) | {horizon})


def curve_points(horizon: int) -> list[int]:
    """1-2-5 steps from 10 up to T, and T: a regret curve readable on log axes."""
    points = [m * 10**k for k in range(1, 19) for m in (1, 2, 5) if m * 10**k <= horizon]
    return sorted(set(points) | {horizon})


def run_once(prepared: PreparedSafeRun, seed: int, key: tuple[int, ...] = ()) -> RegretRun | BaiRun:
    """Run one seeded episode of a prepared request and score it against the truth."""
    from cbai_cli.safe.environment import simulate_safe_bai, simulate_safe_regret

    noise_rng, algorithm_rng, _ = run_streams(seed, key)
    instance = prepared.instance
    started = time.perf_counter()
    if isinstance(instance, SafeRegretInstance):
        horizon = instance.problem.T
        checkpoints = regret_checkpoints(horizon)
        points = sorted(set(checkpoints) | set(curve_points(horizon)))
        result = simulate_safe_regret(instance.problem, prepared.config, algorithm_rng, noise_rng, checkpoints=points)
        wall = time.perf_counter() - started
        at = {int(t): float(r) for t, r in zip(result.checkpoints, result.regret_at)}
        return RegretRun(
            seed=seed, algorithm=prepared.algorithm, horizon=horizon, regret=float(result.final_regret),
            curve=tuple((t, at[t]) for t in curve_points(horizon)),
            checkpoints=tuple((t, at[t]) for t in checkpoints), violations=int(result.n_unsafe),
            exploration_rounds=int(result.exploration_rounds), lambda_minus=float(result.lambda_minus),
            lambda_min_design=float(result.lambda_min_design), lambda_min_target=float(result.lambda_min_target),
            x_star_in_safe=None if math.isnan(result.x_star_in_safe_fraction) else float(result.x_star_in_safe_fraction),
            wall_s=wall,
        )
    result = simulate_safe_bai(instance.problem, prepared.config, algorithm_rng, noise_rng, prepared.max_steps)
    wall = time.perf_counter() - started
    return BaiRun(
        seed=seed, algorithm=prepared.algorithm, variant=result.algorithm, iterations=int(result.stopping_time),
        stopped="solved" if result.stopped else "budget", recommended=int(result.recommended_arm),
        scale=float(result.recommended_scale), optimal_arm=int(result.optimal_safe_arm),
        correct=bool(result.epsilon_correct), optimal=bool(result.correct),
        violation=bool(result.recommended_scale > instance.truth.gamma[result.recommended_arm] + SCALE_TOLERANCE),
        reward_gap=float(result.reward_gap),
        violations=int(result.n_unsafe), pulls=tuple(int(n) for n in result.pulls),
        gamma_bar_fe=None if result.gamma_bar_fe is None else tuple(map(float, result.gamma_bar_fe)),
        gamma_bar=None if result.gamma_bar_stop is None else tuple(map(float, result.gamma_bar_stop)),
        wall_s=wall,
    )


@dataclass(frozen=True)
class SafeSolveOutcome:
    """The runs of one ``solve`` call on a safe instance."""

    prepared: PreparedSafeRun
    results: tuple

    @property
    def instance(self):
        return self.prepared.instance

    @property
    def hit_budget(self) -> bool:
        """Whether some run ended at its pull cap without stopping (exit code 1)."""
        return any(result.stopped == "budget" for result in self.results)

    def to_json(self) -> dict:
        instance = self.instance
        document = {
            "algorithm": self.prepared.algorithm,
            "kind": instance.kind,
            "instance": instance.name,
            "options": dict(self.prepared.options),
            "runs": [result.to_dict() for result in self.results],
        }
        if isinstance(instance, SafeRegretInstance):
            truth = instance.truth
            document.update(horizon=instance.problem.T, x_star=truth.x_star.tolist(), loss_star=truth.loss_star,
                            safety_gap=truth.safety_gap)
        else:
            truth = instance.truth
            document.update(optimal_arm=truth.optimal_safe_arm, true_gamma=_vector(truth.gamma),
                            epsilon=instance.problem.epsilon)
        document["notes"] = list(self.prepared.notes)
        return document


def run_record(instance: SafeRegretInstance | SafeBaiInstance, request: SafeRunSpec, seed: int,
               key: tuple[int, ...] = ()) -> dict:
    """One run as a flat record (see :meth:`RegretRun.record`), for executors of many runs.

    Preparing is cheap except for Safe-LUCB's probe; callers with many seeds of one
    (instance, request) should call :func:`prepare` once and :func:`run_once` per seed.
    """
    return run_once(prepare(request, instance), seed, key).record()


def solve_instance(instance: SafeRegretInstance | SafeBaiInstance, request: SafeRunSpec,
                   seeds: Iterable[int], key: tuple[int, ...] = ()) -> SafeSolveOutcome:
    """Run ``request`` once per seed; each seed gives the same result as a single run."""
    prepared = prepare(request, instance)
    return SafeSolveOutcome(prepared, tuple(run_once(prepared, seed, key) for seed in seeds))
