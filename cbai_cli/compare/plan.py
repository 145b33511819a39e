"""What a comparison runs: instance groups × algorithm choices × seeds, and its plan.

Randomness (common random numbers): run (instance, seed s, algorithm) draws from
``SeedSequence(s, spawn_key=(k,))`` with k the instance's content hash read as an
integer. Every algorithm on seed s of an instance faces the same noise stream, and no
result depends on which process runs it or in which order.
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cbai_cli.compare.sources import Group, parse_sources
from cbai_cli.compare.specs import AlgorithmChoice, parse_algorithms
from cbai_cli.contracts.errors import OptionError
from cbai_cli.contracts.options import check_seed, memory_limit, memory_limit_text

DEFAULT_SEEDS = 10
#: Bytes a planned run and its record take (measured: ~0.6 KB planned, ~2.4 KB recorded).
RUN_BYTES = 4 * 2**10
#: Bytes of one (group, seed) cell: its key, and for a group that draws an instance per
#: seed that instance (measured: ~13 KB for unit-sphere d = 30, n = 30) — 16 KiB plus 24
#: bytes a number of its arrays.
CELL_BYTES = 200
INSTANCE_BYTES = 16 * 2**10
BYTES_PER_INSTANCE_NUMBER = 24


@dataclass(frozen=True, eq=False)
class Grid:
    """Groups × algorithms × seeds, validated; ``warnings`` by (group, algorithm) index: what
    to tell the user before that request's runs start (:func:`validate`)."""

    groups: tuple[Group, ...]
    algorithms: tuple[AlgorithmChoice, ...]
    seeds: tuple[int, ...]
    title: str | None = None
    warnings: Mapping[tuple[int, int], str] = field(default_factory=dict)

    def idle_groups(self) -> list[Group]:
        """Groups that no algorithm of the grid can run on (another instance kind)."""
        kinds = {kind for choice in self.algorithms for kind in choice.kinds}
        return [group for group in self.groups if group.kind not in kinds]


@dataclass(frozen=True)
class PlannedRun:
    """One run of the grid.

    ``index`` is its position in the whole grid (group, then seed, then algorithm), the
    same in every shard; ``run_key`` identifies it in a store (see :func:`run_key`).
    """

    index: int
    group: int
    seed: int
    algorithm: int
    run_key: str


@dataclass(frozen=True, eq=False)
class Plan:
    """The runs one process is responsible for (all of them, or one shard's), with
    the instance of each (group, seed) cell."""

    grid: Grid
    runs: tuple[PlannedRun, ...]
    instances: Mapping[tuple[int, int], Any]

    def instance(self, run: PlannedRun) -> Any:
        return self.instances[(run.group, run.seed)]


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``i/n`` (1 ≤ i ≤ n) as (i, n)."""
    if text is None:
        return None
    part, slash, total = text.partition("/")
    try:
        index, count = int(part), int(total)
    except ValueError:
        raise OptionError(f"--shard must look like i/n (e.g. 2/8), got {text!r}") from None
    if not slash or count < 1 or not 1 <= index <= count:
        raise OptionError(f"--shard i/n needs 1 ≤ i ≤ n, got {text!r}")
    return index, count


def stream_key(instance: Any) -> int:
    """The SeedSequence spawn key of an instance: its content hash as an integer."""
    return int(instance.content_hash, 16)


def run_key(group: Group, instance: Any, seed: int, choice: AlgorithmChoice) -> str:
    """A short hash naming one run in a store: the group, the instance's content, the
    seed, the spec and every requested option. Resuming skips runs whose key is stored."""
    from cbai_cli.kinds import get

    identity = [group.label, instance.content_hash, seed, choice.label, get(instance.kind).run_identity(choice.request)]
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def build_plan(grid: Grid, shard: tuple[int, int] | None = None) -> Plan:
    """The runs of the grid in canonical order (group, seed, algorithm), or those of one
    shard: shard i/n holds every n-th (group, seed) cell starting at the i-th, so all
    algorithms of a cell run in the same shard and the shards partition the grid. An
    algorithm runs on the groups of its instance kind only (CBAI algorithms on cbai
    instances, Safe-LUCB on safe-regret, LinGapE and Safe-LinGapE on safe-bai)."""
    runs: list[PlannedRun] = []
    instances: dict[tuple[int, int], Any] = {}
    index = 0
    cell = 0
    for group_index, group in enumerate(grid.groups):
        for seed in grid.seeds:
            mine = shard is None or cell % shard[1] == shard[0] - 1
            cell += 1
            if not mine:
                index += len(grid.algorithms)
                continue
            instance = group.instance_for(seed)
            instances[(group_index, seed)] = instance
            for algorithm_index, choice in enumerate(grid.algorithms):
                if group.kind in choice.kinds:
                    runs.append(PlannedRun(index, group_index, seed, algorithm_index,
                                           run_key(group, instance, seed, choice)))
                index += 1
    return Plan(grid, tuple(runs), instances)


def validate(grid: Grid) -> dict[tuple[int, int], str]:
    """Check every (group, algorithm) pair of one kind as ``cbai solve`` would, before any
    run: an unknown regime, tuned without β, an option the algorithm cannot use…; and
    that every algorithm has some group of its kind to run on. Returns the warnings of the
    pairs (:attr:`cbai_cli.run.simulate.PreparedRun.warnings`, for the instance of the first
    seed), each as ``algorithm spec 'S' on GROUP: …``."""
    from cbai_cli.run.simulate import prepare

    kinds = {group.kind for group in grid.groups}
    for choice in grid.algorithms:
        if not kinds & set(choice.kinds):
            from cbai_cli.algorithms.registry import names_for

            raise OptionError(f"algorithm spec {choice.label!r} runs on {', '.join(choice.kinds)} instances, and no "
                              f"source is one "
                              f"(sources: {', '.join(sorted(kinds))} instances; their algorithms: "
                              f"{', '.join(name for kind in sorted(kinds) for name in names_for(kind))})")
    warnings = {}
    for group_index, group in enumerate(grid.groups):
        instance = group.instance_for(grid.seeds[0])
        for algorithm_index, choice in enumerate(grid.algorithms):
            if group.kind not in choice.kinds:
                continue
            try:
                prepared = prepare(choice.request, instance, solve_oracle=False)
            except OptionError as error:
                raise OptionError(f"algorithm spec {choice.label!r}: {error}", error.parameter) from None
            for text in prepared.warnings:
                warnings[(group_index, algorithm_index)] = f"algorithm spec {choice.label!r} on {group.label}: {text}"
    return warnings


def seed_bytes(groups: Sequence[Group], choices: Sequence[AlgorithmChoice]) -> int:
    """Estimated bytes that one more seed adds to a comparison: a cell per group (with
    its own instance for groups that draw one per seed) and a planned run and record per
    algorithm that runs on the group's kind."""
    total = 0
    for group in groups:
        total += CELL_BYTES + RUN_BYTES * sum(group.kind in choice.kinds for choice in choices)
        if group.per_seed:
            from cbai_cli.kinds.cbai.families import family

            chosen = family(group.family)
            params = chosen.resolve(**dict(group.params))
            size = chosen.size(**{k: params[k] for k in ("n", "d") if k in params}) if chosen.size else None
            total += INSTANCE_BYTES + (BYTES_PER_INSTANCE_NUMBER * size.file if size else 0)
    return total


def check_memory(groups: Sequence[Group], choices: Sequence[AlgorithmChoice], seeds: int) -> None:
    """One line naming ``--seeds`` when the plan and records of ``seeds`` seeds would take
    more than :func:`~cbai_cli.contracts.options.memory_limit`."""
    per_seed = max(seed_bytes(groups, choices), 1)
    if seeds * per_seed > memory_limit():
        from cbai_cli.contracts.options import bytes_text

        raise OptionError(f"--seeds {seeds} would keep about {bytes_text(seeds * per_seed)} of planned runs and "
                          f"records in memory, more than {memory_limit_text(memory_limit())}: at most "
                          f"{memory_limit() // per_seed:,} seeds fit with these sources and algorithms", "seeds")


def build_grid(sources: Sequence[str], algorithms: Sequence[str], seeds: int, first_seed: int = 0,
               shared: Mapping[str, Any] | None = None, base: Path | None = None, title: str | None = None) -> Grid:
    """Parse and validate sources, algorithm specs and seeds into a :class:`Grid`; ``seeds``
    is an integer ≥ 1 and ``first_seed`` one ≥ 0 (numpy integers taken, bools refused)."""
    if isinstance(seeds, bool) or not isinstance(seeds, numbers.Integral) or seeds < 1:
        raise OptionError(f"--seeds must be an integer ≥ 1, got {seeds!r}", "seeds")
    seeds = int(seeds)
    first_seed = check_seed(first_seed, "--first-seed", "first_seed")
    choices = parse_algorithms(algorithms, shared or {})
    groups = parse_sources(sources, base)
    check_memory(groups, choices, seeds)
    grid = Grid(groups, choices, tuple(range(first_seed, first_seed + seeds)), title)
    return replace(grid, warnings=validate(grid))
