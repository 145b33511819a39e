"""The functions of :mod:`cbai`: solve, bound and compare instances held in memory or in
files, as the ``cbai`` command does, with errors that name Python parameters."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from cbai_cli.contracts.options import library_errors

#: What :func:`solve`, :func:`bound` and :func:`compare` take as an instance: one in memory
#: (:class:`cbai_cli.kinds.cbai.instance.Instance` or a safe kind's), or the path of its file.
InstanceLike = Any


def _instance(instance: InstanceLike) -> Any:
    """``instance``, read from its file when it is a path."""
    from cbai_cli.kinds import load

    return load(instance) if isinstance(instance, (str, os.PathLike)) else instance


@dataclass(frozen=True)
class Solved:
    """What :func:`solve` returns: one result per run, and what ``cbai solve`` prints beside
    them (for a ``cbai`` instance, its bounds when they were computed).

    Attributes:
        outcome: the instance kind's outcome of ``cbai solve`` (``to_json()`` is the
            document of ``cbai solve --json``).
    """

    outcome: Any

    @property
    def results(self) -> tuple:
        """One result per run, in seed order (``recommended``, ``correct``, ``iterations``, …)."""
        return tuple(self.outcome.results)

    def records(self) -> list[dict[str, Any]]:
        """One plain dict per run, the fields of a ``cbai compare`` record of the run."""
        return [result.record() for result in self.results]

    def to_json(self) -> dict[str, Any]:
        """The document of ``cbai solve --json``."""
        return self.outcome.to_json()


@dataclass(frozen=True)
class Compared:
    """What :func:`compare` returns: every run's record, and the table ``cbai compare`` prints.

    Attributes:
        comparison: :class:`cbai_cli.compare.study.ComparisonResult` (records, runs done and
            reused).
    """

    comparison: Any

    def records(self) -> list[dict[str, Any]]:
        """One plain dict per run (the columns of ``cbai compare --out runs.jsonl``)."""
        return [dict(record) for record in self.comparison.records]

    def summary(self) -> list[dict[str, Any]]:
        """One plain dict per (instance, algorithm): runs, median and quartiles of the queries,
        fraction correct, the Theorem 1 lower bound and the ratio to it."""
        from cbai_cli.compare.summary import summarize

        return [asdict(row) for row in summarize(self.comparison.records)]


def solve(instance: InstanceLike, algorithm: str | None = None, *, regime: str | None = None, runs: int = 1,
          seed: int = 0, bound: bool | None = False, **options: Any) -> Solved:
    """Run ``algorithm`` (a name of :func:`algorithms`; None: the default of the instance's
    kind, track-and-stop for ``cbai``) on ``instance`` with seeds ``seed, …, seed + runs − 1``,
    as ``cbai solve`` does: the same seed gives the same run. ``options`` are the run options
    by name (``delta``, ``beta``, ``budget``, ``subgaussian``, …: ``cbai algorithms`` lists
    which each algorithm reads). ``bound`` True also computes the instance's bounds (None:
    when cheap). A simulated run answers from the instance's hidden constraint."""
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.contracts.options import check_seed
    from cbai_cli.run.simulate import RunRequest
    from cbai_cli.run.solving import solve_instance

    with library_errors():
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise OptionError(f"runs must be an integer ≥ 1, got {runs!r}", "runs")
        first = check_seed(seed)
        request = RunRequest.of(algorithm, regime, **options)
        return Solved(solve_instance(_instance(instance), request, seeds=range(first, first + runs), bound=bound))


def bound(instance: InstanceLike, **options: Any) -> Any:
    """The instance's difficulty as ``cbai bound`` computes it: for a ``cbai`` instance
    H_CLB, the Theorem 1 lower bound on the queries of any δ-correct method and the
    Proposition 1 bound (``lower_bound``, ``prop1_bound``, ``to_json()``); ``options`` are those
    its kind's bound reads (``delta``, ``solver``, ``time_limit``, …)."""
    from cbai_cli.kinds import bound_instance

    with library_errors():
        return bound_instance(_instance(instance), **options).report


def compare(instances: Iterable[InstanceLike], algorithms: Sequence[str], *, seeds: int = 10, first_seed: int = 0,
            jobs: int = 1, bounds: bool | None = None, **options: Any) -> Compared:
    """``cbai compare``: every algorithm spec (``NAME[:REGIME][:OPTION=VALUE,…]``) on every
    instance — in memory, a file, a folder or a generator spec such as
    ``"irrelevant-dims:d=10,eps=0.05"`` — for ``seeds`` seeds, on ``jobs`` processes.
    Every algorithm on a seed faces the same instance and the same noise. ``options`` are
    run options shared by all specs; ``bounds`` False skips the lower bounds."""
    from cbai_cli.compare.study import CompareSettings
    from cbai_cli.compare.study import compare as run_comparison

    with library_errors():
        # a single name is left whole, for CompareSettings to refuse with a hint
        sources = instances if isinstance(instances, (str, bytes)) else tuple(
            os.fspath(item) if isinstance(item, os.PathLike) else item for item in instances)
        specs = algorithms if isinstance(algorithms, (str, bytes)) else tuple(algorithms)
        settings = CompareSettings(sources=sources, algorithms=specs, seeds=seeds, first_seed=first_seed,
                                   jobs=jobs, bounds=bounds, options=options)
        return Compared(run_comparison(settings))


def generate(family: str, **parameters: Any) -> Any:
    """An instance of one of the papers' families (``cbai generate``'s names: ``unit-sphere``,
    ``irrelevant-dims``, ``random``, ``amani-a``, …) with its parameters by name (``d``, ``n``,
    ``seed``, …; ``noise="binary"`` or ``sigma`` for the CBAI families)."""
    from cbai_cli.kinds.cbai.families import generate_instance

    with library_errors():
        return generate_instance(family, **parameters)


def algorithms() -> dict[str, Any]:
    """Every registered algorithm by name: its instance kinds, style, regimes (the default
    first) and the options each regime makes it read, as ``cbai algorithms --json`` prints."""
    from cbai_cli.algorithms.registry import entries

    return {name: entry.describe() for name, entry in entries().items()}
