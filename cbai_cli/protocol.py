"""The one ask/tell protocol that every algorithm speaks, CBAI and safe alike.

An algorithm never sees the hidden truth. It says what it wants to try next with
:meth:`Learner.ask`, a :class:`Query`; something else answers it — the simulated
environment of :mod:`cbai_cli.simulate`, which is the only code that reads the truth
during a run, or a person in a live session — and the algorithm learns the
:class:`Answer` through :meth:`Learner.tell`.

Three shapes of query cover the papers:

- pulls of finite arms, ``counts[i]`` pulls of arm ``arms[i]``: one pull for adaptive
  algorithms (Lindner et al. 2022, Algorithm 2; LinGapE), a whole round for round-based
  ones (Algorithm 1 line 8, Algorithm 3);
- a partial pull ``γ·x_k`` of one arm at scale ``γ ∈ (0, 1]`` (Safe-LinGapE, "Price of
  Safety in Linear BAI" §4);
- an action vector of a continuous action set (Safe-LUCB, Amani et al. 2019, §3).

An answer carries the sums of the observations of the constraint (or safety) signal,
one sum per pulled arm or action, and the sums of the reward signal where the reward is
unknown (safe BAI). Safe-LUCB's single observation ``μ*ᵀx + η`` is the constraint
signal: the same unknown parameter sets the loss and the constraint ``xᵀBμ* ≤ c``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True, eq=False)
class Query:
    """What to try next.

    Attributes:
        arms: (m,) int arm indices; empty for an action query.
        counts: (m,) int pulls asked for of each of ``arms``; ``(1,)`` for an action query.
        action: (d,) the action vector to play, for continuous action sets; else None.
        scale: γ ∈ (0, 1] of a partial pull γ·x of the one arm asked for; None for a
            full pull.
    """

    arms: np.ndarray
    counts: np.ndarray
    action: np.ndarray | None = None
    scale: float | None = None

    @classmethod
    def pulls(cls, arms: np.ndarray, counts: np.ndarray) -> Query:
        """``counts[i]`` pulls of arm ``arms[i]``; arms: (m,), counts: (m,)."""
        return cls(np.asarray(arms, dtype=np.int64), np.asarray(counts, dtype=np.int64))

    @classmethod
    def pull(cls, arm: int, scale: float | None = None) -> Query:
        """One pull of ``arm``, at scale ``scale`` when it is a partial pull."""
        return cls(np.array([arm], dtype=np.int64), np.ones(1, dtype=np.int64), None, scale)

    @classmethod
    def play(cls, action: np.ndarray) -> Query:
        """One play of the action vector ``action``: (d,)."""
        return cls(np.empty(0, dtype=np.int64), np.ones(1, dtype=np.int64), np.asarray(action, dtype=float))

    @property
    def total(self) -> int:
        """Observations asked for: what a budget counts."""
        return int(self.counts.sum())

    @property
    def arm(self) -> int:
        """The one arm of a single-arm query."""
        if self.arms.size != 1:
            raise ValueError(f"the query asks for {self.arms.size} arms, not one")
        return int(self.arms[0])


@dataclass(frozen=True, eq=False)
class Answer:
    """What was observed for a :class:`Query`.

    Attributes:
        constraint: (m,) sums of the observations of the constraint (safety) signal,
            one per arm of the query, or (1,) for an action query.
        reward: (m,) sums of the observations of the reward signal, where the reward
            is unknown to the learner (safe BAI); else None.
    """

    constraint: np.ndarray
    reward: np.ndarray | None = None


@runtime_checkable
class Learner(Protocol):
    """An algorithm as the run loop sees it."""

    @property
    def done(self) -> bool:
        """Whether the stopping rule has fired."""

    def ask(self) -> Query:
        """What to try next."""

    def tell(self, query: Query, answer: Answer) -> None:
        """What was observed for the last query."""


@runtime_checkable
class Environment(Protocol):
    """Something that answers queries: a simulation or a person."""

    def answer(self, query: Query) -> Answer:
        """The observations of ``query``."""
