"""One run of a comparison: prepare a request on an instance, run a seed, and shape the
result as a record's columns.

Every instance kind goes through the same :func:`cbai_cli.run.simulate.prepare` and
:func:`cbai_cli.run.simulate.run_once`; the kind says which columns its options and results
fill (:meth:`~cbai_cli.kinds.base.InstanceKind.record_options`, ``result.record()``).
Randomness comes from ``SeedSequence(seed, spawn_key=key)``, so common random numbers
and ``--jobs`` independence hold for every kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.run.simulate import PreparedRun, RunRequest, prepare, run_many


@dataclass(frozen=True)
class RunParts:
    """What one run contributes to its record: the resolved algorithm and regime (None
    for algorithms without one), the options in effect (None where an option does not
    enter the algorithm) and the scored result."""

    algorithm: str
    regime: str | None
    options: dict
    result: dict


def prepare_request(request: RunRequest, instance: Any, *, solve_oracle: bool = True) -> PreparedRun:
    """Check ``request`` against ``instance`` as ``cbai solve`` would and fill in defaults."""
    return prepare(request, instance, solve_oracle=solve_oracle)


def run_prepared(prepared: PreparedRun, seeds, key: tuple[int, ...]) -> list[RunParts]:
    """Run seeds of a prepared request (together where the compiled step can,
    :func:`cbai_cli.run.simulate.run_many`) and score each."""
    kind = prepared.kind
    options = kind.record_options(prepared, RECORD_KEYS)
    return [RunParts(prepared.algorithm, prepared.regime, options, kind.result_record(result))
            for result in run_many(prepared, seeds, key)]
