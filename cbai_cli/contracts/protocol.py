"""The one ask/tell protocol that every algorithm speaks, CBAI and safe alike.

An algorithm never sees the hidden truth. It says what it wants to try next with
:meth:`Learner.ask`, a :class:`Query`; something else answers it — the simulated
environment of :mod:`cbai_cli.run.simulate`, which is the only code that reads the truth
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

from cbai_cli.contracts.errors import ProtocolError


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


class CheckedLearner:
    """A learner for driving by hand: the ask/tell loop of :func:`cbai_cli.run.simulate.drive`
    with every step checked, since the answers come from outside (people, another program)
    and not from a simulation that cannot get them wrong.

    - :meth:`ask` hands out the same query until it is told (a second ``ask`` does not move
      a random rule's stream, so a hand-driven run stays the run of ``cbai solve --seed``),
      and refuses once the learner has stopped;
    - :meth:`tell` refuses a query it did not hand out, and an answer that is not one finite
      real sum per arm of the query (one for an action), within ±count·``MAGNITUDE_LIMIT``
      (the largest observation an instance allows), with a reward sum for learners that read
      one (``reads_reward``);

    each refusal is one :class:`~cbai_cli.contracts.errors.ProtocolError` that leaves the learner as it
    was. Every other attribute (``recommendation``, ``state``, …) is the wrapped learner's.

    Args:
        learner: any :class:`Learner` (CBAI or safe).
    """

    def __init__(self, learner: Learner) -> None:
        self.learner = learner
        self._asked: Query | None = None

    @property
    def done(self) -> bool:
        """Whether the stopping rule has fired."""
        return bool(self.learner.done)

    def ask(self) -> Query:
        """The query to answer next: the pending one if it was not told yet."""
        if self.done:
            raise ProtocolError("ask: the learner has stopped; read its recommendation")
        if self._asked is None:
            self._asked = self.learner.ask()
        return self._asked

    def tell(self, query: Query, answer: Answer) -> None:
        """The answer to the pending query, checked before the learner sees it."""
        if self._asked is None:
            raise ProtocolError("tell: no query is pending" + ("; the learner has stopped" if self.done else
                                                              "; ask first"))
        if not same_query(query, self._asked):
            raise ProtocolError(f"tell: the answer is for {describe(query)}, but the query pending is "
                                f"{describe(self._asked)}")
        if not isinstance(answer, Answer):
            raise ProtocolError(f"tell: the answer must be an Answer, got {type(answer).__name__}")
        checked = Answer(answer_sums(answer.constraint, query, "constraint"),
                         None if answer.reward is None else answer_sums(answer.reward, query, "reward"))
        if checked.reward is None and getattr(self.learner, "reads_reward", False):
            raise ProtocolError("tell: this learner reads the reward: give Answer(constraint, reward)")
        self.learner.tell(query, checked)
        self._asked = None

    def compiled(self) -> bool:
        """False: :func:`cbai_cli.run.simulate.drive` takes a checked learner through the checked
        ask/tell loop, never the compiled run, which bypasses :meth:`tell`."""
        return False

    def __getattr__(self, name: str):
        return getattr(self.learner, name)


def same_query(query: Query, other: Query) -> bool:
    """Whether two queries ask for the same thing (the same arms, counts, action and scale)."""
    if query is other:
        return True
    if not isinstance(query, Query):
        return False
    same_action = (query.action is None) == (other.action is None) and (
        query.action is None or np.array_equal(query.action, other.action))
    return (np.array_equal(query.arms, other.arms) and np.array_equal(query.counts, other.counts)
            and same_action and query.scale == other.scale)


def describe(query: Query) -> str:
    """A query in a few words, for messages."""
    if not isinstance(query, Query):
        return f"a {type(query).__name__}, not a Query"
    if query.action is not None:
        return "a play of an action"
    pulls = ", ".join(f"{count}× arm {arm}" for arm, count in zip(query.arms.tolist()[:5], query.counts.tolist()))
    more = f" and {query.arms.size - 5} more arms" if query.arms.size > 5 else ""
    scale = "" if query.scale is None else f" at scale {query.scale:g}"
    return f"{pulls or 'no pulls'}{more}{scale}"


def answer_sums(values, query: Query, signal: str) -> np.ndarray:
    """``values`` as the (m,) float sums of ``query``'s observations of ``signal`` (m: its
    arms, 1 for an action), after refusing anything a simulation could not have produced.

    Raises:
        ProtocolError: not real numbers, the wrong count, not finite, or a sum beyond
            ±count·MAGNITUDE_LIMIT.
    """
    from cbai_cli.contracts.options import MAGNITUDE_LIMIT

    array = np.asarray(values)
    if array.dtype == bool or array.dtype.kind not in "iuf":
        raise ProtocolError(f"tell: the {signal} sums must be real numbers, got {array.dtype} values")
    array = array.astype(float).reshape(-1) if array.ndim <= 1 else array
    expected = 1 if query.action is not None else query.arms.size
    if array.shape != (expected,):
        raise ProtocolError(f"tell: the query asks for {expected} {signal} sum{'s' * (expected != 1)} "
                            f"(one per arm), got shape {np.shape(values)}")
    if not np.all(np.isfinite(array)):
        raise ProtocolError(f"tell: the {signal} sums must be finite, got {array.tolist()[:5]}")
    limit = query.counts.astype(float) * MAGNITUDE_LIMIT
    if np.any(np.abs(array) > limit):
        raise ProtocolError(f"tell: a {signal} sum lies beyond ±{MAGNITUDE_LIMIT:g} per observation, "
                            f"got {array.tolist()[:5]}")
    return array
