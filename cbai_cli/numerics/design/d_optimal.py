"""The D-optimal design of an arm set and the arms in its coordinates (docs/ols.md, "The
prior's shape").

The D-optimal design w maximises log det Σ_a w_a x_a x_aᵀ over the simplex; by the
Kiefer–Wolfowitz theorem it is also G-optimal, every arm's leverage x_aᵀG⁻¹x_a is at most r
(the rank of the arms) under its information matrix G = Σ_a w_a x_a x_aᵀ, and G is unique
(log det is strictly concave in G). In the coordinates x̃ = G^{-1/2}x one pull of the design
has information I on the span: the ``ols`` regime's isotropic prior and ridge then weigh
every direction as the arms do, whatever units the features are in.
"""

from __future__ import annotations

import numpy as np

#: The solver stops once every leverage is at most r·(1 + LEVERAGE_SLACK): the design's
#: log det is then within r·log(1 + LEVERAGE_SLACK) of the optimum (Kiefer–Wolfowitz duality).
LEVERAGE_SLACK = 0.01
#: Steps between exact recomputations of G⁻¹ and the leverages (the rank-one updates drift).
RECOMPUTE_EVERY = 64
#: Relative size below which a singular value of the (column-scaled) arms is outside their span.
SPAN_TOLERANCE = 1e-10


def span_coordinates(arms: np.ndarray) -> np.ndarray:
    """(K, r) the arms (K, d) in an orthonormal basis of their span, after each feature is
    divided by its root mean square (so that a feature in other units gives the same
    coordinates up to roundoff, and a tiny feature is not mistaken for one outside the
    span); r counts the singular values above :data:`SPAN_TOLERANCE` times the largest.
    Any invertible linear map of the features leaves x_aᵀG⁺x_b, and so everything computed
    from these coordinates below, as it is."""
    arms = np.asarray(arms, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        scale = np.sqrt(np.mean(arms * arms, axis=0))
    largest = np.abs(arms).max(axis=0, initial=0.0)
    extreme = (largest > 0.0) & ~((scale > 1e-150) & (scale < 1e150))
    if extreme.any():  # squares that overflow or underflow: the largest entry factored out first
        unit = arms[:, extreme] / largest[extreme]
        scale[extreme] = largest[extreme] * np.sqrt(np.mean(unit * unit, axis=0))
    scaled = arms / np.where(scale > 0.0, scale, 1.0)
    if not scaled.any():
        return np.zeros((arms.shape[0], 0))
    left, values, _ = np.linalg.svd(scaled, full_matrices=False)
    keep = values > SPAN_TOLERANCE * values[0]
    return left[:, keep] * values[keep]


def d_optimal_weights(arms: np.ndarray) -> np.ndarray:
    """(K,) a D-optimal design of the arms (K, d), within :data:`LEVERAGE_SLACK` (:func:`_solve`
    on :func:`span_coordinates`). Deterministic: the same arms give the same weights. Arms of
    all zeros get weight 0; with no nonzero arm the design is uniform."""
    return _solve(span_coordinates(arms))


def _solve(z: np.ndarray, max_steps: int = 100_000) -> np.ndarray:
    """(K,) a D-optimal design of the arms z (K, r) of rank r, within :data:`LEVERAGE_SLACK`.

    Frank–Wolfe on log det with away steps (Wolfe's; Todd 2016, *Minimum-Volume Ellipsoids*,
    §3): from :func:`_start`, each step moves weight towards the arm of largest leverage l_j
    or away from the supported arm of smallest leverage l_i, whichever is further from r,
    by the exact line search α = (l/r − 1)/(l − 1), capped so that no weight turns negative;
    G⁻¹ and every leverage follow by Sherman–Morrison in O(K·r) a step, recomputed exactly
    every :data:`RECOMPUTE_EVERY` steps.
    """
    k, r = z.shape
    if r == 0:
        return np.full(k, 1.0 / k)
    if r == 1:  # the design is the longest arm (the step below would move all weight at once)
        weights = np.zeros(k)
        weights[int(np.argmax(np.abs(z[:, 0])))] = 1.0
        return weights
    weights = _start(z)
    inverse, leverages = _exact(z, weights)
    for step in range(max_steps):
        toward = int(np.argmax(leverages))
        supported = np.flatnonzero(weights > 0.0)
        away = int(supported[np.argmin(leverages[supported])])
        if leverages[toward] <= r * (1.0 + LEVERAGE_SLACK):
            break
        if leverages[toward] - r >= r - leverages[away]:
            arm, alpha = toward, (leverages[toward] / r - 1.0) / (leverages[toward] - 1.0)
        else:
            # a negative step along arm i: weight leaves it, at most all of it (all of it when
            # l_i ≤ 1, where log det grows all the way to the cap)
            arm, cap = away, -weights[away] / (1.0 - weights[away])
            alpha = cap if leverages[away] <= 1.0 else max((leverages[away] / r - 1.0) / (leverages[away] - 1.0), cap)
        g = inverse @ z[arm]
        u = z @ g
        scale = (1.0 - alpha) + alpha * leverages[arm]
        inverse = (inverse - (alpha / scale) * np.outer(g, g)) / (1.0 - alpha)
        leverages = (leverages - (alpha / scale) * u * u) / (1.0 - alpha)
        weights *= 1.0 - alpha
        weights[arm] += alpha
        weights[weights < 1e-15] = 0.0  # an away step that empties an arm leaves roundoff
        if (step + 1) % RECOMPUTE_EVERY == 0:
            weights /= weights.sum()
            inverse, leverages = _exact(z, weights)
    return weights / weights.sum()


def _start(z: np.ndarray) -> np.ndarray:
    """(K,) the first design: uniform on the arms of largest and smallest coordinate along
    each axis of the span coordinates z (K, r) (Kumar and Yıldırım 2005 take such extreme
    points along orthogonal directions), when they span; else uniform on every arm."""
    k, r = z.shape
    extremes = np.unique(np.concatenate([np.argmax(z, axis=0), np.argmin(z, axis=0)]))
    weights = np.zeros(k)
    if np.linalg.matrix_rank(z[extremes]) == r:
        weights[extremes] = 1.0 / extremes.size
    else:
        weights[:] = 1.0 / k
    return weights


def _exact(z: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(G⁻¹ (r, r), the leverages (K,)) of the design ``weights`` over the span coordinates z (K, r)."""
    inverse = np.linalg.inv(z.T @ (weights[:, None] * z))
    return inverse, np.einsum("kr,rs,ks->k", z, inverse, z)


def d_optimal_arms(arms: np.ndarray) -> np.ndarray:
    """(K, d) the arms in the coordinates of their D-optimal design: x̃ = G^{-1/2}x on the span
    of the arms (G = Σ_a w_a x_a x_aᵀ of :func:`d_optimal_weights`), written in the span's
    orthonormal basis and padded with zeros to d columns (a rotation: inner products and
    norms are those of the span coordinates). x̃_aᵀx̃_b = x_aᵀG⁺x_b, so an invertible linear
    map of the features leaves every inner product, and every rotation-invariant computation
    on the arms, as it is. Arms of all zeros stay zero."""
    k, d = np.shape(arms)
    z = span_coordinates(arms)
    if z.shape[1] == 0:
        return np.zeros((k, d))
    weights = _solve(z)
    values, vectors = np.linalg.eigh(z.T @ (weights[:, None] * z))
    whitened = z @ (vectors / np.sqrt(values))
    return np.hstack([whitened, np.zeros((k, d - whitened.shape[1]))])
