"""The best-of regime, as a cbai plugin: the smaller of the horizon and determinant radii.

Each of Abbasi-Yadkori et al.'s two forms (cbai's ``theory`` and ``det``) holds for all
pulls at once with probability at least 1 − δ/2; both hold together with probability at
least 1 − δ (a union bound), and then so does the smaller. Each is computed at δ/2, so
the regime keeps the guarantee and is never wider than the wider of the two at δ/2.

It is one class with cbai's regime declarations and one entry point
(``cbai.regimes``); cbai's algorithms that accept adaptive regimes take it by themselves.
It has no compiled radius, so its runs go through the per-step loop.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from cbai_cli.numerics.confidence import ConfidenceSettings, RadiusRegime, minimum_radius, radius_determinant, radius_horizon


@dataclass(frozen=True)
class BestOfRegime(RadiusRegime):
    """min(horizon form, determinant form), each at δ/2."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "best-of"
    summary: ClassVar[str] = "the smaller of the theory and det radii, each at δ/2 (example plugin)"
    interval: ClassVar[str] = "min of the theory and det radii at δ/2 (a union bound)"
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian", "ridge", "norm_bound")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = True
    guaranteed: ClassVar[bool] = True

    def radius(self, state) -> float:
        s = self.settings
        half = s.delta / 2.0
        return min(radius_horizon(state.n_samples, state.dim, s.ridge, s.subgaussian, s.norm_bound, s.arm_bound, half),
                   radius_determinant(state.logdet, state.dim, s.ridge, s.subgaussian, s.norm_bound, half))

    def minimum_radius(self, dim: int) -> tuple[float, str]:
        """The smaller of the two forms' floors at δ/2 (each increases with the pulls)."""
        halved = replace(self.settings, delta=self.settings.delta / 2.0)
        return min(minimum_radius("theory", halved, dim), minimum_radius("det", halved, dim))
