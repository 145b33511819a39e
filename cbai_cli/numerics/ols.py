"""Least squares on the span of the design, and the mixture-of-ridge-scales bound on its error.

The ``ols`` confidence regime (docs/ols.md). After pulls x_1 … x_n with observations
y_s = φᵀx_s + η_s (η_s conditionally R-sub-Gaussian), let V = Σ x_s x_sᵀ (no ridge),
b = Σ y_s x_s and V⁺ the pseudo-inverse. For x in the span of V the estimate xᵀV⁺b is
unbiased and its error is xᵀV⁺S with S = Σ η_s x_s. With probability ≥ 1 − δ, for every
time, every arm x in the span, every probability ρ over the prior's ridge scales λ_i and
every tangent (a, b) at a point μ_0 ≥ 0 of the concave h_ρ(μ) = 1/Σ_i ρ_i/(μ + λ_i),

    |xᵀV⁺b − xᵀφ| ≤ R·sqrt(2·β_ρ·(a·xᵀV⁺x + b·‖V⁺x‖²)),
    β_ρ = log(1/δ) + KL(ρ‖π) + (1/2)·Σ_i ρ_i ℓ_i,

with ℓ_i ≥ log det(I + V/λ_i) (docs/ols.md, Theorem; it rests on Abbasi-Yadkori, Pál,
Szepesvári 2011, Theorem 1 and Lemma 9, mixed over λ by Donsker–Varadhan). At each point
μ_p of a grid the regime takes the ρ that minimises β_ρ·h_ρ(μ_p) over all ρ (the Gibbs
measure whose normaliser is 1/δ; for a design of rank one the width is then the exact
boundary of the mixture) and its tangent there; each arm takes the lowest of these lines
for it. Arms with a component outside the span stay uncertain (infinite width).

- :class:`ScalePrior`: π and the tangent points, computed once per run.
- :class:`LeastSquaresSpan`: V⁺, xᵀV⁺b, xᵀV⁺x and ‖V⁺x‖² of every arm, kept by rank-one
  updates at O(K·d + d²) per pull, one-direction extensions when the span grows (exact
  recomputations on small arm matrices), an exact recomputation when the updates' roundoff
  could exceed 1e-11 relative, and epochs
  over which ℓ_i + margin bounds the log-determinants without an eigenvalue solve per pull;
  the per-pull work is compiled (:mod:`cbai_cli.numerics.kernels.ols`), the recomputations, extensions
  and epochs too (:mod:`cbai_cli.numerics.kernels.span`), a run's pull with its ridge design
  (:func:`cbai_cli.numerics.kernels.fit.observe_fit`) and whole runs
  (:func:`cbai_cli.numerics.kernels.advance.advance_fit`); the fit and the intervals are views on one
  row of a :class:`~cbai_cli.numerics.kernels.state.SpanState`.
- :func:`points_in_use`, :func:`mixture_envelope`, :class:`Envelope`, :func:`mixture_widths`: the
  tangent points the arms need, the tangent lines' lower envelope, the line each arm takes,
  and the half-widths.
- :class:`MixtureIntervals`: one run's intervals (the regime's ``intervals(design, rewards, threshold)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from cbai_cli.numerics.kernels.fit import update_fit
from cbai_cli.numerics.kernels.ols import mark_points, mixture_bounds, own_mean_sides, tangent_lines
from cbai_cli.numerics.kernels.span import (DRIFT_TOLERANCE, EXTEND_CONDITION, SPAN_TOLERANCE, STEP_ROUNDOFF, extend_span,
                                   follow_epoch, lower_envelope_lines, new_epoch_span, refresh_span)
from cbai_cli.numerics.kernels.state import (EPOCH as EPOCH_SLOT, GROWTH, KEPT, LINES, LOG_INVERSE_DELTA, MARGIN as MARGIN_SLOT,
                                    RANK, STEPS, SUBGAUSSIAN, SpanState)
from cbai_cli.numerics.kernels.threads import threads_from

__all__ = ["DRIFT_TOLERANCE", "EXTEND_CONDITION", "EXTEND_ENTRIES", "MARGIN", "MEAN_SHARE", "SPAN_TOLERANCE",
           "STEP_ROUNDOFF", "UPPER_SHARE", "Envelope", "LeastSquaresSpan", "MixtureIntervals", "ScalePrior",
           "lower_envelope", "mean_shares", "mixture_envelope", "mixture_widths", "points_in_use", "spread_ratios",
           "upper_spent"]

# SPAN_TOLERANCE, DRIFT_TOLERANCE, STEP_ROUNDOFF and EXTEND_CONDITION: the recomputations' constants,
# defined beside them (cbai_cli.numerics.kernels.span).
# Arm matrices of fewer entries K·d recompute instead of extending: there the recomputation's
# pass costs no more than the extension's (benchmarks/bench_span.py: 0.07 against 0.13 ms at
# K = 100, d = 10, 0.37 against 0.34 at K = 1,000, d = 50, at rank d/2), and their records
# stay those of exact recomputations.
EXTEND_ENTRIES = 2**16
# Growth (nats) of the bound ℓ_i + g on log det(I + V/λ_i) after which a new epoch starts:
# the widths carry β larger by g/2 ≤ MARGIN/2, and an epoch lasts about MARGIN·n/rank pulls.
MARGIN = 0.2
# The share κ of δ spent on the one-sided bounds of the arms' own means (each side κδ times
# its share by reward rank, mean_shares); the least-squares intervals take (1 − κ)δ; none in
# one dimension (docs/ols.md, "Each arm's own mean").
MEAN_SHARE = 0.3
# The part of κδ that the upper sides of the own means share by reward rank; the lower sides
# get the rest (mean_shares).
UPPER_SHARE = 0.5


@dataclass(frozen=True)
class ScalePrior:
    """The prior π over ridge scales λ_i = scale·exp(low + i·step), i < M, and the grid of
    points μ_p at which the regime takes tangent lines (docs/ols.md, "Tangent lines").

    π puts ``core_weight`` uniformly on the scales with log(λ/scale) in ``core`` and the
    rest uniformly on all M scales: the core is where the best fixed scale of the designs
    cbai meets lies (about n·L²/30 to n·L²/5 after n pulls, for n from a few dozen to a few
    hundred thousand), the tails keep every scale of the grid at a bounded cost (docs/ols.md, "Which
    core and which split").

    Attributes:
        scale: L², the squared largest arm norm (eigenvalues of V are in its units).
        low, high, step: log(λ/L²) of the smallest and largest scale, and their spacing.
        core, core_weight: the core interval of log(λ/L²) and its extra mass.
        point_step: the spacing of log(μ_p/L²); the points run from low − 4 to high + 4.
        scales: (M,) λ_i.
        log_weights: (M,) log π_i.
        points: (P,) μ_p.
    """

    scale: float
    low: float = -4.0
    high: float = 16.0
    step: float = 1.0
    core: tuple[float, float] = (1.0, 9.0)
    core_weight: float = 0.9
    point_step: float = 0.25
    scales: np.ndarray = field(init=False, repr=False, compare=False)
    log_weights: np.ndarray = field(init=False, repr=False, compare=False)
    points: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.scale > 0:
            raise ValueError(f"scale must be > 0, got {self.scale}")
        if not 0.0 <= self.core_weight < 1.0:
            raise ValueError(f"core_weight must lie in [0, 1), got {self.core_weight}")
        count = int(round((self.high - self.low) / self.step)) + 1
        logs = self.low + self.step * np.arange(count)
        in_core = (logs >= self.core[0] - 1e-9) & (logs <= self.core[1] + 1e-9)
        if not in_core.any():
            raise ValueError(f"core {self.core} holds no scale of the grid")
        weights = (1.0 - self.core_weight) / count + self.core_weight * in_core / in_core.sum()
        points = np.arange(self.low - 4.0, self.high + 4.0 + 1e-9, self.point_step)
        self._set(scales=self.scale * np.exp(logs), log_weights=np.log(weights),
                  points=self.scale * np.exp(points))

    def _set(self, **values: np.ndarray) -> None:
        for name, value in values.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def log_dets(self, eigenvalues: np.ndarray) -> np.ndarray:
        """(M,) log det(I + V/λ_i) = Σ_k log(1 + μ_k/λ_i) for every scale.

        Args:
            eigenvalues: (r,) eigenvalues μ_k ≥ 0 of V (zeros add nothing).
        """
        return np.add.reduce(np.log1p(eigenvalues[:, None] / self.scales), axis=0)


@dataclass(frozen=True)
class Envelope:
    """The lower envelope of tangent lines: line j bounds the squared half-width over 2R² by
    ``intercepts[j]``·xᵀV⁺x + ``slopes[j]``·‖V⁺x‖², and it is the lowest for the arms whose
    t = ‖V⁺x‖²/xᵀV⁺x lies between ``crossings[j − 1]`` and ``crossings[j]``.

    Attributes:
        intercepts, slopes: (E,) β_p·a_p and β_p·b_p of the lines, by increasing t.
        thresholds: (E,) β_p.
        crossings: (E − 1,) increasing.
    """

    intercepts: np.ndarray
    slopes: np.ndarray
    thresholds: np.ndarray
    crossings: np.ndarray

    def lines(self, ratios: np.ndarray) -> np.ndarray:
        """(K,) the line each arm takes, for its t (K,) of :func:`spread_ratios`. Every line
        gives a valid width (docs/ols.md, Theorem); the crossings only decide which is
        narrowest."""
        return np.searchsorted(self.crossings, ratios)


def spread_ratios(variances: np.ndarray, spreads: np.ndarray) -> np.ndarray:
    """(K,) t = ‖V⁺x‖²/xᵀV⁺x for a = xᵀV⁺x (K,) and b = ‖V⁺x‖² (K,); 0 where a = 0 (the line of
    t = 0; such an arm has width 0 with any line)."""
    return np.divide(spreads, variances, out=np.zeros_like(variances), where=variances > 0)


def points_in_use(prior: ScalePrior, variances: np.ndarray, spreads: np.ndarray,
                  inside: np.ndarray | None = None) -> np.ndarray:
    """(P,) mask of the prior's tangent points that the arms with xᵀV⁺x = ``variances`` (K,)
    and ‖V⁺x‖² = ``spreads`` (K,) (only those ``inside`` (K,), the span's, when given) need:
    the two points around each arm's 1/t, t = ‖V⁺x‖²/xᵀV⁺x
    (:func:`cbai_cli.numerics.kernels.ols.mark_points`); none marked when no arm is given."""
    used = np.zeros(prior.points.size, dtype=bool)
    if inside is None:
        inside = np.ones(variances.shape[0], dtype=bool)
    mark_points(prior.points, variances, spreads, inside, used)
    return used


def mixture_envelope(prior: ScalePrior, log_dets: np.ndarray, delta: float,
                     used: np.ndarray | None = None) -> Envelope:
    """The tangent lines of the prior's points (docs/ols.md, "Tangent lines") and their
    lower envelope.

    At each point μ_p the line is the tangent at μ_p of h_ρ(μ) = 1/Σ_i ρ_i/(μ + λ_i) for the
    ρ that minimises β_ρ·h_ρ(μ_p) over all ρ (:func:`cbai_cli.numerics.kernels.ols.tangent_lines`).

    Args:
        prior: the scales, π and the points.
        log_dets: (M,) ℓ_i ≥ log det(I + V/λ_i).
        delta: δ.
        used: (P,) mask of the points to take (:func:`points_in_use`: the two around each
            arm's 1/t; for a fixed ρ the best tangent for an arm is at one of them, and every
            line is valid whatever the choice); None, or no point marked, for every point.
    """
    points = prior.points
    if used is not None and used.any():
        points = points[used]
    intercepts, slopes, thresholds = np.empty(points.size), np.empty(points.size), np.empty(points.size)
    tangent_lines(prior.scales, prior.log_weights, np.asarray(log_dets, dtype=float), -math.log(delta), points,
                  intercepts, slopes, thresholds)
    chosen, crossings = lower_envelope(intercepts, slopes)
    return Envelope(intercepts[chosen], slopes[chosen], thresholds[chosen], crossings)


def lower_envelope(intercepts: np.ndarray, slopes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines I_j + S_j·t that are lowest somewhere on t ≥ 0, ordered by t: their indices
    (E,) and the t where each next one takes over (E − 1,), increasing
    (:func:`cbai_cli.numerics.kernels.span.lower_envelope_lines`).

    Args:
        intercepts, slopes: (P,) the lines.
    """
    intercepts, slopes = np.asarray(intercepts, dtype=float), np.asarray(slopes, dtype=float)
    chosen, crossings = np.empty(intercepts.size, dtype=np.int64), np.empty(intercepts.size)
    count = int(lower_envelope_lines(intercepts, slopes, chosen, crossings))
    return chosen[:count], crossings[:max(count - 1, 0)]


def mixture_widths(variances: np.ndarray, spreads: np.ndarray, envelope: Envelope, subgaussian: float) -> np.ndarray:
    """(K,) half-widths R·sqrt(2·(I·a + S·b)) with each arm's line of ``envelope``."""
    line = envelope.lines(spread_ratios(variances, spreads))
    squared = envelope.intercepts[line] * variances + envelope.slopes[line] * spreads
    return np.sqrt(np.maximum(squared, 0.0) * (2.0 * subgaussian**2))


class LeastSquaresSpan:
    """Ordinary least squares on the span of the pulled arms, for a fixed arm matrix.

    V = Σ c_s x_s x_sᵀ, b = Σ y_s x_s, φ̂ = V⁺b. While a pull stays in the span of V, V⁺
    restricted to the span is an ordinary inverse and takes the Sherman–Morrison update,
    and the per-arm caches follow from one product of the arm matrix with (V⁺x, V⁺V⁺x):
    O(K·d + d²). A pull of an arm outside the span (at most d such steps grow it) extends
    V⁺ by one direction (:meth:`extend`). A recomputation from V and b follows every
    ``refresh_every`` updates, and any
    update after which some arm's ‖V⁺x‖² could carry a relative roundoff above
    ``DRIFT_TOLERANCE``: a step that shrinks a cache by a factor A keeps the absolute error of
    the old value, so its relative error grows by A (a pull that takes V from condition 5·10⁶
    to 900 shrinks ‖V⁺x‖² by 4·10⁸); a running estimate of each arm's roundoff costs O(K) per pull
    (the variances xᵀV⁺x shrink by at most 1 + c·q in a pull, the square root of the factor of
    the pulled arm's ‖V⁺x‖², so the spreads are the caches to watch). An
    *epoch* (a new eigendecomposition of V and exact log-determinants) starts there too, at an
    extension, and
    after any pull that could have raised some log det(I + V/λ_i) by more than ``margin``
    in total since the epoch began.

    The growth sum g = Σ_s c_s·log(1 + x_sᵀ(λ_0I + V_m)⁻¹x_s) over the epoch's pulls certifies
    ℓ_i + g ≥ log det(I + V/λ_i) after every pull, with ℓ_i the exact value at the epoch's
    start (design V_m, eigenvalues μ_k, eigenvectors v_k): by the determinant lemma a pull
    of x adds log(1 + c·xᵀ(λI + V)⁻¹x) ≤ c·log(1 + xᵀ(λI + V_m)⁻¹x) (V ⪰ V_m, and
    log(1 + c·q) ≤ c·log(1 + q) for c ≥ 1), largest at the smallest scale λ_0; the epoch ends
    once g exceeds ``margin``.

    Args:
        arms: (K, d) arm features.
        refresh_every: updates between exact recomputations (None: max(200, 20·d)).

    Attributes:
        arms: (K, d).
        pinv: (d, d) V⁺.
        basis: (d, r) orthonormal basis of the span of V.
        eigenvalues: (r,) the eigenvalues of V on the span at the last recomputation.
        inside: (K,) whether each arm lies in the span (decided at the last recomputation;
            pulls in between stay in it).
        scales: (M,) the ridge scales λ_i of :meth:`track` (none at first), increasing.
        margin: the slack of the epoch's bound on the log-determinants.
        log_dets: (M,) log det(I + V_m/λ_i) at the start of the epoch.
        epoch: how many epochs have started.
        n_samples: Σ c_s.
    """

    def __init__(self, arms: np.ndarray, refresh_every: int | None = None) -> None:
        self.arms = np.ascontiguousarray(arms, dtype=float)
        k, d = self.arms.shape
        self.dim = d
        self.refresh_every = refresh_every or max(200, 20 * d)
        self._arm_norms2 = np.einsum("kd,kd->k", self.arms, self.arms)
        self.scales = np.zeros(0)
        self.attach(SpanState.empty(k, d, 0), 0)
        self.refresh()

    def attach(self, state: SpanState, row: int) -> None:
        """Be the view of row ``row`` of ``state`` (a batch lays its runs over its own stack)."""
        self._state, self._row = state, row

    @property
    def arm_norms2(self) -> np.ndarray:
        """(K,) ‖x‖² of every arm."""
        return self._arm_norms2

    @property
    def state(self) -> tuple[SpanState, int]:
        """(the state this fit is a row of, the row)."""
        return self._state, self._row

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return self._state.arrays()

    @property
    def n_samples(self) -> int:
        """Σ c_s."""
        return int(self._state.counters[self._row, STEPS])

    @property
    def epoch(self) -> int:
        """How many epochs have started."""
        return int(self._state.counters[self._row, EPOCH_SLOT])

    @property
    def margin(self) -> float:
        """The slack of the epoch's bound on the log-determinants."""
        return float(self._state.reals[self._row, MARGIN_SLOT])

    @property
    def rank(self) -> int:
        return int(self._state.counters[self._row, RANK])

    @property
    def pinv(self) -> np.ndarray:
        """(d, d) V⁺."""
        return self._state.pinv[self._row]

    @property
    def basis(self) -> np.ndarray:
        """(d, r) orthonormal basis of the span of V."""
        return self._state.basis[self._row, :self.rank].T

    @property
    def eigenvalues(self) -> np.ndarray:
        """(r,) the eigenvalues of V on the span at the last recomputation."""
        return self._state.eigenvalues[self._row, :self._state.counters[self._row, KEPT]]

    @property
    def inside(self) -> np.ndarray:
        """(K,) whether each arm lies in the span (decided at the last recomputation; pulls in
        between stay in it)."""
        return self._state.inside[self._row]

    @property
    def log_dets(self) -> np.ndarray:
        """(M,) log det(I + V_m/λ_i) at the start of the epoch."""
        return self._state.log_dets[self._row]

    @property
    def gram(self) -> np.ndarray:
        """(d, d) V = Σ c_s x_s x_sᵀ, from the arms pulled so far: O(P·d²) for P of them."""
        pulled = np.flatnonzero(self.counts)
        arms = self.arms[pulled]
        return arms.T @ (self.counts[pulled, None] * arms)

    @property
    def growth(self) -> float:
        """g, the epoch's growth sum: ℓ_i + g ≥ log det(I + V/λ_i) now, at every scale."""
        return float(self._state.reals[self._row, GROWTH])

    @property
    def growths(self) -> np.ndarray:
        """(K,) each arm's growth per pull in the epoch (NaN: not pulled yet in the epoch)."""
        return self._state.growths[self._row]

    @property
    def counts(self) -> np.ndarray:
        """(K,) the pulls of each arm."""
        return self._state.counts[self._row]

    @property
    def sums(self) -> np.ndarray:
        """(K,) the sum of each arm's observations."""
        return self._state.sums[self._row]

    @property
    def targets(self) -> np.ndarray:
        """(d,) b = Σ y_s x_s."""
        return self.sums @ self.arms

    @property
    def variances(self) -> np.ndarray:
        """(K,) xᵀV⁺x."""
        return self._state.caches[self._row, 0]

    @property
    def spreads(self) -> np.ndarray:
        """(K,) ‖V⁺x‖²."""
        return self._state.caches[self._row, 1]

    @property
    def predictions(self) -> np.ndarray:
        """(K,) xᵀφ̂."""
        return self._state.caches[self._row, 2]

    def track(self, scales: np.ndarray, margin: float) -> None:
        """Bound log det(I + V/λ_i) for ``scales`` (M,), increasing, within ``margin`` > 0 per
        epoch (a fit of its own, not a batch's row: its state takes room for M scales)."""
        state = SpanState.stack([(self._state, self._row)])
        self.attach(replace(state, log_dets=np.zeros((1, scales.size))), 0)
        self.scales = scales
        self._state.reals[0, MARGIN_SLOT] = margin
        self.refresh()

    def update(self, arm: int, total: float, count: int = 1) -> None:
        """Add ``count`` pulls of arm ``arm`` whose observations sum to ``total``
        (:func:`cbai_cli.numerics.kernels.fit.update_fit`, the fit's part of a run's update).

        A pull in the span takes the compiled rank-one step
        (:func:`cbai_cli.numerics.kernels.ols.rank_one_step`: V⁺ and the three caches by
        Sherman–Morrison, the roundoff estimate, the epoch's growth sum), which says whether a
        recomputation or a new epoch is due; a pull outside the span extends the span
        (:meth:`extend`; a recomputation when another pulled arm lies outside it too), and the
        ``refresh_every``-th update recomputes.
        """
        update_fit(self.arms, self._arm_norms2, self.scales, self._arrays(), self._row, int(arm), float(total),
                   int(count), self.refresh_every, DRIFT_TOLERANCE / STEP_ROUNDOFF, EXTEND_ENTRIES,
                   threads_from(self.arms))

    def extend(self, arm: int, count: int) -> None:
        """V⁺ and the caches after the first ``count`` pulls of arm ``arm``, outside the span,
        and a new epoch (:func:`cbai_cli.numerics.kernels.span.extend_span`: one pass over the arm
        matrix, or a recomputation on arm matrices of fewer than ``EXTEND_ENTRIES`` entries
        and where an extension could lose digits). The updates' counts and sums must already
        hold the pulls."""
        if not extend_span(self.arms, self._arm_norms2, self.scales, self._arrays(), self._row, arm, count,
                           EXTEND_ENTRIES):
            self.refresh()

    def new_epoch(self) -> None:
        """A new epoch from the eigendecomposition of V now (the span and V⁺ stay):
        :func:`cbai_cli.numerics.kernels.span.new_epoch_span`."""
        new_epoch_span(self.arms, self.scales, self._arrays(), self._row)

    def refresh(self) -> None:
        """The span, V⁺ and the per-arm caches from V and b, and a new epoch
        (:func:`cbai_cli.numerics.kernels.span.refresh_span`): O(K·d·r + P·d² + d³ + M·d)."""
        refresh_span(self.arms, self._arm_norms2, self.scales, self._arrays(), self._row)

    def estimate(self) -> np.ndarray:
        """(d,) φ̂ = V⁺b (zero outside the span)."""
        return self.pinv @ self.targets


def upper_spent(positions: np.ndarray) -> np.ndarray:
    """The upper shares of the first c reward positions together, UPPER_SHARE·c/(c + 1) for each
    c of ``positions``: the arm of rank r gets UPPER_SHARE/(r(r + 1)) (docs/ols.md, "Each arm's
    own mean" and "Which core and which split")."""
    return UPPER_SHARE * positions / (positions + 1.0)


def mean_shares(rewards: np.ndarray | None, arms: int) -> np.ndarray:
    """(2, K) the shares of the own-mean budget κδ that each arm's lower side (row 0) and
    upper side (row 1) spend (docs/ols.md, "Each arm's own mean").

    An answer is wrong only if an infeasible arm at least as rewarding as the best feasible
    reward r* enters the feasible set (its upper side failed) or the answer x* is
    eliminated as infeasible (its lower side failed). The upper sides share
    ``UPPER_SHARE`` = ½ by reward rank, 1/(2r(r + 1)) for the arm of rank r
    (:func:`upper_spent`), and the lower side of the arm of rank r gets what the upper sides
    of the arms ranked above it leave, ½ + 1/(2r) ≥ ½. A tie group takes the positions it
    spans, its upper shares averaged over them and its lower share 1 − (the upper shares
    through the group) + its own upper share. For every truth the sides that matter then sum
    to at most 1: the upper shares through x*'s group, less x*'s, plus x*'s lower share; when
    no arm is feasible, all the upper shares, less than ½. Without rewards every side gets 1/(2K), as two-sided
    intervals for every arm would.
    """
    if rewards is None:
        return np.full((2, arms), 0.5 / arms)
    rewards = np.asarray(rewards, dtype=float)
    ordered = np.sort(-rewards)
    above = np.searchsorted(ordered, -rewards, side="left")  # arms more rewarding
    through = np.searchsorted(ordered, -rewards, side="right")  # arms at least as rewarding
    spent = upper_spent(np.arange(arms + 1, dtype=float))  # the upper shares of the first c positions
    upper = (spent[through] - spent[above]) / (through - above)
    return np.stack([1.0 - spent[through] + upper, upper])


@dataclass
class MixtureIntervals:
    """The ``ols`` regime's intervals of one run (:class:`cbai_cli.numerics.confidence.Intervals`):
    xᵀφ̂ ∓ R·sqrt(2·(I·xᵀV⁺x + S·‖V⁺x‖²)) for arms in the span, with (I, S) = β·(a, b) of
    the arm's tangent line at (1 − κ)δ, (−∞, ∞) for the others (docs/ols.md, Theorem),
    intersected with the one-sided bounds of each pulled arm's own mean, each side at its
    share of κδ (:func:`mean_shares`; docs/ols.md, "Each arm's own mean").

    At the start of every epoch of the fit the tangent lines are computed from the epoch's
    exact log-determinants ℓ and every arm takes the lowest line for it
    (:func:`mixture_envelope`). In between, the fit's growth sum g certifies ℓ + g: the same
    ρ then has β + g/2, so a step costs the per-arm products 2R²·(I·a + S·b)·(1 + g/(2β)),
    O(K).

    Args:
        fit: the least-squares fit (it tracks the prior's scales from here on).
        prior: π and the tangent points.
        delta: δ.
        subgaussian: R.
        margin: the growth of the log-determinants after which a new epoch starts (nats):
            larger means fewer recomputations and β larger by at most margin/2.
        mean_share: κ, the share of δ spent on the arms' own means (0: none); None:
            ``MEAN_SHARE``, or 0 in one dimension, where least squares uses every pull for
            every arm (variance 1/Σ_a N_a a² against 1/(N_x x²) for the arm's own mean, in
            units of x²) at a smaller threshold than the mean's log(1/(κδ·share)).
        rewards: (K,) the known rewards, which share κδ out by reward rank
            (:func:`mean_shares`); None: κδ/(2K) each side.
        threshold: τ, at which a side of an arm whose two bounds each fall short may still be
            certified by their joint test (:func:`cbai_cli.numerics.kernels.ols.joint_certificate`;
            docs/ols.md, "One supermartingale for both"); None: no joint test.

    Attributes:
        mean_prior: the prior over the scales of the normal mixture of one arm's own noise
            sum, in units of pulls (:class:`ScalePrior` with L² = 1).
        mean_scratch: (3, M') the own means' scratch (:func:`cbai_cli.numerics.kernels.ols.own_mean_sides`).
    """

    fit: LeastSquaresSpan
    prior: ScalePrior
    delta: float
    subgaussian: float
    margin: float = MARGIN
    mean_share: float | None = None
    rewards: np.ndarray | None = field(default=None, repr=False)
    threshold: float | None = None
    mean_prior: ScalePrior = field(default_factory=lambda: ScalePrior(1.0), init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mean_share is None:
            self.mean_share = MEAN_SHARE if self.fit.dim > 1 else 0.0
        if not 0.0 <= self.mean_share < 1.0:
            raise ValueError(f"mean_share must lie in [0, 1), got {self.mean_share}")
        self.fit.track(self.prior.scales, self.margin)
        arms = self.fit.arms.shape[0]
        state, b = self.fit.state
        # (2, K) log(1/(κδ·share)) of each side, or ∞ without the means: their widths then stay ∞
        # a sum of logs: the product κ·δ·share underflows to 0 for δ near the smallest double
        state.mean_thresholds[b] = (-(math.log(self.mean_share) + math.log(self.delta)
                                      + np.log(mean_shares(self.rewards, arms)))
                                    if self.mean_share > 0 else np.full((2, arms), math.inf))
        state.reals[b, LOG_INVERSE_DELTA] = -math.log(self.least_squares_delta)
        state.reals[b, SUBGAUSSIAN] = self.subgaussian
        self.mean_scratch = np.empty((3, self.mean_prior.scales.size))

    @property
    def least_squares_delta(self) -> float:
        """(1 − κ)δ, the least-squares intervals' share."""
        return self.delta * (1.0 - self.mean_share)

    def _row(self, name: str) -> np.ndarray:
        """The fit's state row of the array ``name`` (:class:`~cbai_cli.numerics.kernels.state.SpanState`)."""
        state, b = self.fit.state
        return getattr(state, name)[b]

    @property
    def mean_widths(self) -> np.ndarray:
        """(2, K) the half-widths of the lower and upper sides of each arm's own mean (∞: none)."""
        return self._row("mean_widths")

    @property
    def mean_thresholds(self) -> np.ndarray:
        """(2, K) log(1/(κδ·share)) of each side of each arm's own mean (∞: no own means)."""
        return self._row("mean_thresholds")

    def observe(self, arm: int, total: float, count: int) -> None:
        """Take in ``count`` pulls of ``arm`` summing to ``total``: the fit's update and the arm's
        own mean (a learner of the ``ols`` regime takes its pulls by the compiled update of its
        whole run state instead, :func:`cbai_cli.numerics.kernels.fit.observe_fit`)."""
        self.fit.update(arm, total, count)
        pulls = self.fit.counts[arm]
        own_mean_sides(arm, pulls, pulls - count, self.mean_thresholds, self._row("mean_roots"), self.mean_widths,
                       self.subgaussian, self.mean_prior.scales, self.mean_prior.log_weights, self.mean_scratch)

    def kernel(self, refresh_every: int) -> tuple:
        """The constants of the compiled update of a pull, with the ridge design's
        ``refresh_every`` (the ``fit`` of :func:`cbai_cli.numerics.kernels.fit.observe_fit`)."""
        fit, prior, mean_prior = self.fit, self.prior, self.mean_prior
        return (refresh_every, fit.refresh_every, DRIFT_TOLERANCE / STEP_ROUNDOFF, EXTEND_ENTRIES, fit.arm_norms2,
                prior.scales, prior.log_weights, prior.points, mean_prior.scales, mean_prior.log_weights)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower (K,), upper (K,)) now."""
        return self._bounds(self.mean_widths, self.threshold)

    def least_squares_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower (K,), upper (K,)) of least squares alone, at (1 − κ)δ: without the arms' own
        means and without the joint test at τ (a diagnostic; the run certifies with :meth:`bounds`)."""
        return self._bounds(np.full_like(self.mean_widths, math.inf), None)

    def _bounds(self, mean_widths: np.ndarray, threshold: float | None) -> tuple[np.ndarray, np.ndarray]:
        """:func:`mixture_bounds` with the own means' half-widths ``mean_widths`` (2, K) and τ (None: no joint test)."""
        self.follow_epoch()
        state, b = self.fit.state
        caches = state.caches[b]
        lower, upper = np.empty(caches.shape[1]), np.empty(caches.shape[1])
        mixture_bounds(state.intercepts[b], state.slopes[b], state.inflations[b], state.reals[b, GROWTH], caches[0],
                       caches[1], state.inside[b], caches[2], state.counts[b], state.sums[b], mean_widths,
                       math.nan if threshold is None else float(threshold), state.mean_thresholds[b],
                       float(self.subgaussian), self.mean_prior.scales, self.mean_prior.log_weights, lower, upper)
        return lower, upper

    def estimate(self) -> np.ndarray:
        """(d,) φ̂ = V⁺b."""
        return self.fit.estimate()

    def follow_epoch(self) -> None:
        """The tangent lines of the fit's current epoch, computed when it has begun since the
        last ones (:func:`cbai_cli.numerics.kernels.span.follow_epoch`: the envelope from the epoch's
        ℓ and each arm's line as 2R²β·a, 2R²β·b and 1/(2β), the line :meth:`Envelope.lines`
        gives)."""
        state, b = self.fit.state
        if state.counters[b, LINES] != state.counters[b, EPOCH_SLOT]:
            prior = self.prior
            follow_epoch(prior.points, prior.scales, prior.log_weights, state.arrays(), b)
