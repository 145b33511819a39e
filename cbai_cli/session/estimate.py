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

An arm is decided once its half-width falls below its gap |c(x) − τ|. Each half-width
is taken to shrink as a power of the number of answers t, w(x) ∝ t^(−α(x)), with α(x)
read off how it shrank since an earlier point t₀ ≤ t/2 of the study,
α(x) = log(w₀(x)/w(x)) / log(t/t₀), clipped to [1/4, 3/2] (1/2, the rate of a fixed
allocation whose design grows linearly in t, without an earlier point or an earlier
interval). Arm x is then decided at about t·(w(x)/|c(x) − τ|)^(1/α(x)) answers, and the
study at the largest of these over the arms to decide. The rate read off the past carries
what an adaptive rule does (it pulls more where answers are needed, and those intervals
shrink faster); the estimate still leaves out that centres move as answers come and that
a gap guessed from few answers is noisy. docs/sessions.md reports how it compares with
the answers simulated studies really needed.
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


#: The range of the fitted rates α: slower than t^(−1/4) is an arm hardly pulled any more,
#: faster than t^(−3/2) is noise in two widths.
RATES = (0.25, 1.5)


def answers_needed(lower: np.ndarray, upper: np.ndarray, rewards: np.ndarray, threshold: float,
                   uncertain: np.ndarray, feasible: np.ndarray, answered: int,
                   earlier: tuple[int, np.ndarray, np.ndarray] | None = None) -> Estimate | None:
    """The extrapolation of the module docstring from the intervals (K,) ``lower`` and
    ``upper`` after ``answered`` answers, the rewards (K,), τ, the sets U and F (K,) bool,
    and ``earlier`` = (t₀, lower₀, upper₀), the intervals after t₀ ≤ answered/2 answers;
    None when it cannot be made yet: no answer, an arm to decide with an unbounded interval,
    or one whose centre lies on τ."""
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
    if not (np.isfinite(half[arms]).all() and (gap > 0).all() and (half[arms] > 0).all()):
        return None
    rates = np.full(arms.size, 0.5)
    if earlier is not None and 0 < earlier[0] <= answered / 2:
        with np.errstate(invalid="ignore", divide="ignore"):
            before = (earlier[2][arms] - earlier[1][arms]) / 2
            fitted = np.log(before / half[arms]) / math.log(answered / earlier[0])
        rates = np.where(np.isfinite(fitted), np.clip(fitted, *RATES), rates)
    totals = answered * (half[arms] / gap) ** (1 / rates)
    slowest = int(np.argmax(totals))
    total = max(answered, math.ceil(float(totals[slowest])))
    return Estimate(total - answered, total, int(arms[slowest]))
