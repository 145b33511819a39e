"""The design-matrix state shared by every algorithm that fits a linear model online.

Regularised least squares: A = λI + Σ_s c_s x_s x_sᵀ, b = Σ_s y_s x_s, φ̂ = A⁻¹b
(Lindner et al. 2022, Proposition 3; Abbasi-Yadkori, Pál, Szepesvári 2011, §2).

- :class:`RidgeDesign` takes a stream of arbitrary action vectors and fits several
  regression targets on the same design (Safe-LinGapE fits reward and safety from the
  same partial pulls, "Price of Safety" §4). A⁻¹ is kept by Sherman–Morrison and log det A
  by the matrix determinant lemma, both O(d²) per observation; every ``refresh_every``
  updates both are recomputed exactly from A, so that round-off cannot drift.
- :class:`DesignState` adds, for a fixed arm matrix, ‖x‖²_{A⁻¹} and xᵀφ̂ of every arm, kept
  by the same rank-one update at O(K·d) per observation (the adaptive CBAI algorithms,
  Lindner et al. 2022, Algorithm 2).

Plain functions: quadratic forms xᵀMx and norms ‖x‖_M of many rows, the symmetric square
root of an SPD matrix, the greedy variance-reduction gain, and the per-round least
squares of round-based algorithms.
"""

from __future__ import annotations

import math

import numpy as np

from cbai_cli.numerics.kernels.codes import block_rows, streams
from cbai_cli.numerics.kernels.state import LOGDET, PULLS, UPDATES, RunState, Slot
from cbai_cli.numerics.row_view import RowView
from cbai_cli.contracts.errors import NumericalError


def largest_norm(arms: np.ndarray) -> float:
    """L = max ‖x‖ over the rows of ``arms``: (K, d); 1 when every arm is zero (nothing is then
    decidable, and L only sets units). No floor otherwise: L sets the units of the ``ols``
    prior and the radius pre-check, so arms of any scale keep their own."""
    entry = float(np.abs(arms).max(initial=0.0))
    if entry == 0.0:
        return 1.0
    # scaled by the largest entry first: the squares of arms below 1e-154 underflow to 0
    return entry * float(np.linalg.norm(arms / entry, axis=1).max())


def quadratic_forms(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``xᵀMx`` for every row x of ``rows``.

    Args:
        rows: (m, d), or one (d,) vector.
        matrix: (d, d) symmetric M.

    Returns:
        (m,), or a 0-d array for one vector.
    """
    rows = np.asarray(rows, dtype=float)
    return np.einsum("...i,ij,...j->...", rows, matrix, rows)


def weighted_norms(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``‖x‖_M = sqrt(xᵀMx)`` for every row x of ``rows`` (m, d) or one (d,) vector; M: (d, d) PSD.

    Negative round-off in xᵀMx is clipped at 0 before the square root.
    """
    return np.sqrt(np.maximum(quadratic_forms(rows, matrix), 0.0))


def sqrt_pair(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A^{1/2}, A^{-1/2})`` of a symmetric positive definite A: (d, d), both symmetric.

    d = 2 uses the closed form A^{1/2} = (A + sI)/sqrt(tr A + 2s), s = sqrt(det A)
    (Cayley–Hamilton), several times cheaper than ``eigh`` on Safe-LUCB's per-round path
    in the plane; other d use ``eigh``.
    """
    if matrix.shape == (2, 2):
        a, b, c = float(matrix[0, 0]), float(0.5 * (matrix[0, 1] + matrix[1, 0])), float(matrix[1, 1])
        s = math.sqrt(max(a * c - b * b, 0.0))
        t = math.sqrt(a + c + 2.0 * s)
        p, q, r = (a + s) / t, b / t, (c + s) / t
        det = p * r - q * q
        return np.array([[p, q], [q, r]]), np.array([[r, -q], [-q, p]]) / det
    eigenvalues, eigenvectors = np.linalg.eigh(matrix)
    roots = np.sqrt(eigenvalues)
    return (eigenvectors * roots) @ eigenvectors.T, (eigenvectors / roots) @ eigenvectors.T


def inverse_sqrt(matrix: np.ndarray) -> np.ndarray:
    """Symmetric ``A^{-1/2}`` of a symmetric positive definite A: (d, d)."""
    return sqrt_pair(matrix)[1]


def variance_reduction(candidates: np.ndarray, inverse: np.ndarray, direction: np.ndarray,
                       norms2: np.ndarray | None = None) -> np.ndarray:
    """Reduction of ‖y‖²_{A⁻¹} from one more observation of each candidate a.

    By Sherman–Morrison, ‖y‖²_{A⁻¹} − ‖y‖²_{(A + aaᵀ)⁻¹} = (yᵀA⁻¹a)² / (1 + ‖a‖²_{A⁻¹}): the
    greedy rule of G-ACOL (Lindner et al. 2022, Algorithm 2) and of LinGapE (Xu, Honda,
    Sugiyama 2018, greedy arm selection).

    Args:
        candidates: (K, d) the vectors a.
        inverse: (d, d) A⁻¹.
        direction: (d,) y.
        norms2: (K,) ‖a‖²_{A⁻¹} when already known; computed otherwise.

    Returns:
        (K,) the reductions.
    """
    projected = candidates @ (inverse @ direction)
    if norms2 is None:
        norms2 = quadratic_forms(candidates, inverse)
    return projected**2 / (1.0 + norms2)


#: Largest L²/λ (L the largest norm of a vector the design takes in) for which a design
#: A = λI + Σ xxᵀ is kept by the rank-one updates below: they lose about L²/λ ulps in the
#: directions the pulls have not yet reached (where A⁻¹ is 1/λ), so at 10¹² they keep six
#: digits; beyond about 10¹⁵ the sampling rules read noise (a 1-D instance in units 10⁸
#: times larger took up to twice the queries), and further on the Sherman–Morrison
#: downdate cancels to widths that are 0, negative or NaN (LinGapE stopped after one pull
#: of each arm, on the wrong arm, at λ = 1e-16). The instance readers refuse larger ratios.
RIDGE_RATIO_LIMIT = 1e12


class RidgeDesign:
    """Regularised least squares for a stream of (vector, observations) pairs.

    A = λI + Σ_s c_s x_s x_sᵀ and, for each of ``n_targets`` regressions on the same design,
    b[m] = Σ_s y_s[m] x_s, where an observation of weight c_s (``count`` pulls of one vector)
    brings the sum y_s of its c_s values.

    Args:
        dim: d ≥ 1.
        ridge: λ > 0.
        n_targets: regressions fitted on the same design.
        refresh_every: updates between exact recomputations of A⁻¹ and log det A.

    Attributes:
        gram: (d, d) A.
        inverse: (d, d) A⁻¹.
        targets: (n_targets, d) b.
        logdet: log det A.
        n_samples: Σ_s c_s, the observations in A.
    """

    def __init__(self, dim: int, ridge: float, n_targets: int = 1, refresh_every: int = 1000) -> None:
        if dim < 1:
            raise ValueError(f"d must be >= 1, got {dim}")
        if not ridge > 0:
            raise ValueError(f"ridge must be > 0, got {ridge}")
        if n_targets < 1:
            raise ValueError(f"n_targets must be >= 1, got {n_targets}")
        if refresh_every < 1:
            raise ValueError(f"refresh_every must be >= 1, got {refresh_every}")
        self.dim = int(dim)
        self.ridge = float(ridge)
        self.n_targets = int(n_targets)
        self.refresh_every = int(refresh_every)
        self._start()
        self.logdet = self.dim * math.log(self.ridge)
        self.n_samples = 0
        self._since_refresh = 0

    def _start(self) -> None:
        """A = λI, A⁻¹ = I/λ and b = 0."""
        self.gram = self.ridge * np.eye(self.dim)
        self.inverse = np.eye(self.dim) / self.ridge
        self.targets = np.zeros((self.n_targets, self.dim))
        self._first_target = self.targets[0]  # a view: the single target's fast path

    def add(self, x: np.ndarray, y: float | np.ndarray, count: int = 1) -> None:
        """Add ``count`` observations of the vector ``x``: (d,) whose values sum to ``y``
        (a scalar, or (n_targets,) for several targets)."""
        self._absorb(np.asarray(x, dtype=float), y, count)
        self._tick()

    def _absorb(self, x: np.ndarray, y: float | np.ndarray, count: int) -> tuple[np.ndarray, float]:
        """The rank-``count`` update A += c·xxᵀ; returns u = A⁻¹x and q = xᵀA⁻¹x (old A).

        Sherman–Morrison: A⁻¹ −= c·uuᵀ/(1 + c q); determinant lemma with the old inverse:
        log det(A + c xxᵀ) = log det A + log(1 + c q).

        q ≥ 0 in exact arithmetic; if round-off has left 1 + c q ≤ 0 (or NaN), A⁻¹ and log det A
        are first recomputed from A, which the updates keep by plain additions (the readers'
        :data:`RIDGE_RATIO_LIMIT` keeps this from happening on any instance they accept); an
        A that is itself no longer positive definite is :func:`not_positive_definite`'s error.
        """
        u = self.inverse @ x
        q = float(x @ u)
        if not 1.0 + count * q > 0:
            self.refresh()
            u = self.inverse @ x
            q = float(x @ u)
            if not 1.0 + count * q > 0:
                raise not_positive_definite(self.gram)
        self.logdet += math.log1p(count * q)
        self._downdate(u, q, count)
        self.gram += count * (x[:, None] * x)
        if self.n_targets == 1:
            self._first_target += float(y) * x
        else:
            self.targets += np.reshape(np.asarray(y, dtype=float), (self.n_targets, 1)) * x
        self.n_samples += count
        return u, q

    def _downdate(self, u: np.ndarray, q: float, count: int) -> None:
        """A⁻¹ −= c·uuᵀ/(1 + c q), dividing the outer product (the safe algorithms' order)."""
        self.inverse -= np.outer(u, u) / ((1.0 + count * q) / count)

    def _tick(self) -> None:
        self._since_refresh += 1
        if self._since_refresh >= self.refresh_every:
            self.refresh()

    def refresh(self) -> None:
        """Recompute A⁻¹ and log det A exactly from A (round-off control)."""
        self.inverse, self.logdet = inverse_and_logdet(self.gram)
        self._since_refresh = 0

    def estimate(self, target: int = 0) -> np.ndarray:
        """(d,) the ridge estimate A⁻¹b[target]."""
        return self.inverse @ self.targets[target]

    def norms(self, rows: np.ndarray) -> np.ndarray:
        """``‖x‖_{A⁻¹}`` for every row of ``rows`` (m, d), or of one (d,) vector."""
        return weighted_norms(rows, self.inverse)

    def gain(self, direction: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """(K,) :func:`variance_reduction` of ‖y‖²_{A⁻¹}, y = ``direction``, for each row of
        ``candidates`` (K, d)."""
        return variance_reduction(candidates, self.inverse, direction)

    def sqrt_pair(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A^{1/2}, A^{-1/2})``, both (d, d) and symmetric."""
        return sqrt_pair(self.gram)

    def lambda_min(self) -> float:
        """Smallest eigenvalue of A (the ridge λ included)."""
        return float(np.linalg.eigvalsh(self.gram)[0])


class DesignState(RidgeDesign, RowView):
    """:class:`RidgeDesign` over a fixed arm matrix, with per-arm caches.

    Keeps ‖x‖²_{A⁻¹} and xᵀφ̂ of every arm: one update costs one matrix–vector product with
    the arm matrix, O(K·d + d²), computed by the compiled step
    (:func:`cbai_cli.numerics.kernels.design.absorb`, the one copy of these formulas; the exact
    refresh stays in numpy, :func:`exact_design`).

    A greedy rule (G-ACOL) next needs aᵀA⁻¹y for the arm y of largest ‖y‖_{A⁻¹} among some
    candidates, a second product with the arm matrix. Given those candidates (``ahead``),
    :meth:`update` predicts y before its product, from the few arms that can still hold
    the maximum, and computes both products in one streaming pass over blocks of arms
    that stay in cache (:meth:`arm_gain` then uses the second one if the prediction holds).
    Each product row is the same dot product as in a separate pass, so results do not
    depend on whether a prediction was made.

    Args:
        arms: (K, d) arm features.
        ridge: λ > 0 of A = λI + Σ x xᵀ.
        refresh_every: updates between exact recomputations (None: max(200, 20·d)).
        run: (state, row) of a fresh :class:`~cbai_cli.numerics.kernels.state.RunState`
            (:meth:`~cbai_cli.numerics.kernels.state.RunState.empty`) to view (None: a state of
            its own).

    The design's arrays and numbers are a view on one row of a
    :class:`~cbai_cli.numerics.kernels.state.RunState` (the learner's elimination state views
    the same row), updated in place.

    Attributes:
        run: (state, row) of the view.
        arms: (K, d).
        norms2: (K,) ‖x‖²_{A⁻¹}.
        predictions: (K,) xᵀφ̂.
        companion: (K,) aᵀA⁻¹y of every arm a for y = arms[contender] when ``contender`` ≥ 0.
        contender_arm: the arm of largest greedy gain towards that y, taken from it.
        block: rows per block of a pass over the arms.
    """

    #: The prediction (:func:`cbai_cli.numerics.kernels.design.predict_contender`) recomputes the
    #: new variance of at most this many arms, and gives up (two passes) beyond.
    MAX_CONTENDERS = 256

    #: log det A, the pulls and the updates since the last exact refresh: slots of the state's row
    logdet = Slot("_reals", LOGDET, float)
    n_samples = Slot("_counters", PULLS, int)
    _since_refresh = Slot("_counters", UPDATES, int)

    def __init__(self, arms: np.ndarray, ridge: float, refresh_every: int | None = None,
                 run: tuple[RunState, int] | None = None) -> None:
        arms = np.ascontiguousarray(arms, dtype=float)
        k, d = arms.shape
        self.run = run if run is not None else (RunState.empty(k, d), 0)
        super().__init__(d, ridge, 1, refresh_every or max(200, 20 * d))
        self.norms2[...] = np.einsum("kd,kd->k", arms, arms) / self.ridge
        self.arms = arms
        self._streaming = streams(k, d)
        self.contender = self.contender_arm = -1
        # the prediction's arms of largest variance and its bound, kept from update to update
        self._watch, self._watch_bound = np.full(self.MAX_CONTENDERS, -1, dtype=np.int64), np.full(1, -np.inf)
        self.companion = np.zeros(k)
        self.block = block_rows(d)

    #: The attributes that are views on the state's row (:meth:`_bind`).
    _VIEWS = ("gram", "inverse", "targets", "_first_target", "_estimate", "norms2", "predictions", "_reals",
              "_counters")

    def _start(self) -> None:
        """A = λI and A⁻¹ = I/λ written into the (fresh) row ``run``, whose views the design's
        arrays are from here on."""
        self._bind()
        self.gram.flat[::self.dim + 1] = self.ridge
        self.inverse.flat[::self.dim + 1] = 1.0 / self.ridge

    def _bind(self) -> None:
        """The arrays as views on the row ``run`` of its state (updated in place from here on)."""
        state, row = self.run
        self.gram, self.inverse = state.gram[row], state.inverse[row]
        self.targets, self._first_target = state.targets[row:row + 1], state.targets[row]
        self._estimate, self.norms2, self.predictions = state.estimate[row], state.norms2[row], state.predictions[row]
        self._reals, self._counters = state.reals[row], state.counters[row]

    def update(self, arm: int, total: float, count: int = 1, ahead: np.ndarray | None = None) -> None:
        """Add ``count`` pulls of arm ``arm`` whose observations sum to ``total``.

        ``ahead``: (K,) bool, the candidates among which the next :meth:`arm_gain` will take
        the arm of largest variance (None: no gain follows).
        """
        self._add_with_caches(self.arms[arm], total, count, ahead)

    def add(self, x: np.ndarray, y: float | np.ndarray, count: int = 1) -> None:
        """Add ``count`` observations of ``x``: (d,) summing to ``y``, and update the caches."""
        self._add_with_caches(np.ascontiguousarray(x, dtype=float), y, count)

    def predict_contender(self, x: np.ndarray, count: int, ahead: np.ndarray | None) -> int:
        """The next greedy direction among ``ahead`` after ``count`` pulls of ``x``: (d,),
        predicted before they are added (:func:`cbai_cli.numerics.kernels.design.predict_contender`;
        −1: none asked, or the design does not stream its product)."""
        from cbai_cli.numerics.kernels.design import predict_contender

        if ahead is None or not self._streaming:
            return -1
        return int(predict_contender(self.arms, self.inverse, self.norms2, ahead, False, x, count, self._watch,
                                     self._watch_bound))

    def _add_with_caches(self, x: np.ndarray, y: float | np.ndarray, count: int,
                         ahead: np.ndarray | None = None) -> None:
        """:func:`cbai_cli.numerics.kernels.design.absorb`, after predicting the next direction."""
        from cbai_cli.numerics.kernels.design import absorb
        from cbai_cli.numerics.kernels.threads import threads_from

        contender = self.predict_contender(x, count, ahead)
        reals, counters = self._reals, self._counters
        reals[LOGDET], self.contender_arm = absorb(self.arms, self.inverse, self.gram, self._first_target,
                                                   self._estimate, self.norms2, self.predictions, reals[LOGDET], x,
                                                   float(y), count, contender, self.companion, self.block,
                                                   threads_from(self.arms))
        self.contender = contender
        counters[PULLS] += count
        counters[UPDATES] += 1
        if counters[UPDATES] >= self.refresh_every:
            self.refresh()

    def refresh(self) -> None:
        """Recompute A⁻¹, log det A, φ̂, ‖x‖²_{A⁻¹} and xᵀφ̂ from A and b directly, in place."""
        (self.inverse[...], self._reals[LOGDET], self._estimate[...], self.norms2[...],
         self.predictions[...]) = exact_design(self.arms, self.gram, self._first_target)
        self._counters[UPDATES] = 0
        self.contender = -1

    def estimate(self, target: int = 0) -> np.ndarray:
        """(d,) φ̂, kept by the rank-one updates (one target only)."""
        return self._estimate.copy()

    def bounds(self, radius: float) -> tuple[np.ndarray, np.ndarray]:
        """(K,), (K,): the intervals xᵀφ̂ ∓ r·‖x‖_{A⁻¹} of radius r = ``radius``
        (:func:`cbai_cli.numerics.kernels.elimination.interval_bounds`)."""
        from cbai_cli.numerics.kernels.elimination import interval_bounds

        lower, upper = np.empty_like(self.predictions), np.empty_like(self.predictions)
        interval_bounds(radius, self.norms2, self.predictions, lower, upper)
        return lower, upper

    def max_variance_arm(self, candidates: np.ndarray) -> int:
        """argmax_{x ∈ candidates} ‖x‖_{A⁻¹} (first index among ties); candidates: (K,) bool,
        not all False."""
        from cbai_cli.numerics.kernels.select import max_variance_arm

        return int(max_variance_arm(self.norms2, candidates, False))

    def gain(self, direction: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """:func:`variance_reduction` for the arms (default, from the cache) or ``candidates``."""
        if candidates is None:
            return variance_reduction(self.arms, self.inverse, direction, self.norms2)
        return super().gain(direction, candidates)

    def greedy_arm(self, direction_arm: int) -> int:
        """The arm that most reduces ‖y‖²_{A⁻¹}, y = ``arms[direction_arm]`` (first among ties;
        :func:`cbai_cli.numerics.kernels.design.greedy_arm`), the one the last :meth:`update` took in its
        own pass when it predicted this arm."""
        from cbai_cli.numerics.kernels.design import greedy_arm
        from cbai_cli.numerics.kernels.threads import threads_from

        return int(greedy_arm(self.arms, self.inverse, self.norms2, direction_arm, self.contender,
                              self.contender_arm, self.block, threads_from(self.arms)))


def not_positive_definite(gram: np.ndarray) -> NumericalError:
    """The one-line error for a design matrix A = λI + Σ xxᵀ (d, d) that round-off has left
    not positive definite: the arms are so large that λ is lost beside them."""
    return NumericalError(f"the design matrix is not numerically positive definite (its diagonal reaches "
                          f"{float(np.max(np.diag(gram))):.3g}): the arms are too large for the ridge λ; rescale "
                          "the arms (and the constraint by the inverse factor) or raise --lambda")


def inverse_and_logdet(gram: np.ndarray) -> tuple[np.ndarray, float]:
    """(A⁻¹ (d, d) symmetrised, log det A) of a design matrix A (d, d), or
    :func:`not_positive_definite`'s error when round-off has left A singular or indefinite."""
    sign, logdet = np.linalg.slogdet(gram)
    if sign <= 0:  # cannot happen in exact arithmetic for λ > 0
        raise not_positive_definite(gram)
    inverse = np.linalg.inv(gram)
    return 0.5 * (inverse + inverse.T), float(logdet)


def exact_design(arms: np.ndarray, gram: np.ndarray, target: np.ndarray):
    """A⁻¹, log det A, φ̂ = A⁻¹b, ‖x‖²_{A⁻¹} and xᵀφ̂ of every arm, computed from A and b
    directly (the periodic refresh that stops round-off from drifting).

    Args:
        arms: (K, d); gram: (d, d) A; target: (d,) b.

    Returns:
        inverse (d, d) symmetrised, logdet, estimate (d,), norms2 (K,), predictions (K,).
    """
    inverse, logdet = inverse_and_logdet(gram)
    estimate = inverse @ target
    # ‖a‖²_{A⁻¹} = ‖L⁻¹a‖² for A = LLᵀ: one BLAS product with the arm matrix, where a
    # quadratic form with A⁻¹ row by row would cost O(K·d²) outside BLAS.
    try:
        lower = np.linalg.cholesky(gram)
    except np.linalg.LinAlgError:
        raise not_positive_definite(gram) from None
    lower_inverse = np.linalg.solve(lower, np.eye(gram.shape[0]))
    whitened = arms @ lower_inverse.T
    return inverse, logdet, estimate, np.einsum("kd,kd->k", whitened, whitened), arms @ estimate


def least_squares_widths(arms: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                         tolerance: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Ordinary least squares on one round's data (Lindner et al. 2022, Proposition 2).

    Args:
        arms: (K, d) arm features.
        counts: (K,) pulls of each arm in the round.
        sums: (K,) sum of the observations of each arm.

    Returns:
        predictions (K,) xᵀφ̂ and norms (K,) ‖x‖_{A⁺}, where A = Σ nᵢxᵢxᵢᵀ. φ is only
        identified on span{xᵢ : nᵢ > 0}; arms with a component outside it get an
        infinite norm, so they are never decided by this round.

    Both cuts are relative, so that the result does not depend on the arms' units: an
    eigenvalue of A counts as zero below ``tolerance`` times the largest, and an arm lies
    outside the span when the squared norm of its part outside exceeds 10⁻⁹ of its own.
    (Cuts floored at 1 in absolute terms took every direction of arms of norm below about
    3·10⁻⁵ as identified, and an arm never pulled as known exactly.)
    """
    pulled = counts > 0
    basis = arms[pulled]
    weights = counts[pulled].astype(float)
    gram = (basis * weights[:, None]).T @ basis
    eigenvalues, eigenvectors = np.linalg.eigh(gram)
    keep = eigenvalues > tolerance * float(eigenvalues.max(initial=0.0))
    vectors = eigenvectors[:, keep]
    coordinates = arms @ vectors  # arms in the identified subspace
    estimate = vectors @ ((vectors.T @ (basis.T @ sums[pulled])) / eigenvalues[keep])
    norms2 = np.sum(coordinates**2 / eigenvalues[keep], axis=1)
    squared = np.sum(arms**2, axis=1)
    outside = squared - np.sum(coordinates**2, axis=1)
    norms = np.sqrt(norms2)
    norms[outside > 1e-9 * squared] = np.inf
    return arms @ estimate, norms
