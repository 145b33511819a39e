"""What every instance kind declares: the one place where kinds differ.

A kind (``cbai``, ``safe-regret``, ``safe-bai``, or one a newcomer adds) is a subclass
of :class:`InstanceKind` in its own module, registered in :mod:`cbai_cli.kinds`. The
CLI, ``cbai solve`` and ``cbai compare`` dispatch through these methods; nothing
outside the kind modules looks at kind names.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, ClassVar

from cbai_cli.contracts.errors import OptionError

#: The option that puts a guessed constraint into a file without one
#: (:meth:`InstanceKind.guess_constraint`), and its library name
#: (:attr:`cbai_cli.contracts.errors.OptionError.parameter`).
GUESS_FLAG = "--guess-constraint"
GUESS_PARAMETER = "guess_constraint"


class InstanceKind:
    """One kind of instance file and everything that depends on it.

    Class attributes:
        name: the value of the file's ``kind`` field.
        summary: one line for listings.
        bound_options: the options (:mod:`cbai_cli.contracts.options`) that ``cbai bound`` reads
            for this kind.
        metric: (name, record key) of the measure compare summarises (queries, regret…).
        traces: whether ``cbai solve --trace`` can record its runs.
        has_reference_bound: whether :meth:`reference_lower_bound` gives a number, so
            that compare waits for it before writing a record.
        identity_options: the options that name a run in a store, with the algorithm
            (see :meth:`run_identity`).
        judges_answers: whether a run recommends something that is right or wrong (and
            may violate the constraint), so compare shows those columns.
        unsafe_label: what compare calls the unsafe queries of a run (None: the kind
            counts none).
        draws_curves: whether a run's record carries a regret curve that compare plots.
        noise_from_generator: whether ``cbai generate`` takes the noise model of this
            kind's families (``--noise``, ``--sigma``) rather than the family fixing it.
        truth_optional: whether a file of this kind may leave out its hidden truth (a
            real problem, ``cbai generate --no-truth``); otherwise the truth is part of
            the instance.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    bound_options: ClassVar[tuple[str, ...]] = ()
    metric: ClassVar[tuple[str, str]] = ("queries", "iterations")
    traces: ClassVar[bool] = False
    has_reference_bound: ClassVar[bool] = False
    identity_options: ClassVar[tuple[str, ...]] = ()
    judges_answers: ClassVar[bool] = True
    unsafe_label: ClassVar[str | None] = None
    draws_curves: ClassVar[bool] = False
    noise_from_generator: ClassVar[bool] = False
    truth_optional: ClassVar[bool] = False

    def example(self) -> Any:
        """A small instance of this kind, cheap enough for every algorithm and regime that runs
        on it: what the contract tests (tests/algorithms/test_contract.py) run. A kind without
        one is left out of those tests."""
        return None

    # ------------------------------------------------------------ files
    def parse(self, mapping: Mapping[str, Any], source: str) -> Any:
        """A validated instance from a file's mapping; :class:`InstanceError` otherwise."""
        raise NotImplementedError

    def require_truth(self, instance: Any) -> None:
        """One line (:class:`~cbai_cli.contracts.errors.MissingTruthError`) when ``instance`` lacks the
        hidden truth that bounds, simulated runs and scores read; ``cbai bound``, ``solve``
        and ``compare`` call it before any work. Kinds whose truth is always part of the
        instance need nothing."""

    def guess_constraint(self, instance: Any, guess: Any, warn: Any = None) -> Any:
        """``instance`` with ``guess`` put in as its hidden truth, its bounds and simulated runs
        then for that guess (``--guess-constraint``; :mod:`cbai_cli.kinds.cbai.guess`); ``warn`` gets
        one line per warning. Kinds whose truth is always part of the file refuse in one line."""
        raise OptionError(f"{GUESS_FLAG} does not apply to {self.name} instances (their files always hold the truth)",
                          GUESS_PARAMETER)

    # ------------------------------------------------------------ bounds
    def check_bound_options(self, given: Iterable[str]) -> None:
        """One-line error for an option ``cbai bound`` does not read for this kind."""
        from cbai_cli.contracts.options import OPTIONS

        read = ", ".join(OPTIONS[name].flag for name in self.bound_options) or "no option"
        for name in given:
            if name not in self.bound_options:
                raise OptionError(f"{OPTIONS[name].flag} does not apply to {self.name} instances (cbai bound reads "
                                  f"{read} there)", name)

    def bound(self, instance: Any, progress: Any = None, **options: Any) -> Any:
        """The instance's difficulty: a report with ``to_json()``. ``progress`` (a
        :class:`cbai_cli.run.progress.Progress`) is told how long computations go; kinds whose
        bounds are quick tell it nothing. A kind that computes none says so in one line."""
        raise OptionError(f"cbai bound computes nothing for {self.name} instances: the kind declares no bound")

    def render_bound(self, report: Any, out: Any) -> None:
        """Print the report as tables on the Rich console ``out``."""
        raise NotImplementedError

    def file_warnings(self, instance: Any) -> list[str]:
        """What a user writing ``instance`` to a file should know before running it (the
        file is valid; a run of it needs an option): none by default."""
        return []

    def undecidable(self, instance: Any) -> str | None:
        """Why no algorithm can finish on ``instance`` without a budget (None: some can).

        :func:`cbai_cli.run.simulate.prepare` refuses runs on such instances unless
        ``--budget`` is given, so that ``solve`` and ``compare`` cannot run forever."""
        return None

    def reference_lower_bound(self, instance: Any, delta: float, time_limit: float | None = None) -> float | None:
        """The lower bound that compare's ratio column divides by, its solver stopped after
        ``time_limit`` seconds (None: no cap); None when the kind has none."""
        return None

    # ------------------------------------------------------------ runs
    def configure(self, spec: Any, regime: str | None, request: Any, instance: Any, *, solve_oracle: bool) -> Any:
        """The standard :class:`~cbai_cli.algorithms.registry.Configured` of an algorithm of this kind
        whose registry entry names no ``configure`` function of its own."""
        raise OptionError(f"algorithm {spec.name!r} has no configure function for {self.name} instances")

    def environment(self, instance: Any, rng: Any) -> Any:
        """The simulated environment of one run: the only reader of the hidden truth."""
        raise NotImplementedError

    def observer(self, prepared: Any, environment: Any, rng: Any, rows: Any) -> Any:
        """What watches a run step by step (None: nothing): it may read the environment;
        ``rng`` is the run's trace stream, ``rows`` what gets the trace rows through
        ``extend`` as the run goes: a list, or a :class:`cbai_cli.run.solving.TraceWriter` that
        streams them to a file (None: no trace asked for)."""
        return None

    def score(self, prepared: Any, seed: int, learner: Any, environment: Any, observer: Any, loop: Any) -> Any:
        """The scored result of one run: an object with ``record()`` (the flat record of
        compare) and ``to_dict()`` (``cbai solve --json``)."""
        raise NotImplementedError

    def result_record(self, result: Any) -> dict[str, Any]:
        """The columns a scored run fills in a compare record."""
        return result.record()

    def run_identity(self, request: Any) -> dict[str, Any]:
        """The request as plain values for a store's run key: the algorithm and every
        option of :attr:`identity_options` (None when not given)."""
        given = request.given()
        return {"algorithm": request.algorithm, **{name: given.get(name) for name in self.identity_options}}

    def record_options(self, prepared: Any, columns: Collection[str]) -> dict[str, Any]:
        """The options of a prepared run as record fields, given a store's ``columns``
        (:data:`cbai_cli.compare.records.RECORD_KEYS`)."""
        return {"budget": prepared.options.get("budget"), "algorithm_options": dict(prepared.options)}

    def bound_skip_reason(self, instance: Any, asked: bool | None) -> str | None:
        """Why ``solve`` and ``compare`` do not compute the instance's bounds after its runs
        (``asked``: ``--bound`` True, ``--no-bound`` False, neither None), or None when they
        do; kinds without bounds never compute them, so the answer does not matter. Bounds
        asked for (``asked`` True) that cannot be computed within the memory limit are an
        :class:`OptionError`, which ``solve`` raises before its runs."""
        return None if asked is not False else "the bounds were not computed (--no-bound)"

    def solve(self, prepared: Any, results: tuple, trace_rows: tuple = (), bound: bool | None = None,
              progress: Any = None) -> Any:
        """The outcome of ``cbai solve``: an object with ``to_json()``, ``render(out)`` and
        ``hit_budget``; ``bound`` as in :meth:`bound_skip_reason`, ``progress`` as in :meth:`bound`."""
        raise NotImplementedError

    def render_solve(self, outcome: Any, out: Any) -> None:
        """Print an outcome of :meth:`solve` on the Rich console ``out``."""
        raise NotImplementedError
