"""``cbai compare`` as library calls: plan (validate everything, open the store), then run.

:func:`plan_comparison` raises every user error (bad spec, regime, option, store,
shard) before any run starts; :func:`run_comparison` runs what is not stored yet (with
other processes writing the same SQLite store, its share) and returns all records of
the grid (or of this shard), stored ones and other processes' included.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cbai_cli.algorithms.registry import load_plugins
from cbai_cli.compare.claims import DEFAULT_LEASE, check_lease
from cbai_cli.compare.plan import (
    DEFAULT_SEEDS,
    Grid,
    Plan,
    PlannedRun,
    build_grid,
    build_plan,
    parse_shard,
)
from cbai_cli.compare.study_file import load_study
from cbai_cli.contracts.errors import OptionError
from cbai_cli.contracts.options import checked
from cbai_cli.run.parallel import check_jobs


@dataclass(frozen=True)
class CompareSettings:
    """Everything a user can give ``cbai compare`` that decides which runs happen.

    ``None`` means "not given": the study file's value, else the default.
    ``options`` holds the shared options of ``cbai solve`` by their library names
    (:data:`cbai_cli.contracts.options.OPTIONS`: delta, beta, ridge, norm_bound, …). ``lease``
    (seconds, SQLite stores only) is how long this process's claims on runs outlive its
    last heartbeat (:mod:`cbai_cli.compare.claims`).
    """

    sources: tuple[Any, ...] = ()  # files, folders, generator specs (str) or instances in memory
    algorithms: tuple[str, ...] = ()
    seeds: int | None = None
    first_seed: int | None = None
    config: Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    jobs: int | None = None
    shard: str | None = None
    scheduler: str | None = None
    out: Path | None = None
    bounds: bool | None = None
    lease: float | None = None

    def __post_init__(self) -> None:
        """Refuse settings of the wrong type, each in one line: a single str for ``sources``
        or ``algorithms`` (a str is a sequence of one-letter names), a name that is not a
        str, ``options`` that are not a mapping, ``bounds`` that is not a bool. The numbers
        are checked when the comparison is planned (:func:`plan_comparison`)."""
        object.__setattr__(self, "sources", _names(self.sources, "sources", "SOURCES", paths=True))
        object.__setattr__(self, "algorithms", _names(self.algorithms, "algorithms", "--algos"))
        if not isinstance(self.options, Mapping):
            raise OptionError(f"options must be a mapping of option names to values such as {{'delta': 0.1}}, "
                              f"got {self.options!r}", "options")
        if self.bounds is not None and not isinstance(self.bounds, bool):
            raise OptionError(f"bounds must be True, False or None, got {self.bounds!r}", "bounds")

    def check_nothing_to_run(self) -> None:
        """With ``--from`` (show stores as they are), any setting that decides runs is an error."""
        from cbai_cli.contracts.options import OPTIONS

        given = [flag for flag, value in (("SOURCES", self.sources or None), ("--algos", self.algorithms or None),
                                          ("--config", self.config), ("--seeds", self.seeds),
                                          ("--first-seed", self.first_seed), ("--shard", self.shard),
                                          ("--scheduler", self.scheduler), ("--jobs", self.jobs),
                                          ("--lease", self.lease)) if value is not None]
        given += [OPTIONS[name].flag for name, value in self.options.items() if value is not None]
        if given:
            raise OptionError(f"--from shows stores as they are; it takes no {', '.join(given)}")


def _names(values: Any, field_name: str, flag: str, paths: bool = False) -> tuple[str, ...]:
    """``values`` (sources or algorithm specs) as a tuple of str, or one line naming ``field_name``;
    with ``paths``, path objects count as their text."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        hint = f" such as ({values!r},)" if isinstance(values, str) else ""
        raise OptionError(f"{field_name} must be a sequence of names ({flag}){hint}, got {values!r}", field_name)
    names = tuple(os.fspath(value) if paths and isinstance(value, os.PathLike) else value for value in values)
    # with paths (sources), an instance held in memory is a source of its own
    wrong = [value for value in names if not isinstance(value, str) and not (paths and _is_instance(value))]
    if wrong:
        raise OptionError(f"{field_name} must be names ({flag}) given as str, got {wrong[0]!r}", field_name)
    return names


def _is_instance(value: Any) -> bool:
    """Whether ``value`` is an instance of a registered kind (a source held in memory)."""
    from cbai_cli.kinds import kind_entries

    return isinstance(getattr(value, "kind", None), str) and value.kind in kind_entries() and hasattr(value, "name")


@dataclass(frozen=True, eq=False)
class PlannedComparison:
    """A validated comparison, ready to run: the plan, the runs still to do, the
    records already stored for this plan, the open store and the lease of its claims."""

    settings: CompareSettings
    grid: Grid
    plan: Plan
    pending: tuple[PlannedRun, ...]
    stored: tuple[dict, ...]
    store: Any = None
    lease: float = DEFAULT_LEASE

    def messages(self) -> list[str]:
        """What to tell the user before the runs start: idle groups, runs already stored."""
        messages = [notice for choice in self.grid.algorithms
                    if (notice := choice.override_notice(self._shared_source)) is not None]
        idle = self.grid.idle_groups()
        if idle:
            messages.append(f"no algorithm given runs on {', '.join(sorted({group.kind for group in idle}))} "
                            f"instances; skipping {', '.join(group.label for group in idle)}")
        if self.stored:
            messages.append(f"{len(self.stored)} of {len(self.plan.runs)} runs already stored in {self.settings.out}; "
                            f"running the other {len(self.pending)}")
        shard = parse_shard(self.settings.shard)
        if shard is not None and not self.plan.runs:  # a job array larger than the grid: legitimate, said
            index, count = shard
            cells = len(self.grid.groups) * len(self.grid.seeds)
            why = (f"the grid has {cells} cell{'s' if cells != 1 else ''} (instance group × seed) for {count} shards"
                   if index > cells else "no algorithm given runs on the instances of its cells")
            messages.append(f"shard {index}/{count} holds no runs: {why}; nothing to run")
        return messages

    def warnings(self) -> list[str]:
        """The grid's warnings (a run that will take very long) of the requests that still have
        runs to do here: once per request, however many seeds it runs; and once per spec
        whose regime carries no correctness guarantee (``tuned``), as ``solve`` says too."""
        from cbai_cli.algorithms.registry import resolve
        from cbai_cli.numerics.confidence import regimes

        pending = {(run.group, run.algorithm) for run in self.pending}
        said = [text for key, text in self.grid.warnings.items() if key in pending]
        for index in sorted({algorithm for _, algorithm in pending}):
            choice = self.grid.algorithms[index]
            entry, alias = resolve(choice.request.algorithm) if choice.request.algorithm else (None, None)
            regime = choice.request.regime or (alias.regime if alias is not None and alias.regime else None) or (
                entry.default_regime if entry is not None else None)
            if regime in regimes() and not regimes()[regime].guaranteed:
                said.append(f"algorithm spec {choice.label!r}: {regime} intervals carry no correctness guarantee")
        return said

    def _shared_source(self, option: str, value: Any) -> str:
        """Where a value given for all algorithms came from: its flag, or the study file."""
        from cbai_cli.compare.specs import value_text
        from cbai_cli.contracts.options import OPTIONS

        if self.settings.options.get(option) is not None:  # the command line wins over the study file
            return f"{OPTIONS[option].flag} {value_text(value)}"
        return f"{OPTIONS[option].spec_name}: {value_text(value)} of the options of {self.settings.config}"


@dataclass(frozen=True)
class ComparisonResult:
    """All records of the plan (stored, new, and those other processes sharing the store
    ran meanwhile), with counts of each."""

    records: tuple[dict, ...]
    title: str | None
    ran: int
    reused: int
    by_others: int = 0


def plan_comparison(settings: CompareSettings) -> PlannedComparison:
    """Parse and check everything, build the plan and open the store; no run starts."""
    study = load_study(settings.config) if settings.config is not None else None
    sources = settings.sources or (study.sources if study else ())
    algorithms = settings.algorithms or (study.algorithms if study else ())
    seeds = settings.seeds if settings.seeds is not None else (study.seeds if study and study.seeds else DEFAULT_SEEDS)
    first_seed = settings.first_seed if settings.first_seed is not None else (study.first_seed if study and study.first_seed is not None else 0)
    options = dict(study.options) if study else {}
    load_plugins()  # a plugin's options are declared as its algorithm loads
    options.update(checked(settings.options))
    if settings.jobs is not None:
        check_jobs(settings.jobs)
    if settings.jobs is not None and settings.scheduler is not None:
        raise OptionError("--jobs does not apply with --scheduler: the cluster's workers run the batches")
    shard = parse_shard(settings.shard)
    lease = _lease(settings)
    base = study.base if study and not settings.sources else None
    grid = build_grid(sources, algorithms, seeds, first_seed, options, base=base,
                      title=study.title if study else None)
    plan = build_plan(grid, shard)
    store = None
    stored: list[dict] = []
    pending = list(plan.runs)
    if settings.out is not None:
        from cbai_cli.compare.store import open_store

        store = open_store(settings.out)
        wanted = {run.run_key for run in plan.runs}
        seen: set[str] = set()
        for record in store.records():
            key = record.get("run_key")
            if key in wanted and key not in seen:
                seen.add(key)
                stored.append(record)
        pending = [run for run in plan.runs if run.run_key not in seen]
    return PlannedComparison(settings, grid, plan, tuple(pending), tuple(stored), store, lease)


def _lease(settings: CompareSettings) -> float:
    """The lease of this process's claims, checked: ``--lease`` needs a store that several
    processes can share (SQLite; a JSON Lines store has one writer)."""
    from cbai_cli.compare.store import kind_of

    if settings.lease is None:
        return DEFAULT_LEASE
    lease = check_lease(settings.lease)
    if settings.out is None or kind_of(settings.out) != "sqlite":
        raise OptionError("--lease applies to a SQLite --out store (.sqlite), which several cbai compare processes "
                          "can share", "lease")
    return lease


def run_comparison(planned: PlannedComparison, progress: Callable[[int], None] | None = None,
                   on_record: Callable[[dict], None] | None = None,
                   tell: Callable[[str], None] | None = None) -> ComparisonResult:
    """Run the pending runs, appending each record to the store as it finishes.

    Processes sharing a SQLite store each claim runs before they start them
    (:mod:`cbai_cli.compare.claims`): this one runs those nobody else has, then waits
    for the others' (taking over the runs of a process whose heartbeat stopped) and
    returns the records of the whole plan. ``progress`` gets the number of pending runs
    finished, here or elsewhere; ``tell`` the lines to show the user (waiting, taking
    over).

    On Ctrl-C, SIGTERM (as :class:`~cbai_cli.compare.execute.Terminated`, a
    KeyboardInterrupt) or an error the workers are stopped, the claims given up, the
    store is closed with every finished record in it, and the exception propagates.
    """
    from cbai_cli.compare.backends import make_backend
    from cbai_cli.compare.claims import await_runs, sharing
    from cbai_cli.compare.execute import Scheduler
    from cbai_cli.run.interrupts import terminate_as_interrupt

    new_records: list[dict] = []
    pending = {run.run_key: run for run in planned.pending}
    by_others: set[str] = set()

    def count() -> None:
        if progress is not None:
            progress(len(new_records) + len(by_others))

    def emit(record: dict) -> None:
        if planned.store is not None:
            planned.store.append(record)
        new_records.append(record)
        if on_record is not None:
            on_record(record)
        count()

    def stored_elsewhere(keys: frozenset[str]) -> None:
        by_others.update(keys)
        count()

    others: tuple[dict, ...] = ()
    try:
        if pending:
            with terminate_as_interrupt(), sharing(planned.store, planned.lease) as claims:
                todo = planned.pending
                while todo:
                    backend = make_backend(planned.settings.jobs, planned.settings.scheduler, len(todo))
                    Scheduler(planned.plan, backend, emit, with_bounds=planned.settings.bounds,
                              claim=claims.claim).run(todo)
                    done = by_others.union(record["run_key"] for record in new_records)
                    taken = await_runs(claims, [key for key in pending if key not in done], tell or _silent,
                                       stored_elsewhere)
                    todo = tuple(run for key, run in pending.items() if key in taken)
        if by_others:
            others = tuple(record for record in planned.store.records() if record["run_key"] in by_others)
    finally:
        if planned.store is not None:
            planned.store.close()
    return ComparisonResult(tuple(planned.stored) + tuple(new_records) + others, planned.grid.title,
                            len(new_records), len(planned.stored), len(others))


def _silent(text: str) -> None:
    """A ``tell`` that shows nothing."""


class RecordCounter:
    """Counts records as they are stored (to say how many survived a Ctrl-C)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, record: dict) -> None:
        self.count += 1


def compare(settings: CompareSettings, progress: Callable[[int], None] | None = None) -> ComparisonResult:
    """Plan and run in one call (for scripts and tests)."""
    return run_comparison(plan_comparison(settings), progress)


def deduplicate(records: Iterable[dict]) -> list[dict]:
    """The first record of every run key (two writers may store a run twice)."""
    seen: set[str] = set()
    unique = []
    for record in records:
        if record.get("run_key") not in seen:
            seen.add(record.get("run_key"))
            unique.append(record)
    return unique


@dataclass(frozen=True)
class MergedStores:
    """The records of several stores (each run once), how many were copied into the
    ``--out`` store, and how many cut-short lines were skipped."""

    records: tuple[dict, ...]
    copied: int = 0
    skipped_lines: int = 0

    def messages(self, out: Path | None) -> list[str]:
        """What to tell the user about the merge."""
        messages = [f"skipped {self.skipped_lines} unreadable line(s)"] if self.skipped_lines else []
        if out is not None:
            messages.append(f"copied {self.copied} new records into {out}")
        return messages


def merge_stores(paths: Iterable[Path], out: Path | None = None) -> MergedStores:
    """Read stores (e.g. one per shard) and, with ``out``, append every record whose run
    key ``out`` lacks; nothing runs. Returns the union, each run key once."""
    from cbai_cli.compare.store import open_store, read_store

    paths = list(paths)
    contents = [read_store(path) for path in paths]
    records = deduplicate(record for content in contents for record in content.records)
    if not records:  # nothing to show or copy: saying so beats an empty screen and exit 0
        skipped = sum(content.skipped_lines for content in contents)
        damaged = f" ({skipped} damaged line(s) skipped)" if skipped else ""
        named = " ".join(f"--from {path}" for path in paths)
        raise OptionError(f"{named}: no run records to show{damaged}")
    copied = 0
    if out is not None:
        store = open_store(out)
        try:
            present = store.keys()
            for record in records:
                if record["run_key"] not in present:
                    store.append(record)
                    copied += 1
            records = deduplicate(list(store.records()))
        finally:
            store.close()
    return MergedStores(tuple(records), copied, sum(content.skipped_lines for content in contents))
