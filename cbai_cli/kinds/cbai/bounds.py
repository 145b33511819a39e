"""How hard an instance is: H_CLB and the bounds built on it (paper §3.1, Theorem 2).

- X≥(x*) = {x : θᵀx ≥ θᵀx*}; g(x) = φᵀx − τ.
- H_CLB = min_λ max_{x∈X≥(x*)} ‖x‖²_{A_λ⁻¹}/g(x)² (Definition 2): rescaling each x by
  1/|g(x)| makes it an optimal-design problem with targets {x/|g(x)|}, solved by
  :func:`cbai_cli.numerics.design.solver.optimal_design` to a certified relative gap.
- Theorem 1 (unit Gaussian noise): E[τ] ≥ 2 log(1/(2.4δ))·H_CLB; with noise σ the
  bound scales by σ². Its proof (Appendix A) bounds the binary relative entropy
  kl(δ, 1 − δ) of Kaufmann et al. (2016), Lemma 1, from below by log(1/(2.4δ)); without
  that last step it gives E[τ] ≥ 2 kl(δ, 1 − δ)·H_CLB (``lower_bound_kl``), valid for every
  δ < 1/2 and 25 % higher at δ = 0.05 (docs/lower-bound.md).
- H̄_CLB: the same min-max over all of X. C⁺_min = min_x |g(x)|.
- Proposition 1: H_CLB ≤ H̄_CLB ≤ d/(C⁺_min)², with d the rank of the arms (the
  dimension of the span on which φ is identified; equal to d for spanning arms).
- Theorem 2 (ACOL): N ≤ 8 log(K t̄²/δ²)(1+ε) t̄ H̄_CLB + t̄, t̄ = ⌈−log₂ C⁺_min⌉.

Choices where the paper is silent: with no feasible arm, every arm must be shown
infeasible, so X≥ is taken to be all of X (H_CLB = H̄_CLB); an arm with g(x) = 0 makes
the corresponding bounds infinite, because no finite number of queries decides it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from cbai_cli.numerics.confidence import log_ratio
from cbai_cli.contracts.errors import OptionError
from cbai_cli.kinds.cbai.guess import guess_note
from cbai_cli.contracts.options import OPTIONS, bytes_text, memory_limit, memory_limit_text
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.kinds.cbai.noise import GaussianNoise

SOLVERS = OPTIONS["solver"].choices


@dataclass(frozen=True)
class DesignSummary:
    """A solved min-max design: its value, certificate and weights (K,); ``time_limited`` when
    the solver stopped at its time limit before certifying its tolerance."""

    value: float
    gap: float
    weights: np.ndarray
    solver: str
    time_limited: bool = False

    @property
    def interval(self) -> tuple[float, float]:
        """The certified interval [value·(1 − gap), value] of the min-max (the lower end is
        the solver's certificate, :class:`cbai_cli.numerics.design.solver.Design`)."""
        return self.value * (1.0 - self.gap) if math.isfinite(self.value) else self.value, self.value

    def top(self, count: int | None = None) -> list[dict]:
        """Support points by decreasing weight as ``{arm, weight}``."""
        order = np.argsort(-self.weights, kind="stable")
        order = order[self.weights[order] > 0]
        if count is not None:
            order = order[:count]
        return [{"arm": int(i), "weight": float(self.weights[i])} for i in order]


INFINITE = DesignSummary(math.inf, 0.0, np.zeros(0), "none")


@dataclass(frozen=True)
class BoundReport:
    """Everything ``cbai bound`` reports about one instance; ``solver_notes`` are the notes
    (also in ``notes``) on a time limit reached or a gap left above the tolerance;
    ``guessed_constraint``: the instance's φ is a guess (``--guess-constraint``), and so
    every number is that guess's."""

    name: str
    n_arms: int
    dim: int
    rank: int
    best_arm: int | None
    best_reward: float | None
    n_at_least: int
    n_feasible: int
    h_clb: DesignSummary
    h_clb_bar: DesignSummary
    c_min: float
    prop1_bound: float
    lower_bound: float
    lower_bound_kl: float
    noise_variance: float | None
    acol_upper_bound: float
    delta: float
    epsilon: float
    duplicate_groups: tuple[tuple[int, ...], ...]
    boundary_arms: list[int]
    notes: tuple[str, ...]
    solver_notes: tuple[str, ...]
    theorem1_factor: float
    kl_factor: float
    acol_factor: float
    acol_offset: float
    time_limit: float | None = None
    guessed_constraint: bool = False
    best_arm_label: str | None = None
    h_bernoulli: float | None = None
    h_bernoulli_upper: float | None = None
    lower_bound_bernoulli: float | None = None
    lower_bound_bernoulli_kl: float | None = None

    @property
    def time_limited(self) -> bool:
        """Whether a design solve stopped at :attr:`time_limit` before certifying its tolerance."""
        return self.h_clb.time_limited or self.h_clb_bar.time_limited

    def intervals(self) -> dict[str, list[float | None]]:
        """The certified interval [lower, upper] of H_CLB, H̄_CLB and of each bound built on
        them (the bounds are monotone in H_CLB or H̄_CLB; when a gap exceeds the tolerance the
        reported Theorem 1 bound is the lower end, and the Theorem 2 bound is always the upper end)."""
        h_clb, h_clb_bar = self.h_clb.interval, self.h_clb_bar.interval
        theorem1 = tuple(self.theorem1_factor * h if self.theorem1_factor > 0 else 0.0 for h in h_clb)
        unrelaxed = tuple(self.kl_factor * h for h in h_clb)
        pairs = {"h_clb": h_clb, "h_clb_bar": h_clb_bar, "lower_bound": theorem1, "lower_bound_kl": unrelaxed,
                 "acol_upper_bound": tuple(self.acol_factor * h + self.acol_offset for h in h_clb_bar)}
        # Binary feedback has no σ²-scaled bound: its interval is [null, null], so the keys stay put.
        variance = math.nan if self.noise_variance is None else self.noise_variance
        pairs["lower_bound_noise"] = tuple(variance * bound for bound in theorem1)
        pairs["lower_bound_kl_noise"] = tuple(variance * bound for bound in unrelaxed)
        # Yes/no answers: H_Bern's bracket (reported at its lower end); [null, null] when not computed.
        h_bernoulli = ((math.nan, math.nan) if self.h_bernoulli is None
                       else (self.h_bernoulli, math.inf if self.h_bernoulli_upper is None else self.h_bernoulli_upper))
        pairs["h_bernoulli"] = h_bernoulli
        pairs["lower_bound_bernoulli"] = tuple(self.theorem1_factor * h for h in h_bernoulli)
        pairs["lower_bound_bernoulli_kl"] = tuple(self.kl_factor * h for h in h_bernoulli)
        return {name: [json_number(low), json_number(high)] for name, (low, high) in pairs.items()}

    @property
    def lower_bound_noise(self) -> float | None:
        """Theorem 1 scaled by σ² for Gaussian noise (None for binary feedback)."""
        return None if self.noise_variance is None else self.lower_bound * self.noise_variance

    @property
    def lower_bound_kl_noise(self) -> float | None:
        """:attr:`lower_bound_kl` scaled by σ² for Gaussian noise (None for binary feedback)."""
        return None if self.noise_variance is None else self.lower_bound_kl * self.noise_variance

    @property
    def gap(self) -> float:
        """The larger relative duality gap of the two design solves."""
        return max(self.h_clb.gap, self.h_clb_bar.gap)

    def to_json(self) -> dict:
        return {
            "instance": self.name,
            "guessed_constraint": self.guessed_constraint,
            "n_arms": self.n_arms,
            "dim": self.dim,
            "rank": self.rank,
            "best_arm": self.best_arm,
            "best_arm_label": self.best_arm_label,
            "best_reward": self.best_reward,
            "n_at_least": self.n_at_least,
            "n_feasible": self.n_feasible,
            "h_clb": json_number(self.h_clb.value),
            "h_clb_bar": json_number(self.h_clb_bar.value),
            "c_min": self.c_min,
            "prop1_bound": json_number(self.prop1_bound),
            "lower_bound": json_number(self.lower_bound),
            "lower_bound_noise": json_number(self.lower_bound_noise),
            "lower_bound_kl": json_number(self.lower_bound_kl),
            "lower_bound_kl_noise": json_number(self.lower_bound_kl_noise),
            "h_bernoulli": json_number(self.h_bernoulli),
            "lower_bound_bernoulli": json_number(self.lower_bound_bernoulli),
            "lower_bound_bernoulli_kl": json_number(self.lower_bound_bernoulli_kl),
            "acol_upper_bound": json_number(self.acol_upper_bound),
            "design": self.h_clb.top(),
            "gap": self.gap,
            "solver": self.h_clb.solver,
            "delta": self.delta,
            "duplicates": [list(group) for group in self.duplicate_groups],
            "boundary_arms": self.boundary_arms,
            "intervals": self.intervals(),
            "time_limit": self.time_limit,
            "time_limit_reached": self.time_limited,
            "notes": list(self.notes),
        }


#: ``cbai solve`` and ``cbai compare`` compute an instance's bounds by themselves only up to
#: this many arm entries K·d (``--bound``/``--bounds`` forces them). Measured with one BLAS
#: thread on ``cbai generate random`` instances (benchmarks/bench_bound.py): K·d = 3·10⁵
#: (K = 10⁴, d = 30) takes 1–2.4 s on an idle core, while at K·d = 10⁷ (K = 10⁵, d = 100) the
#: H̄_CLB design is still 2.3e-6 from certified after 300 s.
AUTO_BOUND_ENTRIES = 10**6
#: … and up to this K·d³: the design solver's cost grows with the dimension much faster than
#: with K. CPU seconds of both bounds, one BLAS thread, ``cbai generate random`` (seed 3):
#: K·d³ = 1.6·10⁸ (K = 2·10⁴, d = 20) 0.5 s, 2.7·10⁸ (10⁴, 30) 1.2 s, 10⁸ (10⁵, 10)
#: 0.7 s (unit-sphere 3.2 s); above it 3.2·10⁸ (5,000, 40) 3.5 s, 7·10⁸ (2,000, 70) 6.5 s,
#: 10⁹ (1,000, 100) 9.1 s, 1.6·10⁹ (2.5·10⁴, 40) 24 s, 10¹⁰ (10⁴, 100) 113 s and 2.7·10¹⁰
#: (1,000, 300) 106 s, all within K·d ≤ 10⁶.
AUTO_BOUND_WORK = 3 * 10**8


def bound_skip_reason(n_arms: int, dim: int, asked: bool | None) -> str | None:
    """Why the bounds of a K × d instance are not computed after its runs, or None when they
    are: ``asked`` is ``--bound`` (True), ``--no-bound`` (False) or neither (None: only
    when K·d ≤ :data:`AUTO_BOUND_ENTRIES` and K·d³ ≤ :data:`AUTO_BOUND_WORK`, where they
    always fit in memory).

    Raises:
        OptionError: bounds asked for whose design solves cannot fit in
            :func:`~cbai_cli.contracts.options.memory_limit` (:func:`design_memory`).
    """
    if asked:
        need = design_memory(n_arms, n_arms, dim, "auto")
        if need > memory_limit():
            raise OptionError(f"--bound: the bounds' design solves over K = {n_arms:,} arms in d = {dim} dimensions "
                              f"would hold about {bytes_text(need)}, more than {memory_limit_text(memory_limit())}; "
                              "leave out --bound (--bounds in compare) to run without them", "bound")
    if asked is not None:
        return None if asked else "the bounds were not computed (--no-bound)"
    entries, work = n_arms * dim, n_arms * dim**3
    if entries <= AUTO_BOUND_ENTRIES and work <= AUTO_BOUND_WORK:
        return None
    size = (f"K·d = {entries:,} arm entries, more than {AUTO_BOUND_ENTRIES:,}" if entries > AUTO_BOUND_ENTRIES else
            f"K·d³ = {work:.3g}, more than {AUTO_BOUND_WORK:.0e} (the design solver's cost grows as d³)")
    return f"the bounds were not computed: the instance has {size} (--bound computes them; cbai bound alone does too)"


def json_number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: such values are written as null (the notes say why).
    Every ``--json`` document uses this."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


#: Bytes the ``fw`` design solver holds at its peak per entry of its arms and targets,
#: (K + m)·d: 27–43 measured (``cbai bound``'s H̄_CLB, m = K, on ``cbai generate random``
#: at K = 10⁵ and 4·10⁵, d = 30, peak resident memory less the loaded instance), doubled.
FW_BYTES_PER_ENTRY = 64
#: Bytes cvxpy holds per coefficient of its design problem: each of the m targets is a
#: matrix-fractional cone of (d + 1)² entries, each entry affine in the K weights, so K·m·d²
#: coefficients; 180–240 measured (unit-sphere, K = m = 50 and 100, d = 20: 0.39 and 0.87 GB).
CVXPY_BYTES_PER_COEFFICIENT = 256


#: The solver that does the work of each ``--solver`` choice (``auto``: the fw solver, with a
#: cvxpy fallback on small problems only), and the memory it needs per arm, target and dimension.
_SOLVED_BY = {"auto": "fw", "fw": "fw", "cvxpy": "cvxpy"}
_MEMORY = {"fw": lambda arms, targets, dim: FW_BYTES_PER_ENTRY * (arms + targets) * dim,
           "cvxpy": lambda arms, targets, dim: CVXPY_BYTES_PER_COEFFICIENT * arms * targets * dim * dim}


def design_memory(n_arms: int, n_targets: int, dim: int, solver: str) -> int:
    """Bytes a design solve of ``solver`` (``fw``, ``auto``: the fw solver, or ``cvxpy``) over
    ``n_arms`` arms and ``n_targets`` targets in ``dim`` dimensions holds at its peak
    (estimated from its sizes: :data:`FW_BYTES_PER_ENTRY`, :data:`CVXPY_BYTES_PER_COEFFICIENT`)."""
    return _MEMORY[_SOLVED_BY[solver]](n_arms, n_targets, dim)


def _check_memory(arms: np.ndarray, targets: np.ndarray, solver: str) -> None:
    """One line (:class:`OptionError` naming ``--solver``) when the solve cannot fit in
    :func:`~cbai_cli.contracts.options.memory_limit`, before it starts."""
    (n_arms, dim), n_targets = arms.shape, targets.shape[0]
    need = design_memory(n_arms, n_targets, dim, solver)
    if need <= memory_limit():
        return
    first_order = design_memory(n_arms, n_targets, dim, "fw")
    remedy = (f"--solver fw would hold about {bytes_text(first_order)}" if first_order <= memory_limit()
              else "or use fewer arms or dimensions")
    raise OptionError(f"the {_SOLVED_BY[solver]} design solve over K = {n_arms:,} arms and "
                      f"{n_targets:,} targets in d = {dim} dimensions would hold about {bytes_text(need)}, more than "
                      f"{memory_limit_text(memory_limit())}; {remedy}", "solver")


def _solve(arms: np.ndarray, targets: np.ndarray, solver: str, tolerance: float,
           deadline: float | None = None, rounds: Callable[[int, float], None] | None = None) -> DesignSummary:
    """The design solve, refused first when it cannot fit in memory (:func:`design_memory`).
    ``deadline`` (a :func:`time.monotonic` time) caps every solver: the ``fw`` solver stops
    between iterations (at least one round is made even when it has passed), and a cvxpy
    solve (``--solver cvxpy``, and the fallback of ``auto``) runs in a process stopped at
    the deadline (:func:`cbai_cli.numerics.stoppable.call_until`: its compilation cannot stop
    itself). ``rounds`` is told the round and relative gap of the ``fw`` solver after each
    round."""
    from cbai_cli.numerics.design.solver import optimal_design, unsolvable_at_scale

    _check_memory(arms, targets, solver)
    try:
        if solver == "cvxpy":
            design = _exact(arms, targets, tolerance, deadline, rounds)
        else:
            time_limit = None if deadline is None else max(deadline - time.monotonic(), _LEAST_TIME)
            design = optimal_design(arms, targets, tol=tolerance, time_limit=time_limit, progress=rounds)
            if (solver == "auto" and design.gap > tolerance and not design.time_limited
                    and arms.shape[0] * max(targets.shape[0], 1) <= EXACT_FALLBACK_ENTRIES
                    and design_memory(arms.shape[0], targets.shape[0], arms.shape[1], "cvxpy") <= memory_limit()):
                design = _exact_if_better(design, arms, targets, deadline)
    except ValueError as error:  # every target is an arm: in the span but for the solver's tolerance
        raise unsolvable_at_scale(error) from None
    return DesignSummary(float(design.value), float(design.gap), np.asarray(design.weights), design.solver,
                         design.time_limited)


def _exact(arms: np.ndarray, targets: np.ndarray, tolerance: float, deadline: float | None,
           rounds: Callable[[int, float], None] | None):
    """cvxpy's design (``--solver cvxpy``); with a ``deadline``, solved in a process stopped
    then, and when it is, the ``fw`` solver's first round gives the certified interval."""
    from cbai_cli.numerics.design.solver import optimal_design, optimal_design_cvxpy
    from cbai_cli.numerics.stoppable import call_until

    if deadline is None:
        return optimal_design_cvxpy(arms, targets)
    finished, design = call_until(deadline, optimal_design_cvxpy, arms, targets)
    if finished:
        return design
    return optimal_design(arms, targets, tol=tolerance, time_limit=_LEAST_TIME, progress=rounds)


def _exact_if_better(design, arms: np.ndarray, targets: np.ndarray, deadline: float | None = None):
    """The conic solve of ``auto``'s fallback (Clarabel only, stopped after
    :data:`EXACT_FALLBACK_SECONDS`, and in a process stopped at ``deadline`` when there is
    one), kept only when it certifies a smaller gap than ``design``: the first-order design,
    already certified to its own gap, is never lost to a failed or stopped fallback."""
    from cbai_cli.numerics.design.solver import DesignSolverError, optimal_design_cvxpy
    from cbai_cli.numerics.stoppable import call_until

    solve = partial(optimal_design_cvxpy, time_limit=EXACT_FALLBACK_SECONDS, also_scs=False)
    try:
        if deadline is None:
            exact = solve(arms, targets)
        else:
            finished, exact = call_until(deadline, solve, arms, targets)
            if not finished:
                return design
    except DesignSolverError:
        return design
    return exact if exact.gap < design.gap else design


#: Seconds the conic solver of ``auto``'s fallback may take, and the largest problem
#: (arms × targets) it is tried on: at 100 × 100 (unit-sphere d = 30, n = 100, gaps down
#: to 10⁻⁴) cvxpy's compilation alone took 12 s, Clarabel stopped without an answer and
#: SCS's set-up took 43 s, for a worse design than the first-order one's.
EXACT_FALLBACK_SECONDS = 10.0
EXACT_FALLBACK_ENTRIES = 2_500

#: The time limit a solve gets when the cap was used up by an earlier one: one round.
_LEAST_TIME = 1e-9


def at_least_set(instance: Instance) -> np.ndarray:
    """(K,) bool: X≥(x*) = {x : θᵀx ≥ θᵀx*}, or all arms when none is feasible."""
    if instance.best_reward is None:
        return np.ones(instance.n_arms, dtype=bool)
    return instance.rewards >= instance.best_reward


def boundary_mask(instance: Instance) -> np.ndarray:
    """(K,) bool: the arms on the constraint boundary, |g(x)| ≤ 1e−12
    (:attr:`~cbai_cli.kinds.cbai.instance.Instance.boundary_arms`, the one definition)."""
    mask = np.zeros(instance.n_arms, dtype=bool)
    mask[instance.boundary_arms] = True
    return mask


def undecidable_arms(instance: Instance) -> list[int]:
    """The boundary arms of X≥(x*): no finite number of queries decides whether they are
    feasible, and the answer depends on it (they are at least as rewarding as x*), so
    every algorithm keeps them uncertain forever and H_CLB is infinite. Boundary arms
    less rewarding than x* are dropped once x* is known feasible: they make only H̄_CLB
    and the Theorem 2 bound infinite."""
    return np.flatnonzero(boundary_mask(instance) & at_least_set(instance)).tolist()


def undecidable_reason(instance: Instance) -> str | None:
    """"arm K lies exactly on the constraint boundary: no algorithm can decide it", or None
    when the instance has no undecidable arm (:func:`undecidable_arms`)."""
    arms = undecidable_arms(instance)
    if not arms:
        return None
    if len(arms) == 1:
        return f"arm {arms[0]} lies exactly on the constraint boundary: no algorithm can decide it"
    listed = ", ".join(map(str, arms[:10])) + (f" and {len(arms) - 10} more" if len(arms) > 10 else "")
    return f"arms {listed} lie exactly on the constraint boundary: no algorithm can decide them"


def h_clb_design(instance: Instance, arms_mask: np.ndarray, solver: str = "auto", tolerance: float = 1e-6,
                 deadline: float | None = None, rounds: Callable[[int, float], None] | None = None) -> DesignSummary:
    """min_λ max_{x ∈ mask} ‖x‖²_{A_λ⁻¹}/g(x)² over the learner's arms; infinite when a
    masked arm lies on the boundary (:func:`boundary_mask`). ``deadline``, ``rounds``: see
    :func:`_solve`."""
    arms = instance.problem.arms
    gaps = instance.gaps[arms_mask]
    if np.any(boundary_mask(instance)[arms_mask]):
        return INFINITE
    targets = arms[arms_mask] / np.abs(gaps)[:, None]
    return _solve(arms, targets, solver, tolerance, deadline, rounds)


def _design_rounds(progress: Any, name: str) -> Callable[[int, float], None] | None:
    """Tell ``progress`` (anything with :meth:`cbai_cli.run.progress.Progress.update`; None:
    nothing) that the design of ``name`` starts, and return what tells it its rounds."""
    if progress is None:
        return None
    progress.update(None, "{} design", name)
    return lambda round_, gap: progress.update(None, "{} design, round {}, relative gap {:.1e}", name, round_, gap)


def oracle_design(instance: Instance) -> np.ndarray:
    """(K,) weights of the H_CLB design, the Oracle's allocation (Appendix B.1)."""
    summary = h_clb_design(instance, at_least_set(instance), tolerance=1e-6)
    if not math.isfinite(summary.value):
        raise OptionError("the oracle has no finite design: an arm of X≥(x*) lies exactly on the constraint boundary")
    return summary.weights


def _uncertified_notes(h_clb: DesignSummary, h_clb_bar: DesignSummary, tolerance: float) -> list[str]:
    """A note for each design the solver stopped before certifying to ``tolerance``: the
    gap it reached and the interval it proves, since its value is then only an upper
    bound on the quantity."""
    notes = []
    for name, design in (("H_CLB", h_clb), ("H̄_CLB", h_clb_bar)):
        if name == "H̄_CLB" and design is h_clb:
            continue
        if math.isfinite(design.value) and design.gap > tolerance:
            digits = min(15, max(6, 2 - math.floor(math.log10(design.gap))))
            notes.append(f"the design solver ({design.solver}) stopped at a relative gap of {design.gap:.1e}, "
                         f"short of its target {tolerance:g}: {name} lies between "
                         f"{design.value * (1 - design.gap):.{digits}g} and {design.value:.{digits}g} (the table shows "
                         "the upper end" + ("; Theorem 1 uses the lower end)" if name == "H_CLB" else ")"))
    return notes


def kl_of_errors(delta: float) -> float:
    """kl(δ, 1 − δ) = (1 − 2δ)·log((1 − δ)/δ), the binary relative entropy between a
    δ-correct algorithm's chances of one answer on an instance and on its alternative
    (Kaufmann et al. 2016, Lemma 1 and Remark 2); 0 for δ ≥ 1/2, where it bounds nothing.

    Theorem 1's proof uses kl(δ, 1 − δ) ≥ log(1/(2.4δ)); cbai reports both bounds.
    """
    if delta >= 0.5:
        return 0.0
    return (1.0 - 2.0 * delta) * (math.log1p(-delta) - math.log(delta))


#: ``cbai bound`` computes H_Bern (:mod:`cbai_cli.kinds.cbai.bernoulli_bound`) of a yes/no instance only up
#: to this many targets × arms × d² (the work of one cutting-plane round's inner Newton solves):
#: on ``cbai driver-arms --n 200 --seed 7`` (3 × 200 × 81 = 48,600) it takes 16 rounds, 0.2 s of CPU
#: (benchmarks/results/bench_bernoulli_bound.json).
BERNOULLI_WORK = 10**7


def bernoulli_h(instance: Instance, at_least: np.ndarray,
                start: np.ndarray) -> tuple[float | None, float | None, str | None]:
    """(H_Bern of a yes/no instance, certified from below, and the upper end of its certified
    bracket, both to :mod:`cbai_cli.kinds.cbai.bernoulli_bound`'s tolerance, or None; a note when
    they are None or the gap is above the tolerance). ``start``: the H_CLB design (K,), the first
    allocation."""
    from cbai_cli.kinds.cbai.bernoulli_bound import bernoulli_design

    arms = instance.problem.arms
    work = int(at_least.sum()) * arms.shape[0] * arms.shape[1] ** 2
    if work > BERNOULLI_WORK:
        return None, None, (f"the bound with the answers' Bernoulli relative entropies was not computed: "
                            f"targets × K × d² = {work:.3g}, more than {BERNOULLI_WORK:.0e}")
    try:
        design = bernoulli_design(arms, instance.truth.constraint, instance.problem.threshold, at_least, start)
    except (ValueError, np.linalg.LinAlgError) as error:  # LinAlgError: a singular Newton system
        return None, None, f"the bound with the answers' Bernoulli relative entropies was not computed: {error}"
    note = None if design.gap <= 1e-3 else (f"the Bernoulli bound's cutting planes stopped at a certified relative gap "
                                             f"of {design.gap:.1e}: H_Bern is the lower end of its interval")
    return design.h_bernoulli, (0.5 / design.lower if design.lower > 0 else math.inf), note


def _option(name: str, value):
    """A parameter of :func:`compute_bounds` checked as option ``name`` (None: its default)."""
    return OPTIONS[name].default if value is None else OPTIONS[name].check(value)


def compute_bounds(instance: Instance, delta: float = OPTIONS["delta"].default, solver: str = "auto",
                   tolerance: float = OPTIONS["tolerance"].default, epsilon: float = OPTIONS["rounding_epsilon"].default,
                   time_limit: float | None = None, progress: Any = None, bernoulli: bool = True) -> BoundReport:
    """All the quantities of ``cbai bound`` for ``instance`` at confidence δ (``bernoulli``
    False leaves out H_Bern of a yes/no instance, which only ``bound`` and ``solve`` show).

    ``tolerance``: the relative gap, in (0, 1), to which the design solves are certified;
    ``epsilon``: ACOL's rounding ε of Theorem 2 (the option ``rounding_epsilon``).
    ``time_limit``: seconds shared by the two design solves (H_CLB, then H̄_CLB) of the
    ``fw`` solver, after which they stop with certified intervals (checked between
    iterations, so the call may overrun by one iteration and one final certificate).
    Uncapped, the result is deterministic; capped, where the solves stop depends on the
    machine's speed and load, so the result is not reproducible across machines.
    ``progress`` (a :class:`cbai_cli.run.progress.Progress`) is told which design is being solved
    and its rounds; it changes nothing else.

    Every parameter is checked as the option of :data:`cbai_cli.contracts.options.OPTIONS` it is
    (:class:`OptionError` naming it); None is its default.
    """
    delta = _option("delta", delta)
    solver = _option("solver", solver)
    tolerance = _option("tolerance", tolerance)
    epsilon = _option("rounding_epsilon", epsilon)
    time_limit = OPTIONS["time_limit"].check(time_limit)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    arms = instance.problem.arms
    gaps = instance.gaps
    guessed = guess_note(instance)
    notes: list[str] = [] if guessed is None else [guessed]
    rank = int(np.linalg.matrix_rank(arms))
    if rank < arms.shape[1]:
        notes.append(f"the arms span a {rank}-dimensional subspace of R^{arms.shape[1]}; "
                     "φ is identified only there, and the bounds are computed on that span")
    at_least = at_least_set(instance)
    if instance.best_arm is None:
        notes.append("no arm is feasible: the answer is 'no feasible arm', and every arm must be shown "
                     "infeasible, so X≥ is all of X")
    boundary = instance.boundary_arms.tolist()
    if boundary:
        notes.append(f"arm(s) {', '.join(map(str, boundary[:10]))} lie exactly on the constraint boundary "
                     "(g(x) = 0): no finite number of queries decides them, so the bounds that involve them are infinite")
    undecidable = undecidable_reason(instance)
    if undecidable is not None:
        notes.append(f"{undecidable}: solve and compare run on this instance only with --budget")
    duplicates = instance.duplicate_groups
    if duplicates:
        notes.append(f"{sum(len(group) for group in duplicates)} arms are copies in {len(duplicates)} group(s); "
                     "naming any copy of the best arm is a correct answer")
    h_clb = h_clb_design(instance, at_least, solver, tolerance, deadline, _design_rounds(progress, "H_CLB"))
    everything = np.ones(instance.n_arms, dtype=bool)
    h_clb_bar = h_clb if at_least.all() else h_clb_design(instance, everything, solver, tolerance, deadline,
                                                          _design_rounds(progress, "H̄_CLB"))
    solver_notes = []
    if h_clb.time_limited or h_clb_bar.time_limited:
        solver_notes.append(f"the design solver's time limit of {time_limit:g} s was reached before it certified its target gap "
                     f"{tolerance:g}: the intervals below are certified, but where a capped solve stops "
                     "depends on the machine's speed and load, so this result is not reproducible across machines")
    solver_notes.extend(_uncertified_notes(h_clb, h_clb_bar, tolerance))
    notes.extend(solver_notes)
    c_min = float(np.min(np.abs(gaps)))
    # C⁺_min² underflows to 0 below about 1e-162: d/C⁺_min² is then beyond float's range, or 0
    # when every arm is zero (rank 0: nothing to identify).
    squared = c_min**2
    prop1 = math.inf if boundary else rank / squared if squared > 0 else (math.inf if rank else 0.0)
    log_term = log_ratio(1.0, 2.4 * delta, math.log(2.4) + math.log(delta))
    if log_term <= 0:
        notes.append("for δ ≥ 1/2.4 Theorem 1 gives no positive lower bound"
                     + (" (its unrelaxed form 2 kl(δ, 1 − δ)·H_CLB does for δ < 1/2)" if delta < 0.5 else ""))
    # Theorem 1 needs a lower bound on H_CLB: the design's value is one only to within its
    # certified gap, so a design certified less tightly than the default tolerance (not
    # certified, or asked for a loose tolerance such as 0.5) enters by its lower end.
    precise = h_clb.gap <= min(tolerance, OPTIONS["tolerance"].default)
    certified_h_clb = h_clb.value if precise else h_clb.value * (1.0 - h_clb.gap)
    theorem1_factor = 2.0 * log_term if log_term > 0 else 0.0
    lower = theorem1_factor * certified_h_clb
    kl_factor = 2.0 * kl_of_errors(delta)
    if not boundary:
        t_bar = max(1, math.ceil(-math.log2(c_min)))
        log_acol = log_ratio(instance.n_arms * t_bar**2, delta**2, 2.0 * math.log(delta))
        acol_factor, acol_offset = 8 * log_acol * (1 + epsilon) * t_bar, float(t_bar)
        acol = acol_factor * h_clb_bar.value + acol_offset
    else:
        acol_factor, acol_offset, acol = math.inf, 0.0, math.inf
    variance = instance.noise.variance if isinstance(instance.noise, GaussianNoise) else None
    h_bernoulli = h_bernoulli_upper = None
    if bernoulli and variance is None and math.isfinite(h_clb.value):
        h_bernoulli, h_bernoulli_upper, note = bernoulli_h(instance, at_least, h_clb.weights)
        notes.extend([note] if note else [])
    return BoundReport(
        name=instance.name,
        n_arms=instance.n_arms,
        dim=arms.shape[1],
        rank=rank,
        best_arm=instance.best_arm,
        best_reward=instance.best_reward,
        n_at_least=int(at_least.sum()),
        n_feasible=int(instance.feasible.sum()),
        h_clb=h_clb,
        h_clb_bar=h_clb_bar,
        c_min=c_min,
        prop1_bound=prop1,
        lower_bound=lower,
        lower_bound_kl=kl_factor * certified_h_clb,
        noise_variance=variance,
        acol_upper_bound=acol,
        delta=delta,
        epsilon=epsilon,
        # a copy: the instance caches its list, and a change made through a report would reach the next one
        duplicate_groups=tuple(tuple(group) for group in duplicates),
        boundary_arms=boundary,
        notes=tuple(notes),
        solver_notes=tuple(solver_notes),
        theorem1_factor=theorem1_factor,
        kl_factor=kl_factor,
        acol_factor=acol_factor,
        acol_offset=acol_offset,
        time_limit=time_limit,
        guessed_constraint=instance.guessed_constraint,
        best_arm_label=instance.label(instance.best_arm),
        h_bernoulli=h_bernoulli,
        h_bernoulli_upper=h_bernoulli_upper,
        lower_bound_bernoulli=None if h_bernoulli is None else theorem1_factor * h_bernoulli,
        lower_bound_bernoulli_kl=None if h_bernoulli is None else kl_factor * h_bernoulli,
    )
