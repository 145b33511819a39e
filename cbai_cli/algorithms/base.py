"""Ask/tell interface of the CBAI algorithms and the two shared skeletons.

An algorithm never sees φ: it gets the learner's :class:`~cbai_cli.instance.Problem`
(arms, known rewards, threshold), its configuration and a random generator, asks for
pulls with :meth:`Algorithm.ask` and learns the sums of their noisy observations
through :meth:`Algorithm.tell` (the protocol of :mod:`cbai_cli.protocol`).
:mod:`cbai_cli.simulate` drives the loop.

- :class:`RoundBased` asks for a whole round (arm → pull count) and refits on that
  round's data only (static intervals, paper Proposition 2).
- :class:`Adaptive` asks for one pull at a time and keeps all data in a
  :class:`~cbai_cli.linalg.DesignState` (adaptive intervals, Proposition 3).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from cbai_cli.algorithms.elimination import EliminationState
from cbai_cli.confidence import REGIMES, ConfidenceSettings
from cbai_cli.instance import Problem
from cbai_cli.linalg import DesignState, least_squares_widths
from cbai_cli.options import OPTIONS
from cbai_cli.protocol import Answer, Query


@dataclass(frozen=True)
class AlgorithmConfig:
    """How to run an algorithm.

    Attributes:
        regime: confidence regime name (``static``, ``theory``, ``det``, ``tuned``).
        confidence: the constants of the intervals.
        rounding_epsilon: ε of the (1+ε)-approximate rounding (round-based only).
        design_tolerance: relative duality gap of the design solves inside algorithms.
    """

    regime: str
    confidence: ConfidenceSettings
    rounding_epsilon: float = OPTIONS["rounding_epsilon"].default
    design_tolerance: float = 1e-4


class Algorithm(ABC):
    """An ask/tell CBAI algorithm over the arms of ``problem``."""

    def __init__(self, problem: Problem, config: AlgorithmConfig, rng: np.random.Generator) -> None:
        self.problem = problem
        self.config = config
        self.rng = rng
        self.regime = REGIMES[config.regime](config.confidence)
        self.state = EliminationState(problem.rewards, problem.threshold)

    @property
    def done(self) -> bool:
        return self.state.done

    @abstractmethod
    def ask(self) -> Query:
        """The next pulls to make."""

    @abstractmethod
    def tell(self, query: Query, answer: Answer) -> None:
        """``answer.constraint``: the sums (m,) of the observations of the pulls of ``query``."""

    def recommendation(self) -> int | None:
        """The final answer when done, the anytime answer otherwise."""
        if self.done:
            return self.state.recommendation()
        return self.state.anytime_recommendation()


class RoundBased(Algorithm):
    """Rounds t = 1, 2, …: a design, a round length, rounding, a least-squares refit on
    this round's data, and the elimination update (paper Algorithm 1 / Algorithm 3).

    Subclasses give the design and the round length.
    """

    def __init__(self, problem: Problem, config: AlgorithmConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.round = 0

    def delta_round(self, t: int) -> float:
        """δ_t = δ²/t² (Algorithm 1 line 6)."""
        return self.config.confidence.delta**2 / t**2

    @abstractmethod
    def round_counts(self, t: int) -> np.ndarray:
        """(K,) pull counts of round t."""

    def ask(self) -> Query:
        counts = self.round_counts(self.round + 1)
        pulled = np.flatnonzero(counts)
        return Query.pulls(pulled, counts[pulled])

    def tell(self, query: Query, answer: Answer) -> None:
        self.round += 1
        counts = np.zeros(self.problem.n_arms, dtype=np.int64)
        totals = np.zeros(self.problem.n_arms)
        counts[query.arms] = query.counts
        totals[query.arms] = answer.constraint
        predictions, norms = least_squares_widths(self.problem.arms, counts, totals)
        radius = self.regime.round_radius(self.problem.n_arms, self.delta_round(self.round))
        with np.errstate(invalid="ignore"):
            widths = radius * norms
        self.state.update(predictions - widths, predictions + widths)


def doubling_round_length(t: int, n_arms: int, delta_round: float) -> int:
    """N_t = ⌈2^t log(K/δ_t)⌉: Algorithm 3 (Appendix B) with v = 2, as in the authors' code."""
    return math.ceil(2.0**t * math.log(n_arms / delta_round))


class Adaptive(Algorithm):
    """One pull per step with adaptive intervals (paper Algorithm 2): after every pull,
    l/u = xᵀφ̂ ∓ r·‖x‖_{A⁻¹} for all arms and the elimination update.

    Subclasses give :meth:`select`, the arm to pull next.
    """

    def __init__(self, problem: Problem, config: AlgorithmConfig, rng: np.random.Generator) -> None:
        super().__init__(problem, config, rng)
        self.design = DesignState(problem.arms, config.confidence.ridge)

    @abstractmethod
    def select(self) -> int:
        """Index of the arm to pull next."""

    def ask(self) -> Query:
        return Query.pull(self.select())

    def tell(self, query: Query, answer: Answer) -> None:
        for arm, count, total in zip(query.arms, query.counts, answer.constraint):
            self.design.update(int(arm), float(total), int(count))
        widths = self.design.widths(self.regime.radius(self.design))
        self.state.update(self.design.predictions - widths, self.design.predictions + widths)

    def max_variance_direction(self, candidates: np.ndarray) -> np.ndarray:
        """y = argmax_{x ∈ candidates} ‖x‖_{A⁻¹} (first among ties), as a vector."""
        indices = np.flatnonzero(candidates)
        return self.problem.arms[indices[np.argmax(self.design.norms2[indices])]]

    def uniform_among(self, candidates: np.ndarray) -> int:
        indices = np.flatnonzero(candidates)
        return int(indices[self.rng.integers(indices.size)])
