"""Geometry of the three-lane highway (Lindner et al., ICML 2022, Appendix C).

The road runs along the y axis. Lane centres are at x = -0.17, 0, 0.17, each lane
is 0.17 wide, so the road spans x in [-0.255, 0.255] (width 0.51).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Road", "DEFAULT_ROAD", "LEFT_LANE", "MIDDLE_LANE", "RIGHT_LANE"]

LEFT_LANE = -0.17
MIDDLE_LANE = 0.0
RIGHT_LANE = 0.17


@dataclass(frozen=True)
class Road:
    """Lane centres, lane width and road width (all in the x coordinate).

    Attributes:
        lane_centres: x of each lane centre, left to right.
        lane_width: width of one lane (0.17).
        width: width of the whole road (0.51 = 3 lanes).
    """

    lane_centres: tuple[float, ...] = (LEFT_LANE, MIDDLE_LANE, RIGHT_LANE)
    lane_width: float = 0.17
    width: float = 0.51

    def __post_init__(self) -> None:
        if not self.lane_centres:
            raise ValueError("a road needs at least one lane")
        if not (self.lane_width > 0 and self.width > 0):
            raise ValueError("lane and road widths must be positive")

    @property
    def half_width(self) -> float:
        """|x| beyond which a car is off the street (0.255): feature 3 of Table C.1."""
        return self.width / 2.0

    @property
    def lane_boundaries(self) -> tuple[float, ...]:
        """x of the markings between neighbouring lanes (for drawing)."""
        c = self.lane_centres
        return tuple((a + b) / 2.0 for a, b in zip(c[:-1], c[1:]))


DEFAULT_ROAD = Road()
