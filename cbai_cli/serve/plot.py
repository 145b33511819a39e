"""The dashboard's plots of the arms' confidence intervals of φᵀx against τ.

Drawn as SVG text here (the page must work offline and without a JavaScript library),
τ as a dashed black line in both. An arm is decided feasible when its interval lies
wholly below τ, infeasible when wholly above.

- :func:`arms_svg`, every arm now: one bar [lower, upper] per arm, the arms by reward
  (highest left), coloured by state, the recommended arm in black;
- :func:`intervals_svg`, over the answers: for each arm shown (the dashboard shows the
  arms still open), its band [lower, upper] (a light fill between two lines of the arm's
  colour) at each point of :meth:`Session.history`.

The vertical range is that of the last intervals and τ, with a margin, so the early
intervals (very wide, or infinite before an arm is pulled) run off the frame instead of
flattening the end; values off the frame are drawn on its edge. At most
:data:`MAX_POINTS` points of the history are drawn, evenly spread and always the last.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

MAX_POINTS = 300
#: Colours of the arms, in order (then again): Tableau 10.
COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
#: Arms named in the legend; the rest are counted.
LEGEND_ARMS = 12
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 12, 40
_LEGEND_ROW = 18


#: The colours of the arms' states in :func:`arms_svg`.
STATE_COLOURS = {"feasible": "#59a14f", "uncertain": "#4e79a7", "dominated": "#bab0ac", "infeasible": "#e15759"}


def arms_svg(arms: Sequence[dict], rewards: Sequence[float], labels: Sequence[str], threshold: float,
             recommended: int | None, width: int = 760, height: int = 240) -> str:
    """The SVG text of every arm's current interval (``arms``: the ``arms`` of a status's
    JSON, with ``lower``/``upper`` None for an infinite bound) against ``threshold``, the
    arms ordered by ``rewards`` (highest left, first index among ties), each bar coloured
    by its state, the ``recommended`` arm in black; ``labels`` name the arms in each bar's
    tooltip."""
    count = len(arms)
    total_height = height + _BOTTOM
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_height}" '
            f'viewBox="0 0 {width} {total_height}" role="img" aria-label="every arm\'s interval against the '
            f'threshold, the arms by reward" font-family="sans-serif" font-size="12">')
    if count == 0:
        return head + "</svg>"
    lower = np.array([-np.inf if arm.get("lower") is None else arm["lower"] for arm in arms], dtype=float)
    upper = np.array([np.inf if arm.get("upper") is None else arm["upper"] for arm in arms], dtype=float)
    order = sorted(range(count), key=lambda arm: (-float(rewards[arm]), arm))
    y_low, y_high = _vertical_range(lower, upper, threshold)
    frame_w, frame_h = width - _LEFT - _RIGHT, height - _TOP
    slot = frame_w / count

    def sy(y: float) -> float:
        y = min(max(y, y_low), y_high)
        return _TOP + (y_high - y) / (y_high - y_low) * frame_h

    parts = [head, f'<rect x="{_LEFT}" y="{_TOP}" width="{frame_w}" height="{frame_h}" fill="#ffffff" '
             'stroke="#999999"/>']
    for y in _nice(y_low, y_high):
        parts.append(f'<line x1="{_LEFT - 4}" y1="{sy(y):.1f}" x2="{_LEFT}" y2="{sy(y):.1f}" stroke="#666666"/>')
        parts.append(f'<text x="{_LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_number(y)}</text>')
    bar = max(1.0, min(8.0, slot * 0.6))
    for position, arm in enumerate(order):
        x = _LEFT + (position + 0.5) * slot
        state = str(arms[arm].get("state"))
        colour = "#000000" if arm == recommended else STATE_COLOURS.get(state, "#999999")
        title = escape(f"{labels[arm]} (arm {arm}): {state}")
        parts.append(f'<line x1="{x:.1f}" y1="{sy(upper[arm]):.1f}" x2="{x:.1f}" y2="{sy(lower[arm]):.1f}" '
                     f'stroke="{colour}" stroke-width="{bar + (2 if arm == recommended else 0):.1f}">'
                     f'<title>{title}</title></line>')
    tau = sy(threshold)
    parts.append(f'<line x1="{_LEFT}" y1="{tau:.1f}" x2="{_LEFT + frame_w}" y2="{tau:.1f}" stroke="#000000" '
                 'stroke-width="1.5" stroke-dasharray="6 4"/>')
    parts.append(f'<text x="{_LEFT + frame_w - 4}" y="{tau - 4:.1f}" text-anchor="end">τ = {_number(threshold)}</text>')
    parts.append(f'<text x="{_LEFT + frame_w / 2:.1f}" y="{_TOP + frame_h + 16}" text-anchor="middle">arms by reward, '
                 'highest left: feasible green, uncertain blue, infeasible red, dominated grey, recommended black'
                 '</text>')
    parts.append(f'<text x="14" y="{_TOP + frame_h / 2:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {_TOP + frame_h / 2:.1f})">φᵀx</text>')
    return "".join(parts) + "</svg>"


def intervals_svg(history: Sequence[tuple[int, np.ndarray, np.ndarray]], threshold: float,
                  labels: Sequence[str], width: int = 760, height: int = 300,
                  shown: Sequence[int] | None = None) -> str:
    """The SVG text of the plot of ``history`` (points with ``answered``, ``lower`` and
    ``upper``, the arrays one entry per arm; or such triples) against ``threshold``, for
    the arms ``shown`` (all by default); ``labels`` name every arm, those shown in the
    legend."""
    shown = list(range(len(labels))) if shown is None else list(shown)
    entries = min(len(shown), LEGEND_ARMS) + (1 if len(shown) > LEGEND_ARMS else 0)
    total_height = height + _BOTTOM + 12 + _LEGEND_ROW * math.ceil(entries / 3) + 8
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_height}" '
            f'viewBox="0 0 {width} {total_height}" role="img" aria-label="each arm\'s interval against the '
            f'threshold over the answers" font-family="sans-serif" font-size="12">')
    if not history:
        return head + f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no answers yet</text></svg>'
    if not shown:
        return head + f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no arm left open</text></svg>'
    points = [_point(history[i]) for i in _chosen(len(history))]
    answered = np.array([point[0] for point in points], dtype=float)
    lower = np.array([point[1] for point in points]).reshape(len(points), -1)[:, shown]
    upper = np.array([point[2] for point in points]).reshape(len(points), -1)[:, shown]
    labels = [labels[arm] for arm in shown]
    y_low, y_high = _vertical_range(lower[-1], upper[-1], threshold)
    x_low, x_high = float(answered[0]), float(answered[-1])
    if x_high <= x_low:  # one point: the answers around it
        x_low, x_high = x_low - 1.0, x_high + 1.0
    frame_w, frame_h = width - _LEFT - _RIGHT, height - _TOP

    def sx(x: float) -> float:
        return _LEFT + (x - x_low) / (x_high - x_low) * frame_w

    def sy(y: float) -> float:
        # off the frame (infinite before an arm is pulled, or merely wide): on its edge
        y = min(max(y, y_low), y_high) if not math.isnan(y) else y_low
        return _TOP + (y_high - y) / (y_high - y_low) * frame_h

    parts = [head, f'<rect x="{_LEFT}" y="{_TOP}" width="{frame_w}" height="{frame_h}" fill="#ffffff" '
             'stroke="#999999"/>']
    parts += _ticks(x_low, x_high, y_low, y_high, sx, sy, frame_h)
    for arm in range(lower.shape[1]):
        colour = COLOURS[arm % len(COLOURS)]
        tops = [f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(answered, upper[:, arm])]
        bottoms = [f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(answered, lower[:, arm])]
        parts.append(f'<polygon points="{" ".join(tops + bottoms[::-1])}" fill="{colour}" fill-opacity="0.12" '
                     'stroke="none"/>')
        for line in (tops, bottoms):
            parts.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        # the last interval as a bar, each arm a little apart: visible even when the history
        # has a single point (a round-based algorithm is told its answers a round at a time)
        x = sx(answered[-1]) + (arm - (lower.shape[1] - 1) / 2) * 4 - (10 if len(points) > 1 else 0)
        parts.append(f'<line x1="{x:.1f}" y1="{sy(upper[-1, arm]):.1f}" x2="{x:.1f}" y2="{sy(lower[-1, arm]):.1f}" '
                     f'stroke="{colour}" stroke-width="3"/>')
    tau = sy(threshold)
    parts.append(f'<line x1="{_LEFT}" y1="{tau:.1f}" x2="{_LEFT + frame_w}" y2="{tau:.1f}" stroke="#000000" '
                 'stroke-width="1.5" stroke-dasharray="6 4"/>')
    parts.append(f'<text x="{_LEFT + frame_w - 4}" y="{tau - 4:.1f}" text-anchor="end">τ = {_number(threshold)}</text>')
    parts += _legend(labels, height + _BOTTOM + 12, width)
    return "".join(parts) + "</svg>"


def _point(point) -> tuple[float, np.ndarray, np.ndarray]:
    """``(answered, lower, upper)`` of a history point (a :class:`HistoryPoint` or a tuple)."""
    if hasattr(point, "answered"):
        return float(point.answered), np.asarray(point.lower, dtype=float), np.asarray(point.upper, dtype=float)
    answered, lower, upper = point
    return float(answered), np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)


def _chosen(count: int) -> list[int]:
    """At most :data:`MAX_POINTS` indices into a history of ``count`` points, evenly spread,
    the first and last among them."""
    if count <= MAX_POINTS:
        return list(range(count))
    return sorted(set(np.linspace(0, count - 1, MAX_POINTS).round().astype(int).tolist()))


def _vertical_range(lower: np.ndarray, upper: np.ndarray, threshold: float) -> tuple[float, float]:
    values = np.concatenate([lower, upper, [threshold]])
    values = values[np.isfinite(values)]
    low, high = float(values.min()), float(values.max())
    span = high - low
    if span <= 0:
        span = max(abs(threshold), 1.0)
    return low - 0.1 * span, high + 0.1 * span


def _ticks(x_low, x_high, y_low, y_high, sx, sy, frame_h) -> list[str]:
    parts = []
    for x in _nice(x_low, x_high):
        parts.append(f'<line x1="{sx(x):.1f}" y1="{_TOP + frame_h}" x2="{sx(x):.1f}" y2="{_TOP + frame_h + 4}" '
                     'stroke="#666666"/>')
        parts.append(f'<text x="{sx(x):.1f}" y="{_TOP + frame_h + 16}" text-anchor="middle">{_number(x)}</text>')
    for y in _nice(y_low, y_high):
        parts.append(f'<line x1="{_LEFT - 4}" y1="{sy(y):.1f}" x2="{_LEFT}" y2="{sy(y):.1f}" stroke="#666666"/>')
        parts.append(f'<text x="{_LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_number(y)}</text>')
    parts.append(f'<text x="{_LEFT + (sx(x_high) - _LEFT) / 2:.1f}" y="{_TOP + frame_h + 32}" '
                 'text-anchor="middle">answers</text>')
    parts.append(f'<text x="14" y="{_TOP + frame_h / 2:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {_TOP + frame_h / 2:.1f})">φᵀx</text>')
    return parts


def _nice(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round numbers between ``low`` and ``high``."""
    step = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(step))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= step)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def _number(value: float) -> str:
    return f"{value:.4g}".replace("-", "−")


def _legend(labels: Sequence[str], top: int, width: int) -> list[str]:
    parts = []
    column = (width - _LEFT) / 3
    entries = [(COLOURS[arm % len(COLOURS)], label) for arm, label in enumerate(labels[:LEGEND_ARMS])]
    if len(labels) > LEGEND_ARMS:
        entries.append(("#ffffff", f"and {len(labels) - LEGEND_ARMS} more arms"))
    for index, (colour, label) in enumerate(entries):
        x, y = _LEFT + (index % 3) * column, top + (index // 3) * _LEGEND_ROW
        text = label if len(label) <= 30 else label[:29] + "…"
        parts.append(f'<rect x="{x:.1f}" y="{y - 9}" width="14" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 20:.1f}" y="{y}">{escape(text)}</text>')
    return parts
