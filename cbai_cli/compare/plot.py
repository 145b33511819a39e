"""Figures of a comparison, in the layout of the paper's Figure 2 (Lindner et al., 2022).

- One panel per swept source: the group's measure (queries, pulls or regret; log scale)
  against the swept parameter, one line per algorithm, with the interquartile range as
  a band (as in Figure 6).
- One panel per unswept safe-regret group: the cumulative regret R_t against t on log-log
  axes, median over seeds with the interquartile band, one line per algorithm (Safe-LUCB's
  Appendix F comparison; slopes read as growth orders).
- One more panel per measure for the other groups that sweep nothing: a strip chart per
  group, every run a dot, the median a marker with its interquartile range (Figure 3 style).

matplotlib is imported inside the functions (it costs a second) and used through its
object interface with the Agg canvas, so no global pyplot state is touched.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cbai_cli.compare.summary import SummaryRow, record_kind
from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds import get

MARKERS = "osD^v<>phX*"


@dataclass(frozen=True)
class Panel:
    """One axis of the figure: ``style`` is sweep, curve or strip; ``title`` the swept
    source or the group; ``rows`` the summary rows drawn in it."""

    style: str
    title: str
    rows: list[SummaryRow]


def _panels(rows: Sequence[SummaryRow]) -> list[Panel]:
    """Each swept source, then each unswept safe-regret group, then the other unswept
    groups with one panel per measure."""
    swept: dict[str, list[SummaryRow]] = {}
    curves: dict[str, list[SummaryRow]] = {}
    strips: dict[str, list[SummaryRow]] = {}
    for row in rows:
        if row.swept_parameter is not None:
            swept.setdefault(row.source, []).append(row)
        elif get(row.kind).draws_curves:
            curves.setdefault(row.group, []).append(row)
        else:
            strips.setdefault(row.metric, []).append(row)
    return ([Panel("sweep", source, members) for source, members in swept.items()]
            + [Panel("curve", group, members) for group, members in curves.items()]
            + [Panel("strip", "", members) for members in strips.values()])


def _sweep_title(source: str, parameter: str) -> str:
    """``irrelevant-dims:d=10,eps=0.01|0.02`` → ``irrelevant-dims: d=10, varying eps``."""
    family, _, body = source.partition(":")
    fixed = [item for item in body.split(",") if item and not item.startswith(f"{parameter}=")]
    return f"{family}: " + ", ".join(fixed + [f"varying {parameter}"])


def plot_comparison(rows: Sequence[SummaryRow], records: Sequence[dict], path: Path, title: str | None = None) -> None:
    """Write the figure to ``path`` (.png, .pdf or .svg, by its suffix), atomically.

    Raises:
        OptionError: ``--plot PATH: no records to plot`` when there is nothing to draw,
            ``--plot PATH: cannot write: REASON`` when the file cannot be written.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from cbai_cli.io.atomic import write_atomic
    from cbai_cli.io.outputs import write_errors

    if not rows:
        raise OptionError(f"--plot {path}: no records to plot")
    panels = _panels(rows)
    algorithms = sorted({row.algorithm: row.algorithm_index for row in rows}.items(), key=lambda item: (item[1], item[0]))
    names = [name for name, _ in algorithms]
    legend = {row.algorithm: row.display_name for row in rows}
    colors = {name: f"C{position % 10}" for position, name in enumerate(names)}
    markers = {name: MARKERS[(position // 10 + position) % len(MARKERS)] for position, name in enumerate(names)}
    columns = 1 if len(panels) == 1 else 2
    lines = (len(panels) + columns - 1) // columns
    width = 6.0 * columns
    figure = Figure(figsize=(width, 4.0 * lines + 0.3 * len(names) / columns + 0.6), layout="constrained")
    axes = figure.subplots(lines, columns, squeeze=False).ravel()
    for axis in axes[len(panels):]:
        axis.set_visible(False)
    for axis, panel in zip(axes, panels):
        metric = panel.rows[0].metric
        if panel.style == "curve":
            _curve_panel(axis, panel.title, panel.rows, records, colors, markers)
            axis.set_ylabel("cumulative regret R_t (median, IQR)")
        else:
            if panel.style == "sweep":
                _sweep_panel(axis, panel.title, panel.rows, colors, markers)
            else:
                _strip_panel(axis, panel.rows, records, colors, markers, legend)
            axis.set_yscale("log", nonpositive="mask")  # a run with no query has no place on a log axis
            axis.set_ylabel(f"{metric} (median, IQR)")
        axis.grid(True, which="major", alpha=0.3)
    handles = [Line2D([], [], color=colors[name], marker=markers[name], label=legend[name]) for name in names]
    longest = max((len(legend[name]) for name in names), default=1)
    # Legend columns that fit the figure's width at about 0.09 inch per character.
    legend_columns = max(1, min(len(names), int(width / (0.09 * longest + 0.6))))
    figure.legend(handles=handles, loc="outside lower center", ncol=legend_columns, fontsize="small", frameon=False)
    if title:
        figure.suptitle("\n".join(textwrap.wrap(title, int(width * 11))), fontsize="medium")
    buffer = io.BytesIO()
    figure.savefig(buffer, format=path.suffix.lower().lstrip("."), dpi=150, bbox_inches="tight")
    data = buffer.getvalue()
    with write_errors(path, "--plot"):
        write_atomic(path, lambda stream: stream.write(data))


def _sweep_panel(axis, source: str, members: Sequence[SummaryRow], colors: dict, markers: dict) -> None:
    parameter = members[0].swept_parameter
    by_algorithm: dict[str, list[SummaryRow]] = {}
    for row in members:
        by_algorithm.setdefault(row.algorithm, []).append(row)
    for name, points in by_algorithm.items():
        points = sorted(points, key=lambda row: row.swept_value)
        xs = [row.swept_value for row in points]
        axis.plot(xs, [row.median for row in points], color=colors[name], marker=markers[name], markersize=4, label=name)
        axis.fill_between(xs, [row.q25 for row in points], [row.q75 for row in points], color=colors[name], alpha=0.15,
                          linewidth=0)
    if all(isinstance(row.swept_value, int) for row in members):
        from matplotlib.ticker import MaxNLocator

        axis.xaxis.set_major_locator(MaxNLocator(integer=True))  # no tick at d = 2.5
    axis.set_xlabel(parameter)
    axis.set_title(_sweep_title(source, parameter), fontsize="medium")


def _strip_panel(axis, members: Sequence[SummaryRow], records: Sequence[dict], colors: dict, markers: dict,
                 legend: dict) -> None:
    """Every run a dot, the median a marker with its interquartile range; one slot per
    group with the algorithms side by side, or one slot per algorithm for a single group."""
    groups = list(dict.fromkeys(row.group for row in members))
    algorithms = list(dict.fromkeys(row.algorithm for row in members))
    single = len(groups) == 1
    width = 0.8 if single else 0.8 / max(len(algorithms), 1)
    runs: dict[tuple[str, str], list[float]] = {}
    for record in records:
        measure = record_kind(record).metric[1]
        runs.setdefault((record["group"], record["spec"]), []).append(record[measure])
    for row in members:
        if single:
            center = float(algorithms.index(row.algorithm))
        else:
            center = groups.index(row.group) - 0.4 + width * (algorithms.index(row.algorithm) + 0.5)
        values = sorted(runs.get((row.group, row.algorithm), []))
        # Spread the dots evenly across the slot (no random jitter: the figure is reproducible).
        spread = [center + width * 0.6 * ((position + 0.5) / len(values) - 0.5) for position in range(len(values))]
        axis.scatter(spread, values, s=6, color=colors[row.algorithm], alpha=0.35, linewidths=0)
        axis.errorbar([center], [row.median], yerr=[[row.median - row.q25], [row.q75 - row.median]],
                      color=colors[row.algorithm], marker=markers[row.algorithm], markersize=6, capsize=3)
    labels = [legend[name] for name in algorithms] if single else groups
    axis.set_xticks(range(len(labels)))
    axis.set_xticklabels(labels, fontsize="small", rotation=30 if single else 0, ha="right" if single else "center")
    axis.set_xlim(-0.5, len(labels) - 0.5)
    if single:
        axis.set_title(groups[0], fontsize="medium")


def _curve_panel(axis, group: str, members: Sequence[SummaryRow], records: Sequence[dict], colors: dict,
                 markers: dict) -> None:
    """R_t against t for one safe-regret group: per algorithm the median over its runs at
    every point of the recorded curve, with the interquartile band."""
    for row in members:
        curves = [record["regret_curve"] for record in records
                  if record["group"] == group and record["spec"] == row.algorithm and record.get("regret_curve")]
        if not curves:
            continue
        points = np.asarray(curves[0], dtype=float)[:, 0]
        values = np.asarray([[regret for _, regret in curve] for curve in curves], dtype=float)  # (runs, points)
        q25, median, q75 = np.percentile(values, [25, 50, 75], axis=0)
        axis.plot(points, median, color=colors[row.algorithm], marker=markers[row.algorithm], markersize=3,
                  markevery=max(1, len(points) // 8))
        axis.fill_between(points, q25, q75, color=colors[row.algorithm], alpha=0.15, linewidth=0)
    # Log-log: the curve is recorded at 1-2-5 steps, and slopes read as growth orders
    # (1 while exploring or for linear regret, 1/2 for √T).
    axis.set_xscale("log")
    axis.set_yscale("log", nonpositive="mask")
    axis.set_xlabel("t")
    axis.set_title(group, fontsize="medium")
