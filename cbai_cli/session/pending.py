"""Choosing queries while earlier ones are unanswered: the rule behind ``next --count N``.

Round-based algorithms (Lindner et al. 2022, Algorithms 1 and 3) ask for whole rounds:
every query of a round is handed out at once, and the next round is asked for only when
the whole round is recorded, exactly as in a simulated run.

Adaptive algorithms (Algorithm 2) choose one pull at a time from all data so far. With
queries pending, the next one is chosen by a *believer*: a copy of the algorithm whose
design is told every pending pull with the answer the algorithm predicts, count · xᵀφ̂.
For the ridge estimate φ̂ = A⁻¹b this answer leaves φ̂ unchanged —
(A + c xxᵀ)φ̂ = b + c x(xᵀφ̂) — while the design A grows, so the copy sees the pending
pulls' variance reduction but no invented information about φ. The copy's sets U and F
are not updated (they stay those of the recorded observations): believed answers would
shrink its intervals around a guess and could make it stop. The copy is thrown away; the
algorithm itself is told only recorded observations, in the order their queries
complete, and only it decides when to stop.

Why the guarantee holds: a pull handed out at some moment was chosen from observations
recorded before that moment, all of which the algorithm is told before it is told this
pull's answer. So every pulled arm is predictable with respect to the observations in the
order the algorithm sees them, which is all the self-normalised bound of Abbasi-Yadkori
et al. (2011, Theorem 2) behind Proposition 3 needs, and the stopping rule reads only
recorded data.

The rule is deterministic given the journal (the copy uses a copy of the algorithm's
random generator), so replaying a study hands out the same queries.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable

import numpy as np

from cbai_cli.contracts.errors import OptionError
from cbai_cli.contracts.protocol import Answer, Query


def believed_answer(learner, query: Query) -> Answer:
    """The answer ``learner`` predicts for ``query``: count · xᵀφ̂ per arm; (m,) sums."""
    return Answer(np.asarray(_design(learner).predictions)[query.arms] * query.counts)


class Believer:
    """The believer of an adaptive algorithm, kept from one ask to the next while nothing
    is recorded: each ask tells the copy only the pulls handed out since the last one, so
    handing out N queries at once costs N copies of the algorithm instead of N²/2 design
    updates (``next --count 2000`` took 76 s before). The copy is told the same pulls in the
    same order as one built afresh for each ask, so every ask sees the same design bit for
    bit, and the queries do not depend on how they were handed out; each ask goes to a copy
    of the copy, so the algorithm's random stream is never advanced by an ask."""

    def __init__(self) -> None:
        self._copy = None
        self._told: list[Hashable] = []
        self._version: Hashable = None

    def ask(self, learner, version: Hashable, pending: list[Hashable], query: Callable[[Hashable], Query]) -> Query:
        """The next query of ``learner`` with the queries of keys ``pending`` unanswered, in
        the order handed out (``query(key)`` builds one, only for keys the copy was not told
        yet); ``version`` changes whenever ``learner`` is told an answer."""
        if not pending:
            return learner.ask()
        if self._copy is None or version != self._version or pending[:len(self._told)] != self._told:
            self._copy, self._told, self._version = copy.deepcopy(learner), [], version
        design = _design(self._copy)
        for key in pending[len(self._told):]:
            told = query(key)
            for arm, count, total in zip(told.arms, told.counts, believed_answer(self._copy, told).constraint):
                design.update(int(arm), float(total), int(count))
            self._told.append(key)
        return copy.deepcopy(self._copy).ask()


def _design(learner):
    """The ridge design over the arms of an adaptive CBAI algorithm; one line for others."""
    design = getattr(learner, "design", None)
    if getattr(design, "predictions", None) is None:
        raise OptionError(f"{type(learner).__name__} keeps no linear design over its arms: hand out one query at a "
                          "time (--count 1)", "count")
    return design
