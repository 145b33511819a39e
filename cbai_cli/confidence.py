"""Confidence regimes: the multiplier r of the interval φ̂ᵀx ± r·‖x‖_{A⁻¹}.

The paper writes √β_t for this multiplier; here it is called the radius r, and
``--beta B`` means r = √B (so the paper's tuned β = 1/4 gives r = 0.5). Regimes
(specs/cbai.md §3):

- ``static``  (Proposition 2; round-based algorithms): r = R·sqrt(2 log(K/δ_t)),
  with A from the current round's pulls only.
- ``theory``  (Proposition 3 = Abbasi-Yadkori et al. 2011, horizon form):
  r = R·sqrt(d log((1 + t L²/λ)/δ)) + √λ·S, t = pulls so far.
- ``det``     (Abbasi-Yadkori's determinant form, valid and tighter):
  r = R·sqrt(2 log(1/δ) + log(det A / λ^d)) + √λ·S.
- ``tuned``   r = √β, a constant; no guarantee.

In d = 1 the horizon form is *smaller* than the determinant form, so ``theory``
carries no guarantee there (spec §3); :func:`regime_notes` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:  # the registry reads the regimes' declarations without loading numpy
    from cbai_cli.linalg import DesignState


@dataclass(frozen=True)
class ConfidenceSettings:
    """Constants of the confidence intervals.

    Attributes:
        delta: δ ∈ (0, 1).
        subgaussian: R, the sub-Gaussian scale of one observation.
        ridge: λ of A = λI + Σ xxᵀ (adaptive regimes).
        norm_bound: S ≥ ‖φ‖.
        arm_bound: L ≥ max ‖x‖.
        beta: B of the tuned regime, r = √B.
    """

    delta: float
    subgaussian: float = 1.0
    ridge: float = 0.1
    norm_bound: float = 1.0
    arm_bound: float = 1.0
    beta: float | None = None


@dataclass(frozen=True)
class StaticRegime:
    """Proposition 2: r = R·sqrt(2 log(K/δ_t)) for a fixed allocation."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "static"
    #: The options (:mod:`cbai_cli.options`) this regime's radius reads.
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = False
    guaranteed: ClassVar[bool] = True

    def round_radius(self, n_arms: int, delta_round: float) -> float:
        return self.settings.subgaussian * math.sqrt(2.0 * math.log(n_arms / delta_round))


@dataclass(frozen=True)
class TheoryRegime:
    """Proposition 3 (horizon form): R·sqrt(d log((1 + tL²/λ)/δ)) + √λ·S."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "theory"
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian", "ridge", "norm_bound")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = True
    guaranteed: ClassVar[bool] = True

    def radius(self, state: DesignState) -> float:
        s = self.settings
        inner = state.dim * math.log((1.0 + state.n_samples * s.arm_bound**2 / s.ridge) / s.delta)
        return s.subgaussian * math.sqrt(inner) + math.sqrt(s.ridge) * s.norm_bound


@dataclass(frozen=True)
class DeterminantRegime:
    """Abbasi-Yadkori et al. (2011) Theorem 2: R·sqrt(2 log(1/δ) + log(det A/λ^d)) + √λ·S."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "det"
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian", "ridge", "norm_bound")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = True
    guaranteed: ClassVar[bool] = True

    def radius(self, state: DesignState) -> float:
        s = self.settings
        inner = 2.0 * math.log(1.0 / s.delta) + state.logdet - state.dim * math.log(s.ridge)
        return s.subgaussian * math.sqrt(max(inner, 0.0)) + math.sqrt(s.ridge) * s.norm_bound


@dataclass(frozen=True)
class TunedRegime:
    """A constant multiplier r = √β chosen by the user (paper §3.4, β = 1/4); no guarantee."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "tuned"
    reads: ClassVar[tuple[str, ...]] = ("beta",)
    #: Options that must be given: β has no default.
    requires: ClassVar[tuple[str, ...]] = ("beta",)
    #: Options given for other regimes that this one accepts and ignores: R does not
    #: enter a constant radius, and a sweep may pass it to every algorithm.
    tolerated: ClassVar[tuple[str, ...]] = ("subgaussian",)
    #: What to say when a required option is missing.
    hint: ClassVar[str] = "the paper's value is 0.25: radius √β = 0.5"
    adaptive: ClassVar[bool] = True
    guaranteed: ClassVar[bool] = False

    def radius(self, state: DesignState) -> float:
        return math.sqrt(self.settings.beta)


REGIMES = {cls.name: cls for cls in (StaticRegime, TheoryRegime, DeterminantRegime, TunedRegime)}


def regime_notes(regime_name: str, dim: int) -> list[str]:
    """Caveats to print with results of ``regime_name`` in dimension ``dim``."""
    notes = []
    if regime_name == "theory" and dim == 1:
        notes.append("in d = 1 the horizon form of Proposition 3 is smaller than Abbasi-Yadkori's "
                     "determinant form, so 'theory' carries no guarantee here; use --regime det")
    if regime_name == "tuned":
        notes.append("tuned intervals carry no correctness guarantee")
    return notes
