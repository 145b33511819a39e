"""Linear functionals over a confidence ellipsoid and over its L1 outer polytope.

The confidence set of a ridge estimate v̂ with design matrix A and radius β
(Abbasi-Yadkori, Pál, Szepesvári 2011, Theorem 2; Amani et al. 2019, Theorem 1) is the
ellipsoid C = {v : ‖v − v̂‖_A ≤ β}. Over it a linear functional has the closed forms

    max_{v ∈ C} aᵀv = aᵀv̂ + β‖a‖_{A⁻¹},    min_{v ∈ C} aᵀv = aᵀv̂ − β‖a‖_{A⁻¹}.

Safe-LUCB's authors replace C by its L1 outer polytope (their public MATLAB code
``CLBwithD_0.m``; Amani et al. 2019, Appendix F)

    P = {v̂ + A^{-1/2} z : ‖z‖₁ ≤ sqrt(d)·β} ⊇ C     (‖z‖₁ ≤ sqrt(d)‖z‖₂),

whose 2d vertices are v̂ ± sqrt(d)·β·A^{-1/2}e_i and whose support function is
aᵀv̂ + sqrt(d)·β·‖A^{-1/2}a‖_∞.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from cbai_cli.numerics.linalg import weighted_norms

__all__ = [
    "ellipsoid_max",
    "ellipsoid_min",
    "l1_polytope_vertices",
    "l1_polytope_max",
    "l1_polytope_min",
    "l1_polytope_halfspaces",
]


def ellipsoid_max(a: np.ndarray, center: np.ndarray, A_inv: np.ndarray, beta: float) -> np.ndarray:
    """``max_{v : ‖v − center‖_A ≤ β} aᵀv = aᵀcenter + β‖a‖_{A⁻¹}`` for the rows of ``a``: (m, d) → (m,)."""
    a = np.asarray(a, dtype=float)
    return a @ center + beta * weighted_norms(a, A_inv)


def ellipsoid_min(a: np.ndarray, center: np.ndarray, A_inv: np.ndarray, beta: float) -> np.ndarray:
    """``min_{v : ‖v − center‖_A ≤ β} aᵀv = aᵀcenter − β‖a‖_{A⁻¹}`` for the rows of ``a``: (m, d) → (m,)."""
    a = np.asarray(a, dtype=float)
    return a @ center - beta * weighted_norms(a, A_inv)


def l1_polytope_vertices(center: np.ndarray, A_inv_sqrt: np.ndarray, beta: float) -> np.ndarray:
    """Vertices ``center ± sqrt(d)·β·A^{-1/2}e_i`` of the L1 outer polytope; ``center``: (d,).

    Returns (2d, d): rows 0..d−1 are the ``+`` vertices, rows d..2d−1 the ``−`` vertices (for
    d = 2 the order +e1, +e2, −e1, −e2 is cyclic, which the 2-D intersection variant relies on).
    """
    d = center.shape[0]
    rho = math.sqrt(d) * beta
    # A^{-1/2} is symmetric, so its columns A^{-1/2} e_i are its rows.
    return np.concatenate([center + rho * A_inv_sqrt, center - rho * A_inv_sqrt], axis=0)


def l1_polytope_max(a: np.ndarray, center: np.ndarray, A_inv_sqrt: np.ndarray, beta: float) -> np.ndarray:
    """``max_{v ∈ P} aᵀv = aᵀcenter + sqrt(d)·β·‖A^{-1/2}a‖_∞`` for the rows of ``a``: (m, d) → (m,)."""
    a = np.asarray(a, dtype=float)
    d = center.shape[0]
    return a @ center + math.sqrt(d) * beta * np.max(np.abs(a @ A_inv_sqrt), axis=-1)


def l1_polytope_min(a: np.ndarray, center: np.ndarray, A_inv_sqrt: np.ndarray, beta: float) -> np.ndarray:
    """``min_{v ∈ P} aᵀv = aᵀcenter − sqrt(d)·β·‖A^{-1/2}a‖_∞`` for the rows of ``a``: (m, d) → (m,)."""
    a = np.asarray(a, dtype=float)
    d = center.shape[0]
    return a @ center - math.sqrt(d) * beta * np.max(np.abs(a @ A_inv_sqrt), axis=-1)


@functools.lru_cache(maxsize=16)
def _sign_vectors(d: int) -> np.ndarray:
    """All 2^d vectors of {±1}^d as rows (pure memoisation)."""
    out = np.array(list(itertools.product((-1.0, 1.0), repeat=d)))
    out.setflags(write=False)
    return out


def l1_polytope_halfspaces(center: np.ndarray, A_sqrt: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Half-space form ``{v : G v ≤ h}`` of the L1 outer polytope.

    P = {center + A^{-1/2} z : ‖z‖₁ ≤ ρ}, ρ = sqrt(d)·β; with z = A^{1/2}(v − center),
    ‖z‖₁ ≤ ρ iff sᵀz ≤ ρ for every sign vector s ∈ {±1}^d. Returns G: (2^d, d) and
    h: (2^d,) (2^d facets: only sensible for small d).
    """
    d = center.shape[0]
    rho = math.sqrt(d) * beta
    G = _sign_vectors(d) @ A_sqrt  # rows sᵀA^{1/2} (A^{1/2} symmetric)
    return G, rho + G @ center
