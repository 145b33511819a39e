"""The ``ols`` fit's recomputations and epochs compiled, written in place into its state.

:func:`refresh_span` (the span, V⁺ and the per-arm caches from V and b, then a new epoch),
:func:`extend_span` (the span grown by one pulled arm outside it), :func:`new_epoch_span`
(the eigendecomposition of V now: exact log-determinants and the growths' basis) and
:func:`follow_epoch` (the tangent lines of the epoch and each arm's) act on row b of a
:class:`cbai_cli.numerics.kernels.state.SpanState` given as its tuple of arrays: the one copy of
these steps, called by :class:`cbai_cli.numerics.ols.LeastSquaresSpan` and
:class:`cbai_cli.numerics.ols.MixtureIntervals` from Python and by the compiled loop
(:func:`cbai_cli.numerics.kernels.advance.advance_fit`), which thus runs a whole ``ols`` run
without handing an epoch back to Python (docs/ols.md, "Epochs").

The two views compute the same bits: the eigendecomposition is LAPACK's ``dsyevd`` as
numba calls it (:func:`symmetric_eigen`, scipy's LAPACK in both views), the passes over
the arm matrix are :func:`cbai_cli.numerics.kernels.blas.dot` (scipy's BLAS in both views), the
other sums are loops or element-wise array arithmetic in a fixed order, and the logarithms
are ``math.log1p`` of single numbers (numpy's vectorised ``log1p`` rounds some arguments
otherwise).
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.fortran import lapack
from cbai_cli.numerics.kernels.blas import dot
from cbai_cli.numerics.kernels.jit import njit, njit_interpreted_as
from cbai_cli.numerics.kernels.ols import assign_lines, mark_points, tangent_lines
from cbai_cli.numerics.kernels.state import EPOCH, GROWTH, KEPT, LINES, LOG_INVERSE_DELTA, RANK, SINCE, SUBGAUSSIAN

#: Relative size below which an eigenvalue of V, or the part of an arm outside the span,
#: counts as zero: least squares identifies φ only on the span (Lindner et al. 2022,
#: Proposition 2 makes the same cut for one round's design).
SPAN_TOLERANCE = 1e-9
#: Relative roundoff the rank-one caches may carry before an exact recomputation: a
#: Sherman–Morrison step that shrinks a cache by a factor A leaves the absolute error of the
#: larger old value in the smaller new one, so its relative error grows by A.
DRIFT_TOLERANCE = 1e-11
#: Fresh relative roundoff of one rank-one step, before its amplification: a few ulps, its
#: typical size in either summation order, not a bound (docs/ols.md, "Roundoff of a step").
STEP_ROUNDOFF = 4.0 * float(np.finfo(float).eps)
#: A pull outside the span extends V⁺ by one direction (:func:`extend_span`) when the new V
#: is certainly far from the span cut: trace(V⁺)·trace(V) below this, so every eigenvalue of
#: V stays above 1/EXTEND_CONDITION of the largest, 100 times above SPAN_TOLERANCE, and a
#: recomputation would keep the same span; otherwise the fit is recomputed.
EXTEND_CONDITION = 1e7
#: The smallest positive normal double: the floor of an arm's squared norm in the span test.
_TINY = float(np.finfo(float).tiny)


def _scipy_eigh(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.linalg.eigh(matrix)`` as numba compiles it: scipy's ``dsyevd`` on the lower
    triangle, after the same check for non-finite entries."""
    if not np.isfinite(matrix).all():
        raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
    eigenvalues, vectors, info = lapack().dsyevd(matrix, compute_v=1, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"dsyevd failed (info {info})")
    return eigenvalues, vectors


@njit_interpreted_as(_scipy_eigh)
def symmetric_eigen(matrix):
    """(eigenvalues (d,) increasing, eigenvectors (d, d) as columns) of a symmetric
    ``matrix`` (d, d), from its lower triangle."""
    return np.linalg.eigh(matrix)


@njit
def span_gram(arms, counts):
    """(d, d) V = Σ_a counts_a·a aᵀ over the pulled arms of ``arms`` (K, d), ``counts`` (K,):
    column j is one product of the pulled arms' transposed matrix with counts ∘ (their j-th
    coordinates) (:func:`~cbai_cli.numerics.kernels.blas.dot`)."""
    d = arms.shape[1]
    gram = np.zeros((d, d))
    pulled = np.flatnonzero(counts)
    if pulled.shape[0] == 0:
        return gram
    rows = np.ascontiguousarray(arms[pulled].T)  # (d, P)
    weights = counts[pulled]
    for j in range(d):
        gram[:, j] = dot(rows, weights * rows[j])
    return gram


@njit
def _targets(arms, sums):
    """(d,) b = Σ_a sums_a·a over the arms with a nonzero sum: one product of their
    transposed matrix with their sums (:func:`~cbai_cli.numerics.kernels.blas.dot`)."""
    summed = np.flatnonzero(sums)
    if summed.shape[0] == 0:
        return np.zeros(arms.shape[1])
    return dot(np.ascontiguousarray(arms[summed].T), sums[summed])


@njit
def start_epoch(values, vectors, scales, span, b):
    """A new epoch of row b from the eigenvalues ``values`` (d,) and eigenvectors ``vectors``
    (d, d) of V_m = V now: ℓ_i = log det(I + V_m/λ_i) = Σ_k log(1 + μ_k/λ_i) for the
    ``scales`` λ_i (M,), the growths' basis v_k/√(λ_0 + μ_k) (λ_0 the smallest scale; the
    growth log(1 + xᵀ(λ_0I + V_m)⁻¹x) of an arm is computed at its first pull of the epoch,
    :func:`cbai_cli.numerics.kernels.ols.arm_growth`), no growth yet: O(d² + M·d + K)."""
    (pinv, caches, roundoff, directions, growths, growth_basis, inside, counts, sums, outside, basis, eigenvalues,
     log_dets, intercepts, slopes, inflations, mean_widths, mean_roots, mean_thresholds, reals, counters) = span
    d = values.shape[0]
    kept = np.maximum(values, 0.0)
    for i in range(scales.shape[0]):
        total = 0.0
        for k in range(d):
            total += math.log1p(kept[k] / scales[i])
        log_dets[b, i] = total
    smallest = scales[0] if scales.shape[0] > 0 else math.inf
    growth_basis[b] = vectors * np.sqrt(1.0 / (smallest + kept))
    growths[b, :] = np.nan
    reals[b, GROWTH] = 0.0
    counters[b, EPOCH] += 1


@njit
def new_epoch_span(arms, scales, span, b):
    """A new epoch of row b from the eigendecomposition of V now (the span and V⁺ stay):
    O(P·d² + d³ + M·d) for P pulled arms."""
    counts = span[7]
    values, vectors = symmetric_eigen(span_gram(arms, counts[b]))
    start_epoch(values, vectors, scales, span, b)


@njit
def refresh_span(arms, arm_norms2, scales, span, b):
    """Row b's span, V⁺ and per-arm caches recomputed from V and b, then a new epoch:
    O(K·d·r + P·d² + d³ + M·d). The span: the eigenvectors of V whose eigenvalue exceeds
    SPAN_TOLERANCE times the largest; V⁺ = Σ_k v_k v_kᵀ/μ_k over them; for every arm x
    xᵀV⁺x = Σ_k (v_kᵀx)²/μ_k, ‖V⁺x‖² = Σ_k (v_kᵀx)²/μ_k², xᵀφ̂ with φ̂ = V⁺b, and the squared
    part outside the span ‖x‖² − Σ_k (v_kᵀx)² (x is in the span when that is at most
    SPAN_TOLERANCE·‖x‖²); the updates' roundoff estimates restart at 0."""
    (pinv, caches, roundoff, directions, growths, growth_basis, inside, counts, sums, outside, basis, eigenvalues,
     log_dets, intercepts, slopes, inflations, mean_widths, mean_roots, mean_thresholds, reals, counters) = span
    k, d = arms.shape
    values, vectors = symmetric_eigen(span_gram(arms, counts[b]))
    top = values[d - 1]
    rank = 0
    for i in range(d):
        if top > 0 and values[i] > SPAN_TOLERANCE * top:
            eigenvalues[b, rank] = values[i]
            basis[b, rank] = vectors[:, i]
            rank += 1
    counters[b, RANK] = rank
    counters[b, KEPT] = rank
    variances, spreads = np.zeros(k), np.zeros(k)
    inner_squares = np.zeros(k)
    for r in range(rank):
        inner = dot(arms, basis[b, r])
        scaled = inner / eigenvalues[b, r]
        variances += scaled * inner
        spreads += scaled * scaled
        inner_squares += inner * inner
    pinv[b] = 0.0
    if rank > 0:  # V⁺[i, j] = Σ_r (v_r[i]/μ_r)·v_r[j]
        columns = np.ascontiguousarray(basis[b, :rank].T)  # (d, r)
        scaled_columns = columns / eigenvalues[b, :rank]
        for j in range(d):
            pinv[b, :, j] = dot(scaled_columns, columns[j])
    caches[b, 0] = variances
    caches[b, 1] = spreads
    caches[b, 2] = dot(arms, dot(pinv[b], _targets(arms, sums[b])))
    outside[b] = arm_norms2 - inner_squares
    inside[b] = outside[b] <= SPAN_TOLERANCE * np.maximum(arm_norms2, _TINY)
    roundoff[b] = 0.0
    counters[b, SINCE] = 0
    start_epoch(values, vectors, scales, span, b)


@njit
def extend_span(arms, arm_norms2, scales, span, b, arm, count, extend_entries):
    """Row b's V⁺ and caches after the first ``count`` pulls of arm x = arms[arm], outside the
    span, and a new epoch: O(K·d + d³) (one pass over the arm matrix) where
    :func:`refresh_span` costs O(K·d·r); returns whether it extended (False: nothing
    changed, and the caller recomputes). The counts and sums must already hold the pulls.

    With B the span's basis, x = x_∥ + β·u (u ⊥ B, ‖u‖ = 1), w = V⁺x and q = xᵀw, the
    design V' = V + c·xxᵀ has, on the span of B and u (a block inverse in the coordinates
    (p, uᵀx_∥p + β·s)),

        V'⁺ = V⁺ − (w·uᵀ + u·wᵀ)/β + γ·uuᵀ,   γ = (q + 1/c)/β²,

    so for every arm a, with p_u = aᵀu, p_w = aᵀw and p_ww = aᵀV⁺w:
    aᵀV'⁺a = aᵀV⁺a − 2·p_u·p_w/β + γ·p_u², and, V⁺a and w lying in the span,
    ‖V'⁺a‖² = ‖V⁺a‖² − 2·(p_u/β)·p_ww + (p_u/β)²·‖w‖² + (γ·p_u − p_w/β)²; aᵀφ̂ is recomputed
    from φ̂ = V'⁺b in the same pass, and a's part outside the span loses p_u².

    Leaves the recomputation (:func:`refresh_span`) to the caller on arm matrices of fewer than
    ``extend_entries`` entries (there the recomputation's pass costs no more), when the arm
    was pulled before (its pulls are not all new), when the new V could come near the span
    cut (trace(V'⁺)·trace(V') ≥ EXTEND_CONDITION: every eigenvalue is certainly kept by a
    recomputation only below that), or when some cache's roundoff could pass
    DRIFT_TOLERANCE relative (each sum above gains STEP_ROUNDOFF times the sum of its
    terms' sizes, the rank-one step's unit; the spreads' estimate is kept, as in the
    rank-one step). It restarts the count to the periodic recomputation as the
    recomputation it replaces does, so that the periodic recomputations fall where they
    would (the roundoff test may fire sooner: the extension's caches are not exact).
    """
    (pinv, caches, roundoff, directions, growths, growth_basis, inside, counts, sums, outside, basis, eigenvalues,
     log_dets, intercepts, slopes, inflations, mean_widths, mean_roots, mean_thresholds, reals, counters) = span
    d = arms.shape[1]
    rank = counters[b, RANK]
    x = arms[arm]
    part = x.copy()
    for _ in range(2):  # orthogonalised twice: u ⊥ B to roundoff
        if rank > 0:
            along_basis = dot(np.ascontiguousarray(basis[b, :rank]), part)
            for r in range(rank):
                part -= along_basis[r] * basis[b, r]
    beta2 = dot(part, part)
    w = dot(pinv[b], x)
    gamma = (dot(x, w) + 1.0 / count) / beta2 if beta2 > 0 else math.inf
    trace = dot(counts[b], arm_norms2)
    trace_pinv = 0.0
    for i in range(d):
        trace_pinv += pinv[b, i, i]
    if (arms.size < extend_entries or counts[b, arm] != count or not math.isfinite(gamma)
            or (trace_pinv + gamma) * trace >= EXTEND_CONDITION):
        return False
    beta = math.sqrt(beta2)
    u = part / beta
    twice = dot(pinv[b], w)
    grown = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            grown[i, j] = (pinv[b, i, j] + gamma * (u[i] * u[j])) - (w[i] * u[j] + u[i] * w[j]) / beta
    p_u, p_w, p_ww = dot(arms, u), dot(arms, w), dot(arms, twice)
    predictions = dot(arms, dot(grown, _targets(arms, sums[b])))
    variances, spreads = caches[b, 0], caches[b, 1]
    w_squared = dot(w, w)
    along = p_u / beta
    off = gamma * p_u - p_w / beta
    new_variances = variances + p_u * (gamma * p_u - 2.0 * p_w / beta)
    new_spreads = spreads + along * (along * w_squared - 2.0 * p_ww) + off * off
    variance_terms = variances + np.abs(2.0 * p_w * along) + gamma * p_u * p_u
    spread_terms = spreads + np.abs(2.0 * along * p_ww) + along * along * w_squared + off * off
    errors = roundoff[b] + spread_terms
    drift_ratio = DRIFT_TOLERANCE / STEP_ROUNDOFF
    if np.any(variance_terms / drift_ratio > new_variances) or np.any(errors / drift_ratio > new_spreads):
        return False
    pinv[b] = grown
    basis[b, rank] = u
    counters[b, RANK] = rank + 1
    caches[b, 0] = new_variances
    caches[b, 1] = new_spreads
    caches[b, 2] = predictions
    roundoff[b] = errors
    outside[b] -= p_u * p_u
    inside[b] = outside[b] <= SPAN_TOLERANCE * np.maximum(arm_norms2, _TINY)
    inside[b, arm] = True
    counters[b, SINCE] = 0
    new_epoch_span(arms, scales, span, b)
    return True


@njit
def lower_envelope_lines(intercepts, slopes, chosen, crossings):
    """The lines I_j + S_j·t that are lowest somewhere on t ≥ 0, ordered by t: their indices
    into ``chosen`` and the t where each next one takes over into ``crossings``, increasing
    (the convex-hull sweep over the lines by decreasing slope, ties by increasing
    intercept); returns how many lines E (``chosen[:E]``, ``crossings[:E − 1]``).

    Shapes: ``intercepts``, ``slopes``, ``chosen`` (P,); ``crossings`` (P,) room.
    """
    by_intercept = np.argsort(intercepts, kind="mergesort")
    order = by_intercept[np.argsort(-slopes[by_intercept], kind="mergesort")]  # both stable: lexsort's order
    count = 0
    for j in order:
        if count > 0 and slopes[chosen[count - 1]] == slopes[j]:
            continue  # parallel to the last kept line and not below it (ties come by increasing intercept)
        while count > 0:
            last = chosen[count - 1]
            meet = (intercepts[j] - intercepts[last]) / (slopes[last] - slopes[j])
            if meet <= 0.0 or (count > 1 and meet <= crossings[count - 2]):
                count -= 1
            else:
                crossings[count - 1] = meet
                break
        chosen[count] = j
        count += 1
    return count


@njit
def epoch_lines(points, scales, log_weights, log_dets, log_inverse_delta, scale, variances, spreads, inside,
                intercepts, slopes, inflations):
    """Each arm's tangent line of an epoch (docs/ols.md, "Tangent lines"): the lines of the
    ``points`` μ_p (P,) that the arms of the span need (:func:`cbai_cli.numerics.kernels.ols.mark_points`;
    every point when none is marked) from the epoch's ``log_dets`` ℓ (M,) at
    log(1/δ) = ``log_inverse_delta`` (:func:`cbai_cli.numerics.kernels.ols.tangent_lines`), their
    lower envelope (:func:`lower_envelope_lines`), and each arm's line of it as ``scale``·I,
    ``scale``·S and 1/(2β) into ``intercepts``, ``slopes``, ``inflations`` (K,)
    (:func:`cbai_cli.numerics.kernels.ols.assign_lines`). Shapes: ``scales``, ``log_weights`` (M,);
    ``variances``, ``spreads``, ``inside`` (K,)."""
    used = np.zeros(points.shape[0], dtype=np.bool_)
    mark_points(points, variances, spreads, inside, used)
    taken = points[used] if used.any() else points.copy()
    count = taken.shape[0]
    line_intercepts, line_slopes, line_thresholds = np.empty(count), np.empty(count), np.empty(count)
    tangent_lines(scales, log_weights, log_dets, log_inverse_delta, taken, line_intercepts, line_slopes,
                  line_thresholds)
    chosen, crossings = np.empty(count, dtype=np.int64), np.empty(count)
    lines = lower_envelope_lines(line_intercepts, line_slopes, chosen, crossings)
    chosen = chosen[:lines]
    assign_lines(variances, spreads, crossings[:lines - 1], line_intercepts[chosen], line_slopes[chosen],
                 line_thresholds[chosen], scale, intercepts, slopes, inflations)


@njit
def follow_epoch(points, scales, log_weights, span, b):
    """Row b's tangent lines of the fit's current epoch (:func:`epoch_lines`, scale 2R²),
    computed when the epoch has begun since the last ones."""
    (pinv, caches, roundoff, directions, growths, growth_basis, inside, counts, sums, outside, basis, eigenvalues,
     log_dets, intercepts, slopes, inflations, mean_widths, mean_roots, mean_thresholds, reals, counters) = span
    if counters[b, LINES] == counters[b, EPOCH]:
        return
    subgaussian = reals[b, SUBGAUSSIAN]
    epoch_lines(points, scales, log_weights, log_dets[b], reals[b, LOG_INVERSE_DELTA], 2.0 * subgaussian ** 2,
                caches[b, 0], caches[b, 1], inside[b], intercepts[b], slopes[b], inflations[b])
    counters[b, LINES] = counters[b, EPOCH]
