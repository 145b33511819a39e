"""Simulated environments of the safe kinds, and the scoring of their runs.

The environments own the truth and the noise; they are the only code that reads μ* / θ*
during a run (the truths of :mod:`.truths` score it afterwards). Each answers the queries of
the ask/tell protocol (:mod:`cbai_cli.contracts.protocol`). Runs go through the one run API,
:func:`cbai_cli.run.simulate.prepare` and :func:`cbai_cli.run.simulate.run_once`: the instance kinds
(:mod:`cbai_cli.kinds`) make these environments and the observer, and score a run with
:func:`regret_result` or :func:`bai_result`.

- :class:`SafeRegretEnvironment`, :class:`RegretObserver`, :func:`regret_result` — Safe-LUCB
  (Amani et al. 2019): losses, violations, regret.
- :class:`SafeBaiEnvironment`, :func:`bai_result` — LinGapE (full pulls, safety ignored) or
  Safe-LinGapE ("Price of Safety", §4) on a :class:`~.problems.SafeBaiProblem`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cbai_cli.contracts.protocol import Answer, Query

from cbai_cli.algorithms.safe.lingape import LinGapE
from cbai_cli.kinds.safe.problems import SafeBaiProblem, SafeRegretProblem
from cbai_cli.algorithms.safe.safe_lingape import SafeLinGapE
from cbai_cli.algorithms.safe.safe_lucb import SafeLUCB
from cbai_cli.kinds.safe.truths import regret_truth, safe_bai_truth

__all__ = [
    "SafeRegretEnvironment",
    "SafeBaiEnvironment",
    "SafeRegretResult",
    "SafeBaiResult",
    "RegretObserver",
    "regret_result",
    "bai_result",
    "VIOLATION_TOL",
]

#: A round is unsafe when the constraint is exceeded by more than this (pure round-off guard).
VIOLATION_TOL = 1e-12

_NOISE_CHUNK = 4096


class _NoiseStream:
    """Standard normal draws from ``rng`` in chunks (one Python call per 4096 rounds)."""

    def __init__(self, rng: np.random.Generator, width: int) -> None:
        self._rng = rng
        self._width = width
        self._buf = np.empty((0, width))
        self._i = 0

    def next(self) -> np.ndarray:
        if self._i >= self._buf.shape[0]:
            self._buf = self._rng.standard_normal((_NOISE_CHUNK, self._width))
            self._i = 0
        row = self._buf[self._i]
        self._i += 1
        return row


def _single(query: Query) -> None:
    """These environments answer one observation per query."""
    if query.total != 1:
        raise ValueError(f"the query asks for {query.total} observations; this environment answers one at a time")


class SafeRegretEnvironment:
    """Safe linear bandit with losses (Amani et al. 2019, §2).

    Answers ``Query.play(x)`` with ``Answer(constraint=[ℓ])``, ℓ = μ*ᵀx + N(0, noise_sd²).
    Tracks ``t``, ``n_unsafe`` (rounds with xᵀBμ* > c) and the pseudo-regret
    Σ (μ*ᵀx_t − μ*ᵀx*) in ``cumulative_regret``.
    """

    def __init__(self, problem: SafeRegretProblem, rng: np.random.Generator) -> None:
        self.problem = problem
        self.truth = regret_truth(problem)
        self._mu = np.asarray(problem.mu_star)
        self._Bmu = problem.setting.B @ self._mu
        self._action_set = problem.setting.action_set
        self._c = problem.setting.c
        self._noise = _NoiseStream(rng, 1)
        self.t = 0
        self.n_unsafe = 0
        self.cumulative_regret = 0.0

    def answer(self, query: Query) -> Answer:
        """The loss of one play of ``query.action``: (d,), which must lie in D_0."""
        _single(query)
        if query.action is None:
            raise ValueError("the safe regret environment answers action queries (Query.play)")
        x = np.asarray(query.action, dtype=float)
        if not self._action_set.contains(x, tol=1e-9):
            raise ValueError(f"action {x} is outside D_0")
        mean = float(self._mu @ x)
        if float(x @ self._Bmu) > self._c + VIOLATION_TOL:
            self.n_unsafe += 1
        self.cumulative_regret += mean - self.truth.loss_star
        self.t += 1
        return Answer(constraint=np.array([mean + self.problem.noise_sd * float(self._noise.next()[0])]))


class SafeBaiEnvironment:
    """Safe BAI with partial pulls ("Price of Safety" §3.3).

    Answers ``Query.pull(k, scale=γ)`` (γ = 1 when ``scale`` is None) with
    ``Answer(constraint=[safety], reward=[reward])``: reward = γ x_kᵀθ* + N(0, σ²) and
    safety = γ x_kᵀμ* + N(0, σ_safe²); a pull is unsafe when γ x_kᵀμ* < η₀. Tracks ``t``,
    ``n_unsafe`` and ``pulls``: (K,).
    """

    def __init__(self, problem: SafeBaiProblem, rng: np.random.Generator) -> None:
        self.problem = problem
        setting = problem.setting
        self._r = setting.arms @ problem.theta_star
        self._s = setting.arms @ problem.mu_star
        self._eta0, self._sigma, self._sigma_safe = setting.eta0, setting.sigma, setting.sigma_safe
        self._noise = _NoiseStream(rng, 2)
        self.t = 0
        self.n_unsafe = 0
        self.pulls = np.zeros(problem.K, dtype=np.int64)

    def answer(self, query: Query) -> Answer:
        """The reward and the safety signal of one pull of ``query.arm`` at ``query.scale``."""
        _single(query)
        k = query.arm
        scale = 1.0 if query.scale is None else float(query.scale)
        if not 0.0 <= scale <= 1.0:
            raise ValueError(f"scale must be in [0, 1], got {scale}")
        safety_mean = scale * self._s[k]
        if safety_mean < self._eta0 - VIOLATION_TOL:
            self.n_unsafe += 1
        self.pulls[k] += 1
        self.t += 1
        z = self._noise.next()
        return Answer(constraint=np.array([float(safety_mean + self._sigma_safe * z[1])]),
                      reward=np.array([float(scale * self._r[k] + self._sigma * z[0])]))


# --------------------------------------------------------------------------- safe regret


@dataclass(frozen=True, eq=False)
class SafeRegretResult:
    """Outcome of one Safe-LUCB run: the regret R_T of Amani et al. (2019, §2) and the
    diagnostics of its analysis.

    ``regret_curve``: (T,) the cumulative regret after every round; ``n_unsafe``;
    ``exploration_rounds`` the realised T' (decided during the run for
    ``exploration="heuristic"``); ``lambda_minus`` λ_−; ``lambda_min_design`` =
    λ_min(Σ_{s≤T'} x_s x_sᵀ) (no ridge) against Lemma 1's ``lambda_min_target`` = T'λ_−/2;
    ``x_star_in_safe_fraction``: the fraction of phase-2 rounds with x* ∈ D_t^s (nan if none;
    where it is 1 the regret of safety of §3.1 vanishes); ``x_star``, ``safety_gap``.
    """

    T: int
    regret_curve: np.ndarray
    final_regret: float
    n_unsafe: int
    exploration_rounds: int
    lambda_minus: float
    lambda_min_design: float
    lambda_min_target: float
    x_star_in_safe_fraction: float
    x_star: np.ndarray
    safety_gap: float


class RegretObserver:
    """Follows a Safe-LUCB run for its score: the cumulative regret after every round,
    λ_min of the exploration design when phase 1 ends (Lemma 1), and how often x* lay in
    the estimated safe set D_t^s. It reads the truth (x*), as scoring does; the learner
    never sees it. The ``safe-regret`` kind makes it the observer of every run.
    """

    def __init__(self, problem: SafeRegretProblem, environment: SafeRegretEnvironment) -> None:
        self.problem = problem
        self.environment = environment
        self.x_star = environment.truth.x_star
        self.curve = np.empty(problem.setting.T)
        self.exploring = True
        self.lambda_min_design = math.nan
        self.inside = 0
        self.started = False

    def _phase_check(self, learner: SafeLUCB) -> None:
        # T' is read from the learner's phase before every action: with the heuristic rule
        # it is decided during phase 1; for the other rules this is the fixed T'.
        if self.exploring and learner.phase == 2:
            self.exploring = False
            self.lambda_min_design = _design_lambda_min(learner)

    def asked(self, query: Query, learner: SafeLUCB) -> None:
        if not self.started:
            self.started = True
            self._phase_check(learner)
        if not self.exploring:
            self.inside += learner.in_estimated_safe_set(self.x_star)

    def told(self, query: Query, answer: Answer, learner: SafeLUCB, used: int) -> None:
        self.curve[self.environment.t - 1] = self.environment.cumulative_regret
        self._phase_check(learner)


def _design_lambda_min(alg: SafeLUCB) -> float:
    """λ_min(Σ_s x_s x_sᵀ) of the data so far (the design matrix without the learner's ridge λ)."""
    return float(np.linalg.eigvalsh(alg.state.gram - alg.setting.lam * np.eye(alg.setting.d))[0])


def regret_result(problem: SafeRegretProblem, learner: SafeLUCB, environment: SafeRegretEnvironment,
                  observer: RegretObserver) -> SafeRegretResult:
    """The score of a finished Safe-LUCB run."""
    T = problem.setting.T
    if observer.exploring:
        observer.lambda_min_design = _design_lambda_min(learner)
    Tp = learner.exploration_rounds
    curve = observer.curve
    return SafeRegretResult(
        T=T, regret_curve=curve,
        final_regret=float(curve[-1]), n_unsafe=environment.n_unsafe, exploration_rounds=Tp,
        lambda_minus=learner.lambda_minus, lambda_min_design=observer.lambda_min_design,
        lambda_min_target=Tp * learner.lambda_minus / 2.0,
        x_star_in_safe_fraction=observer.inside / (T - Tp) if T > Tp else math.nan,
        x_star=environment.truth.x_star, safety_gap=environment.truth.safety_gap,
    )


# --------------------------------------------------------------------------- safe BAI


@dataclass(frozen=True, eq=False)
class SafeBaiResult:
    """Outcome of one safe best-arm identification run ("Price of Safety" §5: stopping time,
    correctness, safety).

    ``stopping_time`` counts every pull (T_FE and initial pulls included); ``stopped`` is False
    when ``max_steps`` ran out (then the anytime recommendation is reported).
    ``recommended_arm``/``recommended_scale`` (1.0 for plain LinGapE); ``optimal_safe_arm`` k*;
    ``correct``: ``k̂ = k*``; ``epsilon_correct``: ``γ_{k*}x_{k*}ᵀθ* − γ_k̂ x_k̂ᵀθ* ≤ ε`` (arm
    ε-optimal at its true safe scale); ``reward_gap``: ``γ_{k*}x_{k*}ᵀθ* − γ̂ x_k̂ᵀθ*`` at the returned
    scale; ``n_unsafe``; ``pulls: (K,)``; ``gamma_bar_fe``/``gamma_bar_stop: (K,)`` (None for
    LinGapE); ``true_gamma: (K,)``.
    """

    algorithm: str
    stopping_time: int
    stopped: bool
    recommended_arm: int
    recommended_scale: float
    optimal_safe_arm: int
    correct: bool
    epsilon_correct: bool
    reward_gap: float
    n_unsafe: int
    pulls: np.ndarray
    gamma_bar_fe: np.ndarray | None
    gamma_bar_stop: np.ndarray | None
    true_gamma: np.ndarray


def bai_result(problem: SafeBaiProblem, learner: LinGapE | SafeLinGapE, environment: SafeBaiEnvironment) -> SafeBaiResult:
    """The score of a finished (or budget-stopped) safe BAI run against the truth."""
    truth = safe_bai_truth(problem)
    k_hat, scale = learner.recommend()
    best = truth.safe_rewards[truth.optimal_safe_arm]
    return SafeBaiResult(
        algorithm=learner.variant, stopping_time=int(environment.t), stopped=bool(learner.done),
        recommended_arm=int(k_hat), recommended_scale=float(scale),
        optimal_safe_arm=truth.optimal_safe_arm, correct=bool(k_hat == truth.optimal_safe_arm),
        # 1e-12: on the "Price of Safety" §5 instance x_1ᵀθ* − x_4ᵀθ* = 2(1 − cos ω) = ε, up to round-off.
        epsilon_correct=bool(best - truth.safe_rewards[k_hat] <= problem.setting.epsilon + 1e-12),
        reward_gap=float(best - scale * truth.rewards[k_hat]),
        n_unsafe=environment.n_unsafe, pulls=environment.pulls.copy(),
        gamma_bar_fe=None if learner.gamma_bar_fe is None else learner.gamma_bar_fe.copy(),
        gamma_bar_stop=None if learner.gamma_bar is None else learner.gamma_bar.copy(),
        true_gamma=truth.gamma.copy(),
    )
