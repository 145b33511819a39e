"""The action sets D_0 of the safe regret problem (Amani, Alizadeh, Thrampoulidis 2019, §2).

Safe-LUCB plays x_t ∈ D_0 ⊂ R^d subject to the stage-wise constraint xᵀBμ* ≤ c, c > 0
(Amani et al. 2019, eq. (1)). Three kinds of D_0, each a frozen dataclass with the same
methods, so that no caller dispatches on the kind:

- :class:`BoxSet` [−w, w]^d, the authors' setting (their code, Appendix F instances);
- :class:`BallSet` {‖x‖ ≤ r};
- :class:`FiniteSet`, a finite arm list (K, d).

What each knows about itself: membership, the constrained optimum
argmin {μᵀx : x ∈ D_0, xᵀBμ ≤ c}, the per-set part of Safe-LUCB's optimistic step
(Algorithm 1 step 10 over the L1 confidence polytope of the authors' code), the geometry
the pure-exploration phase asks about (Amani et al. 2019, §2.2), its label and its file
form. :data:`ACTION_SET_KINDS` maps a file's ``kind`` to the class.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from cbai_cli.numerics.linalg import weighted_norms

from cbai_cli.kinds.safe.polytopes import (
    ball_argmin,
    bilinear_argmin,
    box_halfspaces,
    box_knapsack_argmin,
    box_polygon_vertices,
    enumerate_vertices,
    lp_argmin,
)
from cbai_cli.contracts.validation import array, integer, positive, replace_field

__all__ = ["ActionSet", "BoxSet", "BallSet", "FiniteSet", "ACTION_SET_KINDS", "VERTEX_METHODS"]

#: The box's ways to solve the optimistic step (see :meth:`BoxSet.optimistic_action`).
VERTEX_METHODS = ("auto", "clip", "enumerate", "qhull", "lp")


class ActionSet(ABC):
    """A set of actions D_0 ⊂ R^d.

    Class attributes: ``kind`` (the file's name of the kind), ``parameter`` (the one field
    of its file form besides ``kind``), ``parameter_is_array`` (that field is a matrix rather
    than a positive number) and ``example`` (its file form, for messages).
    """

    kind: ClassVar[str]
    parameter: ClassVar[str]
    parameter_is_array: ClassVar[bool] = False
    example: ClassVar[str]
    d: int  # the dimension: a field of the box and the ball, the arms' width for a finite set

    @property
    @abstractmethod
    def max_norm(self) -> float:
        """max_{x ∈ D_0} ‖x‖₂ (the smallest admissible L of Amani et al. 2019, Assumption 2)."""

    @abstractmethod
    def contains(self, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        """Membership of the rows of ``X``: (m, d) → bool (m,), or of one (d,) point → bool."""

    @abstractmethod
    def optimal_action(self, mu: np.ndarray, B: np.ndarray, c: float) -> np.ndarray | None:
        """x* = argmin {μᵀx : x ∈ D_0, xᵀBμ ≤ c} (Amani et al. 2019, §2), shape (d,).

        None when no action satisfies the constraint (only a finite set can be so: the
        origin of a box or a ball is always feasible since c > 0).
        """

    @abstractmethod
    def optimistic_action(self, vertices: np.ndarray, rows: np.ndarray, c: float,
                          vertex_method: str = "auto") -> np.ndarray | None:
        """The per-set part of Safe-LUCB's optimistic step over a confidence polytope.

        argmin over x ∈ D_0 with ``rows @ x ≤ c`` of min_i vertices[i]ᵀx (Amani et al.
        2019, Algorithm 1 step 10, with the confidence set replaced by the polytope with
        vertices ``vertices``: (m, d); ``rows``: (m, d) = vertices @ Bᵀ makes the estimated
        safe set). None when no action is estimated safe (a finite set only).
        ``vertex_method`` chooses the box's computation; the other sets ignore it.
        """

    def ellipsoid_optimistic_action(self, mu_hat: np.ndarray, beta: float, inverse: np.ndarray,
                                    B: np.ndarray, c: float) -> np.ndarray | None:
        """The optimistic step with the confidence ellipsoid itself (Amani et al. 2019,
        Algorithm 1 step 10); only for sets with ``supports_ellipsoid_confidence``."""
        raise NotImplementedError(f"the ellipsoid confidence set is not implemented for a {self.kind} action set")

    @property
    def supports_ellipsoid_confidence(self) -> bool:
        """Whether Safe-LUCB can use the confidence ellipsoid itself (exact for a finite set)."""
        return False

    @property
    def supports_intersection(self) -> bool:
        """Whether Safe-LUCB can intersect all past confidence polytopes (the authors'
        ``intersectCLB.m``: a 2-D box)."""
        return False

    @property
    def supports_polygon_clipping(self) -> bool:
        """Whether the optimistic step can clip D_0 as a polygon (a 2-D box)."""
        return False

    @property
    def finite_arms(self) -> np.ndarray | None:
        """(K, d) the actions of a finite set; None for a continuous set."""
        return None

    @abstractmethod
    def centred_ball_cut(self, radius: float) -> float | None:
        """The radius of D_0 ∩ {‖x‖ ≤ radius} when that is again a centred ball, else None."""

    @abstractmethod
    def contains_ellipsoid(self, radius: float, transform: np.ndarray) -> bool:
        """Whether {radius · transform @ u : ‖u‖ ≤ 1} ⊆ D_0; ``transform``: (d, d)."""

    @abstractmethod
    def label(self) -> str:
        """A few words for tables: ``box [−1, 1]^2``, ``ball of radius 1 in R^3``, ``5 arms in R^2``."""

    def to_mapping(self) -> dict[str, Any]:
        """The file form ``{kind: …, <parameter>: …}`` as plain Python values."""
        value = getattr(self, self.parameter)
        return {"kind": self.kind, self.parameter: value.tolist() if isinstance(value, np.ndarray) else float(value)}

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], d: int) -> ActionSet:
        """The action set of a file form ``{kind: …, <parameter>: …}`` in dimension ``d``
        (``d`` is implied by the arms of a finite set). ``ValueError`` for an unknown kind."""
        kind = mapping["kind"]
        if kind not in ACTION_SET_KINDS:
            raise ValueError(f"action_set.kind must be one of {', '.join(ACTION_SET_KINDS)}, got {kind!r}")
        kind_class = ACTION_SET_KINDS[kind]
        if not issubclass(kind_class, cls):
            raise ValueError(f"action_set.kind: expected a {cls.kind}, got {kind!r}")
        return kind_class._from_parameter(mapping[kind_class.parameter], d)

    @classmethod
    @abstractmethod
    def _from_parameter(cls, value: Any, d: int) -> ActionSet:
        """The set from its one file field ``value`` in dimension ``d``."""


class _CentredBody(ActionSet):
    """A convex body centred at the origin, given by its dimension and one positive size."""

    def __post_init__(self) -> None:
        integer(self.d, "action_set.d", 1)
        positive(getattr(self, self.parameter), f"action_set.{self.parameter}")

    @classmethod
    def _from_parameter(cls, value: Any, d: int) -> ActionSet:
        return cls(d, value)


@dataclass(frozen=True)
class BoxSet(_CentredBody):
    """D_0 = [−w, w]^d (the authors' setting is w = 1)."""

    d: int
    half_width: float = 1.0

    kind: ClassVar[str] = "box"
    parameter: ClassVar[str] = "half_width"
    example: ClassVar[str] = "{kind: box, half_width: 1.0}"

    @property
    def max_norm(self) -> float:
        """w·sqrt(d)."""
        return self.half_width * math.sqrt(self.d)

    def contains(self, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        return np.all(np.abs(X) <= self.half_width + tol, axis=-1)

    @cached_property
    def halfspaces(self) -> tuple[np.ndarray, np.ndarray]:
        """The box as Gx ≤ h: rows +e_j then −e_j; G: (2d, d), h: (2d,), read-only."""
        G, h = box_halfspaces(self.d, self.half_width)
        G.setflags(write=False)
        h.setflags(write=False)
        return G, h

    def optimal_action(self, mu: np.ndarray, B: np.ndarray, c: float) -> np.ndarray:
        """An LP over the box with one constraint aᵀx ≤ c, a = Bμ: solved exactly as a
        fractional knapsack (:func:`~.polytopes.box_knapsack_argmin`)."""
        mu = np.asarray(mu, dtype=float)
        return box_knapsack_argmin(mu, B @ mu, c, self.half_width)

    def optimistic_action(self, vertices: np.ndarray, rows: np.ndarray, c: float,
                          vertex_method: str = "auto") -> np.ndarray:
        """Vertex enumeration of the safe polytope and a bilinear minimum over vertex pairs
        (the authors' code): ``"clip"`` clips the square by the safety half-planes (2-D,
        the default there), ``"enumerate"`` solves every d-subset of constraints (the
        default for d ≥ 3), ``"qhull"`` uses scipy's half-space intersection; ``"lp"``
        solves one HiGHS LP per confidence vertex instead."""
        method = vertex_method
        if method == "auto":
            method = "clip" if self.d == 2 else "enumerate"
        thresholds = np.full(len(vertices), c)
        if method == "lp":
            x, _, _ = lp_argmin(vertices, rows, thresholds, bounds=(-self.half_width, self.half_width))
            return x
        if method == "clip":
            U = box_polygon_vertices(rows, thresholds, self.half_width)
        else:
            G = np.concatenate([rows, self.halfspaces[0]])
            h = np.concatenate([thresholds, self.halfspaces[1]])
            U = enumerate_vertices(G, h, method)
        j, _, _ = bilinear_argmin(U, vertices)
        return U[j].copy()

    @property
    def supports_intersection(self) -> bool:
        return self.d == 2

    @property
    def supports_polygon_clipping(self) -> bool:
        return self.d == 2

    def centred_ball_cut(self, radius: float) -> float | None:
        return radius if radius <= self.half_width else None

    def contains_ellipsoid(self, radius: float, transform: np.ndarray) -> bool:
        """The ellipsoid's extent along e_i is radius·‖row i of transform‖."""
        return bool(radius * np.max(np.linalg.norm(transform, axis=1)) <= self.half_width)

    def label(self) -> str:
        return f"box [−{self.half_width:g}, {self.half_width:g}]^{self.d}"


@dataclass(frozen=True)
class BallSet(_CentredBody):
    """D_0 = {x : ‖x‖₂ ≤ r}."""

    d: int
    radius: float = 1.0

    kind: ClassVar[str] = "ball"
    parameter: ClassVar[str] = "radius"
    example: ClassVar[str] = "{kind: ball, radius: 1.0}"

    @property
    def max_norm(self) -> float:
        return float(self.radius)

    def contains(self, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        return np.linalg.norm(X, axis=-1) <= self.radius + tol

    def optimal_action(self, mu: np.ndarray, B: np.ndarray, c: float) -> np.ndarray:
        """Closed form: the unconstrained minimiser −rμ/‖μ‖ if it is safe, otherwise the
        best point of the sphere on the constraint hyperplane."""
        mu = np.asarray(mu, dtype=float)
        a = B @ mu  # the constraint is aᵀx ≤ c
        r = self.radius
        nmu = np.linalg.norm(mu)
        x = -r * mu / nmu if nmu > 0 else np.zeros_like(mu)
        if x @ a <= c:
            return x
        # Constraint active: x = (c/‖a‖²) a + z, z ⊥ a, ‖z‖ ≤ sqrt(r² − c²/‖a‖²); minimise μᵀz.
        na2 = a @ a
        base = (c / na2) * a
        rho = math.sqrt(max(r * r - c * c / na2, 0.0))
        p = mu - (mu @ a / na2) * a
        npn = np.linalg.norm(p)
        return base - rho * p / npn if npn > 0 else base

    def optimistic_action(self, vertices: np.ndarray, rows: np.ndarray, c: float,
                          vertex_method: str = "auto") -> np.ndarray:
        """Exact enumeration of tangent points and corners in 2-D; one cvxpy SOCP per
        confidence vertex for d ≥ 3 (:func:`~.polytopes.ball_argmin`)."""
        x, _, _ = ball_argmin(vertices, rows, np.full(len(vertices), c), self.radius)
        return x

    def centred_ball_cut(self, radius: float) -> float:
        return min(radius, self.radius)

    def contains_ellipsoid(self, radius: float, transform: np.ndarray) -> bool:
        """The ellipsoid's largest extent is radius·‖transform‖₂."""
        return bool(radius * np.linalg.norm(transform, 2) <= self.radius)

    def label(self) -> str:
        return f"ball of radius {self.radius:g} in R^{self.d}"


@dataclass(frozen=True, eq=False)
class FiniteSet(ActionSet):
    """A finite arm list ``arms``: (K, d)."""

    arms: np.ndarray

    kind: ClassVar[str] = "finite"
    parameter: ClassVar[str] = "arms"
    parameter_is_array: ClassVar[bool] = True
    example: ClassVar[str] = "{kind: finite, arms: [[...], ...]}"

    def __post_init__(self) -> None:
        arms = array(self.arms, "action_set.arms", 2)
        if arms.shape[0] < 1 or arms.shape[1] < 1:
            raise ValueError(f"action_set.arms: need at least one arm of dimension >= 1, got {arms.shape}")
        replace_field(self, "arms", arms)

    @property
    def d(self) -> int:
        return int(self.arms.shape[1])

    @property
    def max_norm(self) -> float:
        return float(np.max(np.linalg.norm(self.arms, axis=1)))

    def contains(self, X: np.ndarray, tol: float = 1e-12) -> np.ndarray:
        X = np.atleast_2d(X)
        dist = np.min(np.linalg.norm(X[:, None, :] - self.arms[None], axis=2), axis=1)
        return dist <= tol

    def optimal_action(self, mu: np.ndarray, B: np.ndarray, c: float) -> np.ndarray | None:
        """Enumeration: the safe arm of least loss (the first among ties)."""
        mu = np.asarray(mu, dtype=float)
        safe = self.arms @ (B @ mu) <= c
        return self._best(safe, self.arms @ mu)

    def optimistic_action(self, vertices: np.ndarray, rows: np.ndarray, c: float,
                          vertex_method: str = "auto") -> np.ndarray | None:
        """Exact enumeration: an arm is safe iff ``rows @ x ≤ c``; its optimistic loss
        min_i vertices[i]ᵀx is attained at a vertex."""
        safe = np.all(self.arms @ rows.T <= c, axis=1)
        return self._best(safe, np.min(self.arms @ vertices.T, axis=1))

    def ellipsoid_optimistic_action(self, mu_hat: np.ndarray, beta: float, inverse: np.ndarray,
                                    B: np.ndarray, c: float) -> np.ndarray | None:
        """Exact enumeration over the ellipsoid: x is safe iff xᵀBμ̂ + β‖Bᵀx‖_{A⁻¹} ≤ c
        (Amani et al. 2019, eq. (8)); its optimistic loss is μ̂ᵀx − β‖x‖_{A⁻¹}."""
        XB = self.arms @ B  # rows (Bᵀx)ᵀ
        safe = XB @ mu_hat + beta * weighted_norms(XB, inverse) <= c
        return self._best(safe, self.arms @ mu_hat - beta * weighted_norms(self.arms, inverse))

    def _best(self, allowed: np.ndarray, scores: np.ndarray) -> np.ndarray | None:
        """The allowed arm of least score (first among ties), a copy; None if none is allowed."""
        if not allowed.any():
            return None
        idx = np.flatnonzero(allowed)
        return self.arms[idx[int(np.argmin(scores[idx]))]].copy()

    @property
    def supports_ellipsoid_confidence(self) -> bool:
        return True

    @property
    def finite_arms(self) -> np.ndarray:
        return self.arms

    def centred_ball_cut(self, radius: float) -> None:
        return None

    def contains_ellipsoid(self, radius: float, transform: np.ndarray) -> bool:
        return False

    def label(self) -> str:
        return f"{self.arms.shape[0]} arms in R^{self.d}"

    @classmethod
    def _from_parameter(cls, value: Any, d: int) -> FiniteSet:
        return cls(value)


#: A file's ``action_set.kind`` → the class.
ACTION_SET_KINDS: dict[str, type[ActionSet]] = {cls.kind: cls for cls in (BoxSet, BallSet, FiniteSet)}
