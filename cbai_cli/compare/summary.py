"""Per (instance group, algorithm) summaries of run records: the numbers of the tables,
of ``--json``'s ``summary`` and of the plots.

Each group is summarised by one measure (its ``metric``), with its median and quartiles
(numpy's linear interpolation), as in the paper's Figures 2 and 6 (median over seeds,
25th and 75th percentiles):

- ``cbai`` instances: constraint queries; the ratio column divides the median queries
  by Theorem 1's lower bound at the instance's noise level (for a group that draws a
  fresh instance per seed, by the median of its instances' lower bounds);
- ``safe-bai`` instances: pulls until the stopping rule fires;
- ``safe-regret`` instances: the cumulative regret R_T at the horizon.

The fraction correct (of the runs whose answer can be judged, budget stops with their
anytime answer included) comes with its exact 95 % Clopper–Pearson interval
(:func:`cbai_cli.numerics.binomial.clopper_pearson`): ten right runs out of ten say only that
the true fraction is at least 69 %.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cbai_cli.compare.records import order_key
from cbai_cli.kinds import DEFAULT_KIND
from cbai_cli.numerics.binomial import clopper_pearson

# The confidence level of the interval around the fraction correct.
CORRECT_LEVEL = 0.95


def record_kind(record: Mapping[str, Any]):
    """The instance kind of a record (a record without a ``kind`` is ``cbai``)."""
    from cbai_cli.kinds import DEFAULT_KIND, get

    return get(record.get("kind") or DEFAULT_KIND)


@dataclass(frozen=True)
class SummaryRow:
    """One (instance group, algorithm spec) cell of a comparison."""

    group: str
    source: str
    swept_parameter: str | None
    swept_value: Any
    instance: str
    algorithm: str
    regime: str | None
    runs: int
    median: float
    q25: float
    q75: float
    fraction_correct: float | None
    violations: int
    budget_stops: int
    median_wall_s: float
    lower_bound: float | None
    ratio_to_lower_bound: float | None
    group_index: int
    algorithm_index: int
    kind: str = DEFAULT_KIND
    unsafe_actions: int | None = None
    median_exploration_rounds: float | None = None
    correct_runs: int | None = None
    judged_runs: int | None = None
    correct_low: float | None = None
    correct_high: float | None = None

    @property
    def metric(self) -> str:
        """What ``median``, ``q25`` and ``q75`` measure: queries, pulls or regret."""
        from cbai_cli.kinds import get

        return get(self.kind).metric[0]

    @property
    def guaranteed(self) -> bool | None:
        """Whether the spec's regime carries a correctness guarantee (None: no regime, or
        one this process does not know)."""
        from cbai_cli.numerics.confidence import regimes

        regime = regimes().get(self.regime) if self.regime is not None else None
        return None if regime is None else regime.guaranteed

    @property
    def display_name(self) -> str:
        """The spec as written, with the regime added when the spec leaves it implicit."""
        if self.regime is None or self.regime in self.algorithm.split(":"):
            return self.algorithm
        return f"{self.algorithm} ({self.regime})"

    def to_json(self) -> dict:
        return {
            "group": self.group,
            "source": self.source,
            "swept_parameter": self.swept_parameter,
            "swept_value": self.swept_value,
            "instance": self.instance,
            "algorithm": self.algorithm,
            "regime": self.regime,
            "guaranteed": self.guaranteed,
            "kind": self.kind,
            "metric": self.metric,
            "runs": self.runs,
            "median": self.median,
            "q25": self.q25,
            "q75": self.q75,
            "fraction_correct": self.fraction_correct,
            "correct_runs": self.correct_runs,
            "judged_runs": self.judged_runs,
            "correct_low": self.correct_low,
            "correct_high": self.correct_high,
            "violations": self.violations,
            "budget_stops": self.budget_stops,
            "median_wall_s": self.median_wall_s,
            "lower_bound": self.lower_bound,
            "ratio_to_lower_bound": self.ratio_to_lower_bound,
            "unsafe_actions": self.unsafe_actions,
            "median_exploration_rounds": self.median_exploration_rounds,
        }


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(25th percentile, median, 75th percentile)."""
    q25, median, q75 = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q25), float(median), float(q75)


def sort_records(records: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Records in canonical order (group, seed, algorithm), whatever order they finished in."""
    return sorted((dict(record) for record in records), key=order_key)


def _instance_label(names: list[str]) -> str:
    distinct = sorted(set(names))
    return distinct[0] if len(distinct) == 1 else f"{len(distinct)} instances (one per seed)"


def summarize(records: Iterable[Mapping[str, Any]]) -> tuple[SummaryRow, ...]:
    """One row per (group, algorithm spec), groups and algorithms in grid order."""
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in sort_records(records):
        cells.setdefault((record["group"], record["spec"]), []).append(record)
    group_rank = {}
    algorithm_rank = {}
    for (group, spec), runs in cells.items():
        group_rank[group] = min(group_rank.get(group, (1 << 62, group)), (runs[0].get("group_index", 0), group))
        algorithm_rank[spec] = min(algorithm_rank.get(spec, (1 << 62, spec)), (runs[0].get("algorithm_index", 0), spec))
    rows = []
    for (group, spec), runs in sorted(cells.items(), key=lambda item: (group_rank[item[0][0]], algorithm_rank[item[0][1]])):
        first = runs[0]
        kind = record_kind(first)
        q25, median, q75 = quartiles([run[kind.metric[1]] for run in runs])
        bounds = [run.get("lower_bound") for run in runs]
        lower_bound = float(np.median(bounds)) if bounds and all(value is not None for value in bounds) else None
        answers = [bool(run["correct"]) for run in runs if run["correct"] is not None]
        correct_low, correct_high = clopper_pearson(sum(answers), len(answers), CORRECT_LEVEL) if answers else (None, None)
        exploration = [run["exploration_rounds"] for run in runs if run.get("exploration_rounds") is not None]
        rows.append(SummaryRow(
            group=group,
            source=first.get("source", group),
            swept_parameter=first.get("swept_parameter"),
            swept_value=first.get("swept_value"),
            instance=_instance_label([run["instance"] for run in runs]),
            algorithm=spec,
            regime=first["regime"],
            runs=len(runs),
            median=median,
            q25=q25,
            q75=q75,
            fraction_correct=float(np.mean(answers)) if answers else None,
            violations=int(sum(bool(run["violation"]) for run in runs)),
            budget_stops=int(sum(run["stopped"] == "budget" for run in runs)),
            median_wall_s=float(np.median([run["wall_s"] for run in runs])),
            lower_bound=lower_bound,
            ratio_to_lower_bound=median / lower_bound if lower_bound else None,
            group_index=group_rank[group][0],
            algorithm_index=algorithm_rank[spec][0],
            kind=kind.name,
            unsafe_actions=None if kind.unsafe_label is None else int(sum(run.get("violations") or 0 for run in runs)),
            median_exploration_rounds=float(np.median(exploration)) if exploration else None,
            correct_runs=sum(answers) if answers else None,
            judged_runs=len(answers) if answers else None,
            correct_low=correct_low,
            correct_high=correct_high,
        ))
    return tuple(rows)


def by_group(rows: Sequence[SummaryRow]) -> dict[str, list[SummaryRow]]:
    """Rows per group label, in order."""
    groups: dict[str, list[SummaryRow]] = {}
    for row in rows:
        groups.setdefault(row.group, []).append(row)
    return groups
