"""What both prototypes read from a prepared package run, the noise they draw, and the
results they return (MEASUREMENT PROTOTYPE, see the package docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cbai_cli.confidence import radius_horizon
from cbai_cli.noise import GaussianNoise
from cbai_cli.simulate import PreparedRun, run_streams

#: The regimes the prototypes implement, by the code the radius needs (0 theory, 1 det, 2 tuned).
REGIME_CODES = {"theory": 0, "det": 1, "tuned": 2}
#: The algorithms, by whether y ranges over U (G-ACOL) or over all arms (Greedy MaxVar).
OVER_UNCERTAIN = {"g-acol": True, "greedy-maxvar": False}


@dataclass(frozen=True)
class Setup:
    """One prepared adaptive run, as plain arrays and numbers.

    Attributes:
        arms: (K, d) the learner's arms, C-contiguous float64.
        rewards: (K,) θᵀx.
        threshold: τ.
        means: (K,) φᵀx, what the simulated environment answers around.
        sigma: σ of the Gaussian noise.
        regime: ``theory``, ``det`` or ``tuned``.
        over_uncertain: True for G-ACOL (y ∈ U), False for Greedy MaxVar (y ∈ X).
        ridge, subgaussian, norm_bound, arm_bound, delta, beta: the confidence settings.
        budget: queries of a run at most (None: until it stops).
        refresh_every: updates between exact recomputations (the package's max(200, 20·d)).
    """

    arms: np.ndarray
    rewards: np.ndarray
    threshold: float
    means: np.ndarray
    sigma: float
    regime: str
    over_uncertain: bool
    ridge: float
    subgaussian: float
    norm_bound: float
    arm_bound: float
    delta: float
    beta: float | None
    budget: int | None
    refresh_every: int

    @classmethod
    def from_prepared(cls, prepared: PreparedRun) -> Setup:
        if prepared.algorithm not in OVER_UNCERTAIN or prepared.regime not in REGIME_CODES:
            raise ValueError(f"the prototypes run g-acol and greedy-maxvar with theory/det/tuned, "
                             f"not {prepared.algorithm} {prepared.regime}")
        noise = prepared.instance.truth.noise
        if not isinstance(noise, GaussianNoise):
            raise ValueError("the prototypes draw Gaussian noise only")
        problem = prepared.configured.view
        settings = prepared.config.confidence
        arms = np.ascontiguousarray(problem.arms, dtype=float)
        return cls(arms=arms, rewards=np.asarray(problem.rewards, dtype=float), threshold=float(problem.threshold),
                   means=prepared.instance.truth.means(arms), sigma=float(noise.sigma), regime=prepared.regime,
                   over_uncertain=OVER_UNCERTAIN[prepared.algorithm], ridge=settings.ridge,
                   subgaussian=settings.subgaussian, norm_bound=settings.norm_bound, arm_bound=settings.arm_bound,
                   delta=settings.delta, beta=settings.beta, budget=prepared.budget,
                   refresh_every=max(200, 20 * arms.shape[1]))

    @property
    def n_arms(self) -> int:
        return self.arms.shape[0]

    @property
    def dim(self) -> int:
        return self.arms.shape[1]

    def theory_radius(self, n_samples: int) -> float:
        """The package's :func:`radius_horizon` at n pulls."""
        return radius_horizon(n_samples, self.dim, self.ridge, self.subgaussian, self.norm_bound, self.arm_bound,
                              self.delta)


def det_radius(logdet: np.ndarray, setup: Setup) -> np.ndarray:
    """:func:`cbai_cli.confidence.radius_determinant` (u = 1) for a vector of log det A,
    with the package's order of operations, so that every element is bitwise equal."""
    log_argument = math.log(1.0) + 0.5 * logdet - 0.5 * setup.dim * math.log(setup.ridge) - math.log(setup.delta)
    return setup.subgaussian * np.sqrt(2.0 * np.maximum(log_argument, 0.0)) + math.sqrt(setup.ridge) * setup.norm_bound


class NoiseStreams:
    """The standard normals of each run's noise stream, drawn ahead in chunks.

    The package draws one observation as ``rng.normal(1.0·m, sqrt(1.0)·σ)`` = m + σ·z with
    z the stream's next standard normal, so m + σ·z from a chunk of ``standard_normal``
    draws of the same stream gives the same observations (checked by ``--check``).
    """

    def __init__(self, seeds, key: tuple[int, ...] = (), first_chunk: int = 256, largest_chunk: int = 1 << 16):
        self.generators = [run_streams(seed, key)[0] for seed in seeds]
        self.chunk = first_chunk
        self.largest = largest_chunk

    def next_chunk(self, runs) -> np.ndarray:
        """(len(runs), C) the next C standard normals of each run in ``runs``; C doubles each time."""
        size = self.chunk
        self.chunk = min(2 * self.chunk, self.largest)
        return np.stack([self.generators[run].standard_normal(size) for run in runs])

    def draw(self, run: int, size: int) -> np.ndarray:
        """(size,) the next standard normals of run ``run``."""
        return self.generators[run].standard_normal(size)


@dataclass(frozen=True)
class Outcome:
    """What ``cbai solve --json`` reports of a run that the prototypes must equal."""

    seed: int
    iterations: int
    recommended: int | None
    stopped: str


def recommendation(feasible: np.ndarray, rewards: np.ndarray, last_upper: np.ndarray, solved: bool) -> int | None:
    """The package's final (solved) or anytime (budget) answer of one run."""
    if feasible.any():
        candidates = np.flatnonzero(feasible)
        return int(candidates[np.argmax(rewards[candidates])])
    return None if solved else int(np.argmin(last_upper))
