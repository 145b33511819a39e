"""The ``cbai`` kind: constrained linear best-arm identification (Lindner et al. 2022).

Finite arms with known rewards and a hidden linear constraint φᵀx ≤ τ; the learner
queries noisy observations of φᵀx (§2). Runs are scored by whether the recommended arm
is the best feasible one, and compared with the Theorem 1 lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cbai_cli.contracts.errors import NumericalError
from cbai_cli.kinds.base import InstanceKind
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise
from cbai_cli.contracts.protocol import Answer, Query

# MaxRew-F can pull the same certainly-feasible arm forever; without a budget it gets this one.
DEFAULT_BUDGET_IF_MAY_NOT_STOP = 1_000_000
# The options of a CBAI run as record columns, in the order of the records.
RECORD_OPTIONS = ("delta", "beta", "subgaussian", "ridge", "norm_bound", "rounding_epsilon", "budget")


class Environment:
    """Answers queries with sums of noisy observations of φᵀx.

    Args:
        arms: (K, d) the learner's arms.
        truth: the hidden constraint and the noise model.
        rng: the run's noise stream.
    """

    def __init__(self, arms: np.ndarray, truth: Any, rng: np.random.Generator) -> None:
        self.means = truth.means(arms)
        self.noise = truth.noise
        self.rng = rng

    def answer(self, query: Query) -> Answer:
        """Sums (m,) of ``counts[i]`` observations of arm ``arms[i]``, drawn in one call."""
        return Answer(self.noise.sample_sums(self.rng, self.means[query.arms], query.counts))

    def compiled_noise(self) -> tuple[np.ndarray, float | None, np.random.Generator] | None:
        """(means (K,), σ, the noise stream) of the noise the compiled step draws
        (:mod:`cbai_cli.numerics.kernels.batch`), else None. Gaussian: one pull of arm a is
        ``means[a] + σ·z`` for the stream's next standard normal z, read from
        ``rng.standard_normal`` drawn ahead. Binary (σ None): one pull is
        ``2·rng.binomial(1, p) − 1`` with p = (means[a] + 1)/2, drawn in the step itself
        from this generator, as :meth:`cbai_cli.kinds.cbai.noise.BinaryNoise.sample_sums` draws it."""
        if isinstance(self.noise, GaussianNoise):
            return self.means, float(self.noise.sigma), self.rng
        if isinstance(self.noise, BinaryNoise):
            return self.means, None, self.rng
        return None


@dataclass(frozen=True)
class RunResult:
    """One run, scored.

    ``recommended`` is None for "no feasible arm", ``label`` its entry of ``meta.labels``
    (None without labels); ``stopped`` is ``solved`` when the algorithm's stopping rule
    fired and ``budget`` when the query budget ran out.
    """

    seed: int
    iterations: int
    recommended: int | None
    correct: bool
    violation: bool
    stopped: str
    wall_s: float
    rounds: int = 0
    label: str | None = None

    def to_dict(self) -> dict:
        return {
            "seed": self.seed,
            "iterations": self.iterations,
            "recommended": self.recommended,
            "label": self.label,
            "correct": self.correct,
            "violation": self.violation,
            "stopped": self.stopped,
            "wall_s": self.wall_s,
        }

    def record(self) -> dict:
        """The flat record of compare."""
        return {"kind": CbaiKind.name, **self.to_dict()}


@dataclass
class Tracer:
    """Hands ``rows`` one row per observation: step, arm, observation, |U|, |F|, recommendation.

    The observations of a query of several pulls are split from their sums with the
    run's trace stream (exact conditional draws, :meth:`NoiseModel.split_sum`), a piece at
    a time: ``rows`` (a list, or a :class:`cbai_cli.run.solving.TraceWriter` that streams them to
    a file) gets them through ``extend`` in lists of at most
    :data:`cbai_cli.kinds.cbai.noise.TRACE_CHUNK` rows, so a round of any length is traced in bounded
    memory. A ``rows`` whose ``writing`` is False (a trace file that failed) gets nothing
    more, and the sums are no longer split.
    """

    noise: Any
    rng: np.random.Generator
    rows: Any = field(default_factory=list)
    before: tuple = ()

    @staticmethod
    def _state(algorithm) -> tuple[int, int, int | None]:
        return (int(algorithm.state.uncertain.sum()), int(algorithm.state.feasible.sum()), algorithm.recommendation())

    def asked(self, query: Query, learner) -> None:
        self.before = self._state(learner)

    def told(self, query: Query, answer: Answer, learner, used: int) -> None:
        after = self._state(learner)
        before = self.before
        last = used + query.total
        step = used
        for arm, total, count in zip(query.arms.tolist(), answer.constraint, query.counts.tolist()):
            for values in self.noise.split_sum(self.rng, total, count):  # a generator: draws only when asked
                if not getattr(self.rows, "writing", True):
                    return
                rows = [(step + offset, arm, value, *before) for offset, value in enumerate(values.tolist(), 1)]
                step += len(rows)
                if step == last:  # round-based algorithms update once, when the round's last answer arrives
                    rows[-1] = (step, arm, rows[-1][2], *after)
                self.rows.extend(rows)


class CbaiKind(InstanceKind):
    name = "cbai"
    summary = "constrained BAI: finite arms, known reward, hidden linear constraint"
    bound_options = ("delta", "solver", "rounding_epsilon", "time_limit")
    metric = ("queries", "iterations")
    traces = True
    has_reference_bound = True
    noise_from_generator = True
    truth_optional = True
    identity_options = RECORD_OPTIONS

    def example(self):
        """Three arms in d = 2 (the third the best feasible), Gaussian noise σ = 0.05."""
        import numpy as np

        from cbai_cli.kinds.cbai.instance import Instance
        from cbai_cli.kinds.cbai.noise import GaussianNoise

        return Instance(name="small", arms=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), reward=np.array([0.0, 1.0]),
                        constraint=np.array([1.0, 0.5]), threshold=0.75, noise=GaussianNoise(0.05))

    def run_identity(self, request) -> dict:
        """The fields of the request type of cbai 0.1 (``RunSpec``), so that stores written
        then still resume: the regime as written, and δ with its default; every other option
        only when given, or when the run's regime gives it a default of its own
        (:func:`cbai_cli.run.simulate.regime_defaults`). A key without ``step`` thus names a
        Track-and-Stop run of ``vertex-or-target``, the step's declared default, and a run of
        ``rollout`` under ``ols`` (given or by default) never resumes from it."""
        from cbai_cli.run.simulate import regime_defaults

        identity = {**super().run_identity(request), "regime": request.regime, "delta": request.get("delta")}
        options = {**regime_defaults(request, self.name), **request.given()}
        return {**identity, **{name: value for name, value in options.items() if name not in identity}}

    def parse(self, mapping, source):
        from cbai_cli.kinds.cbai.instance import from_mapping

        return from_mapping(mapping, source)

    def require_truth(self, instance) -> None:
        """A ``cbai`` file may leave out ``constraint`` (a real problem)."""
        instance.require_truth()

    def guess_constraint(self, instance, guess, warn=None):
        """:func:`cbai_cli.kinds.cbai.guess.apply_guess`: the guess as φ of a real (or any) ``cbai`` file."""
        from cbai_cli.kinds.cbai.guess import apply_guess

        return apply_guess(instance, guess, warn)

    # ------------------------------------------------------------ bounds
    def bound(self, instance, progress=None, **options):
        from cbai_cli.kinds.cbai.bounds import compute_bounds
        from cbai_cli.kinds import checked_bound_options

        given = checked_bound_options(self, options)
        return compute_bounds(instance, delta=given.get("delta"), solver=given.get("solver"),
                              epsilon=given.get("rounding_epsilon"), time_limit=given.get("time_limit"),
                              progress=progress)

    def render_bound(self, report, out) -> None:
        from cbai_cli.io.render import print_notes
        from cbai_cli.kinds.cbai.render import bound_table

        out.print(bound_table(report))
        print_notes(out, report.notes)

    def undecidable(self, instance) -> str | None:
        """An arm of X≥(x*) exactly on the boundary (:func:`cbai_cli.kinds.cbai.bounds.undecidable_arms`,
        the definition ``cbai bound`` uses): every algorithm keeps it uncertain forever."""
        from cbai_cli.kinds.cbai.bounds import undecidable_reason

        return undecidable_reason(instance)

    def reference_lower_bound(self, instance, delta: float, time_limit: float | None = None) -> float | None:
        """Theorem 1 at the instance's noise level (σ²-scaled for Gaussian noise), as
        ``cbai solve`` reports it; None when infinite (an arm on the boundary). With a
        ``time_limit`` it is the certified lower end (:func:`cbai_cli.kinds.cbai.bounds.compute_bounds`)."""
        from cbai_cli.kinds.cbai.bounds import compute_bounds

        report = compute_bounds(instance, delta=delta, time_limit=time_limit, bernoulli=False)
        value = report.lower_bound if report.lower_bound_noise is None else report.lower_bound_noise
        return float(value) if math.isfinite(value) else None

    # ------------------------------------------------------------ runs
    def configure(self, spec, regime, request, instance, *, solve_oracle: bool):
        """Confidence settings from the request and the instance (R defaults to the noise's
        scale, S to the file's bound ‖φ‖ ≤ S or 1, L to the largest arm norm)."""
        from cbai_cli.algorithms.base import AlgorithmConfig
        from cbai_cli.numerics.confidence import ConfidenceSettings, regime_notes
        from cbai_cli.numerics.linalg import largest_norm
        from cbai_cli.algorithms.registry import Configured

        problem = instance.problem
        subgaussian = request.get("subgaussian")
        settings = ConfidenceSettings(
            delta=request.get("delta"),
            subgaussian=subgaussian if subgaussian is not None else problem.noise.subgaussian,
            ridge=request.get("ridge"),
            norm_bound=request.get("norm_bound") or problem.constraint_norm_bound or 1.0,
            arm_bound=largest_norm(problem.arms),
            beta=request.get("beta"),
        )
        config = AlgorithmConfig(regime=regime, confidence=settings, rounding_epsilon=request.get("rounding_epsilon"),
                                 own_options={name: request.get(name) for name in spec.options
                                              if name not in RECORD_OPTIONS})
        _refuse_unrepresentable(regime, settings, config.own_options.get("coordinates")
                                or spec.default_of("coordinates", regime), problem.arms.shape[1])
        unbounded = request.given().get("budget") is None
        budget = request.get("budget")
        if not spec.guaranteed_stop and budget is None:
            budget = DEFAULT_BUDGET_IF_MAY_NOT_STOP
        # one estimate for the refusal and the warning (a pass over the arms of X≥(x*))
        floor = (query_floor(regime, settings, instance)
                 if instance.has_truth and (unbounded or budget is None or budget > LONG_RUN_QUERIES) else None)
        if unbounded:
            _refuse_unreachable(regime, floor)
        notes = list(regime_notes(regime, problem.dim))
        init = {}
        if spec.needs_oracle:
            from cbai_cli.kinds.cbai.bounds import oracle_design

            init["oracle_design"] = oracle_design(instance) if solve_oracle else None
        if not spec.guaranteed_stop and request.get("budget") is None:
            notes.append(f"{spec.name} can fail to stop when the feasible set is not connected; "
                         f"it runs with a default budget of {budget} queries (set --budget)")
        reads = spec.reads(regime)
        values = {"delta": settings.delta, "beta": settings.beta, "subgaussian": settings.subgaussian,
                  "ridge": settings.ridge, "norm_bound": settings.norm_bound,
                  "rounding_epsilon": config.rounding_epsilon, "budget": budget}
        options = {name: (values[name] if name in reads else None) for name in RECORD_OPTIONS}
        options["budget"] = budget
        options.update(config.own_options)
        warning = long_run_text(floor, budget)
        return Configured(problem, config, budget, options, tuple(notes), init,
                          warnings=(warning,) if warning else ())

    def environment(self, instance, rng):
        return Environment(instance.problem.arms, instance.truth, rng)

    def observer(self, prepared, environment, rng, rows):
        return None if rows is None else Tracer(prepared.instance.noise, rng, rows)

    def score(self, prepared, seed, learner, environment, observer, loop):
        instance = prepared.instance
        recommended = learner.recommendation()
        return RunResult(seed=seed, iterations=loop.used, recommended=recommended,
                         correct=instance.is_correct(recommended), violation=instance.violates(recommended),
                         stopped=loop.stopped, wall_s=loop.wall_s, rounds=loop.rounds,
                         label=instance.label(recommended))

    def record_options(self, prepared, columns) -> dict:
        """The options in effect: those that are record ``columns`` as columns, a plugin's own
        under ``algorithm_options``."""
        own = {name: value for name, value in prepared.options.items() if name not in columns}
        return {**{name: value for name, value in prepared.options.items() if name in columns},
                **({"algorithm_options": own} if own else {})}

    def bound_skip_reason(self, instance, asked: bool | None) -> str | None:
        """:func:`cbai_cli.kinds.cbai.bounds.bound_skip_reason` for this instance's K and d."""
        from cbai_cli.kinds.cbai.bounds import bound_skip_reason

        return bound_skip_reason(instance.n_arms, instance.problem.dim, asked)

    def solve(self, prepared, results: tuple, trace_rows: tuple = (), bound: bool | None = None, progress=None):
        from cbai_cli.kinds.cbai.bounds import compute_bounds
        from cbai_cli.contracts.options import FORCED_BOUND_TIME_LIMIT

        skipped = self.bound_skip_reason(prepared.instance, bound)
        # Bounds computed by the size rule are cheap and deterministic; forced ones are capped.
        bounds = None
        if not skipped:
            try:
                bounds = compute_bounds(prepared.instance, delta=prepared.config.confidence.delta,
                                        time_limit=FORCED_BOUND_TIME_LIMIT if bound else None, progress=progress)
            except NumericalError as error:  # the runs' results stand without the bounds
                skipped = f"the bounds were not computed: {error}"
        return SolveOutcome(prepared.instance, prepared, results, bounds, trace_rows, skipped)




#: The most arm entries K·d whose content hash ``solve --json`` reports: the hash prints every
#: number as JSON text, 0.06 s at K·d = 10⁵ and 5.7 s at 10⁷ (``generate random``),
#: time a run of a large instance would spend only on its output.
SOLVE_HASH_ENTRIES = 10**5


#: The range of L = max ‖x‖ that adaptive runs accept. The ``ols`` fit multiplies 2R²β by
#: slopes in units of L² and by ‖V⁺x‖² in units of 1/(nL)², so beyond about 10^±70 its
#: products overflow or vanish and a run never stops; 10^±30 leaves a margin of 10^40.
ARM_SCALE_RANGE = (1e-30, 1e30)


def _refuse_unrepresentable(regime: str, settings, coordinates: str, dim: int) -> None:
    """One line when an adaptive run's numbers would not fit in double precision: the arms'
    largest norm L outside :data:`ARM_SCALE_RANGE` (all-zero arms aside), or the largest
    squared norm of the arms the run works with more than
    :data:`cbai_cli.numerics.linalg.RIDGE_RATIO_LIMIT` times the design's ridge λ, whose inverse
    A⁻¹ the sampling rules read. In the features' ``coordinates`` that is L² (arms in large
    units need a ridge in the same units); in the arms' D-optimal ones it is a leverage, at
    most ``dim``·(1 + LEVERAGE_SLACK) whatever the units (docs/ols.md, "The prior's shape")."""
    from cbai_cli.numerics.confidence import regimes
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.numerics.design.d_optimal import LEVERAGE_SLACK
    from cbai_cli.numerics.linalg import RIDGE_RATIO_LIMIT

    if not regimes()[regime].adaptive:
        return
    low, high = ARM_SCALE_RANGE
    largest = settings.arm_bound
    if not low <= largest <= high:
        raise OptionError(f"the arms' largest norm is {largest:.3g}, outside the {low:g} … {high:g} that adaptive runs "
                          "keep in double precision: divide the arms by a common factor (and multiply φ by it, which "
                          "keeps every mean and so every answer)")
    if coordinates == "d-optimal":
        if dim * (1.0 + LEVERAGE_SLACK) > RIDGE_RATIO_LIMIT * settings.ridge:
            raise OptionError(f"the arms' largest squared norm in their D-optimal coordinates, up to "
                              f"{dim * (1.0 + LEVERAGE_SLACK):.3g}, is more than {RIDGE_RATIO_LIMIT:.0e} times the "
                              f"design's ridge --lambda {settings.ridge:g}: A⁻¹ cannot be kept in double precision; give "
                              "a larger --lambda (in these coordinates it counts pulls of the D-optimal design)")
        return
    squared = largest**2
    if squared > RIDGE_RATIO_LIMIT * settings.ridge:
        raise OptionError(f"the arms' largest squared norm L² = {squared:.3g} is {squared / settings.ridge:.3g} times "
                          f"the design's ridge --lambda {settings.ridge:g}, more than {RIDGE_RATIO_LIMIT:.0e}: A⁻¹ "
                          f"cannot be kept in double precision; give --lambda in the arms' units, at least "
                          f"{squared / RIDGE_RATIO_LIMIT:.3g}, e.g. --lambda {0.1 * squared:.3g} (0.1·L²), or rescale "
                          "the arms")


#: Queries from which a run is announced with one warning line before it starts (when no
#: --budget bounds it below its estimate): the compiled adaptive step takes about 2 µs a
#: pull (G-ACOL on irrelevant-dims d = 10: 8.7·10⁶ pulls in 18 s), so 10⁹ pulls are half an
#: hour and every factor 10 beyond multiplies that, one pull at a time in Python (a trace)
#: several times more; round-based runs draw a round's sums at once, but their queries are
#: what a study with people or trials would pay.
LONG_RUN_QUERIES = 1e9


@dataclass(frozen=True)
class QueryFloor:
    """A lower bound on the queries of a run without a budget (:func:`query_floor`).

    Attributes:
        queries: the bound (∞ when it overflows).
        arm: the arm of X≥(x*) that needs them.
        radius: the confidence radius's floor it comes from.
        source: the options that set that floor, for messages.
    """

    queries: float
    arm: int
    radius: float
    source: str


def query_floor(regime: str, settings, instance) -> QueryFloor | None:
    """About the fewest queries a run of ``regime`` must make before it can stop; None when
    no arm of X≥(x*) bounds them (a zero arm or gap).

    Adaptive regimes: after n pulls the width of arm x is r_n·‖x‖_{A_n⁻¹} ≥
    r·‖x‖/sqrt(λ + nL²), with r the regime's radius floor
    (:func:`cbai_cli.numerics.confidence.minimum_radius`) and L the largest arm norm; deciding every
    arm of X≥(x*) (which a run must) takes widths below |g(x)|, so about n ≥
    (r²‖x‖²/g(x)² − λ)/L² pulls for the hardest of them.

    The static regime of round-based algorithms: the round t that decides x refits on its
    own N_t pulls only (no ridge), so its width r_t·‖x‖_{A_t⁺} ≥ r_t·‖x‖/sqrt(N_t L²) with
    r_t = R·sqrt(2 log(K/δ_t)) and δ_t = δ²/t² (:class:`~cbai_cli.algorithms.base.RoundBased`),
    smallest at t = 1; that one round has N_t ≥ r_1²‖x‖²/(g(x)² L²) pulls.
    """
    from cbai_cli.kinds.cbai.bounds import at_least_set
    from cbai_cli.numerics.confidence import minimum_radius, radius_static, regimes

    if regimes()[regime].adaptive:
        radius, source = minimum_radius(regime, settings, instance.problem.dim)
        ridge = settings.ridge
    else:
        delta = settings.delta
        radius = radius_static(instance.n_arms, delta * delta, settings.subgaussian, 2.0 * math.log(delta))
        source = (f"R·√(2 log(K/δ²)) of round 1 with --subgaussian {settings.subgaussian:g} and "
                  f"--delta {delta:g}")
        ridge = 0.0
    mask = at_least_set(instance)
    norms = np.linalg.norm(instance.problem.arms[mask], axis=1)
    gaps = np.abs(instance.gaps[mask])
    hard = (norms > 0) & (gaps > 0)
    if not hard.any():
        return None
    ratios = norms[hard] / gaps[hard]
    hardest = int(np.flatnonzero(mask)[np.flatnonzero(hard)[np.argmax(ratios)]])
    with np.errstate(over="ignore"):
        needed = (radius * radius * float(ratios.max()) ** 2 - ridge) / settings.arm_bound**2
    return QueryFloor(float(needed), hardest, radius, source)


def _refuse_unreachable(regime: str, floor: QueryFloor | None) -> None:
    """One line when an adaptive run could not stop within what one run can count: absurd
    options (``--lambda 1e300``, ``--beta 1e300``, ``--subgaussian 1e300``) push its
    :func:`query_floor` ``floor`` beyond :data:`cbai_cli.contracts.options.QUERY_LIMIT`: such a run
    would loop for ever, one pull at a time, so it is refused unless ``--budget`` bounds it.
    """
    from cbai_cli.numerics.confidence import regimes
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.contracts.options import QUERY_LIMIT

    if not regimes()[regime].adaptive:
        return  # round lengths are checked round by round (RoundBased.checked_length)
    if floor is not None and floor.queries > QUERY_LIMIT:
        about = f"about {floor.queries:.3g}" if math.isfinite(floor.queries) else "infinitely many"
        raise OptionError(f"the confidence radius is at least {floor.radius:.3g} ({floor.source}): deciding arm "
                          f"{floor.arm} would take {about} queries, more than one run can count ({QUERY_LIMIT:.0e}); "
                          "choose smaller values or give --budget")


def long_run_text(floor: QueryFloor | None, budget: int | None) -> str | None:
    """What to say before a run whose :func:`query_floor` ``floor`` (None: none known)
    exceeds :data:`LONG_RUN_QUERIES`, unless ``budget`` stops it below that floor; None
    otherwise, and for floors beyond :data:`cbai_cli.contracts.options.QUERY_LIMIT`, which end in one
    line of error instead (refused before an adaptive run, at the round too long for a
    round-based one)."""
    from cbai_cli.contracts.options import QUERY_LIMIT

    if floor is None or not LONG_RUN_QUERIES < floor.queries <= QUERY_LIMIT:
        return None
    if budget is not None and budget < floor.queries:
        return None
    bounded = "give --budget to bound the run" if budget is None else f"--budget {budget} allows that many"
    return (f"deciding arm {floor.arm} will take at least about {floor.queries:.2g} queries (the confidence radius is "
            f"at least {floor.radius:.3g}: {floor.source}); {bounded}")


@dataclass(frozen=True)
class SolveOutcome:
    """The runs of one ``solve`` call, with the instance's bounds for comparison (None, and
    ``bound_skipped`` says why, when they were not computed)."""

    instance: Any
    prepared: Any
    results: tuple[RunResult, ...]
    bounds: Any
    trace_rows: tuple[tuple, ...] = ()
    bound_skipped: str | None = None

    @property
    def hit_budget(self) -> bool:
        """Whether some run ended at its budget without an answer (exit code 1)."""
        return any(result.stopped == "budget" for result in self.results)

    def render(self, out) -> None:
        from cbai_cli.io.render import print_notes
        from cbai_cli.kinds.cbai.render import solve_table

        out.print(solve_table(self.prepared, self.results, self.instance.name, self.instance.guessed_constraint))
        out.print(self.bound_line())
        print_notes(out, self.notes)

    @property
    def notes(self) -> list[str]:
        from cbai_cli.kinds.cbai.guess import guess_note

        guessed = guess_note(self.instance)
        notes = ([] if guessed is None else [guessed]) + list(self.prepared.notes)
        duplicates = self.instance.duplicate_groups
        if duplicates:
            notes.append(f"the instance has {len(duplicates)} group(s) of identical arms; any copy of the best arm counts as correct")
        from cbai_cli.kinds.cbai.bounds import undecidable_reason

        undecidable = undecidable_reason(self.instance)
        if undecidable is not None:
            notes.append(f"{undecidable}; the runs stop only at their budget")
        elif self.instance.boundary_arms.size:
            notes.append("some arm lies exactly on the constraint boundary, but below the best feasible reward: "
                         "it need not be decided")
        if self.bound_skipped:
            notes.append(self.bound_skipped)
        if self.bounds is not None:
            notes.extend(self.bounds.solver_notes)
        return notes

    @property
    def instance_hash(self) -> str | None:
        """The instance's content hash for ``--json``, None beyond :data:`SOLVE_HASH_ENTRIES`
        arm entries (it prints every number of the instance as JSON text)."""
        return self.instance.content_hash if self.instance.arms.size <= SOLVE_HASH_ENTRIES else None

    @property
    def reference_lower_bound(self) -> float | None:
        """Theorem 1 at the instance's noise level (σ² for Gaussian noise, 1 for binary);
        None when the bounds were not computed."""
        if self.bounds is None:
            return None
        scaled = self.bounds.lower_bound_noise
        return self.bounds.lower_bound if scaled is None else scaled

    def bound_line(self) -> str:
        from cbai_cli.io.render import fmt, variance_text

        if self.bounds is None:
            return "H_CLB, Theorem 1 and Prop. 1 bounds: not computed (see the notes)"
        median = float(np.median([r.iterations for r in self.results]))
        reference = self.reference_lower_bound
        ratio = f"{median / reference:,.1f}×" if reference and np.isfinite(reference) else "—"
        noise = "" if self.bounds.lower_bound_noise is None else f", at the noise level σ² = {variance_text(self.bounds.noise_variance)}: {fmt(self.bounds.lower_bound_noise)}"
        which = "unit-noise" if self.bounds.lower_bound_noise is None else "σ²-scaled"
        return (f"H_CLB = {fmt(self.bounds.h_clb.value)}; lower bound (Thm 1, unit noise, δ = {self.bounds.delta:g}) = "
                f"{fmt(self.bounds.lower_bound)}{noise}; Prop. 1 bound = {fmt(self.bounds.prop1_bound)}; "
                f"median queries / {which} lower bound = {ratio}")

    def to_json(self) -> dict:
        from cbai_cli.kinds.cbai.bounds import json_number

        return {
            "algorithm": self.prepared.algorithm,
            "regime": self.prepared.regime,
            "delta": self.prepared.config.confidence.delta,
            "instance": self.instance.name,
            "guessed_constraint": self.instance.guessed_constraint,
            "instance_hash": self.instance_hash,
            "runs": [result.to_dict() for result in self.results],
            "h_clb": json_number(self.bounds.h_clb.value) if self.bounds else None,
            "lower_bound": json_number(self.bounds.lower_bound) if self.bounds else None,
            "lower_bound_noise": json_number(self.bounds.lower_bound_noise) if self.bounds else None,
            "lower_bound_kl": json_number(self.bounds.lower_bound_kl) if self.bounds else None,
            "lower_bound_kl_noise": json_number(self.bounds.lower_bound_kl_noise) if self.bounds else None,
            "prop1_bound": json_number(self.bounds.prop1_bound) if self.bounds else None,
            "intervals": self.bounds.intervals() if self.bounds else None,
            "time_limit_reached": self.bounds.time_limited if self.bounds else False,
            "notes": self.notes,
        }
