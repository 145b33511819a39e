"""An adaptive run's state as typed sets of arrays, stacked over runs.

:class:`RunState` holds what every adaptive run keeps — the ridge design (A, A⁻¹, b, φ̂,
‖x‖²_{A⁻¹}, xᵀφ̂, log det A) and the elimination state (U, F, r̄, the last intervals) — and
:class:`SpanState` what the ``ols`` regime's least-squares fit
(:class:`cbai_cli.numerics.ols.LeastSquaresSpan`) and its mixture intervals
(:class:`cbai_cli.numerics.ols.MixtureIntervals`) keep besides. Each array has a leading run
axis: a single run is a stack of one, a batch (:func:`cbai_cli.numerics.kernels.batch.run_compiled`)
a stack of many, and a learner's :class:`~cbai_cli.numerics.linalg.DesignState`,
:class:`~cbai_cli.algorithms.elimination.EliminationState`, fit and intervals are views on
one row. The kernels take a state as one tuple of arrays (``arrays()``, in field order)
and a row index and update it in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

#: The slots of :attr:`SpanState.reals`: the epoch's growth sum g, its limit (the margin),
#: log(1/((1 − κ)δ)) of the tangent lines and R (both set by the intervals).
GROWTH, MARGIN, LOG_INVERSE_DELTA, SUBGAUSSIAN = 0, 1, 2, 3
#: The slots of :attr:`SpanState.counters`: the fit's pulls, its updates since the last
#: recomputation, the epochs started, the rank of the span, how many eigenvalues the last
#: recomputation kept, and the epoch of the intervals' tangent lines (−1: none yet).
STEPS, SINCE, EPOCH, RANK, KEPT, LINES = 0, 1, 2, 3, 4, 5


class _Stacked:
    """What both states share: a stack of rows, and the tuple of arrays the kernels take."""

    @classmethod
    def stack(cls, rows: Sequence[tuple[_Stacked, int]]):
        """One state of the given rows (state, b), copied, in order."""
        return cls(**{field.name: np.stack([getattr(state, field.name)[b] for state, b in rows])
                      for field in fields(cls)})

    def arrays(self) -> tuple[np.ndarray, ...]:
        """Every array, in field order: what the kernels take (made once per state)."""
        arrays = self.__dict__.get("_arrays")
        if arrays is None:
            arrays = tuple(getattr(self, field.name) for field in fields(self))
            object.__setattr__(self, "_arrays", arrays)
        return arrays


#: The slots of :attr:`RunState.reals`: log det A and r̄.
LOGDET, BEST = 0, 1
#: The slots of :attr:`RunState.counters`: the pulls in the design, its updates since its
#: last exact refresh, Track-and-Stop's forced-exploration pulls, and the mode of its
#: ``rollout`` step (:mod:`cbai_cli.numerics.kernels.rollout`): the target it was decided for
#: (−1: none yet), whether it pulls the Frank–Wolfe vertex (1) or the target (0), and the
#: pulls at which it was decided.
PULLS, UPDATES, FORCED, MODE_TARGET, MODE_VERTEX, DECIDED_AT = 0, 1, 2, 3, 4, 5
COUNTERS = 6


@dataclass(frozen=True)
class RunState(_Stacked):
    """The ridge design and elimination state of B runs on K arms in d dimensions, row b
    being run b (the field order is the order of :meth:`arrays`).

    Attributes:
        inverse, gram: (B, d, d) A⁻¹ and A.
        targets, estimate: (B, d) b and φ̂.
        norms2, predictions: (B, K) ‖x‖²_{A⁻¹} and xᵀφ̂.
        uncertain, feasible: (B, K) bool, U and F.
        last_lower, last_upper: (B, K) the last intervals.
        reals: (B, 2) float slots LOGDET, BEST.
        counters: (B, 6) int slots PULLS, UPDATES, FORCED, MODE_TARGET, MODE_VERTEX, DECIDED_AT.
    """

    inverse: np.ndarray
    gram: np.ndarray
    targets: np.ndarray
    estimate: np.ndarray
    norms2: np.ndarray
    predictions: np.ndarray
    uncertain: np.ndarray
    feasible: np.ndarray
    last_lower: np.ndarray
    last_upper: np.ndarray
    reals: np.ndarray
    counters: np.ndarray

    @classmethod
    def empty(cls, arms: int, dim: int, runs: int = 1) -> RunState:
        """The state of ``runs`` runs before any pull and before the design's ridge: A = A⁻¹ =
        0, b = φ̂ = 0, no caches, log det A = 0, U every arm, F empty, r̄ = −∞, the intervals
        (−∞, ∞), no rollout mode."""
        k, d = arms, dim
        reals = np.zeros((runs, 2))
        reals[:, BEST] = -np.inf
        uncertain, last_lower, last_upper = np.empty((runs, k), dtype=bool), np.empty((runs, k)), np.empty((runs, k))
        uncertain.fill(True)
        last_lower.fill(-np.inf)
        last_upper.fill(np.inf)
        counters = np.zeros((runs, COUNTERS), dtype=np.int64)
        counters[:, MODE_TARGET] = -1
        return cls(inverse=np.zeros((runs, d, d)), gram=np.zeros((runs, d, d)), targets=np.zeros((runs, d)),
                   estimate=np.zeros((runs, d)), norms2=np.zeros((runs, k)), predictions=np.zeros((runs, k)),
                   uncertain=uncertain, feasible=np.zeros((runs, k), dtype=bool), last_lower=last_lower,
                   last_upper=last_upper, reals=reals, counters=counters)


class Slot:
    """An attribute of a view that is one slot of a state's row: ``obj.<row>[slot]`` as ``kind``
    (int or float), set in place; ``row`` names the view's attribute that holds its row of
    :attr:`RunState.reals` or :attr:`RunState.counters`."""

    def __init__(self, row: str, slot: int, kind: type) -> None:
        self.row, self.slot, self.kind = row, slot, kind

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return self.kind(obj.__dict__[self.row][self.slot])

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.row][self.slot] = value


@dataclass(frozen=True)
class SpanState(_Stacked):
    """The ``ols`` state of B runs on K arms in d dimensions with M ridge scales, row b being
    run b (the field order is the order of :meth:`arrays`).

    Attributes:
        pinv: (B, d, d) V⁺.
        caches: (B, 3, K) xᵀV⁺x, ‖V⁺x‖² and xᵀφ̂.
        roundoff: (B, K) the spreads' roundoff estimates (units of the step's roundoff).
        directions: (B, 2, d) the rank-one step's scratch (V⁺x and V⁺V⁺x).
        growths: (B, K) the epoch's per-pull growths (NaN: the arm not pulled yet in the epoch).
        growth_basis: (B, d, d) the epoch's basis for them
            (:func:`cbai_cli.numerics.kernels.ols.arm_growth`).
        inside: (B, K) bool, the arms in the span.
        counts, sums: (B, K) pulls and observation sums per arm.
        outside: (B, K) the squared norm of each arm's part outside the span.
        basis: (B, d, d) the span's orthonormal basis, one vector a row (the first
            ``counters[b, RANK]`` rows).
        eigenvalues: (B, d) the eigenvalues of V kept at the last recomputation (the first
            ``counters[b, KEPT]``).
        log_dets: (B, M) log det(I + V_m/λ_i) at the start of the epoch.
        intercepts, slopes, inflations: (B, K) 2R²β·a, 2R²β·b and 1/(2β) of each arm's
            tangent line.
        mean_widths, mean_roots: (B, 2, K) the half-widths of the lower and upper sides of
            each arm's own mean and the roots their next widths start from.
        mean_thresholds: (B, 2, K) log(1/(κδ·share)) of each side (∞: no own means).
        reals: (B, 4) float slots GROWTH, MARGIN, LOG_INVERSE_DELTA, SUBGAUSSIAN.
        counters: (B, 6) int slots STEPS, SINCE, EPOCH, RANK, KEPT, LINES.
    """

    pinv: np.ndarray
    caches: np.ndarray
    roundoff: np.ndarray
    directions: np.ndarray
    growths: np.ndarray
    growth_basis: np.ndarray
    inside: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    outside: np.ndarray
    basis: np.ndarray
    eigenvalues: np.ndarray
    log_dets: np.ndarray
    intercepts: np.ndarray
    slopes: np.ndarray
    inflations: np.ndarray
    mean_widths: np.ndarray
    mean_roots: np.ndarray
    mean_thresholds: np.ndarray
    reals: np.ndarray
    counters: np.ndarray

    @classmethod
    def empty(cls, arms: int, dim: int, scales: int, runs: int = 1) -> SpanState:
        """The state of ``runs`` fits before any pull and before their first recomputation:
        zeros, no growth computed, no own means (∞ widths and thresholds), no lines yet."""
        k, d = arms, dim
        counters = np.zeros((runs, 6), dtype=np.int64)
        counters[:, LINES] = -1
        reals = np.zeros((runs, 4))
        reals[:, MARGIN] = np.inf
        return cls(pinv=np.zeros((runs, d, d)), caches=np.zeros((runs, 3, k)), roundoff=np.zeros((runs, k)),
                   directions=np.zeros((runs, 2, d)), growths=np.full((runs, k), np.nan),
                   growth_basis=np.zeros((runs, d, d)), inside=np.zeros((runs, k), dtype=bool),
                   counts=np.zeros((runs, k)), sums=np.zeros((runs, k)), outside=np.zeros((runs, k)),
                   basis=np.zeros((runs, d, d)), eigenvalues=np.zeros((runs, d)), log_dets=np.zeros((runs, scales)),
                   intercepts=np.zeros((runs, k)), slopes=np.zeros((runs, k)), inflations=np.zeros((runs, k)),
                   mean_widths=np.full((runs, 2, k), np.inf), mean_roots=np.zeros((runs, 2, k)),
                   mean_thresholds=np.full((runs, 2, k), np.inf), reals=reals, counters=counters)
