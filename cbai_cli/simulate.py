"""The ask/tell loop that runs any CBAI algorithm against a simulated environment.

The environment (:class:`Environment`) is the only place φ is read while a run is in
progress; correctness and violation are scored against the instance afterwards.
Randomness: every run derives three independent streams (noise, algorithm, trace)
from ``SeedSequence(seed, spawn_key=key)``, so the same seed gives the same result
whatever else runs, and every algorithm run on a seed faces the same noise stream.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from cbai_cli.algorithms.base import Algorithm, AlgorithmConfig
from cbai_cli.algorithms.registry import PAPER_TUNED_BETA, AlgorithmSpec, resolve
from cbai_cli.confidence import ConfidenceSettings, regime_notes
from cbai_cli.errors import OptionError
from cbai_cli.instance import Instance, Truth
from cbai_cli.noise import NoiseModel
from cbai_cli.protocol import Answer, Query


# MaxRew-F can pull the same certainly-feasible arm forever; without a budget it gets this one.
DEFAULT_BUDGET_IF_MAY_NOT_STOP = 1_000_000


class Environment:
    """Answers queries with sums of noisy observations of φᵀx.

    Args:
        arms: (K, d) the learner's arms.
        truth: the hidden constraint and the noise model.
        rng: the run's noise stream.
    """

    def __init__(self, arms: np.ndarray, truth: Truth, rng: np.random.Generator) -> None:
        self.means = truth.means(arms)
        self.noise: NoiseModel = truth.noise
        self.rng = rng

    def answer(self, query: Query) -> Answer:
        """Sums (m,) of ``counts[i]`` observations of arm ``arms[i]``, drawn in one call."""
        return Answer(self.noise.sample_sums(self.rng, self.means[query.arms], query.counts))


@dataclass(frozen=True)
class RunSpec:
    """What a user asks for: the algorithm and every knob of ``cbai solve``.

    ``None`` means "the default for this algorithm and instance".
    """

    algorithm: str
    regime: str | None = None
    delta: float = 0.05
    beta: float | None = None
    subgaussian: float | None = None
    ridge: float | None = None
    norm_bound: float | None = None
    rounding_epsilon: float | None = None
    budget: int | None = None


@dataclass(frozen=True)
class PreparedRun:
    """A validated :class:`RunSpec` bound to an instance: ready to run many seeds."""

    spec: AlgorithmSpec
    config: AlgorithmConfig
    budget: int | None
    oracle_design: np.ndarray | None = None
    notes: tuple[str, ...] = ()

    @property
    def algorithm(self) -> str:
        return self.spec.name

    @property
    def regime(self) -> str:
        return self.config.regime


@dataclass(frozen=True)
class RunResult:
    """One run, scored.

    ``recommended`` is None for "no feasible arm"; ``stopped`` is ``solved`` when the
    algorithm's stopping rule fired and ``budget`` when the query budget ran out.
    """

    seed: int
    iterations: int
    recommended: int | None
    correct: bool
    violation: bool
    stopped: str
    wall_s: float
    rounds: int = 0

    def to_dict(self) -> dict:
        return {
            "seed": self.seed,
            "iterations": self.iterations,
            "recommended": self.recommended,
            "correct": self.correct,
            "violation": self.violation,
            "stopped": self.stopped,
            "wall_s": self.wall_s,
        }


def _check_positive(name: str, value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise OptionError(f"{name} must be a finite number > 0, got {value}")


def prepare(request: RunSpec, instance: Instance, *, solve_oracle: bool = True) -> PreparedRun:
    """Check a request against the algorithm's capabilities and fill in defaults.

    Raises :class:`OptionError` for a regime the algorithm cannot use, ``tuned``
    without β, β without ``tuned``, δ outside (0, 1), options that make no sense for
    the algorithm's style, and non-positive constants. ``solve_oracle=False`` skips the
    Oracle's design solve (its only costly step), for checking many requests before
    any run starts; the result then cannot run the Oracle.
    """
    spec, alias = resolve(request.algorithm)
    if not (0 < request.delta < 1):
        raise OptionError(f"--delta must lie in (0, 1), got {request.delta}")
    regime = request.regime
    beta = request.beta
    if alias is not None and alias.regime is not None:
        if regime is not None and regime != alias.regime:
            raise OptionError(f"{request.algorithm!r} means regime {alias.regime!r}; it conflicts with --regime {regime}")
        regime = alias.regime
        if beta is None and alias.beta is not None:
            beta = alias.beta
    regime = regime or spec.default_regime
    spec.check_regime(regime)
    if regime == "tuned" and beta is None:
        raise OptionError(f"--regime tuned needs --beta (the paper's value is {PAPER_TUNED_BETA}: radius √β = 0.5)")
    if regime != "tuned" and beta is not None:
        raise OptionError(f"--beta only applies to --regime tuned (this run uses {regime!r})")
    if spec.style == "round" and request.ridge is not None:
        raise OptionError(f"--lambda (ridge) does not apply to the round-based algorithm {spec.name!r}: it refits by least squares each round")
    if spec.style == "adaptive" and request.rounding_epsilon is not None:
        raise OptionError(f"--epsilon (rounding) does not apply to the adaptive algorithm {spec.name!r}")
    if regime in ("static", "tuned") and request.norm_bound is not None:
        raise OptionError(f"--S only enters the theory and det regimes, not {regime!r}")
    for name, value in (("--beta", beta), ("--subgaussian", request.subgaussian), ("--lambda", request.ridge),
                        ("--S", request.norm_bound), ("--epsilon", request.rounding_epsilon)):
        _check_positive(name, value)
    if request.budget is not None and request.budget < 1:
        raise OptionError(f"--budget must be ≥ 1, got {request.budget}")
    problem = instance.problem
    norm_bound = request.norm_bound or problem.constraint_norm_bound or 1.0
    settings = ConfidenceSettings(
        delta=request.delta,
        subgaussian=request.subgaussian if request.subgaussian is not None else problem.noise.subgaussian,
        ridge=request.ridge if request.ridge is not None else 0.1,
        norm_bound=norm_bound,
        arm_bound=max(float(np.linalg.norm(problem.arms, axis=1).max()), 1e-12),
        beta=beta,
    )
    config = AlgorithmConfig(regime=regime, confidence=settings,
                             rounding_epsilon=request.rounding_epsilon if request.rounding_epsilon is not None else 0.01)
    oracle_design = None
    notes = list(regime_notes(regime, problem.dim))
    if spec.needs_oracle and solve_oracle:
        from cbai_cli.bounds import oracle_design as compute_oracle_design

        oracle_design = compute_oracle_design(instance)
    budget = request.budget
    if not spec.guaranteed_stop and budget is None:
        budget = DEFAULT_BUDGET_IF_MAY_NOT_STOP
        notes.append(f"{spec.name} can fail to stop when the feasible set is not connected; "
                     f"it runs with a default budget of {budget} queries (set --budget)")
    return PreparedRun(spec, config, budget, oracle_design, tuple(notes))


def make_algorithm(prepared: PreparedRun, instance: Instance, rng: np.random.Generator) -> Algorithm:
    cls = prepared.spec.load()
    if prepared.spec.needs_oracle:
        return cls(instance.problem, prepared.config, rng, oracle_design=prepared.oracle_design)
    return cls(instance.problem, prepared.config, rng)


def run_streams(seed: int, key: tuple[int, ...] = ()) -> list[np.random.Generator]:
    """Noise, algorithm and trace generators of one run, keyed by (seed, key)."""
    sequence = np.random.SeedSequence(seed, spawn_key=key)
    return [np.random.default_rng(child) for child in sequence.spawn(3)]


@dataclass
class Tracer:
    """Collects one row per query: step, arm, observation, |U|, |F|, recommendation."""

    noise: NoiseModel
    rng: np.random.Generator
    rows: list[tuple] = field(default_factory=list)

    def record(self, step: int, arms: np.ndarray, counts: np.ndarray, sums: np.ndarray, algorithm: Algorithm,
               before: tuple[int, int, int | None]) -> None:
        after = (int(algorithm.state.uncertain.sum()), int(algorithm.state.feasible.sum()), algorithm.recommendation())
        observations = self.noise.split_sums(self.rng, sums, counts)
        flat = [(int(arm), float(value)) for arm, values in zip(arms, observations) for value in values]
        for offset, (arm, value) in enumerate(flat):
            # Round-based algorithms update once, when the round's last answer arrives.
            state = after if offset == len(flat) - 1 else before
            self.rows.append((step + offset + 1, arm, value, *state))


def run_once(prepared: PreparedRun, instance: Instance, seed: int, key: tuple[int, ...] = (),
             tracer_rows: list | None = None) -> RunResult:
    """Run one seeded episode and score it.

    If ``tracer_rows`` is a list, one tuple per query is appended to it.
    """
    noise_rng, algorithm_rng, trace_rng = run_streams(seed, key)
    problem = instance.problem
    environment = Environment(problem.arms, instance.truth, noise_rng)
    algorithm = make_algorithm(prepared, instance, algorithm_rng)
    tracer = Tracer(instance.noise, trace_rng, tracer_rows) if tracer_rows is not None else None
    budget = prepared.budget
    used = 0
    rounds = 0
    started = time.perf_counter()
    while not algorithm.done:
        query = algorithm.ask()
        if budget is not None and used + query.total > budget:
            break
        answer = environment.answer(query)
        before = (int(algorithm.state.uncertain.sum()), int(algorithm.state.feasible.sum()), algorithm.recommendation()) if tracer else None
        algorithm.tell(query, answer)
        if tracer is not None:
            tracer.record(used, query.arms, query.counts, answer.constraint, algorithm, before)
        used += query.total
        rounds += 1
    wall = time.perf_counter() - started
    recommended = algorithm.recommendation()
    return RunResult(
        seed=seed,
        iterations=used,
        recommended=recommended,
        correct=instance.is_correct(recommended),
        violation=instance.violates(recommended),
        stopped="solved" if algorithm.done else "budget",
        wall_s=wall,
        rounds=rounds,
    )
