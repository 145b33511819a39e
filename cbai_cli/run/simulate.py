"""Requests, their preparation, and the one ask/tell loop that runs every algorithm.

A :class:`RunRequest` names an algorithm of the registry and its options;
:func:`prepare` checks it against the algorithm's entry and the instance and builds the
algorithm's configuration; :func:`run_once` runs one seed through :func:`drive`, the
loop every algorithm of every instance kind goes through. The instance kind
(:mod:`cbai_cli.kinds`) supplies the simulated environment — the only code that reads
the hidden truth while a run is in progress — an observer for traces and curves, and
the scoring after the run.

Randomness: every run derives three independent streams (noise, algorithm, trace)
from ``SeedSequence(seed, spawn_key=key)``, so the same seed gives the same result
whatever else runs, and every algorithm run on a seed faces the same noise stream.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cbai_cli.algorithms.registry import AlgorithmEntry, Configured, for_kind, load_plugins
from cbai_cli.contracts.errors import OptionError
from cbai_cli.contracts.options import OPTIONS, QueryLimitError, check_seed, checked, refuse_unknown
from cbai_cli.contracts.protocol import Answer, Environment, Learner, Query


@dataclass(frozen=True)
class RunRequest:
    """What a user asks for: an algorithm (a name or an alias of the registry; None in
    ``cbai solve`` without ``--algo``, the default of the instance's kind), a
    confidence regime (None: the algorithm's default) and options by their names in
    :data:`cbai_cli.contracts.options.OPTIONS`; options not given take their defaults.

    Frozen and made of plain values, so it pickles (worker processes, Dask) and names a
    run in a store (:meth:`cbai_cli.kinds.base.InstanceKind.run_identity`).
    """

    algorithm: str | None
    regime: str | None = None
    options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, algorithm: str | None, regime: str | None = None, **options: Any) -> RunRequest:
        """A request from keyword options (a plugin's own among them); ``None`` means not given."""
        load_plugins()
        refuse_unknown(options)
        return cls(algorithm, regime, tuple(sorted((k, v) for k, v in options.items() if v is not None)))

    def given(self) -> dict[str, Any]:
        """The options given, by name."""
        return dict(self.options)

    def get(self, name: str) -> Any:
        """The value of option ``name``: given, or its declared default."""
        return self.given().get(name, OPTIONS[name].default)


@dataclass(frozen=True)
class PreparedRun:
    """A checked request bound to an instance: ready to run many seeds.

    Attributes:
        spec: the registry entry of the algorithm.
        instance: the instance as run.
        regime: the confidence regime (None for algorithms without one).
        configured: the algorithm's configuration and the options in effect.
    """

    spec: AlgorithmEntry
    instance: Any
    regime: str | None
    configured: Configured

    @property
    def algorithm(self) -> str:
        return self.spec.name

    @property
    def config(self) -> Any:
        return self.configured.config

    @property
    def budget(self) -> int | None:
        return self.configured.budget

    @property
    def options(self) -> Mapping[str, Any]:
        return self.configured.options

    @property
    def notes(self) -> tuple[str, ...]:
        return self.configured.notes

    @property
    def warnings(self) -> tuple[str, ...]:
        """What to tell the user before the runs start (:attr:`Configured.warnings`)."""
        return self.configured.warnings

    @property
    def kind(self):
        from cbai_cli.kinds import get

        return get(self.instance.kind)

    def make_algorithm(self, rng: np.random.Generator):
        """A fresh algorithm with its own generator."""
        configured = self.configured
        try:
            return self.spec.load()(configured.view, configured.config, rng, **configured.init)
        except ValueError as error:  # constructors refuse an instance they cannot run on
            from cbai_cli.contracts.errors import InstanceError

            raise InstanceError(f"{self.instance.name}: {self.algorithm} cannot run on this instance: {error}") from None


def prepare(request: RunRequest, instance: Any, *, solve_oracle: bool = True, live: bool = False) -> PreparedRun:
    """Check a request against the algorithm's registry entry and the instance, and fill
    in defaults.

    Raises :class:`~cbai_cli.contracts.errors.MissingTruthError` for a file without the hidden
    truth, and :class:`OptionError` for an algorithm of another instance kind, a regime the
    algorithm cannot use, an option it does not read (``--beta`` outside the tuned
    regime, ``--lambda`` for a round-based algorithm, …), a missing required option
    (tuned without β), a value outside its declared range, a value that only other regimes
    run (``--step rollout`` outside ``ols``), and a run without
    ``--budget`` on an instance that no algorithm can decide (an arm exactly on the
    constraint boundary, :meth:`cbai_cli.kinds.base.InstanceKind.undecidable`), which
    would never stop. An algorithm of None is the default of the instance's kind
    (:func:`cbai_cli.algorithms.registry.default_algorithm`). ``solve_oracle=False``
    skips the Oracle's design solve (its only costly step), for checking many requests
    before any run starts; the result then cannot run the Oracle. ``live=True`` prepares
    a run against real answers (:mod:`cbai_cli.session`): the instance may lack the truth,
    and the checks that read it (an undecidable instance) are skipped.
    """
    from cbai_cli.kinds import get as kind_named

    kind = kind_named(instance.kind)
    if not live:
        kind.require_truth(instance)  # a simulated run answers from the hidden truth
    spec, alias = for_kind(request.algorithm, instance.kind)
    given = request.given()
    regime = request.regime
    if alias is not None and alias.regime is not None:
        if regime is not None and regime != alias.regime:
            raise OptionError(f"{request.algorithm!r} means regime {alias.regime!r}; it conflicts with --regime {regime}",
                              "regime")
        regime = alias.regime
        if alias.beta is not None:
            given.setdefault("beta", alias.beta)
    if regime is not None:
        spec.check_regime(regime)
    regime = regime or spec.default_regime
    given = checked(given)
    spec.check_options(given, regime)
    spec.check_values(given, regime)
    given = {**spec.defaults(regime), **given}
    if given.get("budget") is None and not live:
        reason = kind.undecidable(instance)
        if reason is not None:
            raise OptionError(f"{reason}; give --budget", "budget")
    configure = spec.load_configure() if spec.configure else kind.configure
    configured = configure(spec, regime, RunRequest.of(spec.name, regime, **given), instance, solve_oracle=solve_oracle)
    return PreparedRun(spec, configured.instance if configured.instance is not None else instance, regime, configured)


def regime_defaults(request: RunRequest, kind: str) -> dict[str, Any]:
    """The options not given in ``request`` that a run of it on a ``kind`` instance takes by
    a default of its regime (:meth:`cbai_cli.algorithms.registry.AlgorithmEntry.defaults`):
    the regime asked for, else the alias's, else the algorithm's default regime."""
    spec, alias = for_kind(request.algorithm, kind)
    regime = request.regime or (alias.regime if alias is not None else None) or spec.default_regime
    given = request.given()
    return {name: value for name, value in spec.defaults(regime).items() if name not in given}


def run_streams(seed: int, key: tuple[int, ...] = ()) -> list[np.random.Generator]:
    """Noise, algorithm and trace generators of one run, keyed by (seed, key): integers
    ≥ 0 (:func:`cbai_cli.contracts.options.check_seed`), else :class:`OptionError`."""
    sequence = np.random.SeedSequence(check_seed(seed), spawn_key=checked_key(key))
    return [np.random.default_rng(child) for child in sequence.spawn(3)]


def checked_key(key: Any) -> tuple[int, ...]:
    """``key`` (a spawn key of :func:`run_streams`) as a tuple of Python ints ≥ 0; else
    :class:`OptionError` naming ``key``."""
    if isinstance(key, (str, bytes)) or not isinstance(key, (tuple, list)):
        raise OptionError(f"key must be a tuple of integers ≥ 0, got {key!r}", "key")
    return tuple(check_seed(part, "key entry", "key") for part in key)


class Observer(Protocol):
    """Watches a run step by step (a trace, a regret curve); it may read the truth."""

    def asked(self, query: Query, learner: Learner) -> None:
        """After ``ask``, before the environment answers."""

    def told(self, query: Query, answer: Answer, learner: Learner, used: int) -> None:
        """After ``tell``; ``used``: observations spent before this query."""


@dataclass(frozen=True)
class LoopOutcome:
    """How a run's loop ended: observations spent, queries answered, whether the
    algorithm's stopping rule fired (else the budget ran out), seconds spent."""

    used: int
    rounds: int
    solved: bool
    wall_s: float

    @property
    def stopped(self) -> str:
        return "solved" if self.solved else "budget"


def compilable(learner: Learner, environment: Environment) -> bool:
    """Whether :func:`cbai_cli.numerics.kernels.batch.run_compiled` can run ``learner`` against
    ``environment``: a rule and a regime with kernel codes, and noise the compiled step
    draws (Gaussian or binary, ``environment.compiled_noise()``)."""
    compiled = getattr(learner, "compiled", None)
    noise = getattr(environment, "compiled_noise", None)
    return compiled is not None and compiled() and noise is not None and noise() is not None


def drive(learner: Learner, environment: Environment, budget: int | None,
          observer: Observer | None = None, progress: Callable[[int], None] | None = None) -> LoopOutcome:
    """The one ask/tell loop: ask, answer, tell until the algorithm stops or the next
    query would exceed ``budget`` observations (an anytime answer then).

    A query larger than one run can count (:class:`~cbai_cli.contracts.options.QueryLimitError`,
    a round of more than :data:`~cbai_cli.contracts.options.QUERY_LIMIT` pulls) exceeds every
    budget, so it ends a run with a budget like any other query too large for it; without
    a budget it propagates, one line for the user.

    When no observer watches, a learner whose whole run the compiled step can take
    (``learner.compiled()``, Gaussian noise) runs there instead: the same pulls, the same
    observations from the same stream, the same state at the end
    (:func:`cbai_cli.numerics.kernels.batch.run_compiled`).

    ``progress`` is told the observations spent so far, after every query (every few
    hundred in the compiled step, as it hands back control); it only watches."""
    started = time.perf_counter()
    if observer is None and compilable(learner, environment):
        from cbai_cli.numerics.kernels.batch import run_compiled

        ((used, solved),) = run_compiled([learner], [environment], budget, progress=progress)
        return LoopOutcome(used, used, solved, time.perf_counter() - started)
    used = 0
    rounds = 0
    while not learner.done:
        try:
            query = learner.ask()
        except QueryLimitError:
            if budget is None:
                raise
            break
        if budget is not None and used + query.total > budget:
            break
        if observer is not None:
            observer.asked(query, learner)
        answer = environment.answer(query)
        learner.tell(query, answer)
        if observer is not None:
            observer.told(query, answer, learner, used)
        used += query.total
        rounds += 1
        if progress is not None:
            progress(used)
    return LoopOutcome(used, rounds, bool(learner.done), time.perf_counter() - started)


def spawned_streams(rng: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """Noise, algorithm and trace generators of one run spawned from the one generator ``rng``
    (``rng.spawn(2)`` gives the algorithm's and the noise's, in that order, then a third child
    the trace's): the ``streams`` of :func:`run_once` for scripts that seed each run with
    ``numpy.random.default_rng(seed)``. The noise then does not depend on how many numbers
    the algorithm drew either."""
    algorithm_rng, noise_rng = rng.spawn(2)
    return noise_rng, algorithm_rng, rng.spawn(1)[0]


def run_once(prepared: PreparedRun, seed: int, key: tuple[int, ...] = (), tracer_rows: Any = None,
             progress: Callable[[int], None] | None = None,
             streams: tuple[np.random.Generator, np.random.Generator, np.random.Generator] | None = None):
    """Run one seeded episode of a prepared request and score it against the truth.

    The noise, the algorithm's randomness and the trace draw from three streams of
    ``SeedSequence(seed, spawn_key=key)``, or from ``streams`` (noise, algorithm, trace) when
    given (e.g. :func:`spawned_streams`; ``seed`` then only names the run). If
    ``tracer_rows`` is a list, or anything with ``extend`` such as a
    :class:`cbai_cli.run.solving.TraceWriter` (and the kind keeps traces), one tuple per
    observation is handed to it as the run goes. ``seed`` and the entries of ``key`` are
    integers ≥ 0 (:func:`run_streams`). ``progress``: see :func:`drive`.
    """
    seed = check_seed(seed)
    learner, environment, observer = start_run(prepared, seed, key, tracer_rows, streams)
    loop = drive(learner, environment, prepared.budget, observer, progress)
    return prepared.kind.score(prepared, seed, learner, environment, observer, loop)


def start_run(prepared: PreparedRun, seed: int, key: tuple[int, ...] = (), tracer_rows: Any = None,
              streams: tuple[np.random.Generator, np.random.Generator, np.random.Generator] | None = None):
    """The learner, environment and observer (None without ``tracer_rows``) of one run,
    each on its stream of ``SeedSequence(seed, spawn_key=key)`` or of ``streams`` (noise,
    algorithm, trace) when given."""
    noise_rng, algorithm_rng, trace_rng = run_streams(seed, key) if streams is None else streams
    kind = prepared.kind
    environment = kind.environment(prepared.instance, noise_rng)
    learner = prepared.make_algorithm(algorithm_rng)
    return learner, environment, kind.observer(prepared, environment, trace_rng, tracer_rows)


#: Runs advanced as one compiled batch at most: batching gains little beyond ten runs, and
#: each run of a batch holds its own (K,) and (d, d) arrays.
BATCH_RUNS = 16


def run_many(prepared: PreparedRun, seeds, key: tuple[int, ...] = (), progress: RunTally | None = None) -> list:
    """:func:`run_once` for every seed, without traces: the runs that the compiled step can
    take (:func:`compilable`) advance together in batches of :data:`BATCH_RUNS`
    (:func:`cbai_cli.numerics.kernels.batch.run_compiled`), each on its own streams, so every
    result equals its :func:`run_once` (``wall_s`` is its batch's time shared equally).
    ``seeds`` is an iterable of seeds (``range(3)`` for seeds 0, 1, 2), each an integer ≥ 0.
    ``progress`` is told the runs finished and the observations spent as they go."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise OptionError(f"seeds must be an iterable of seeds such as range(3), got {seeds!r}", "seed")
    seeds = [check_seed(seed) for seed in seeds]
    key = checked_key(key)
    return [result for start in range(0, len(seeds), BATCH_RUNS)
            for result in _run_batch(prepared, seeds[start:start + BATCH_RUNS], key, progress)]


class RunTally:
    """Runs finished and observations spent so far by the runs of one call, told to ``report``
    (anything with ``update(done, detail, *values)``, such as a
    :class:`cbai_cli.run.progress.Progress`) as they change; it only counts, so the runs are the
    same with or without it.

    :meth:`spent` is the callback of the run (or compiled batch) going on; :meth:`finished`
    closes it, its last count then counted as spent."""

    def __init__(self, report: Any) -> None:
        self._report = report
        self.runs = 0
        self.total = 0
        self._current = 0

    def spent(self, used: int) -> None:
        """The runs going on have spent ``used`` observations so far."""
        self._current = used
        self._report.update(self.runs, "{:,} queries", self.total + used)

    def finished(self, runs: int) -> None:
        """``runs`` more runs are over, having spent what :meth:`spent` was last told."""
        self.runs += runs
        self.total += self._current
        self._current = 0
        self._report.update(self.runs, "{:,} queries", self.total)


def _load_kernels(prepared: PreparedRun, seed: int, key: tuple[int, ...]) -> None:
    """Load the compiled kernels (:func:`cbai_cli.numerics.kernels.jit.load`) and run one query of a
    throwaway run on ``seed``'s streams (objects of its own: the runs that count make theirs
    afresh), so that the code numba loads on first use is loaded outside the runs' clock."""
    from cbai_cli.numerics.kernels import jit
    from cbai_cli.numerics.kernels.batch import run_compiled

    jit.load()
    learner, environment, _ = start_run(prepared, seed, key)
    run_compiled([learner], [environment], 1)


def _run_batch(prepared: PreparedRun, seeds: list[int], key: tuple[int, ...], progress: RunTally | None = None) -> list:
    """:func:`run_many` for at most :data:`BATCH_RUNS` seeds; ``wall_s`` leaves out loading
    the compiled kernels, when the batch is the one that turns to them."""
    started = [(seed, *start_run(prepared, seed, key)) for seed in seeds]
    batch = [run for run in started if run[3] is None and compilable(run[1], run[2])]
    watch = None if progress is None else progress.spent
    loops: dict[int, LoopOutcome] = {}
    if batch:
        from cbai_cli.numerics.kernels import jit
        from cbai_cli.numerics.kernels.batch import run_compiled

        loading = []

        def load() -> None:
            clock = time.perf_counter()
            _load_kernels(prepared, batch[0][0], key)
            loading.append(time.perf_counter() - clock)

        if jit.loaded():  # the code of this request's signatures, loaded before the clock starts
            _load_kernels(prepared, batch[0][0], key)
        clock = time.perf_counter()
        outcomes = run_compiled([run[1] for run in batch], [run[2] for run in batch], prepared.budget, load=load,
                                progress=watch)
        share = (time.perf_counter() - clock - sum(loading)) / len(batch)
        loops = {id(run[1]): LoopOutcome(used, used, solved, share) for run, (used, solved) in zip(batch, outcomes)}
        if progress is not None:
            progress.finished(len(batch))
    results = []
    for seed, learner, environment, observer in started:
        loop = loops.get(id(learner))
        if loop is None:
            loop = drive(learner, environment, prepared.budget, observer, watch)
            if progress is not None:
                progress.finished(1)
        results.append(prepared.kind.score(prepared, seed, learner, environment, observer, loop))
    return results
