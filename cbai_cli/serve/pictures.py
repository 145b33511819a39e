"""The picture a rater judges a driver arm by: its trajectory seen from above, as SVG.

A driver instance (``meta.generator`` ``driver-arms``) keeps each arm's action sequence,
so the arm's trajectory can be rolled out again in its scenario
(:func:`cbai_cli.driver.show.driver_view`) and drawn: the road with its lanes, the
other cars' paths, and the car being judged in orange, faded at its start and solid at
its end. Nothing else is written on it: not the arm's reward, which would bias the
rater, nor its label, which the page shows. The drawing is a few kilobytes of SVG made
here (no matplotlib: a few milliseconds per arm), cached per arm by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

#: Pixels across the picture; its height follows the trajectories' extent.
WIDTH_PX = 260
_CAR_LENGTH = 0.1
_CAR_WIDTH = 0.05
_GRASS, _ROAD, _MARK = "#7fae6b", "#737373", "#ffffff"
_OTHER, _AGENT = "#f2f2f2", "#f28e2b"


def driver_drawer(instance, source: str = "study") -> Callable[[int], str] | None:
    """For a driver instance, a function from an arm's index to the SVG text of its
    trajectory; None for any other instance."""
    from cbai_cli.driver.instances import GENERATOR

    if instance.meta.get("generator") != GENERATOR or "actions" not in instance.data:
        return None
    from cbai_cli.driver.show import driver_view

    view = driver_view(instance, source)
    environment = view.scenario.environment
    cars = np.asarray(environment.traffic.trajectories, dtype=float).reshape(-1, view.trajectories.shape[1], 4)

    def draw(arm: int) -> str:
        return trajectory_svg(view.trajectories[arm], cars, environment.road)

    return draw


def trajectory_svg(agent: np.ndarray, cars: np.ndarray, road) -> str:
    """The SVG of one agent trajectory ``(T + 1, 4)`` (x, y, heading, speed) among other
    cars ``(m, T + 1, 4)`` on ``road``, framed as :mod:`cbai_cli.driver.plot` frames it."""
    xs = np.concatenate([agent[:, 0], cars[..., 0].ravel()])
    ys = np.concatenate([agent[:, 1], cars[..., 1].ravel()])
    y_low, y_high = float(ys.min()) - 0.15, float(ys.max()) + 0.15
    x_half = max(road.half_width + 0.1, float(np.abs(xs).max()) + 0.1)
    scale = WIDTH_PX / (2 * x_half)
    height = round((y_high - y_low) * scale)

    def point(x: float, y: float) -> str:  # world to picture: y grows up the road, down the screen
        return f"{(x + x_half) * scale:.1f},{(y_high - y) * scale:.1f}"

    def line(x: float, **attributes: str) -> str:
        return _element("line", x1=f"{(x + x_half) * scale:.1f}", y1="0", x2=f"{(x + x_half) * scale:.1f}",
                        y2=str(height), **attributes)

    parts = [_element("rect", width=str(WIDTH_PX), height=str(height), fill=_GRASS),
             _element("rect", x=f"{(x_half - road.half_width) * scale:.1f}", y="0",
                      width=f"{road.width * scale:.1f}", height=str(height), fill=_ROAD)]
    parts += [line(edge, stroke=_MARK, **{"stroke-width": "2"}) for edge in (-road.half_width, road.half_width)]
    parts += [line(boundary, stroke=_MARK, **{"stroke-width": "1.5", "stroke-dasharray": "8 8"})
              for boundary in road.lane_boundaries]

    def path(states: np.ndarray, colour: str, width: str) -> list[str]:
        points = " ".join(point(x, y) for x, y in states[:, :2])
        dots = [_element("circle", cx=point(x, y).split(",")[0], cy=point(x, y).split(",")[1], r="2.5", fill=colour)
                for x, y in states[:, :2]]
        return [_element("polyline", points=points, fill="none", stroke=colour, **{"stroke-width": width}), *dots]

    def car(state: np.ndarray, colour: str, opacity: str) -> str:
        x, y, heading = float(state[0]), float(state[1]), float(state[2])
        along = np.array([math.cos(heading), math.sin(heading)])
        across = np.array([-along[1], along[0]])
        corners = [np.array([x, y]) + a * _CAR_LENGTH / 2 * along + b * _CAR_WIDTH / 2 * across
                   for a, b in ((1, 1), (1, -1), (-1, -1), (-1, 1))]
        return _element("polygon", points=" ".join(point(*corner) for corner in corners), fill=colour,
                        stroke="#000000", opacity=opacity, **{"stroke-width": "1"})

    for other in cars:
        parts += path(other, _OTHER, "2")
        parts += [car(other[0], _OTHER, "0.5"), car(other[-1], _OTHER, "1")]
    parts += path(agent, _AGENT, "3")
    parts += [car(agent[0], _AGENT, "0.5"), car(agent[-1], _AGENT, "1")]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH_PX}" height="{height}" '
            f'viewBox="0 0 {WIDTH_PX} {height}" role="img" aria-label="the car\'s path on the road, seen from above">'
            + "".join(parts) + "</svg>")


def _element(name: str, **attributes: str) -> str:
    return f"<{name} " + " ".join(f'{key}="{value}"' for key, value in attributes.items()) + "/>"
