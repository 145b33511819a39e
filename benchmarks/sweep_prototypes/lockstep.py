"""Lockstep batches: B runs of G-ACOL / Greedy MaxVar as arrays with a leading batch axis
(MEASUREMENT PROTOTYPE, see the package docstring).

All live runs take step t together; a run that stops (U empty, or its budget reached) is
dropped from the arrays, so later steps cost what the remaining runs need. Every
product is the package's own BLAS call: ``np.matmul`` of a stack against vectors calls
one gemv per run (the package's ``arms @ u``), and a stack of 1×d by d×1 one dot per
run, so each run's numbers are bitwise those of a single run whatever B is. A (B, d) ×
(d, K) matrix product (gemm) would read the arm matrix once for all runs but rounds
differently; ``products="gemm"`` measures what that would save, and is not exact.
"""

from __future__ import annotations

import math

import numpy as np

from .common import NoiseStreams, Outcome, Setup, det_radius, recommendation


class Lockstep:
    """The state of B runs.

    Attributes (b: live runs, K arms, d dimension):
        inverse: (b, d, d) A⁻¹.   gram: (b, d, d) A.   targets: (b, d) b.
        estimate: (b, d) φ̂.      norms2: (b, K) ‖x‖²_{A⁻¹}.   predictions: (b, K) xᵀφ̂.
        logdet: (b,) log det A.   uncertain, feasible: (b, K) U and F.
        best: (b,) r̄.             last_upper: (b, K) u(x) of the last update.
        runs: (b,) the index of each live run among the seeds.
    """

    def __init__(self, setup: Setup, seeds, key: tuple[int, ...] = (), products: str = "gemv") -> None:
        self.setup = setup
        self.seeds = list(seeds)
        self.noise = NoiseStreams(self.seeds, key)
        self.products = products
        b, (k, d) = len(self.seeds), setup.arms.shape
        self.runs = np.arange(b)
        self.gram = np.broadcast_to(setup.ridge * np.eye(d), (b, d, d)).copy()
        self.inverse = np.broadcast_to(np.eye(d) / setup.ridge, (b, d, d)).copy()
        self.targets = np.zeros((b, d))
        self.estimate = np.zeros((b, d))
        self.logdet = np.full(b, d * math.log(setup.ridge))
        self.norms2 = np.broadcast_to(np.einsum("kd,kd->k", setup.arms, setup.arms) / setup.ridge, (b, k)).copy()
        self.predictions = np.zeros((b, k))
        self.uncertain = np.ones((b, k), dtype=bool)
        self.feasible = np.zeros((b, k), dtype=bool)
        self.best = np.full(b, -np.inf)
        self.last_upper = np.full((b, k), np.inf)
        self.steps = 0
        self.since_refresh = 0
        self.outcomes: dict[int, Outcome] = {}
        self.z = self.noise.next_chunk(self.runs)
        self.z_start = 0

    def arm_products(self, vectors: np.ndarray) -> np.ndarray:
        """(b, K) aᵀv of every arm a for each run's v in ``vectors`` (b, d)."""
        if self.products == "gemm":
            return vectors @ self.setup.arms.T
        return np.matmul(self.setup.arms, vectors[:, :, None])[:, :, 0]

    def run(self) -> list[Outcome]:
        """Run every seed to its end; the outcomes in the order of the seeds."""
        budget = self.setup.budget
        while self.runs.size:
            if budget is not None and self.steps + 1 > budget:
                self.finish(np.ones(self.runs.size, dtype=bool), solved=False)
                break
            self.step()
            done = ~self.uncertain.any(axis=1)
            if done.any():
                self.finish(done, solved=True)
        return [self.outcomes[run] for run in range(len(self.seeds))]

    def step(self) -> None:
        """One ask/answer/tell of every live run (paper Algorithm 2, lines 5–18)."""
        s = self.setup
        arms = s.arms
        # ask: y = argmax_{x ∈ U} ‖x‖_{A⁻¹}, then the arm of largest (yᵀA⁻¹a)²/(1 + ‖a‖²_{A⁻¹})
        variances = np.where(self.uncertain, self.norms2, -np.inf) if s.over_uncertain else self.norms2
        direction = arms[variances.argmax(axis=1)]
        towards = np.matmul(self.inverse, direction[:, :, None])[:, :, 0]
        chosen = (self.arm_products(towards) ** 2 / (1.0 + self.norms2)).argmax(axis=1)
        # answer: the run's next standard normal of its own noise stream
        column = self.steps - self.z_start
        if column == self.z.shape[1]:
            self.z = np.concatenate([self.z[:, column:], self.noise.next_chunk(self.runs)], axis=1)
            self.z_start, column = self.steps, 0
        observed = s.means[chosen] + s.sigma * self.z[:, column]
        # tell: Sherman–Morrison on A⁻¹ and the per-arm caches (DesignState._add_with_caches)
        x = arms[chosen]
        residual_before = observed - np.matmul(x[:, None, :], self.estimate[:, :, None])[:, 0, 0]
        u = np.matmul(self.inverse, x[:, :, None])[:, :, 0]
        q = np.matmul(x[:, None, :], u[:, :, None])[:, 0, 0]
        if s.regime == "det":  # math.log1p, as the package: numpy's log1p rounds differently
            self.logdet += np.array([math.log1p(value) for value in q.tolist()])
        shrink = 1.0 / (1.0 + q)
        self.inverse -= shrink[:, None, None] * (u[:, :, None] * u[:, None, :])
        self.gram += x[:, :, None] * x[:, None, :]
        self.targets += observed[:, None] * x
        projected = self.arm_products(u)
        residual = residual_before / (1.0 + q)
        self.norms2 -= shrink[:, None] * projected**2
        self.estimate += residual[:, None] * u
        self.predictions += residual[:, None] * projected
        self.steps += 1
        self.since_refresh += 1
        if self.since_refresh >= s.refresh_every:
            self.refresh()
        # intervals and elimination (EliminationState.update)
        if s.regime == "theory":
            radius = s.theory_radius(self.steps)
        elif s.regime == "det":
            radius = det_radius(self.logdet, s)[:, None]
        else:
            radius = math.sqrt(s.beta)
        widths = radius * np.sqrt(np.maximum(self.norms2, 0.0))
        lower, upper = self.predictions - widths, self.predictions + widths
        newly = upper <= s.threshold
        self.feasible |= newly
        self.best = np.maximum(self.best, np.where(newly, s.rewards, -np.inf).max(axis=1))
        self.uncertain &= ~(newly | (lower > s.threshold) | (s.rewards < self.best[:, None]))
        self.last_upper = upper

    def refresh(self) -> None:
        """A⁻¹, log det A, φ̂, ‖x‖²_{A⁻¹} and xᵀφ̂ recomputed from A and b
        (DesignState.refresh), one LAPACK call per run inside each stacked call."""
        d = self.setup.dim
        inverse = np.linalg.inv(self.gram)
        self.inverse = 0.5 * (inverse + inverse.transpose(0, 2, 1))
        self.logdet = np.linalg.slogdet(self.gram)[1]
        self.estimate = np.matmul(self.inverse, self.targets[:, :, None])[:, :, 0]
        lower_inverse = np.linalg.solve(np.linalg.cholesky(self.gram), np.broadcast_to(np.eye(d), self.gram.shape))
        whitened = np.matmul(self.setup.arms, lower_inverse.transpose(0, 2, 1))
        self.norms2 = np.einsum("bkd,bkd->bk", whitened, whitened)
        self.predictions = self.arm_products(self.estimate)
        self.since_refresh = 0

    def finish(self, ending: np.ndarray, solved: bool) -> None:
        """Record the runs flagged in ``ending`` (b,) and drop them from every array."""
        for index in np.flatnonzero(ending):
            run = int(self.runs[index])
            answer = recommendation(self.feasible[index], self.setup.rewards, self.last_upper[index], solved)
            self.outcomes[run] = Outcome(self.seeds[run], self.steps, answer, "solved" if solved else "budget")
        keep = ~ending
        for name in ("runs", "gram", "inverse", "targets", "estimate", "logdet", "norms2", "predictions",
                     "uncertain", "feasible", "best", "last_upper", "z"):
            setattr(self, name, getattr(self, name)[keep])


def run_lockstep(setup: Setup, seeds, key: tuple[int, ...] = (), batch: int = 10,
                 products: str = "gemv") -> list[Outcome]:
    """The seeds in consecutive batches of ``batch`` runs each."""
    seeds = list(seeds)
    outcomes: list[Outcome] = []
    for start in range(0, len(seeds), batch):
        outcomes += Lockstep(setup, seeds[start:start + batch], key, products).run()
    return outcomes
