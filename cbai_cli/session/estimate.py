"""How many more answers a running study needs, extrapolated from its intervals.

An elimination algorithm stops when no arm is uncertain (Lindner et al. 2022, Algorithms 1
and 2, lines 14–18): every arm is certainly feasible (u(x) ≤ τ), certainly infeasible
(l(x) > τ) or dominated (θᵀx below the best certainly-feasible reward r̄). Take each
interval's centre c(x) = (l + u)/2 as the best guess of φᵀx and its half-width
w(x) = (u − l)/2:

- the predicted answer x̂ is the arm of largest reward among the arms certainly feasible
  or with c(x) ≤ τ;
- the arms that must still be decided are x̂ (unless it is certainly feasible) and every
  uncertain arm of larger reward, which must be shown infeasible; every other uncertain
  arm becomes dominated once x̂ is certified. With no predicted feasible arm, every
  uncertain arm must be shown infeasible.

An arm is decided once its half-width falls below its gap |c(x) − τ|. With the
allocation kept in its current proportions the design grows linearly in the number of
answers t, so a half-width shrinks as 1/√t: after t answers, arm x is decided at about
t·(w(x)/|c(x) − τ|)² answers, and the study at the largest of these over the arms to
decide. The estimate leaves out what moves it either way: the radius grows like log t
(later), an adaptive rule puts more answers where they are needed (sooner), and the
centres move as answers come. docs/sessions.md reports how it compares with the
answers simulated studies really needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """Answers still needed (``remaining``), the total they make (``total``), and the arm
    that needs the most (``arm``); ``remaining`` 0 when only the last held answers are
    missing."""

    remaining: int
    total: int
    arm: int

    def to_json(self) -> dict[str, Any]:
        return {"remaining": self.remaining, "total": self.total, "arm": self.arm}


def answers_needed(lower: np.ndarray, upper: np.ndarray, rewards: np.ndarray, threshold: float,
                   uncertain: np.ndarray, feasible: np.ndarray, answered: int) -> Estimate | None:
    """The extrapolation of the module docstring from the intervals (K,) ``lower`` and
    ``upper`` after ``answered`` answers, the rewards (K,), τ and the sets U and F (K,)
    bool; None when it cannot be made yet: no answer, an arm to decide with an unbounded
    interval, or one whose centre lies on τ."""
    if not uncertain.any():
        return Estimate(0, answered, -1)
    if answered <= 0:
        return None
    with np.errstate(invalid="ignore"):  # an unbounded interval's centre is NaN; it is refused below
        centre = (lower + upper) / 2
        half = (upper - lower) / 2
    looks_feasible = feasible | (uncertain & (centre <= threshold))
    if looks_feasible.any():
        candidates = np.flatnonzero(looks_feasible)
        answer = int(candidates[np.argmax(rewards[candidates])])
        to_decide = uncertain & (rewards > rewards[answer])
        to_decide[answer] |= bool(uncertain[answer])
    else:
        to_decide = uncertain
    arms = np.flatnonzero(to_decide)
    if arms.size == 0:
        return Estimate(0, answered, -1)
    gap = np.abs(centre[arms] - threshold)
    if not (np.isfinite(half[arms]).all() and (gap > 0).all()):
        return None
    factors = (half[arms] / gap) ** 2
    slowest = int(np.argmax(factors))
    total = max(answered, math.ceil(answered * float(factors[slowest])))
    return Estimate(total - answered, total, int(arms[slowest]))
