"""A compiled step loop: G-ACOL / Greedy MaxVar runs advanced by one numba function
(MEASUREMENT PROTOTYPE, see the package docstring; needs numba, which cbai does not
depend on).

:func:`advance` runs every run of a batch (B = 1 for a single run) until it stops or
needs Python: for more noise (a chunk of its stream's standard normals) or for the exact
refresh every ``refresh_every`` updates, which Python does with the package's numpy
calls (LAPACK through numpy, einsum), so that its rounding is the package's. Inside the
loop the products are ``np.dot``, which numba sends to BLAS gemv and dot (scipy's
OpenBLAS), bitwise those of numpy's ``@`` on this machine (``bench_sweep.py --check``);
the elementwise formulas are the package's, in its order, without fast-math.
``exact=False`` sums the products in plain loops instead: cheaper on tiny arrays, but
rounded differently from the package.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .common import REGIME_CODES, NoiseStreams, Outcome, Setup, recommendation

RUNNING, DONE, BUDGET, NEED_NOISE, NEED_REFRESH = 0, 1, 2, 3, 4
FLOAT_MIN = 2.2250738585072014e-308


@numba.njit(cache=True)
def _radius(regime, steps, logdet, p):
    """The radius of the run: p = (R, S, L, λ, δ, β, d); regime 0 theory, 1 det, 2 tuned
    (:mod:`cbai_cli.confidence`, the same operations in the same order)."""
    subgaussian, norm_bound, arm_bound, ridge, delta, beta, dim = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    if regime == 0:
        numerator = 1.0 + steps * arm_bound * arm_bound / ridge
        quotient = numerator / delta if delta >= FLOAT_MIN else 0.0
        if 0.0 < quotient < math.inf:
            log_term = math.log(quotient)
        else:
            log_term = math.log(numerator) - math.log(delta)
        return subgaussian * math.sqrt(dim * log_term) + math.sqrt(ridge) * norm_bound
    if regime == 1:
        log_argument = math.log(1.0) + 0.5 * logdet - 0.5 * dim * math.log(ridge) - math.log(delta)
        return subgaussian * math.sqrt(2.0 * max(log_argument, 0.0)) + math.sqrt(ridge) * norm_bound
    return math.sqrt(beta)


@numba.njit(cache=True)
def _gemv_loops(matrix, vector):
    """matrix @ vector summed left to right: not BLAS's rounding."""
    out = np.empty(matrix.shape[0])
    for i in range(matrix.shape[0]):
        total = 0.0
        for j in range(matrix.shape[1]):
            total += matrix[i, j] * vector[j]
        out[i] = total
    return out


@numba.njit(cache=True)
def _dot_loops(first, second):
    total = 0.0
    for i in range(first.shape[0]):
        total += first[i] * second[i]
    return total


@numba.njit(cache=True)
def _gemv(exact, matrix, vector):
    """matrix @ vector: BLAS gemv (the package's rounding) or a left-to-right loop."""
    if exact:
        return np.dot(matrix, vector)
    return _gemv_loops(matrix, vector)


@numba.njit(cache=True)
def _dot(exact, first, second):
    if exact:
        return np.dot(first, second)
    return _dot_loops(first, second)


@numba.njit(cache=True)
def advance(exact, arms, rewards, means, sigma, threshold, regime, over_uncertain, params, budget, refresh_every,
            inverse, gram, targets, estimate, norms2, predictions, logdet, uncertain, feasible, best, last_upper,
            steps, since, pending, status, z, z_used):
    """Advance every run b with ``status[b] == RUNNING`` until it stops or needs Python.

    Shapes: arms (K, d); rewards, means (K,); inverse, gram (B, d, d); targets, estimate
    (B, d); norms2, predictions, uncertain, feasible, last_upper (B, K); logdet, best,
    steps, since, pending, status, z_used (B,); z (B, C). ``pending[b]``: the update of
    the last step is in, its intervals and elimination not yet (a refresh came between).
    """
    k, d = arms.shape
    for b in range(inverse.shape[0]):
        while status[b] == RUNNING:
            if pending[b]:
                radius = _radius(regime, steps[b], logdet[b], params)
                any_uncertain = False
                for a in range(k):
                    width = radius * math.sqrt(max(norms2[b, a], 0.0))
                    lower = predictions[b, a] - width
                    upper = predictions[b, a] + width
                    if upper <= threshold:
                        feasible[b, a] = True
                        if rewards[a] > best[b]:
                            best[b] = rewards[a]
                    last_upper[b, a] = upper
                    if upper <= threshold or lower > threshold:
                        uncertain[b, a] = False
                # r̄ may have grown within the loop above: apply it to every arm after it
                for a in range(k):
                    if rewards[a] < best[b]:
                        uncertain[b, a] = False
                    any_uncertain = any_uncertain or uncertain[b, a]
                pending[b] = 0
                if not any_uncertain:
                    status[b] = DONE
                    break
            if budget >= 0 and steps[b] + 1 > budget:
                status[b] = BUDGET
                break
            if z_used[b] == z.shape[1]:
                status[b] = NEED_NOISE
                break
            # ask
            y = -1
            top = -math.inf
            for a in range(k):
                if (uncertain[b, a] or not over_uncertain) and (y < 0 or norms2[b, a] > top):
                    y, top = a, norms2[b, a]
            towards = _gemv(exact, inverse[b], arms[y])
            products = _gemv(exact, arms, towards)
            chosen = 0
            best_gain = -math.inf
            for a in range(k):
                gain = products[a] * products[a] / (1.0 + norms2[b, a])
                if gain > best_gain:
                    chosen, best_gain = a, gain
            # answer
            observed = means[chosen] + sigma * z[b, z_used[b]]
            z_used[b] += 1
            # tell
            x = arms[chosen]
            residual_before = observed - _dot(exact, x, estimate[b])
            u = _gemv(exact, inverse[b], x)
            q = _dot(exact, x, u)
            logdet[b] += math.log1p(q)
            shrink = 1.0 / (1.0 + q)
            for i in range(d):
                for j in range(d):
                    inverse[b, i, j] -= shrink * (u[i] * u[j])
                    gram[b, i, j] += x[i] * x[j]
                targets[b, i] += observed * x[i]
            projected = _gemv(exact, arms, u)
            residual = residual_before / (1.0 + q)
            for a in range(k):
                norms2[b, a] -= shrink * (projected[a] * projected[a])
                predictions[b, a] += residual * projected[a]
            for i in range(d):
                estimate[b, i] += residual * u[i]
            steps[b] += 1
            since[b] += 1
            pending[b] = 1
            if since[b] >= refresh_every:
                status[b] = NEED_REFRESH
                break


class CompiledRuns:
    """B runs advanced by :func:`advance`; Python serves noise and refreshes."""

    def __init__(self, setup: Setup, seeds, key: tuple[int, ...] = (), exact: bool = True) -> None:
        self.setup = setup
        self.exact = exact
        self.seeds = list(seeds)
        self.noise = NoiseStreams(self.seeds, key)
        b, (k, d) = len(self.seeds), setup.arms.shape
        self.inverse = np.broadcast_to(np.eye(d) / setup.ridge, (b, d, d)).copy()
        self.gram = np.broadcast_to(setup.ridge * np.eye(d), (b, d, d)).copy()
        self.targets = np.zeros((b, d))
        self.estimate = np.zeros((b, d))
        self.norms2 = np.broadcast_to(np.einsum("kd,kd->k", setup.arms, setup.arms) / setup.ridge, (b, k)).copy()
        self.predictions = np.zeros((b, k))
        self.logdet = np.full(b, d * math.log(setup.ridge))
        self.uncertain = np.ones((b, k), dtype=np.bool_)
        self.feasible = np.zeros((b, k), dtype=np.bool_)
        self.best = np.full(b, -np.inf)
        self.last_upper = np.full((b, k), np.inf)
        self.steps = np.zeros(b, dtype=np.int64)
        self.since = np.zeros(b, dtype=np.int64)
        self.pending = np.zeros(b, dtype=np.int64)
        self.status = np.full(b, NEED_NOISE, dtype=np.int64)
        self.chunk = 1024
        self.z = np.zeros((b, self.chunk))
        self.z_used = np.full(b, self.chunk, dtype=np.int64)
        self.params = np.array([setup.subgaussian, setup.norm_bound, setup.arm_bound, setup.ridge, setup.delta,
                                setup.beta if setup.beta is not None else 0.0, float(d)])

    def run(self) -> list[Outcome]:
        s = self.setup
        while True:
            for b in np.flatnonzero(self.status == NEED_NOISE):
                self.z[b] = self.noise.draw(b, self.z.shape[1])
                self.z_used[b] = 0
                self.status[b] = RUNNING
            for b in np.flatnonzero(self.status == NEED_REFRESH):
                self.refresh(b)
                self.status[b] = RUNNING
            if not (self.status == RUNNING).any():
                break
            advance(self.exact, s.arms, s.rewards, s.means, s.sigma, s.threshold, REGIME_CODES[s.regime],
                    s.over_uncertain, self.params, -1 if s.budget is None else s.budget, s.refresh_every,
                    self.inverse, self.gram, self.targets, self.estimate, self.norms2, self.predictions,
                    self.logdet, self.uncertain, self.feasible, self.best, self.last_upper, self.steps, self.since,
                    self.pending, self.status, self.z, self.z_used)
        return [Outcome(seed, int(self.steps[b]),
                        recommendation(self.feasible[b], s.rewards, self.last_upper[b], self.status[b] == DONE),
                        "solved" if self.status[b] == DONE else "budget") for b, seed in enumerate(self.seeds)]

    def refresh(self, b: int) -> None:
        """DesignState.refresh of run b, with the package's numpy calls."""
        gram = self.gram[b]
        inverse = np.linalg.inv(gram)
        self.inverse[b] = 0.5 * (inverse + inverse.T)
        self.logdet[b] = np.linalg.slogdet(gram)[1]
        self.estimate[b] = self.inverse[b] @ self.targets[b]
        lower_inverse = np.linalg.solve(np.linalg.cholesky(gram), np.eye(self.setup.dim))
        whitened = self.setup.arms @ lower_inverse.T
        self.norms2[b] = np.einsum("kd,kd->k", whitened, whitened)
        self.predictions[b] = self.setup.arms @ self.estimate[b]
        self.since[b] = 0


def run_compiled(setup: Setup, seeds, key: tuple[int, ...] = (), batch: int = 1, exact: bool = True) -> list[Outcome]:
    """The seeds in consecutive batches of ``batch`` runs, each batch one :class:`CompiledRuns`;
    ``exact=False``: products as plain loops (faster on tiny arrays, not the package's rounding)."""
    seeds = list(seeds)
    outcomes: list[Outcome] = []
    for start in range(0, len(seeds), batch):
        outcomes += CompiledRuns(setup, seeds[start:start + batch], key, exact).run()
    return outcomes
