"""Confidence radii, and the regimes that choose one for the CBAI algorithms.

A radius r sets the interval φ̂ᵀx ± r·‖x‖_{A⁻¹}, equivalently the ellipsoid
{φ : ‖φ − φ̂‖_A ≤ r}. The formulas, once each, as plain functions:

- :func:`radius_static`: Lindner et al. (2022), Proposition 2, for a fixed allocation;
- :func:`radius_determinant`: Abbasi-Yadkori, Pál, Szepesvári (2011), Theorem 2;
- :func:`radius_horizon`: the same theorem with det A bounded through the number of
  samples (Abbasi-Yadkori et al. 2011, Lemma 10; Lindner et al. 2022, Proposition 3;
  Amani et al. 2019, Theorem 1);
- :func:`radius_lingape_script`: the width of the public script of LinGapE (Xu, Honda,
  Sugiyama 2018), which places λ differently and adds a union bound over arm pairs.

The CBAI regimes: the paper writes √β_t for the multiplier; here it is called the radius
r, and ``--beta B`` means r = √B (so the paper's tuned β = 1/4 gives r = 0.5).

- ``static``  (Proposition 2; round-based algorithms): A from the current round's pulls only.
- ``theory``  (Proposition 3): the horizon form, t = pulls so far.
- ``det``     (Abbasi-Yadkori's determinant form, valid and tighter).
- ``tuned``   r = √β, a constant; no guarantee.
- ``ols``     least squares on the span of the design, no ridge bias, with the mixture
  of the self-normalised bound over ridge scales (:mod:`cbai_cli.numerics.ols`, docs/ols.md).

Every adaptive regime gives an algorithm its intervals through one hook:
``regime.intervals(design, rewards, threshold)`` returns a per-run :class:`Intervals` that observes each pull
after the ridge design has (``observe``) and gives the bounds l, u of every arm
(``bounds``). The radius regimes share :class:`RadiusRegime`, whose intervals are
xᵀφ̂ ∓ r·‖x‖_{A⁻¹} on the ridge design; ``ols`` keeps its own least-squares fit.

In d = 1 the horizon form is *smaller* than the determinant form, so ``theory`` carries no
guarantee there; :func:`regime_notes` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from cbai_cli.numerics.kernels import codes
from cbai_cli.numerics.kernels.forms import determinant_form, horizon_form, log_ratio
from cbai_cli.contracts.options import OPTIONS
from cbai_cli.contracts.plugins import load_entry_points

if TYPE_CHECKING:  # the registry reads the regimes' declarations without loading numpy
    import numpy as np

    from cbai_cli.numerics.linalg import DesignState


def _check_radius_arguments(subgaussian: float, norm_bound: float, ridge: float, delta: float) -> None:
    if not subgaussian >= 0:
        raise ValueError(f"R must be >= 0, got {subgaussian}")
    if not norm_bound >= 0:
        raise ValueError(f"S must be >= 0, got {norm_bound}")
    if not ridge > 0:
        raise ValueError(f"lam must be > 0, got {ridge}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def radius_static(n_arms: int, delta_round: float, subgaussian: float, log_delta_round: float | None = None) -> float:
    """Lindner et al. (2022), Proposition 2: r = R·sqrt(2 log(K/δ_t)).

    For least squares on one round's fixed allocation over K arms; holds for all K arms
    at once with probability ≥ 1 − δ_t. ``log_delta_round``: the exact log δ_t when δ_t
    underflows (δ = 1e−300 gives δ_t = δ²/t² = 0); see :func:`log_ratio`.
    """
    return subgaussian * math.sqrt(2.0 * log_ratio(n_arms, delta_round, log_delta_round))


def radius_determinant(logdet: float, dim: int, ridge: float, subgaussian: float, norm_bound: float,
                       delta: float, union: float = 1.0) -> float:
    """Abbasi-Yadkori, Pál, Szepesvári (2011), Theorem 2 (determinant form):

    r = R·sqrt(2 log(u · det(A)^{1/2} λ^{-d/2} / δ)) + λ^{1/2} S,

    for A = λI + Σ xxᵀ with log det A = ``logdet``, R-sub-Gaussian noise and ‖φ‖ ≤ S. Valid
    for all times simultaneously with probability ≥ 1 − δ. ``union`` = u multiplies inside
    the log: u = K² is a union bound over arm pairs (LinGapE, Xu et al. 2018); u = 1 is the
    theorem as stated.
    """
    _check_radius_arguments(subgaussian, norm_bound, ridge, delta)
    if not union >= 1:
        raise ValueError(f"union must be >= 1, got {union}")
    return determinant_form(logdet, dim, ridge, subgaussian, norm_bound, delta, union)


def radius_horizon(n_samples: int, dim: int, ridge: float, subgaussian: float, norm_bound: float,
                   arm_bound: float, delta: float) -> float:
    """The horizon form: r = R·sqrt(d log((1 + n L²/λ)/δ)) + λ^{1/2} S.

    Abbasi-Yadkori et al. (2011) Theorem 2 with det A ≤ (λ + n L²/d)^d (their Lemma 10), for
    n samples with ‖x‖ ≤ L: Lindner et al. (2022), Proposition 3; Amani et al. (2019),
    Theorem 1, whose β_t takes n = t − 1. For d = 1 this is *smaller* than
    :func:`radius_determinant`, so the theorem does not imply it there.
    """
    _check_radius_arguments(subgaussian, norm_bound, ridge, delta)
    if n_samples < 0:
        raise ValueError(f"n must be >= 0, got {n_samples}")
    return horizon_form(n_samples, dim, ridge, subgaussian, norm_bound, arm_bound, delta)


def radius_lingape_script(n_samples: int, dim: int, ridge: float, subgaussian: float, norm_bound: float,
                          arm_bound: float, delta: float, n_arms: int) -> float:
    """The width of the authors' greedy LinGapE script (Xu, Honda, Sugiyama 2018, public code):

    R·sqrt(d log(K² (1 + n L²) / (λ δ))) + λ^{1/2} S,

    equal to :func:`radius_horizon` with a K² union bound inside the log when λ = 1.
    """
    _check_radius_arguments(subgaussian, norm_bound, ridge, delta)
    inner = dim * log_ratio(n_arms * n_arms * (1.0 + n_samples * arm_bound * arm_bound), ridge * delta,
                            math.log(ridge) + math.log(delta))
    return subgaussian * math.sqrt(inner) + math.sqrt(ridge) * norm_bound


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
        mean_share: κ of the ols regime, the share of δ spent on the arms' own means (None:
            :data:`cbai_cli.numerics.ols.MEAN_SHARE`, or 0 in one dimension; docs/ols.md, "Which κ").
            Every κ in [0, 1) keeps the guarantee. Not a command-line option: runs take the
            default, and ``benchmarks/ols_versions.py --mean-share`` measures others.
    """

    delta: float
    subgaussian: float = 1.0
    ridge: float = OPTIONS["ridge"].default
    norm_bound: float = 1.0
    arm_bound: float = 1.0
    beta: float | None = None
    mean_share: float | None = None


@dataclass(frozen=True)
class StaticRegime:
    """Proposition 2: :func:`radius_static` for a fixed allocation."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "static"
    #: One line for help texts.
    summary: ClassVar[str] = "Prop. 2, a round's fixed allocation (round-based algorithms)"
    #: Its interval, for the README's table (`cbai algorithms --markdown`).
    interval: ClassVar[str] = "R·sqrt(2 log(K/δ_t)), A from this round only (Prop. 2)"
    #: The options (:mod:`cbai_cli.contracts.options`) this regime's radius reads.
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = False
    guaranteed: ClassVar[bool] = True
    #: Whether an algorithm of its style runs it when the algorithm prefers none (one
    #: regime of each style is the default).
    default: ClassVar[bool] = True

    def round_radius(self, n_arms: int, delta_round: float, log_delta_round: float | None = None) -> float:
        return radius_static(n_arms, delta_round, self.settings.subgaussian, log_delta_round)


class Intervals(Protocol):
    """The confidence intervals of one adaptive run (what ``regime.intervals(design, rewards, threshold)`` returns)."""

    def observe(self, arm: int, total: float, count: int) -> None:
        """Take in ``count`` pulls of ``arm`` summing to ``total``; the ridge design has them already."""

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower (K,), upper (K,)): l(x), u(x) of every arm, ±∞ for an arm not yet bounded."""

    def estimate(self) -> np.ndarray:
        """(d,) the estimate of φ at the intervals' centre."""


@dataclass(frozen=True)
class RadiusIntervals:
    """xᵀφ̂ ∓ r·‖x‖_{A⁻¹} on the ridge design, r from a radius regime (paper Algorithm 2)."""

    regime: RadiusRegime
    design: DesignState

    def observe(self, arm: int, total: float, count: int) -> None:
        """Nothing to keep: the ridge design holds the data."""

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.design.bounds(self.regime.radius(self.design))

    def estimate(self) -> np.ndarray:
        return self.design.estimate()


class RadiusRegime:
    """An adaptive regime given by one radius r over all data: subclasses give ``radius(state)``,
    ``minimum_radius(dim)`` and ``kernel_code``, the code of the same radius in the compiled
    step (:func:`cbai_cli.numerics.kernels.radius.radius`)."""

    settings: ConfidenceSettings
    kernel_code: ClassVar[int]
    default: ClassVar[bool] = False

    def intervals(self, design: DesignState, rewards: np.ndarray | None = None,
                  threshold: float | None = None) -> Intervals:
        """The run's intervals (the known rewards (K,) and τ play no part in a radius)."""
        return RadiusIntervals(self, design)

    def compiled(self) -> bool:
        """Whether the compiled step computes this regime's intervals: they are
        :class:`RadiusIntervals` and the class that defines ``radius`` declares
        ``kernel_code`` (a subclass that changes either runs in Python)."""
        def owner(name: str) -> type:
            return next(cls for cls in type(self).__mro__ if name in vars(cls))

        return owner("intervals") is RadiusRegime and "kernel_code" in vars(owner("radius"))

    def kernel(self, dim: int) -> tuple[int, tuple[float, ...]]:
        """``(code, params)`` of the compiled radius: params = (R, S, L, λ, δ, β, d), β = 0 when unset."""
        s = self.settings
        beta = s.beta if s.beta is not None else 0.0
        return self.kernel_code, (s.subgaussian, s.norm_bound, s.arm_bound, s.ridge, s.delta, beta, float(dim))


@dataclass(frozen=True)
class TheoryRegime(RadiusRegime):
    """Proposition 3: :func:`radius_horizon` with t = the pulls so far."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "theory"
    default: ClassVar[bool] = True
    #: One line for help texts.
    summary: ClassVar[str] = "Prop. 3, the horizon form"
    #: Its interval, for the README's table (`cbai algorithms --markdown`).
    interval: ClassVar[str] = "R·sqrt(d log((1 + tL²/λ)/δ)) + √λ·S (Prop. 3, horizon form)"
    kernel_code: ClassVar[int] = codes.THEORY
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian", "ridge", "norm_bound")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = True
    guaranteed: ClassVar[bool] = True
    #: The README's table's word on its guarantee (``cbai algorithms --markdown``).
    guarantee_detail: ClassVar[str] = "yes for d ≥ 2 (not in d = 1: cbai says so)"

    @staticmethod
    def dimension_notes(dim: int) -> list[str]:
        """In d = 1 the horizon form is smaller than the determinant form, which holds."""
        if dim != 1:
            return []
        return ["in d = 1 the horizon form of Proposition 3 is smaller than Abbasi-Yadkori's determinant form, so "
                "'theory' carries no guarantee here; use --regime det"]

    def radius(self, state: DesignState) -> float:
        s = self.settings
        return radius_horizon(state.n_samples, state.dim, s.ridge, s.subgaussian, s.norm_bound, s.arm_bound, s.delta)

    def minimum_radius(self, dim: int) -> tuple[float, str]:
        """R·sqrt(d log(1/δ)) + λ^{1/2} S: the horizon form at n = 0, increasing in n."""
        return _noise_plus_ridge(self.settings, dim, "d")


@dataclass(frozen=True)
class DeterminantRegime(RadiusRegime):
    """Abbasi-Yadkori et al. (2011) Theorem 2: :func:`radius_determinant`."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "det"
    #: One line for help texts.
    summary: ClassVar[str] = "Abbasi-Yadkori's determinant form"
    #: Its interval, for the README's table (`cbai algorithms --markdown`).
    interval: ClassVar[str] = "R·sqrt(2 log(1/δ) + log(det A/λ^d)) + √λ·S (Abbasi-Yadkori's determinant form)"
    kernel_code: ClassVar[int] = codes.DETERMINANT
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian", "ridge", "norm_bound")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = True
    guaranteed: ClassVar[bool] = True

    def radius(self, state: DesignState) -> float:
        s = self.settings
        return radius_determinant(state.logdet, state.dim, s.ridge, s.subgaussian, s.norm_bound, s.delta)

    def minimum_radius(self, dim: int) -> tuple[float, str]:
        """R·sqrt(2 log(1/δ)) + λ^{1/2} S, since log det A ≥ d log λ."""
        return _noise_plus_ridge(self.settings, 2.0, "2")


@dataclass(frozen=True)
class TunedRegime(RadiusRegime):
    """A constant multiplier r = √β chosen by the user (Lindner et al. 2022, §3.4: β = 1/4); no guarantee."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "tuned"
    #: One line for help texts.
    summary: ClassVar[str] = "a constant radius √β (--beta), no guarantee"
    #: Its interval, for the README's table (`cbai algorithms --markdown`).
    interval: ClassVar[str] = "√β from `--beta` (the paper's β = 1/4 is `--beta 0.25`)"
    kernel_code: ClassVar[int] = codes.TUNED
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

    def minimum_radius(self, dim: int) -> tuple[float, str]:
        return math.sqrt(self.settings.beta), f"√β with --beta {self.settings.beta:g}"


@dataclass(frozen=True)
class OLSRegime:
    """Least squares on the span of the design with the self-normalised bound mixed over
    ridge scales (docs/ols.md): no ridge in the estimate, so no bound S on ‖φ‖; arms outside
    the span stay uncertain. Its prior over scales is set relative to L² = max ‖x‖²."""

    settings: ConfidenceSettings
    name: ClassVar[str] = "ols"
    #: One line for help texts.
    summary: ClassVar[str] = "least squares on the span with a mixture over ridge scales, docs/ols.md"
    #: Its interval, for the README's table (`cbai algorithms --markdown`).
    interval: ClassVar[str] = "least squares on the span of the pulls, no ridge bias, a mixture of the self-normalised bound over ridge scales in the arms' D-optimal coordinates, and each arm's own mean (docs/ols.md)"
    reads: ClassVar[tuple[str, ...]] = ("delta", "subgaussian")
    requires: ClassVar[tuple[str, ...]] = ()
    tolerated: ClassVar[tuple[str, ...]] = ()
    hint: ClassVar[str] = ""
    adaptive: ClassVar[bool] = True
    guaranteed: ClassVar[bool] = True
    default: ClassVar[bool] = False

    def intervals(self, design: DesignState, rewards: np.ndarray | None = None,
                  threshold: float | None = None) -> Intervals:
        """The run's intervals; the known rewards (K,) share the own means' budget out side by
        side by reward rank (docs/ols.md, "Each arm's own mean"), uniformly when None; at τ =
        ``threshold`` a side may be certified by least squares and the arm's own mean jointly
        (docs/ols.md, "One supermartingale for both"), never when None."""
        from cbai_cli.numerics.ols import LeastSquaresSpan, MixtureIntervals, ScalePrior

        s = self.settings
        return MixtureIntervals(LeastSquaresSpan(design.arms), ScalePrior(s.arm_bound**2), s.delta, s.subgaussian,
                                mean_share=s.mean_share, rewards=rewards, threshold=threshold)

    def compiled(self) -> bool:
        """Whether the compiled step computes this regime's intervals
        (:func:`cbai_cli.numerics.kernels.advance.advance_fit`): a subclass that changes them runs in Python."""
        return next(cls for cls in type(self).__mro__ if "intervals" in vars(cls)) is OLSRegime

    def minimum_radius(self, dim: int) -> tuple[float, str]:
        """R·sqrt(2 log(1/δ)): the width is at least this times ‖x‖_{V⁺} ≥ ‖x‖/sqrt(n L²)
        (every line's β ≥ log(1/((1 − κ)δ)) ≥ log(1/δ), a ≥ 1 and b ≥ 0; each side of an arm's
        own mean, pulled N times, is at least R·sqrt(2 log(1/(2κδ))/N) wide, since its root is
        at least N·log(1/(2δ')) with δ' ≤ κδ ≤ δ/2, and ‖x‖²_{V⁺} ≤ 1/N)."""
        s = self.settings
        return (s.subgaussian * math.sqrt(2.0 * -math.log(s.delta)),
                f"R·√(2 log(1/δ)) with --subgaussian {s.subgaussian:g} and --delta {s.delta:g}")


#: The registered regimes by name, in the order help texts list them; read through
#: :func:`regimes`, which adds those of other packages first.
REGIMES = {cls.name: cls for cls in (StaticRegime, TheoryRegime, DeterminantRegime, TunedRegime, OLSRegime)}
#: The entry-point group through which other packages add regimes (docs/extending.md).
ENTRY_POINT_GROUP = "cbai.regimes"
#: What every regime class declares, with its type.
DECLARATIONS = {"name": str, "summary": str, "interval": str, "reads": tuple, "requires": tuple, "tolerated": tuple,
                "hint": str, "adaptive": bool, "guaranteed": bool, "default": bool}


def register_regime(cls: type) -> None:
    """Add a regime class: one that declares every name of :data:`DECLARATIONS` with its
    type, only options of :data:`cbai_cli.contracts.options.OPTIONS` in ``reads``, ``requires`` and
    ``tolerated``, and ``intervals`` (adaptive) or ``round_radius`` (round-based); a name
    already taken, or a second ``default`` of one style, is an error."""
    if not isinstance(cls, type):
        raise TypeError(f"a regime is a class, got a {type(cls).__name__}")
    for attribute, kind in DECLARATIONS.items():
        if not isinstance(getattr(cls, attribute, None), kind):
            raise TypeError(f"regime {cls.__name__} must declare {attribute} as a {kind.__name__}")
    if not cls.name or cls.name in REGIMES:
        raise ValueError(f"regime name {cls.name!r} is empty or already registered")
    if cls.default and any(other.default and other.adaptive == cls.adaptive for other in REGIMES.values()):
        raise ValueError(f"regime {cls.name}: the {'adaptive' if cls.adaptive else 'round-based'} regimes have a "
                         "default already")
    unknown = [name for name in (*cls.reads, *cls.requires, *cls.tolerated) if name not in OPTIONS]
    if unknown:
        raise ValueError(f"regime {cls.name}: unknown option(s) {unknown}")
    hook = "intervals" if cls.adaptive else "round_radius"
    if not callable(getattr(cls, hook, None)):
        raise TypeError(f"regime {cls.name}: an {'adaptive' if cls.adaptive else 'round-based'} regime has {hook}()")
    REGIMES[cls.name] = cls


def regimes() -> dict[str, type]:
    """Every registered regime by name, those of the ``cbai.regimes`` entry points included."""
    load_entry_points(ENTRY_POINT_GROUP, register_regime)
    return REGIMES


def _noise_plus_ridge(settings: ConfidenceSettings, factor: float, factor_name: str) -> tuple[float, str]:
    """R·sqrt(factor·log(1/δ)) + λ^{1/2} S and the options that set its larger term."""
    s = settings
    noise = s.subgaussian * math.sqrt(factor * -math.log(s.delta))
    ridge = math.sqrt(s.ridge) * s.norm_bound
    if ridge >= noise:
        return noise + ridge, f"√λ·S with --lambda {s.ridge:g} and --S {s.norm_bound:g}"
    return noise + ridge, f"R·√({factor_name} log(1/δ)) with --subgaussian {s.subgaussian:g} and --delta {s.delta:g}"


def minimum_radius(regime_name: str, settings: ConfidenceSettings, dim: int) -> tuple[float, str]:
    """A floor on the radius of an adaptive regime over a whole run (its width is at least
    this times ‖x‖_{A⁻¹}, or ‖x‖_{V⁺} for ``ols``), and its largest term as the options
    that set it (for messages).

    theory: R·sqrt(d log(1/δ)) + λ^{1/2} S (the horizon form at n = 0, increasing in n);
    det: R·sqrt(2 log(1/δ)) + λ^{1/2} S (log det A ≥ d log λ); tuned: √β; ols:
    R·sqrt(2 log(1/δ)). Overflow gives ∞, never an exception.
    """
    return regimes()[regime_name](settings).minimum_radius(dim)


def regime_notes(regime_name: str, dim: int) -> list[str]:
    """Caveats to print with results of ``regime_name`` in dimension ``dim``."""
    regime = regimes()[regime_name]
    notes = list(regime.dimension_notes(dim)) if hasattr(regime, "dimension_notes") else []
    if not regime.guaranteed:
        notes.append(f"{regime_name} intervals carry no correctness guarantee")
    return notes


def regimes_markdown() -> str:
    """The regimes as a markdown table: name, interval, guarantee (from their declarations)."""
    rows = ["| regime | interval of every arm | guarantee |", "| --- | --- | --- |"]
    for name, regime in regimes().items():
        if not regime.guaranteed:
            guarantee = "none"
        else:
            guarantee = getattr(regime, "guarantee_detail", "yes" + (", round-based" if not regime.adaptive else ""))
        rows.append(f"| `{name}` | {regime.interval} | {guarantee} |")
    return "\n".join(rows)


def regimes_help() -> str:
    """The ``--regime`` help, from the regimes' own declarations."""
    listed = "; ".join(f"{name} ({regime.summary})" for name, regime in regimes().items())
    return (f"Confidence regime of cbai algorithms: {listed}. Default: each algorithm's own, listed first by "
            "`cbai algorithms`.")
