"""Track-and-Stop for CBAI: Frank–Wolfe steps on the plug-in H_CLB objective, stop by elimination.

Garivier & Kaufmann (2016) sample so that the pull counts approach the optimal allocation
of the lower bound at the current estimate, with forced exploration; Wang et al. (2021,
Frank–Wolfe Sampling) reach it without solving for it, one Frank–Wolfe step on the counts
per pull. For CBAI the lower bound is Lindner et al. (2022), Theorem 1, and its allocation
is the H_CLB design of Definition 2:

    λ* = argmin_λ max_{x ∈ X≥(x*)} ‖x‖²_{A_λ⁻¹} / g(x)²,   g(x) = φᵀx − τ.

The stopping rule is the per-arm interval test that every CBAI algorithm shares
(:class:`~cbai_cli.algorithms.elimination.EliminationState`, updated by
:meth:`Adaptive.tell <cbai_cli.algorithms.base.Adaptive.tell>` with the run's confidence
regime), so δ-correctness is the regime's and does not depend on the sampling rule.
The mathematics and the measurements are in docs/track-and-stop.md.
"""

from __future__ import annotations

import numpy as np

from cbai_cli.algorithms.base import Adaptive
from cbai_cli.numerics.kernels.codes import TRACK_AND_STOP, TRACK_AND_STOP_ROLLOUT
from cbai_cli.numerics.kernels.state import FORCED

#: κ of the answer rule: an arm counts as predicted feasible while φ̂ᵀx − κ·w(x) ≤ τ,
#: w(x) its current confidence half-width (see :meth:`TrackAndStop.empirical_answer`;
#: docs/track-and-stop.md, "Why the answer is optimistic").
OPTIMISM = 1.0
#: The compiled rule of each value of the ``step`` option (``--step``): the last choice of
#: steps 3–4 (the class docstring), or the ``rollout`` step (no forced exploration; its mode
#: decided on a model of the ``ols`` certificate, :mod:`cbai_cli.numerics.kernels.rollout`).
STEP_CODES = {"vertex-or-target": TRACK_AND_STOP, "rollout": TRACK_AND_STOP_ROLLOUT}


class TrackAndStop(Adaptive):
    """Track-and-Stop with Frank–Wolfe steps on the plug-in H_CLB objective and forced
    exploration.

    Each step (one pull; n = pulls so far, A the ridge design):

    1. x̂* = argmax θᵀx over the arms still possible (uncertain or certainly feasible)
       that are predicted feasible, φ̂ᵀx − κ·w(x) ≤ τ with κ = 1 and w(x) the
       half-width of the arm's current interval (first index among ties); the relevant
       set is
       R = U ∩ X≥(x̂*) = {x ∈ U : θᵀx ≥ θᵀx̂*}, or all of U when no arm is predicted
       feasible (the convention of :func:`cbai_cli.kinds.cbai.bounds.at_least_set`).
    2. Forced exploration: if max_{x∈R} ‖x‖²_{A⁻¹} > d/√n — worse than a G-optimal
       allocation of √n pulls on R would give (Kiefer–Wolfowitz) — pull the arm that
       most reduces the variance of the least known relevant arm (G-ACOL's greedy step
       restricted to R). This is the guard against plug-in traps: a wrong x̂* can only
       make the sampling chase arms of R, while every arm of R (the true x* among them
       when x̂* is too low) keeps a variance O(d/√n), so φ̂ becomes right on R and the
       trap closes. Asymptotically the forced pulls are O(√n), a vanishing fraction.
    3. Otherwise a Frank–Wolfe step on the counts for the plug-in objective
       F(N) = max_{y∈R} ‖y‖²_{A_N⁻¹}/ĝ(y)² (Definition 2 with φ̂ for φ and R for X≥(x*),
       A_N = λI + Σ_a N_a aaᵀ): with y* the active target (the maximiser), the vertex of
       the simplex that F decreases fastest along is the arm a maximising
       −∂F/∂N_a = (aᵀA⁻¹y*)²/ĝ(y*)², so pull argmax_a (aᵀA⁻¹y*)² (:meth:`active_target`,
       :meth:`frank_wolfe_arm`). One product with the arm matrix, no design solve.
    4. The vertex a is pulled only if one pull of it lowers y*'s variance more than one pull
       of y* itself, (aᵀA⁻¹y*)²/(1 + aᵀA⁻¹a) > (y*ᵀA⁻¹y*)²/(1 + y*ᵀA⁻¹y*); else y* is pulled
       (:meth:`vertex_or_target`).

    Choices where the adaptation is ambiguous, documented:

    - The answer rule is optimistic by a whole half-width (κ = 1, not the plug-in κ = 0):
      an arm counts as predicted feasible until its prediction lies more than its
      half-width above τ, so with symmetric intervals x̂* is the most rewarding arm not
      yet certified infeasible and R holds the arms tied with it. An x̂* that is too
      rewarding (predicted feasible, truly infeasible) only makes R smaller, and every
      arm it then targets must be certified infeasible anyway; an x̂* that is too poor
      makes R take in arms between it and x* that no certificate needs, and on
      irrelevant-dims d = 10 the few pulls such arms draw in their own directions
      raise log det A, hence every radius of the det regime. With the `ols` regime's
      joint test κ = 1 needed fewer queries than κ = ½ on 8 of 10 held-out instances (as
      many on one, more on one) and on two sets of fresh draws (docs/track-and-stop.md,
      "Why the answer is optimistic").
    - Frank–Wolfe steps instead of tracking a solved design: the solved plug-in design
      (recomputed lazily) cost a design solve of about 10 ms every time n doubled or x̂*
      changed, and it needed more queries than these steps on six of seven instances
      whose design mixes arms (docs/track-and-stop.md, "Frank–Wolfe steps against
      tracking solved designs"). With one target the steps are the Wynn–Fedorov
      sequential procedure and converge to its c-optimal design; with several, F is a
      maximum and the step follows whichever target is active, which need not reach the
      min-max design.
    - The guard of step 4: the derivative does not see that a single pull of an arm off y*'s
      direction adds a direction the pulls so far leave unknown; such a pull then widens the
      `ols` interval of y* (its ‖V⁺y*‖² term and the log-determinant over one more dimension)
      more than it informs it: the derivative's vertex was a near-copy of x*, or a longer arm
      anti-aligned with it, in the first pulls of yes/no driver instances and of a random
      Gaussian draw, where pulling x* itself needed far fewer queries (docs/binary.md,
      "Frank–Wolfe vertex or target"). As pulls accumulate both denominators tend to 1 and the step is the
      Frank–Wolfe step again (the vertex maximises the numerator over all arms, y* included).
    - Arms less rewarding than x̂* get no target: once x̂* is certainly feasible the
      elimination drops them through r̄, so no certificate needs them (Definition 2 has
      no term for them either).
    - Arms already decided leave R (restricting Definition 2 to the uncertain arms):
      their certificate is in hand.
    - An estimated gap of zero would be an infinite target; gaps are floored at a
      millionth of the largest |φ̂ᵀx − τ| over R (or of 1 when all are zero).
    - Ties go to the first index.

    The option ``step`` (``--step``) chooses the last choice: ``vertex-or-target``, step 4
    above, or ``rollout``, which skips step 2 and keeps, per active target, a mode (vertex or
    target) decided on a model of the ``ols`` certificate (it needs that regime;
    :mod:`cbai_cli.numerics.kernels.rollout`, docs/track-and-stop.md, "The rollout step").
    ``rollout`` is the default under ``ols``, ``vertex-or-target`` under the other regimes
    (docs/track-and-stop.md, "Which step is the default").
    """

    #: κ of the answer rule, as the compiled step reads it.
    optimism = OPTIMISM

    @property
    def step(self) -> str:
        """The value of the ``step`` option of this run: given, else its default in the run's
        regime (``rollout`` under ``ols``, the registry entry's ``regime_defaults``)."""
        return self.option("step")

    @property
    def kernel_code(self) -> int:
        """The rule in the compiled step, by :attr:`step`: whole runs go through it (:meth:`Adaptive.compiled`)."""
        return STEP_CODES[self.step]

    @property
    def forced_pulls(self) -> int:
        """The forced-exploration pulls so far: the FORCED slot of the run's state."""
        state, row = self.run
        return int(state.counters[row, FORCED])

    @forced_pulls.setter
    def forced_pulls(self, value: int) -> None:
        state, row = self.run
        state.counters[row, FORCED] = value

    def empirical_answer(self) -> int | None:
        """x̂*: the most rewarding arm that is still possible (uncertain or certainly
        feasible) and predicted feasible, φ̂ᵀx − κ·w(x) ≤ τ with κ = :data:`OPTIMISM` and
        w(x) the half-width of the run's last interval; first index among ties; None
        when there is none."""
        from cbai_cli.numerics.kernels import track_and_stop as rule

        state = self.state
        answer = rule.empirical_answer(self.problem.rewards, self.problem.threshold, state.uncertain, state.feasible,
                                       state.last_upper, self.design.predictions, self.optimism)
        return None if answer < 0 else int(answer)

    def relevant(self, answer: int | None) -> np.ndarray:
        """(K,) bool: R = U ∩ X≥(x̂*), or U when ``answer`` is None."""
        from cbai_cli.numerics.kernels.track_and_stop import relevant_arms

        return relevant_arms(self.problem.rewards, self.state.uncertain, -1 if answer is None else answer)

    def _extremes(self, relevant: np.ndarray) -> tuple[int, float]:
        """(the least known arm of R, the largest |ĝ| over R)."""
        from cbai_cli.numerics.kernels.track_and_stop import relevant_extremes

        return relevant_extremes(self.design.norms2, self.design.predictions, self.problem.threshold, relevant,
                                 self.problem.rewards, -np.inf)

    def exploration_due(self, relevant: np.ndarray) -> bool:
        """Whether max_{x∈R} ‖x‖²_{A⁻¹} exceeds d/√n (step 2 of the class docstring)."""
        from cbai_cli.numerics.kernels.track_and_stop import exploration_due

        least_known, _ = self._extremes(relevant)
        return bool(exploration_due(self.design.norms2, least_known, self.problem.dim, self.design.n_samples))

    def active_target(self, relevant: np.ndarray) -> int:
        """y* = argmax_{x∈R} ‖x‖²_{A⁻¹}/ĝ(x)², the target that sets the plug-in objective F
        (step 3), with ĝ(x) = φ̂ᵀx − τ floored at a millionth of the largest |ĝ| over R."""
        from cbai_cli.numerics.kernels.track_and_stop import active_target

        _, top = self._extremes(relevant)
        return int(active_target(self.design.norms2, self.design.predictions, self.problem.threshold, relevant,
                                 self.problem.rewards, -np.inf, top))

    def frank_wolfe_arm(self, target: int) -> int:
        """argmax_a (aᵀA⁻¹y)² for y = ``arms[target]``: the Frank–Wolfe vertex of step 3."""
        from cbai_cli.numerics.kernels.threads import threads_from
        from cbai_cli.numerics.kernels.track_and_stop import frank_wolfe_arm

        design = self.design
        return int(frank_wolfe_arm(design.arms, design.inverse, target, design.block, threads_from(design.arms)))

    def vertex_or_target(self, target: int, vertex: int) -> int:
        """Step 4: ``vertex`` unless one pull of it lowers the variance of ``target`` no more than
        a pull of ``target`` itself."""
        from cbai_cli.numerics.kernels.track_and_stop import vertex_or_target

        design = self.design
        return int(vertex_or_target(design.arms, design.inverse, design.norms2, target, vertex))

    def select(self) -> int:
        """The next pull, steps 1–4 of the class docstring in one compiled call
        (:func:`cbai_cli.numerics.kernels.track_and_stop.track_and_stop_arm`, built from the same
        pieces as the methods above), or the ``rollout`` step's
        (:func:`cbai_cli.numerics.kernels.rollout.rollout_arm`, its mode in the run's state)."""
        from cbai_cli.numerics.kernels.threads import threads_from
        from cbai_cli.numerics.kernels.track_and_stop import track_and_stop_arm

        design, state = self.design, self.state
        arguments = (design.arms, self.problem.rewards, self.problem.threshold, state.uncertain, state.feasible,
                     state.last_upper, design.inverse, design.norms2, design.predictions, design.n_samples,
                     self.optimism, design.block, threads_from(design.arms), -1, np.empty(0))
        if self.kernel_code == TRACK_AND_STOP_ROLLOUT:
            return self._rollout(arguments)
        arm, forced, _ = track_and_stop_arm(*arguments)
        self.forced_pulls += int(forced)
        return int(arm)

    def _rollout(self, arguments: tuple) -> int:
        """The ``rollout`` step's pull (:func:`cbai_cli.numerics.kernels.rollout.rollout_arm`) from the
        step's ``arguments``, the run's mode slots and the ``ols`` fit's row and prior."""
        from cbai_cli.numerics.kernels.rollout import rollout_arm
        from cbai_cli.numerics.kernels.state import LOG_INVERSE_DELTA, SUBGAUSSIAN

        run, row = self.run
        span, b = self.intervals.fit.state
        prior = self.intervals.prior
        arm, _ = rollout_arm(*arguments, run.counters[row], span.counts[b], span.mean_widths[b],
                             span.mean_thresholds[b], prior.scales, prior.log_weights,
                             span.reals[b, LOG_INVERSE_DELTA], span.reals[b, SUBGAUSSIAN])
        return int(arm)
