"""Ask/tell interface of the CBAI algorithms and the two shared skeletons.

An algorithm never sees φ: it gets the learner's :class:`~cbai_cli.kinds.cbai.instance.Problem`
(arms, known rewards, threshold), its configuration and a random generator, asks for
pulls with :meth:`Algorithm.ask` and learns the sums of their noisy observations
through :meth:`Algorithm.tell` (the protocol of :mod:`cbai_cli.contracts.protocol`).
:mod:`cbai_cli.run.simulate` drives the loop.

- :class:`RoundBased` asks for a whole round (arm → pull count) and refits on that
  round's data only (static intervals, paper Proposition 2).
- :class:`Adaptive` asks for one pull at a time and keeps all data in a
  :class:`~cbai_cli.numerics.linalg.DesignState` (adaptive intervals, Proposition 3).
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from cbai_cli.algorithms.elimination import EliminationState
from cbai_cli.numerics.confidence import ConfidenceSettings, RadiusIntervals, log_ratio, regimes
from cbai_cli.kinds.cbai.instance import Problem
from cbai_cli.numerics.kernels.state import RunState
from cbai_cli.numerics.linalg import DesignState, largest_norm, least_squares_widths
from cbai_cli.contracts.options import OPTIONS, QUERY_LIMIT, QueryLimitError
from cbai_cli.contracts.protocol import Answer, Query

if TYPE_CHECKING:
    from cbai_cli.numerics.design.cache import DesignCache


def _design_cache() -> DesignCache:
    """An empty :class:`~cbai_cli.numerics.design.cache.DesignCache` (imported here: the solver's module
    loads scipy, which adaptive runs do not need)."""
    from cbai_cli.numerics.design.cache import DesignCache

    return DesignCache()


@dataclass(frozen=True)
class AlgorithmConfig:
    """How to run an algorithm.

    Attributes:
        regime: confidence regime name (``static``, ``theory``, ``det``, ``tuned``).
        confidence: the constants of the intervals.
        rounding_epsilon: ε of the (1+ε)-approximate rounding (round-based only).
        design_tolerance: relative duality gap of the design solves inside algorithms.
        designs: the designs solved so far by the runs of this configuration, by target
            set (:class:`cbai_cli.numerics.design.cache.DesignCache`): the seeds of one request share one
            configuration, so each distinct design is solved once; not part of equality.
        own_options: the values of the options that the algorithm's registry entry reads
            besides the kind's shared ones (Track-and-Stop's ``step``, a plugin's own), by name.
    """

    regime: str
    confidence: ConfidenceSettings
    rounding_epsilon: float = OPTIONS["rounding_epsilon"].default
    design_tolerance: float = 1e-4
    own_options: dict[str, Any] = field(default_factory=dict)
    designs: DesignCache = field(default_factory=_design_cache, compare=False, repr=False)


class Algorithm(ABC):
    """An ask/tell CBAI algorithm over the arms of ``problem``."""

    def __init__(self, problem: Problem, config: AlgorithmConfig, rng: np.random.Generator) -> None:
        self.problem = problem
        self.config = config
        self.rng = rng
        self.regime = regimes()[config.regime](config.confidence)
        self.state = self.elimination_state()

    def option(self, name: str) -> Any:
        """The value of option ``name`` in this run (:meth:`option_of` its configuration)."""
        return self.option_of(self.config, name)

    @classmethod
    def option_of(cls, config: AlgorithmConfig, name: str) -> Any:
        """The value of option ``name`` in a run of ``config``: given (``config.own_options``),
        else its default in the run's regime for the registry entry of this class
        (:meth:`~cbai_cli.algorithms.registry.AlgorithmEntry.default_of`; a learner built
        without :func:`~cbai_cli.run.simulate.prepare` takes the default ``prepare`` gives),
        else the option's declared default."""
        from cbai_cli.algorithms.registry import entry_of

        given = config.own_options.get(name)
        if given is not None:
            return given
        entry = entry_of(cls)
        return entry.default_of(name, config.regime) if entry is not None else OPTIONS[name].default

    def elimination_state(self) -> EliminationState:
        """The run's elimination state, U = every arm and F = ∅ (a state of its own)."""
        return EliminationState(self.problem.rewards, self.problem.threshold)

    @property
    def done(self) -> bool:
        return self.state.done

    @abstractmethod
    def ask(self) -> Query:
        """The next pulls to make."""

    @abstractmethod
    def tell(self, query: Query, answer: Answer) -> None:
        """``answer.constraint``: the sums (m,) of the observations of the pulls of ``query``."""

    def recommendation(self) -> int | None:
        """The final answer when done, the anytime answer otherwise."""
        if self.done:
            return self.state.recommendation()
        return self.state.anytime_recommendation()


class RoundBased(Algorithm):
    """Rounds t = 1, 2, …: a design, a round length, rounding, a least-squares refit on
    this round's data, and the elimination update (paper Algorithm 1 / Algorithm 3).

    Subclasses give the design and the round length.
    """

    def __init__(self, problem: Problem, config: AlgorithmConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.round = 0

    def delta_round(self, t: int) -> float:
        """δ_t = δ²/t² (Algorithm 1 line 6); 0 when it underflows (δ = 1e−300): the
        computations use :meth:`log_delta_round` then."""
        return self.config.confidence.delta**2 / t**2

    def noise_scale(self) -> float:
        """R², the factor of the round lengths; ∞ rather than OverflowError for an absurd R
        (the round is then refused by :meth:`checked_length`)."""
        try:
            return self.config.confidence.subgaussian ** 2
        except OverflowError:
            return math.inf

    def log_delta_round(self, t: int) -> float:
        """log δ_t = 2 log δ − 2 log t, exact however small δ_t is."""
        return 2.0 * (math.log(self.config.confidence.delta) - math.log(t))

    def log_arms_over_delta_round(self, t: int) -> float:
        """log(K/δ_t), the log term of the round lengths and of Proposition 2's radius:
        ``math.log(K / δ_t)`` as always where δ_t is a normal float, and computed in logs
        where δ_t underflows or K/δ_t overflows (see :func:`cbai_cli.numerics.confidence.log_ratio`)."""
        return log_ratio(self.problem.n_arms, self.delta_round(t), self.log_delta_round(t))

    def checked_length(self, t: int, log_length: float, length, why: str, hint: str = "") -> int:
        """The round length ``length()`` (a callable, so that it is computed only when it
        can be), after refusing lengths that no run can count.

        ``log_length`` is the log of the length, computed in logs so that it cannot
        overflow; a round longer than :data:`cbai_cli.contracts.options.QUERY_LIMIT` raises
        :class:`~cbai_cli.contracts.options.QueryLimitError` (``why`` says where the length comes
        from, ``hint`` what to change besides giving a budget).
        :func:`cbai_cli.run.simulate.drive` ends a run with a budget there (any budget is
        smaller) and reports the error in one line otherwise.
        """
        if not log_length <= math.log(QUERY_LIMIT) + 1.0:  # also catches NaN
            raise self.too_long(t, log_length, why, hint)
        try:
            value = length()
        except OverflowError:  # pragma: no cover - a factor overflowed while the product is small
            value = math.ceil(math.exp(log_length))
        if value > QUERY_LIMIT:
            raise self.too_long(t, math.log(value), why, hint)
        return value

    @staticmethod
    def too_long(t: int, log_length: float, why: str, hint: str = "") -> QueryLimitError:
        """The one-line error of a round of e^``log_length`` queries."""
        if not math.isfinite(log_length):
            size = "infinitely many"
        elif log_length < 700.0:
            size = f"{math.exp(log_length):.3g}"
        else:
            size = f"about 10^{log_length / math.log(10.0):.0f}"
        return QueryLimitError(f"round {t} would ask for {size} queries ({why}), more than one run can count "
                               f"({QUERY_LIMIT:.0e}): {hint + ', or ' if hint else ''}give --budget to stop before "
                               "it with the anytime answer")

    @abstractmethod
    def round_counts(self, t: int) -> np.ndarray:
        """(K,) pull counts of round t."""

    def ask(self) -> Query:
        counts = self.round_counts(self.round + 1)
        pulled = np.flatnonzero(counts)
        return Query.pulls(pulled, counts[pulled])

    def tell(self, query: Query, answer: Answer) -> None:
        self.round += 1
        counts = np.zeros(self.problem.n_arms, dtype=np.int64)
        totals = np.zeros(self.problem.n_arms)
        counts[query.arms] = query.counts
        totals[query.arms] = answer.constraint
        predictions, norms = least_squares_widths(self.problem.arms, counts, totals)
        radius = self.regime.round_radius(self.problem.n_arms, self.delta_round(self.round),
                                          self.log_delta_round(self.round))
        with np.errstate(invalid="ignore"):
            widths = radius * norms
        self.state.update(predictions - widths, predictions + widths)


def log_or_minus_inf(value: float) -> float:
    """log(value), −∞ for 0 (an underflowed factor), NaN for NaN."""
    return math.log(value) if value > 0 else (-math.inf if value == 0 else math.nan)


def doubling_round_length(t: int, log_arms_over_delta: float) -> int:
    """N_t = ⌈2^t log(K/δ_t)⌉: Algorithm 3 (Appendix B) with v = 2, as in the authors' code;
    ``log_arms_over_delta`` is log(K/δ_t)."""
    return math.ceil(2.0**t * log_arms_over_delta)


class Adaptive(Algorithm):
    """One pull per step with adaptive intervals (paper Algorithm 2): after every pull,
    the regime's bounds l/u for all arms (xᵀφ̂ ∓ r·‖x‖_{A⁻¹} for the radius regimes) and
    the elimination update.

    ``design`` is the ridge design the sampling rules read; ``intervals`` the regime's
    per-run intervals (:class:`cbai_cli.numerics.confidence.Intervals`). Subclasses give
    :meth:`select`, the arm to pull next, or declare ``kernel_code``, the code of their
    rule in the compiled step (:mod:`cbai_cli.numerics.kernels.codes`), which :meth:`select` then
    calls and with which :func:`cbai_cli.run.simulate.drive` runs a whole run compiled (a
    subclass that gives both keeps its :meth:`select` the compiled rule's one call).
    """

    #: The rule's code (:mod:`cbai_cli.numerics.kernels.codes`, run by :func:`cbai_cli.numerics.kernels.advance.step`);
    #: None: a Python :meth:`select`.
    kernel_code: int | None = None

    def __init__(self, problem: Problem, config: AlgorithmConfig, rng: np.random.Generator) -> None:
        if self.option_of(config, "coordinates") == "d-optimal":
            # the whole run works in the coordinates of the arms' D-optimal design: φᵀx, the
            # rewards and the answers are the same in them, L is theirs and no bound on ‖φ‖
            # carries over (docs/ols.md, "The prior's shape")
            arms = config.designs.d_optimal_arms(problem.arms)
            problem = replace(problem, arms=arms, constraint_norm_bound=None)
            config = replace(config, confidence=replace(config.confidence, arm_bound=largest_norm(arms)))
        super().__init__(problem, config, rng)
        self.design = DesignState(problem.arms, config.confidence.ridge, run=self.run)
        self.intervals = self.regime.intervals(self.design, problem.rewards, problem.threshold)

    @functools.cached_property
    def _regime_compiled(self) -> bool:
        """Whether the compiled step computes the regime's intervals (its ``compiled()``; a
        regime without one, a plugin's, runs in Python)."""
        compiled = getattr(self.regime, "compiled", None)
        return compiled is not None and bool(compiled())

    @functools.cached_property
    def _radius(self) -> tuple[int, np.ndarray] | None:
        """(code, params) of the regime's compiled radius when the compiled update of a pull
        (:meth:`observe`) computes its intervals (a radius regime whose intervals are
        compiled), else None; found on the first :meth:`tell` (a whole compiled run needs none)."""
        if not (isinstance(self.intervals, RadiusIntervals) and self._regime_compiled):
            return None
        code, params = self.regime.kernel(self.problem.dim)
        return code, np.array(params)

    @functools.cached_property
    def _fit(self) -> tuple | None:
        """The constants of the ``ols`` regime's compiled update of a pull
        (:meth:`~cbai_cli.numerics.ols.MixtureIntervals.kernel`) when it computes the regime's
        intervals (:class:`~cbai_cli.numerics.ols.MixtureIntervals` of a regime whose intervals
        are compiled), else None; found on the first :meth:`tell`."""
        from cbai_cli.numerics.ols import MixtureIntervals

        if not (isinstance(self.intervals, MixtureIntervals) and self._regime_compiled):
            return None
        return self.intervals.kernel(self.design.refresh_every)

    def elimination_state(self) -> EliminationState:
        """The elimination state on the run's :class:`~cbai_cli.numerics.kernels.state.RunState`
        (``run``: (state, row)), whose row the design views too."""
        self.run = (RunState.empty(self.problem.n_arms, self.problem.dim), 0)
        return EliminationState(self.problem.rewards, self.problem.threshold, self.run)

    def attach(self, run: tuple[RunState, int]) -> None:
        """Make the design and the elimination state views of the row ``run`` = (state, row)
        (a batch lays its runs over its own stack)."""
        self.run = run
        self.design.attach(run)
        self.state.attach(run)

    def select(self) -> int:
        """Index of the arm to pull next: the compiled rule ``kernel_code``
        (:func:`cbai_cli.numerics.kernels.select.select`); a random rule
        (:data:`~cbai_cli.numerics.kernels.codes.UNIFORM_RULES`) reads the next double of ``rng``."""
        if self.kernel_code is None:
            raise NotImplementedError(f"{type(self).__name__} gives neither select() nor kernel_code")
        from cbai_cli.numerics.kernels.codes import UNIFORM_RULES
        from cbai_cli.numerics.kernels.select import select
        from cbai_cli.numerics.kernels.threads import threads_from

        design = self.design
        u = self.rng.random() if self.kernel_code in UNIFORM_RULES else 0.0
        return int(select(self.kernel_code, design.arms, design.inverse, design.norms2, self.problem.rewards,
                          self.state.uncertain, self.state.feasible, u, design.contender, design.contender_arm,
                          design.block, threads_from(design.arms)))

    def compiled(self) -> bool:
        """Whether a whole run can go through the compiled step
        (:func:`cbai_cli.numerics.kernels.batch.run_compiled`): a rule with a kernel code, whose
        :meth:`select` is :class:`Adaptive`'s or defined beside the code (not changed by a
        subclass), and a regime whose intervals are compiled (a radius, or ``ols``)."""
        def owner(name: str) -> type:
            return next(cls for cls in type(self).__mro__ if name in vars(cls))

        return (self.kernel_code is not None and owner("select") in (Adaptive, owner("kernel_code"))
                and self._regime_compiled)

    def ask(self) -> Query:
        return Query.pull(self.select())

    def lookahead(self) -> np.ndarray | None:
        """(K,) bool: the candidates among which the next :meth:`select` takes the arm of
        largest variance (:meth:`~cbai_cli.numerics.linalg.DesignState.greedy_arm`), so that the
        design update can prepare its product; None when :meth:`select` does not."""
        return None

    def tell(self, query: Query, answer: Answer) -> None:
        """Take in the pulls' sums: with a regime whose intervals are compiled (a radius, or
        ``ols``), a single pull is one compiled update of the run's state (:meth:`observe`),
        whatever :meth:`select` is, and under ``ols`` so is each pull of a query of several
        arms, the elimination update following the last; otherwise each pull goes into the
        design and the regime's intervals, then the elimination update from the intervals."""
        ahead = self.lookahead()
        totals = np.asarray(answer.constraint, dtype=float).tolist()
        pulls = zip(query.arms.tolist(), query.counts.tolist(), totals)
        if len(totals) == 1 and (self._radius is not None or self._fit is not None):
            arm, count, total = next(pulls)
            self.observe(arm, total, count, ahead)
            return
        if self._fit is not None:
            for arm, count, total in pulls:
                self.observe(arm, total, count, ahead, eliminating=False)
        else:
            for arm, count, total in pulls:
                self.design.update(arm, total, count, ahead)
                self.intervals.observe(arm, total, count)
        self.state.update(*self.intervals.bounds())

    def observe(self, arm: int, total: float, count: int, ahead: np.ndarray | None = None,
                eliminating: bool = True) -> None:
        """``count`` pulls of ``arm`` summing to ``total`` into the run's state in one compiled
        update, the compiled loop's: under a radius regime the design, its intervals and the
        elimination state (:func:`cbai_cli.numerics.kernels.design.observe`), under ``ols`` the
        design, the fit, its intervals and, when ``eliminating``, the elimination state
        (:func:`cbai_cli.numerics.kernels.fit.observe_fit`); the next greedy direction among
        ``ahead`` predicted first (:meth:`~cbai_cli.numerics.linalg.DesignState.predict_contender`).
        When the design's exact refresh is due: the refresh, then (``eliminating``) the
        intervals and the elimination update."""
        from cbai_cli.numerics.kernels.threads import threads_from

        design, state = self.design, self.state
        contender = design.predict_contender(design.arms[arm], count, ahead)
        run, row = self.run
        arguments = (design.arms, state.rewards, state.threshold, run.arrays(), row, arm, total, count, contender,
                     design.companion, design.block, threads_from(design.arms))
        if self._fit is not None:
            from cbai_cli.numerics.kernels.fit import observe_fit

            span = self.intervals.fit.state[0]  # its row is the run's (a batch lays both over row b)
            contender_arm, _, refresh_due = observe_fit(*arguments, self._fit, span.arrays(),
                                                        self.intervals.mean_scratch, eliminating)
        else:
            from cbai_cli.numerics.kernels.design import observe

            code, params = self._radius
            contender_arm, _, refresh_due = observe(*arguments, design.refresh_every, code, params)
        design.contender, design.contender_arm = contender, contender_arm
        if refresh_due:
            design.refresh()
            if eliminating:
                state.update(*self.intervals.bounds())

    def max_variance_direction(self, candidates: np.ndarray) -> np.ndarray:
        """y = argmax_{x ∈ candidates} ‖x‖_{A⁻¹} (first among ties), as a vector."""
        return self.design.arms[self.design.max_variance_arm(candidates)]
