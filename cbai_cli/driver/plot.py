"""Top-down pictures of the Driver environment and the Figure 4 plot.

Plain matplotlib shapes (no sprites). matplotlib is imported inside the
functions and figures are drawn on the Agg canvas directly (no pyplot, so no
global figure registry and no backend switch for the caller). Every function
takes arrays and an output path and writes the file atomically: it is drawn into
a temporary file in the destination folder and moved over the target with
``os.replace``, so a reader never sees a half-written picture. The format
follows the path's suffix (``.png``, ``.pdf``, ``.svg``, ...).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cbai_cli.driver.road import DEFAULT_ROAD, Road

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_trajectories", "plot_policies", "plot_penalty_study"]

_CAR_LENGTH = 0.1
_CAR_WIDTH = 0.05
_ROAD_COLOUR = "0.45"
_OTHER_CAR_COLOUR = "0.95"
_AGENT_COLOURS = ("tab:orange", "tab:blue", "tab:green", "tab:purple", "tab:red", "tab:brown")


def _new_figure(figsize: tuple[float, float]) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def _save_atomic(fig: Figure, path: str | os.PathLike[str], dpi: int = 120) -> Path:
    """Write the figure atomically (:func:`cbai_cli.io.atomic.write_atomic`); an OS failure is
    one line naming the file."""
    from cbai_cli.io.atomic import write_atomic

    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    write_atomic(target, lambda stream: fig.savefig(stream, format=fmt, dpi=dpi, bbox_inches="tight"))
    return target


def _as_trajectories(a: np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3 or a.shape[2] != 4:
        raise ValueError(f"{name} must be (T+1, 4) or (k, T+1, 4), got {a.shape}")
    return a


def _car_shape(ax: Axes, state: np.ndarray, colour: str, zorder: int, alpha: float = 1.0) -> None:
    """A rectangle centred on the car, long side along its heading."""
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Affine2D

    x, y, h = float(state[0]), float(state[1]), float(state[2])
    rect = Rectangle(
        (-_CAR_LENGTH / 2, -_CAR_WIDTH / 2),
        _CAR_LENGTH,
        _CAR_WIDTH,
        facecolor=colour,
        edgecolor="black",
        linewidth=0.6,
        zorder=zorder,
        alpha=alpha,
    )
    rect.set_transform(Affine2D().rotate(h).translate(x, y) + ax.transData)
    ax.add_patch(rect)


def _draw_road(ax: Axes, road: Road, y_low: float, y_high: float) -> None:
    from matplotlib.patches import Rectangle

    ax.set_facecolor("#7fae6b")  # grass
    ax.add_patch(
        Rectangle((-road.half_width, y_low), road.width, y_high - y_low, facecolor=_ROAD_COLOUR, zorder=0)
    )
    for edge in (-road.half_width, road.half_width):
        ax.plot([edge, edge], [y_low, y_high], color="white", linewidth=1.5, zorder=1)
    for boundary in road.lane_boundaries:
        ax.plot([boundary, boundary], [y_low, y_high], color="white", linewidth=1.0, linestyle=(0, (6, 6)), zorder=1)


def _frame(ax: Axes, road: Road, trajectories: Sequence[np.ndarray]) -> None:
    ys = np.concatenate([t[..., 1].ravel() for t in trajectories if t.size])
    xs = np.concatenate([t[..., 0].ravel() for t in trajectories if t.size])
    y_low, y_high = float(ys.min()) - 0.15, float(ys.max()) + 0.15
    x_half = max(road.half_width + 0.1, float(np.abs(xs).max()) + 0.1)
    _draw_road(ax, road, y_low - 10, y_high + 10)
    ax.set_xlim(-x_half, x_half)
    ax.set_ylim(y_low, y_high)
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y")


def _draw_other_cars(ax: Axes, cars: np.ndarray) -> None:
    for car in cars:
        ax.plot(car[:, 0], car[:, 1], color=_OTHER_CAR_COLOUR, linewidth=1.5, marker="o", markersize=2.5, zorder=3)
        _car_shape(ax, car[0], _OTHER_CAR_COLOUR, zorder=4, alpha=0.5)
        _car_shape(ax, car[-1], _OTHER_CAR_COLOUR, zorder=4)


def plot_trajectories(
    path: str | os.PathLike[str],
    agent_trajectories: np.ndarray,
    car_trajectories: np.ndarray,
    *,
    road: Road = DEFAULT_ROAD,
    labels: Sequence[str] | None = None,
    title: str | None = None,
) -> Path:
    """Draw the road, the other cars and one or more agent trajectories, seen from above.

    Args:
        path: output file; its suffix picks the format.
        agent_trajectories: ``(T + 1, 4)`` or ``(k, T + 1, 4)`` agent states.
        car_trajectories: ``(m, T + 1, 4)`` other cars (``m`` may be 0).
        road: lane geometry.
        labels: ``k`` legend entries for the agent trajectories.
        title: figure title.

    Returns:
        The path written.
    """
    agents = _as_trajectories(agent_trajectories, "agent_trajectories")
    cars = np.asarray(car_trajectories, dtype=float).reshape(-1, agents.shape[1], 4)
    if labels is not None and len(labels) != agents.shape[0]:
        raise ValueError(f"got {len(labels)} labels for {agents.shape[0]} trajectories")
    fig = _new_figure((4.0, 7.0))
    ax = fig.add_subplot()
    _frame(ax, road, [agents, cars])
    _draw_other_cars(ax, cars)
    for k, agent in enumerate(agents):
        colour = _AGENT_COLOURS[k % len(_AGENT_COLOURS)]
        label = labels[k] if labels is not None else None
        ax.plot(agent[:, 0], agent[:, 1], color=colour, linewidth=2, marker="o", markersize=3, zorder=5, label=label)
        _car_shape(ax, agent[0], colour, zorder=6, alpha=0.5)
        _car_shape(ax, agent[-1], colour, zorder=6)
    if labels is not None:
        # Below the road, not on it: labels can be long and the road is narrow.
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), fontsize="small")
    if title:
        ax.set_title(title)
    return _save_atomic(fig, path)


def plot_policies(
    path: str | os.PathLike[str],
    agent_trajectories: np.ndarray,
    feasible: np.ndarray,
    car_trajectories: np.ndarray,
    *,
    highlight: int | None = None,
    road: Road = DEFAULT_ROAD,
    title: str | None = None,
) -> Path:
    """Draw all candidate policies, coloured by feasibility, with one highlighted.

    Args:
        path: output file.
        agent_trajectories: ``(n, T + 1, 4)`` trajectories of the candidate policies.
        feasible: ``(n,)`` feasibility of each (green if feasible, red if not).
        car_trajectories: ``(m, T + 1, 4)`` other cars.
        highlight: index of an arm to draw on top in a thick line (e.g. the best feasible arm).
        road: lane geometry.
        title: figure title.

    Returns:
        The path written.
    """
    agents = _as_trajectories(agent_trajectories, "agent_trajectories")
    feasible = np.asarray(feasible, dtype=bool).reshape(-1)
    if feasible.shape[0] != agents.shape[0]:
        raise ValueError(f"feasible has {feasible.shape[0]} entries for {agents.shape[0]} trajectories")
    if highlight is not None and not 0 <= highlight < agents.shape[0]:
        raise ValueError(f"highlight must be an arm index in [0, {agents.shape[0]}), got {highlight}")
    cars = np.asarray(car_trajectories, dtype=float).reshape(-1, agents.shape[1], 4)
    fig = _new_figure((4.0, 7.0))
    ax = fig.add_subplot()
    _frame(ax, road, [agents, cars])
    _draw_other_cars(ax, cars)
    from matplotlib.collections import LineCollection

    for mask, colour, label in ((~feasible, "tab:red", "infeasible"), (feasible, "tab:green", "feasible")):
        if mask.any():
            lines = LineCollection(
                list(agents[mask][:, :, :2]),
                colors=colour,
                linewidths=0.8,
                alpha=0.35,
                zorder=5,
                label=f"{label} ({int(mask.sum())})",
            )
            ax.add_collection(lines)
    if highlight is not None:
        agent = agents[highlight]
        ax.plot(
            agent[:, 0],
            agent[:, 1],
            color="tab:orange",
            linewidth=2.5,
            marker="o",
            markersize=3,
            zorder=7,
            label=f"arm {highlight}",
        )
        _car_shape(ax, agent[-1], "tab:orange", zorder=8)
    ax.legend(loc="upper right", fontsize="small")
    if title:
        ax.set_title(title)
    return _save_atomic(fig, path)


def plot_penalty_study(
    path: str | os.PathLike[str],
    penalties: np.ndarray,
    penalised_reward: np.ndarray,
    penalised_constraint: np.ndarray,
    constrained_reward: np.ndarray,
    scenario_names: Sequence[str],
    *,
    threshold: float = 1.0,
) -> Path:
    """Figure 4: reward and constraint value of the penalised optimum against ``lambda``.

    Args:
        path: output file.
        penalties: ``(L,)`` the ``lambda`` grid.
        penalised_reward: ``(S, L)`` task reward of each penalised optimum.
        penalised_constraint: ``(S, L)`` its constraint value.
        constrained_reward: ``(S,)`` reward of the constrained solution (dashed lines).
        scenario_names: ``S`` legend entries.
        threshold: ``tau``, drawn as a dotted line in the constraint panel.

    Returns:
        The path written.
    """
    lam = np.asarray(penalties, dtype=float).reshape(-1)
    reward = np.asarray(penalised_reward, dtype=float).reshape(-1, lam.size)
    constraint = np.asarray(penalised_constraint, dtype=float).reshape(-1, lam.size)
    best = np.asarray(constrained_reward, dtype=float).reshape(-1)
    S = len(scenario_names)
    if reward.shape[0] != S or constraint.shape[0] != S or best.shape[0] != S:
        raise ValueError("one row of results per scenario name is needed")
    fig = _new_figure((9.0, 3.6))
    ax_r, ax_c = fig.subplots(1, 2)
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:red")
    for s, name in enumerate(scenario_names):
        colour = colours[s % len(colours)]
        feasible = constraint[s] <= threshold
        ax_r.plot(lam, reward[s], color=colour, marker="o", markersize=3, label=name)
        ax_r.plot(lam[~feasible], reward[s][~feasible], linestyle="none", marker="x", color=colour, markersize=6)
        ax_r.axhline(best[s], color=colour, linestyle="--", linewidth=1)
        ax_c.plot(lam, constraint[s], color=colour, marker="o", markersize=3, label=name)
    ax_c.axhline(threshold, color="black", linestyle=":", linewidth=1, label="threshold")
    ax_r.set_xlabel("penalty weight λ")
    ax_r.set_ylabel("reward θᵀf")
    ax_r.set_title("reward (dashed: constrained solution; x: infeasible)", fontsize="small")
    ax_c.set_xlabel("penalty weight λ")
    ax_c.set_ylabel("constraint value φᵀf")
    ax_c.set_title("constraint value", fontsize="small")
    ax_r.legend(fontsize="small")
    ax_c.legend(fontsize="small")
    fig.tight_layout()
    return _save_atomic(fig, path)
