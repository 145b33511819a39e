"""``cbai solve`` as a library call: run seeds, score them, attach the instance's bounds."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cbai_cli.bounds import BoundReport, compute_bounds
from cbai_cli.fileio import write_atomic
from cbai_cli.instance import Instance
from cbai_cli.simulate import PreparedRun, RunResult, RunSpec, prepare, run_once

TRACE_COLUMNS = ("step", "arm", "observation", "uncertain", "feasible", "recommendation")


@dataclass(frozen=True)
class SolveOutcome:
    """The runs of one ``solve`` call, with the instance's bounds for comparison."""

    instance: Instance
    prepared: PreparedRun
    results: tuple[RunResult, ...]
    bounds: BoundReport
    trace_rows: tuple[tuple, ...] = ()

    @property
    def notes(self) -> list[str]:
        notes = list(self.prepared.notes)
        duplicates = self.instance.duplicate_groups
        if duplicates:
            notes.append(f"the instance has {len(duplicates)} group(s) of identical arms; any copy of the best arm counts as correct")
        if self.instance.boundary_arms.size:
            notes.append("some arm lies exactly on the constraint boundary: no algorithm can decide it")
        return notes

    @property
    def reference_lower_bound(self) -> float:
        """Theorem 1 at the instance's noise level (σ² for Gaussian noise, 1 for binary)."""
        scaled = self.bounds.lower_bound_noise
        return self.bounds.lower_bound if scaled is None else scaled

    def bound_line(self) -> str:
        from cbai_cli.render import fmt

        median = float(np.median([r.iterations for r in self.results]))
        reference = self.reference_lower_bound
        ratio = f"{median / reference:,.1f}×" if reference and np.isfinite(reference) else "—"
        noise = "" if self.bounds.lower_bound_noise is None else f", at the noise level σ² = {self.bounds.noise_variance:g}: {fmt(self.bounds.lower_bound_noise)}"
        which = "unit-noise" if self.bounds.lower_bound_noise is None else "σ²-scaled"
        return (f"H_CLB = {fmt(self.bounds.h_clb.value)}; lower bound (Thm 1, unit noise, δ = {self.bounds.delta:g}) = "
                f"{fmt(self.bounds.lower_bound)}{noise}; Prop. 1 bound = {fmt(self.bounds.prop1_bound)}; "
                f"median queries / {which} lower bound = {ratio}")

    def to_json(self) -> dict:
        from cbai_cli.bounds import json_number

        return {
            "algorithm": self.prepared.algorithm,
            "regime": self.prepared.regime,
            "delta": self.prepared.config.confidence.delta,
            "instance": self.instance.name,
            "runs": [result.to_dict() for result in self.results],
            "h_clb": json_number(self.bounds.h_clb.value),
            "lower_bound": json_number(self.bounds.lower_bound),
            "lower_bound_noise": json_number(self.bounds.lower_bound_noise),
            "prop1_bound": json_number(self.bounds.prop1_bound),
            "notes": self.notes,
        }


def solve_instance(instance: Instance, request: RunSpec, seeds: Iterable[int], trace: bool = False) -> SolveOutcome:
    """Run ``request`` on ``instance`` once per seed; each seed gives the same result as a
    single run with that seed."""
    prepared = prepare(request, instance)
    rows: list[tuple] | None = [] if trace else None
    results = tuple(run_once(prepared, instance, seed, tracer_rows=rows) for seed in seeds)
    bounds = compute_bounds(instance, delta=request.delta)
    return SolveOutcome(instance, prepared, results, bounds, tuple(rows or ()))


def write_trace(path: Path, rows: Sequence[tuple]) -> None:
    """One line per query, CSV or JSON Lines by extension, written atomically."""
    text = io.StringIO()
    if path.suffix.lower() == ".csv":
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(TRACE_COLUMNS)
        writer.writerows(rows)
    else:
        for row in rows:
            text.write(json.dumps(dict(zip(TRACE_COLUMNS, row))) + "\n")
    data = text.getvalue().encode()
    write_atomic(path, lambda stream: stream.write(data))
