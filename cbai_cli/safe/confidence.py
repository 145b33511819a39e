"""Regularised least squares and confidence sets (spec safe.md §1).

- :class:`RidgeState` keeps ``A = λI + Σ x xᵀ``, ``A⁻¹`` (Sherman–Morrison), ``log det A``
  (matrix determinant lemma) and one response vector ``b`` per regression target, so that
  Safe-LinGapE can fit reward and safety on the same design (§4.3 step 3).
- Radii of Abbasi-Yadkori, Pál, Szepesvári (2011, Thm 2), determinant and horizon forms (§1.2).
- Closed forms of linear functionals over the confidence ellipsoid (§1.3) and over its L1
  outer polytope (§1.4).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

__all__ = [
    "RidgeState",
    "radius_determinant",
    "radius_horizon",
    "radius_lingape_script",
    "weighted_norms",
    "inverse_sqrt",
    "sqrt_pair",
    "ellipsoid_max",
    "ellipsoid_min",
    "l1_polytope_vertices",
    "l1_polytope_max",
    "l1_polytope_min",
    "l1_polytope_halfspaces",
]


class RidgeState:
    """Regularised least squares for a stream of (action, observation) pairs (§1.1).

    ``A = λ I + Σ_s x_s x_sᵀ``, ``b[m] = Σ_s y_s[m] x_s``, ``θ̂[m] = A⁻¹ b[m]`` for each of the
    ``n_targets`` regressions (they share the design because the actions are the same).

    ``A⁻¹`` is kept by Sherman–Morrison and ``log det A`` by the determinant lemma, both
    O(d²) per update. Every ``refresh_every`` updates both are recomputed exactly from ``A``
    because the rank-one downdates accumulate round-off over 10^5 rounds.

    Shapes: ``A, A_inv: (d, d)``, ``b: (n_targets, d)``.
    """

    def __init__(self, d: int, lam: float, n_targets: int = 1, refresh_every: int = 1000):
        if d < 1:
            raise ValueError(f"d must be >= 1, got {d}")
        if not lam > 0:
            raise ValueError(f"lam must be > 0, got {lam}")
        if n_targets < 1:
            raise ValueError(f"n_targets must be >= 1, got {n_targets}")
        if refresh_every < 1:
            raise ValueError(f"refresh_every must be >= 1, got {refresh_every}")
        self.d = int(d)
        self.lam = float(lam)
        self.n_targets = int(n_targets)
        self.refresh_every = int(refresh_every)
        self.A = self.lam * np.eye(self.d)
        self.A_inv = np.eye(self.d) / self.lam
        self.b = np.zeros((self.n_targets, self.d))
        self.logdet = self.d * math.log(self.lam)
        self.n = 0  # number of observations folded into A

    def update(self, x: np.ndarray, y) -> None:
        """Add one observation. ``x: (d,)``; ``y``: scalar or ``(n_targets,)``."""
        x = np.asarray(x, dtype=float)
        Ax = self.A_inv @ x
        q = float(x @ Ax)
        # Determinant lemma with the *old* inverse: det(A + xxᵀ) = det A (1 + xᵀA⁻¹x).
        self.logdet += math.log1p(q)
        self.A_inv -= np.outer(Ax, Ax) / (1.0 + q)
        self.A += np.outer(x, x)
        self.b += np.reshape(np.asarray(y, dtype=float), (self.n_targets, 1)) * x
        self.n += 1
        if self.n % self.refresh_every == 0:
            self.refresh()

    def refresh(self) -> None:
        """Recompute ``A⁻¹`` and ``log det A`` exactly from ``A`` (round-off control)."""
        self.A = 0.5 * (self.A + self.A.T)
        self.A_inv = np.linalg.inv(self.A)
        self.A_inv = 0.5 * (self.A_inv + self.A_inv.T)
        sign, logdet = np.linalg.slogdet(self.A)
        if sign <= 0:  # cannot happen for λ > 0; guard against silent nonsense
            raise FloatingPointError("design matrix lost positive definiteness")
        self.logdet = float(logdet)

    def estimate(self, target: int = 0) -> np.ndarray:
        """Ridge estimate ``θ̂ = A⁻¹ b[target]``, shape ``(d,)``."""
        return self.A_inv @ self.b[target]

    def norms(self, X: np.ndarray) -> np.ndarray:
        """``‖x‖_{A⁻¹}`` for every row of ``X: (m, d)`` (or one ``(d,)`` vector → scalar array)."""
        return weighted_norms(X, self.A_inv)

    def inv_sqrt(self) -> np.ndarray:
        """``A^{-1/2}`` (symmetric), shape ``(d, d)``, via ``eigh`` of ``A`` (§1.1)."""
        return inverse_sqrt(self.A)

    def lambda_min(self) -> float:
        """Smallest eigenvalue of ``A`` (includes the ridge λ)."""
        return float(np.linalg.eigvalsh(self.A)[0])


def weighted_norms(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``sqrt(xᵀ M x)`` for every row ``x`` of ``X: (m, d)``; ``M: (d, d)`` PSD. Returns ``(m,)``.

    Negative round-off in ``xᵀMx`` is clipped at 0 before the square root.
    """
    X = np.asarray(X, dtype=float)
    q = np.einsum("...i,ij,...j->...", X, M, X)
    return np.sqrt(np.maximum(q, 0.0))


def sqrt_pair(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A^{1/2}, A^{-1/2})`` of a symmetric positive definite ``A: (d, d)`` (both symmetric).

    d = 2 uses the closed form ``A^{1/2} = (A + s I) / sqrt(tr A + 2 s)``, ``s = sqrt(det A)``
    (Cayley–Hamilton), several times cheaper than ``eigh`` on the per-round path of the 2-D
    box; other d use ``eigh``.
    """
    if A.shape == (2, 2):
        a, b, c = float(A[0, 0]), float(0.5 * (A[0, 1] + A[1, 0])), float(A[1, 1])
        s = math.sqrt(max(a * c - b * b, 0.0))
        t = math.sqrt(a + c + 2.0 * s)
        p, q, r = (a + s) / t, b / t, (c + s) / t
        det = p * r - q * q
        return np.array([[p, q], [q, r]]), np.array([[r, -q], [-q, p]]) / det
    w, V = np.linalg.eigh(A)
    sw = np.sqrt(w)
    return (V * sw) @ V.T, (V / sw) @ V.T


def inverse_sqrt(A: np.ndarray) -> np.ndarray:
    """Symmetric ``A^{-1/2}`` of a symmetric positive definite ``A: (d, d)``."""
    return sqrt_pair(A)[1]


def _check_radius_args(R: float, S: float, lam: float, delta: float) -> None:
    if not R >= 0:
        raise ValueError(f"R must be >= 0, got {R}")
    if not S >= 0:
        raise ValueError(f"S must be >= 0, got {S}")
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def radius_determinant(
    logdet_A: float, d: int, lam: float, R: float, S: float, delta: float, union: float = 1.0
) -> float:
    """Determinant-form radius (§1.2):
    ``β = R sqrt(2 log(union · det(A)^{1/2} λ^{-d/2} / δ)) + λ^{1/2} S``.

    ``union`` multiplies inside the log: ``union = K²`` gives LinGapE's ratio-rule width
    (§3.2, a union bound over arm pairs); ``union = 1`` is Abbasi-Yadkori's theorem as stated.
    Valid for every ``t`` simultaneously with probability ``≥ 1 − δ``.
    """
    _check_radius_args(R, S, lam, delta)
    if not union >= 1:
        raise ValueError(f"union must be >= 1, got {union}")
    log_arg = math.log(union) + 0.5 * logdet_A - 0.5 * d * math.log(lam) - math.log(delta)
    return R * math.sqrt(2.0 * max(log_arg, 0.0)) + math.sqrt(lam) * S


def radius_horizon(
    n: int, d: int, lam: float, R: float, S: float, L: float, delta: float
) -> float:
    """Horizon-form radius (§1.2): ``β_n = R sqrt(d log((1 + n L²/λ)/δ)) + λ^{1/2} S``.

    ``n`` is the number of samples in ``A``; Safe-LUCB's ``β_t`` uses ``n = t − 1`` (§2.3
    step 3), so the constant ``β_T`` of §7.2 C1 is this with ``n = T − 1``.
    Warning (§1.2): for ``d = 1`` this is *smaller* than the determinant form, so the
    theorem does not imply it; use :func:`radius_determinant` in 1-D.
    """
    _check_radius_args(R, S, lam, delta)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return R * math.sqrt(d * math.log((1.0 + n * L * L / lam) / delta)) + math.sqrt(lam) * S


def radius_lingape_script(
    n: int, d: int, lam: float, R: float, S: float, L: float, delta: float, K: int
) -> float:
    """The width of the authors' greedy LinGapE script (§3.2, [CODE:LinGapE/LinGapE.py]):
    ``R sqrt(d log(K² (1 + n L²) / (λ δ))) + λ^{1/2} S`` (equals the horizon form with K² for λ = 1).
    """
    _check_radius_args(R, S, lam, delta)
    return R * math.sqrt(d * math.log(K * K * (1.0 + n * L * L) / (lam * delta))) + math.sqrt(lam) * S


def ellipsoid_max(a: np.ndarray, center: np.ndarray, A_inv: np.ndarray, beta: float) -> np.ndarray:
    """``max_{v : ‖v − center‖_A ≤ β} aᵀv = aᵀcenter + β ‖a‖_{A⁻¹}`` (§1.3), rows of ``a: (m, d)``."""
    a = np.asarray(a, dtype=float)
    return a @ center + beta * weighted_norms(a, A_inv)


def ellipsoid_min(a: np.ndarray, center: np.ndarray, A_inv: np.ndarray, beta: float) -> np.ndarray:
    """``min_{v : ‖v − center‖_A ≤ β} aᵀv = aᵀcenter − β ‖a‖_{A⁻¹}`` (§1.3), rows of ``a: (m, d)``."""
    a = np.asarray(a, dtype=float)
    return a @ center - beta * weighted_norms(a, A_inv)


def l1_polytope_vertices(center: np.ndarray, A_inv_sqrt: np.ndarray, beta: float) -> np.ndarray:
    """Vertices ``center ± sqrt(d) β A^{-1/2} e_i`` of the L1 outer polytope (§1.4).

    Returns ``(2d, d)``: rows ``0..d−1`` are the ``+`` vertices, rows ``d..2d−1`` the ``−``
    vertices (for d = 2 the order +e1, +e2, −e1, −e2 is cyclic, which the 2-D intersection
    variant relies on).
    """
    d = center.shape[0]
    rho = math.sqrt(d) * beta
    # A^{-1/2} is symmetric, so its columns A^{-1/2} e_i are its rows.
    return np.concatenate([center + rho * A_inv_sqrt, center - rho * A_inv_sqrt], axis=0)


def l1_polytope_max(a: np.ndarray, center: np.ndarray, A_inv_sqrt: np.ndarray, beta: float) -> np.ndarray:
    """``max_{v ∈ P} aᵀv = aᵀcenter + sqrt(d) β ‖A^{-1/2} a‖_∞`` (§1.4), rows of ``a: (m, d)``."""
    a = np.asarray(a, dtype=float)
    d = center.shape[0]
    return a @ center + math.sqrt(d) * beta * np.max(np.abs(a @ A_inv_sqrt), axis=-1)


def l1_polytope_min(a: np.ndarray, center: np.ndarray, A_inv_sqrt: np.ndarray, beta: float) -> np.ndarray:
    """``min_{v ∈ P} aᵀv = aᵀcenter − sqrt(d) β ‖A^{-1/2} a‖_∞`` (§1.4), rows of ``a: (m, d)``."""
    a = np.asarray(a, dtype=float)
    d = center.shape[0]
    return a @ center - math.sqrt(d) * beta * np.max(np.abs(a @ A_inv_sqrt), axis=-1)


@functools.lru_cache(maxsize=16)
def _sign_vectors(d: int) -> np.ndarray:
    """All ``2^d`` vectors of ``{±1}^d`` as rows (pure memoisation)."""
    out = np.array(list(itertools.product((-1.0, 1.0), repeat=d)))
    out.setflags(write=False)
    return out


def l1_polytope_halfspaces(
    center: np.ndarray, A_sqrt: np.ndarray, beta: float
) -> tuple[np.ndarray, np.ndarray]:
    """Half-space form ``{v : G v ≤ h}`` of the L1 outer polytope (§1.4).

    ``P = {center + A^{-1/2} z : ‖z‖₁ ≤ ρ}``, ``ρ = sqrt(d) β``; with ``z = A^{1/2}(v − center)``,
    ``‖z‖₁ ≤ ρ`` iff ``sᵀz ≤ ρ`` for every sign vector ``s ∈ {±1}^d``. Returns
    ``G: (2^d, d)``, ``h: (2^d,)`` (2^d facets: only sensible for small d).
    """
    d = center.shape[0]
    rho = math.sqrt(d) * beta
    G = _sign_vectors(d) @ A_sqrt  # rows sᵀ A^{1/2} (A^{1/2} symmetric)
    return G, rho + G @ center
