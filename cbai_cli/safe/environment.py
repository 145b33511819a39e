"""Simulated environments of the safe kinds, and the run loops that drive the learners.

The environments own the truth and the noise; they are the only code that reads μ* / θ*
during a run (the truths of :mod:`.truths` score it afterwards). Each answers the queries of
the ask/tell protocol (:mod:`cbai_cli.protocol`), and every run goes through the one loop,
:func:`cbai_cli.simulate.drive`. The convenience functions here take one
``numpy.random.Generator`` and spawn two independent children: one for the learner's own
randomness, one for the environment's noise, so the noise sequence does not depend on how
many random numbers the learner consumed. The instance kinds (:mod:`cbai_cli.kinds`) use
the same environments, observer and scoring.

- :class:`SafeRegretEnvironment` / :func:`run_safe_regret` — Safe-LUCB (Amani et al. 2019),
  losses, violations, regret.
- :class:`SafeBaiEnvironment` / :func:`run_safe_bai` — LinGapE (full pulls, safety ignored)
  or Safe-LinGapE ("Price of Safety", §4) on a :class:`~.problems.SafeBaiProblem`.
- :class:`LinearBaiEnvironment` / :func:`run_bai` — LinGapE (Xu et al. 2018) on a plain
  :class:`~.problems.LinearBaiProblem`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from cbai_cli.protocol import Answer, Query

from .lingape import LinGapE, LinGapEConfig
from .problems import LinearBaiProblem, SafeBaiProblem, SafeRegretProblem
from .safe_lingape import SafeLinGapE, SafeLinGapEConfig
from .safe_lucb import SafeLUCB, SafeLUCBConfig
from .truths import regret_truth, safe_bai_truth

__all__ = [
    "SafeRegretEnvironment",
    "SafeBaiEnvironment",
    "LinearBaiEnvironment",
    "SafeRegretResult",
    "SafeBaiResult",
    "BaiResult",
    "run_safe_regret",
    "run_safe_bai",
    "simulate_safe_regret",
    "simulate_safe_bai",
    "run_bai",
    "RegretObserver",
    "regret_result",
    "bai_result",
    "DEFAULT_CHECKPOINTS",
    "VIOLATION_TOL",
]

#: Regret checkpoints (T is always added).
DEFAULT_CHECKPOINTS = (1_000, 10_000, 20_000, 50_000, 100_000)

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
        self._Bmu = problem.B @ self._mu
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
        if not self.problem.action_set.contains(x, tol=1e-9):
            raise ValueError(f"action {x} is outside D_0")
        mean = float(self._mu @ x)
        if float(x @ self._Bmu) > self.problem.c + VIOLATION_TOL:
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
        self._r = problem.arms @ problem.theta_star
        self._s = problem.arms @ problem.mu_star
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
        if safety_mean < self.problem.eta0 - VIOLATION_TOL:
            self.n_unsafe += 1
        self.pulls[k] += 1
        self.t += 1
        z = self._noise.next()
        return Answer(constraint=np.array([float(safety_mean + self.problem.sigma_safe * z[1])]),
                      reward=np.array([float(scale * self._r[k] + self.problem.sigma * z[0])]))


class LinearBaiEnvironment:
    """Linear best-arm identification without safety (Xu et al. 2018, §2).

    Answers ``Query.pull(k)`` with ``Answer(constraint=[], reward=[x_kᵀθ* + N(0, σ²)])``: there
    is no constraint signal, so ``constraint`` is empty. Tracks ``t``.
    """

    def __init__(self, problem: LinearBaiProblem, rng: np.random.Generator) -> None:
        self.problem = problem
        self._means = problem.arms @ problem.theta_star
        self._noise = _NoiseStream(rng, 1)
        self.t = 0

    def answer(self, query: Query) -> Answer:
        """The reward of one pull of ``query.arm``."""
        _single(query)
        k = query.arm
        self.t += 1
        return Answer(constraint=np.empty(0),
                      reward=np.array([float(self._means[k] + self.problem.sigma * self._noise.next()[0])]))


# --------------------------------------------------------------------------- safe regret


@dataclass(frozen=True, eq=False)
class SafeRegretResult:
    """Outcome of one Safe-LUCB run: the regret R_T of Amani et al. (2019, §2) and the
    diagnostics of its analysis.

    ``checkpoints``: (m,) rounds and ``regret_at``: (m,) the cumulative regret there;
    ``regret_curve``: (T,) the cumulative regret after every round; ``n_unsafe``;
    ``exploration_rounds`` the realised T' (decided during the run for
    ``exploration="heuristic"``); ``lambda_minus`` λ_−; ``lambda_min_design`` =
    λ_min(Σ_{s≤T'} x_s x_sᵀ) (no ridge) against Lemma 1's ``lambda_min_target`` = T'λ_−/2;
    ``x_star_in_safe_fraction``: the fraction of phase-2 rounds with x* ∈ D_t^s (nan if none;
    where it is 1 the regret of safety of §3.1 vanishes); ``x_star``, ``safety_gap``.
    """

    T: int
    checkpoints: np.ndarray
    regret_at: np.ndarray
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
    never sees it. Use it as the observer of :func:`cbai_cli.simulate.drive`.
    """

    def __init__(self, problem: SafeRegretProblem, environment: SafeRegretEnvironment,
                 track_x_star: bool = True) -> None:
        self.problem = problem
        self.environment = environment
        self.x_star = environment.truth.x_star if track_x_star else None
        self.curve = np.empty(problem.T)
        self.exploring = True
        self.lambda_min_design = math.nan
        self.inside = 0
        self.started = False

    def _phase_check(self, learner: SafeLUCB) -> None:
        # T' is read from the learner's phase before every action: with the heuristic rule
        # it is decided during phase 1; for the other rules this is the fixed T'.
        if self.exploring and learner.phase == 2:
            self.exploring = False
            self.lambda_min_design = _design_lambda_min(learner, self.problem)

    def asked(self, query: Query, learner: SafeLUCB) -> None:
        if not self.started:
            self.started = True
            self._phase_check(learner)
        if self.x_star is not None and not self.exploring:
            self.inside += learner.in_estimated_safe_set(self.x_star)

    def told(self, query: Query, answer: Answer, learner: SafeLUCB, used: int) -> None:
        self.curve[self.environment.t - 1] = self.environment.cumulative_regret
        self._phase_check(learner)


def _design_lambda_min(alg: SafeLUCB, problem: SafeRegretProblem) -> float:
    """λ_min(Σ_s x_s x_sᵀ) of the data so far (the design matrix without the ridge)."""
    return float(np.linalg.eigvalsh(alg.state.gram - problem.lam * np.eye(problem.d))[0])


def regret_result(problem: SafeRegretProblem, learner: SafeLUCB, environment: SafeRegretEnvironment,
                  observer: RegretObserver, checkpoints: Iterable[int] = DEFAULT_CHECKPOINTS) -> SafeRegretResult:
    """The score of a finished Safe-LUCB run (``checkpoints``: rounds of ``regret_at``; T is added)."""
    T = problem.T
    if observer.exploring:
        observer.lambda_min_design = _design_lambda_min(learner, problem)
    Tp = learner.exploration_rounds
    cps = np.array(sorted({c for c in checkpoints if c <= T} | {T}), dtype=np.int64)
    curve = observer.curve
    return SafeRegretResult(
        T=T, checkpoints=cps, regret_at=curve[cps - 1].copy(), regret_curve=curve,
        final_regret=float(curve[-1]), n_unsafe=environment.n_unsafe, exploration_rounds=Tp,
        lambda_minus=learner.lambda_minus, lambda_min_design=observer.lambda_min_design,
        lambda_min_target=Tp * learner.lambda_minus / 2.0,
        x_star_in_safe_fraction=(observer.inside / (T - Tp)) if (observer.x_star is not None and T > Tp) else math.nan,
        x_star=environment.truth.x_star, safety_gap=environment.truth.safety_gap,
    )


def run_safe_regret(
    problem: SafeRegretProblem,
    config: SafeLUCBConfig,
    rng: np.random.Generator,
    checkpoints: Iterable[int] = DEFAULT_CHECKPOINTS,
    track_x_star: bool = True,
) -> SafeRegretResult:
    """Run Safe-LUCB for ``problem.T`` rounds. ``config.safety_gap`` is passed as given (for
    ``exploration="gap"`` the caller supplies Δ, e.g. ``regret_truth(problem).safety_gap``)."""
    alg_rng, env_rng = rng.spawn(2)
    return simulate_safe_regret(problem, config, alg_rng, env_rng, checkpoints, track_x_star)


def simulate_safe_regret(
    problem: SafeRegretProblem,
    config: SafeLUCBConfig,
    alg_rng: np.random.Generator,
    env_rng: np.random.Generator,
    checkpoints: Iterable[int] = DEFAULT_CHECKPOINTS,
    track_x_star: bool = True,
) -> SafeRegretResult:
    """:func:`run_safe_regret` with the algorithm's and the environment's generators given
    separately; the run goes through the one loop, :func:`cbai_cli.simulate.drive`."""
    from cbai_cli.simulate import drive

    environment = SafeRegretEnvironment(problem, env_rng)
    learner = SafeLUCB(problem.learner_view(), config, alg_rng)
    observer = RegretObserver(problem, environment, track_x_star)
    drive(learner, environment, problem.T, observer)
    return regret_result(problem, learner, environment, observer, checkpoints)


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
        epsilon_correct=bool(best - truth.safe_rewards[k_hat] <= problem.epsilon + 1e-12),
        reward_gap=float(best - scale * truth.rewards[k_hat]),
        n_unsafe=environment.n_unsafe, pulls=environment.pulls.copy(),
        gamma_bar_fe=None if learner.gamma_bar_fe is None else learner.gamma_bar_fe.copy(),
        gamma_bar_stop=None if learner.gamma_bar is None else learner.gamma_bar.copy(),
        true_gamma=truth.gamma.copy(),
    )


def run_safe_bai(
    problem: SafeBaiProblem,
    config: LinGapEConfig | SafeLinGapEConfig,
    rng: np.random.Generator,
    max_steps: int = 1_000_000,
) -> SafeBaiResult:
    """Drive LinGapE (``LinGapEConfig``: every pull at full scale 1, safety ignored) or
    Safe-LinGapE (``SafeLinGapEConfig``) on ``problem`` until it stops or ``max_steps`` pulls."""
    alg_rng, env_rng = rng.spawn(2)
    return simulate_safe_bai(problem, config, alg_rng, env_rng, max_steps)


def simulate_safe_bai(
    problem: SafeBaiProblem,
    config: LinGapEConfig | SafeLinGapEConfig,
    alg_rng: np.random.Generator,
    env_rng: np.random.Generator,
    max_steps: int = 1_000_000,
) -> SafeBaiResult:
    """:func:`run_safe_bai` with the algorithm's and the environment's generators given
    separately; the run goes through the one loop, :func:`cbai_cli.simulate.drive`."""
    from cbai_cli.simulate import drive

    if isinstance(config, LinGapEConfig):  # the learner's view: LinGapE sees only the arms
        learner = LinGapE(problem.arms, config, alg_rng)
    elif isinstance(config, SafeLinGapEConfig):
        learner = SafeLinGapE(problem.learner_view(), config, alg_rng)
    else:
        raise TypeError(f"config must be LinGapEConfig or SafeLinGapEConfig, got {type(config).__name__}")
    environment = SafeBaiEnvironment(problem, env_rng)
    drive(learner, environment, max_steps)
    return bai_result(problem, learner, environment)


@dataclass(frozen=True, eq=False)
class BaiResult:
    """Outcome of one LinGapE run on a :class:`~.problems.LinearBaiProblem` (Xu et al. 2018:
    stopping time, correctness, pulls)."""

    stopping_time: int
    stopped: bool
    recommended_arm: int
    best_arm: int
    correct: bool
    epsilon_correct: bool
    pulls: np.ndarray


def run_bai(
    problem: LinearBaiProblem, config: LinGapEConfig, rng: np.random.Generator, max_steps: int = 1_000_000
) -> BaiResult:
    """Drive LinGapE on a plain linear BAI problem with Gaussian noise ``σ``."""
    from cbai_cli.simulate import drive

    alg_rng, env_rng = rng.spawn(2)
    alg = LinGapE(problem.arms, config, alg_rng)
    drive(alg, LinearBaiEnvironment(problem, env_rng), max_steps)
    k_hat, _ = alg.recommend()
    return BaiResult(
        stopping_time=int(alg.t), stopped=bool(alg.done), recommended_arm=int(k_hat),
        best_arm=problem.best_arm, correct=bool(k_hat == problem.best_arm),
        epsilon_correct=bool(problem.gaps[k_hat] <= problem.epsilon + 1e-12), pulls=alg.pulls.copy(),
    )
