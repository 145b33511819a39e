"""Candidate policies of a Driver scenario as a constrained linear bandit.

Lindner et al. (ICML 2022), Section 4.3 and Appendix C: the arms are pre-computed
policies (Appendix C.3) and the arm of a policy is its feature vector
``f = (f1..f8, 1)`` (Appendix C, Table C.1), whose constant last feature folds the
threshold in. Feedback is binary, ``P(y = +1) = (phi^T x + 1)/2`` (Appendix C.2), which
needs every constraint value in ``[-1, 1]``, so the features of all policies are
normalised into that range (Appendix C.3); :func:`rescale_for_binary` does so one arm
at a time by a positive factor, which keeps every arm's feasibility. Its factors are
read from ``phi`` (they take one value for feasible arms and one for infeasible ones),
so a file without the truth is rescaled by :func:`rescale_without_truth` instead.

:func:`build_bandit` evaluates policies in a scenario's environment and turns the
feature sums into arms: the threshold folded in (constant feature 1, ``phi``
extended by ``-tau``, ``tau = 0``), then, for binary feedback, the rescaling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cbai_cli.driver.arrays import read_only
from cbai_cli.driver.dynamics import HORIZON
from cbai_cli.driver.features import policy_features
from cbai_cli.driver.scenarios import Scenario
from cbai_cli.driver.scenarios import scenario as get_scenario
from cbai_cli.contracts.validation import FieldError

__all__ = [
    "RESCALE_NUDGE",
    "DriverBandit",
    "check_actions",
    "evaluate_policies",
    "fold_threshold",
    "rescale_for_binary",
    "rescale_without_truth",
    "build_bandit",
]

#: Added to both rescaling divisors: keeps them away from 0 and every |phi'^T x| strictly below 1.
RESCALE_NUDGE = 1e-6


@dataclass(frozen=True, eq=False)
class DriverBandit:
    """A Driver scenario as a constrained linear bandit (threshold folded in).

    Attributes:
        scenario: scenario name.
        actions: ``(n, 20, 2)`` the candidate policies.
        raw_features: ``(n, 8)`` their feature sums in the scenario's environment.
        arms: ``(n, 9)`` ``(f1..f8, 1)`` per policy, each row divided by ``scales``.
        scales: ``(n,)`` the positive per-arm divisors (all 1 without rescaling).
        rewards: ``(n,)`` the known reward of each arm. By default
            ``theta^T raw_features`` (rescaling touches only the constraint side);
            with ``rescale_rewards`` ``(theta, 0)^T arms`` as in the authors' code.
        reward_weights: ``(9,)`` ``(theta, 0)``.
        constraint: ``(9,)`` ``phi' = (phi, -tau)``: arm ``k`` is feasible iff
            ``constraint @ arms[k] <= threshold``.
        threshold: 0 (folded in).
        rescaled: whether the per-arm rescaling was applied.
        rescale_rewards: whether ``rewards`` were computed on the rescaled arms.
    """

    scenario: str
    actions: np.ndarray
    raw_features: np.ndarray
    arms: np.ndarray
    scales: np.ndarray
    rewards: np.ndarray
    reward_weights: np.ndarray
    constraint: np.ndarray
    threshold: float
    rescaled: bool
    rescale_rewards: bool

    @property
    def constraint_values(self) -> np.ndarray:
        """``(n,)`` ``phi'^T x`` of every arm (in ``[-1, 1]`` when rescaled)."""
        return self.arms @ self.constraint

    @property
    def feasible(self) -> np.ndarray:
        """``(n,)`` feasibility of every arm (the same with or without rescaling)."""
        return self.constraint_values <= self.threshold


def check_actions(actions: object, field: str = "policies") -> np.ndarray:
    """Action sequences as a finite ``(n, 20, 2)`` float array with entries in ``[-1, 1]``.

    Args:
        actions: ``n`` policies of 20 (steering, acceleration) pairs.
        field: what the actions are called in the error (a file name, say).

    Raises:
        FieldError: (a ``ValueError``) naming ``field`` and the broken rule: the
            shape, the first policy with NaN or infinite actions, or the first
            policy with an action outside ``[-1, 1]``.
    """
    kind = np.asarray(actions).dtype.kind
    if kind not in "iuf":  # complex values would lose their imaginary part, booleans pass as 0 and 1
        raise FieldError(field, f"must be an array of real numbers of shape (n, {HORIZON}, 2), got dtype "
                                f"{np.asarray(actions).dtype}")
    try:
        array = np.asarray(actions, dtype=float)
    except (TypeError, ValueError):
        raise FieldError(field, f"must be an array of numbers of shape (n, {HORIZON}, 2)") from None
    if array.ndim != 3 or array.shape[1:] != (HORIZON, 2) or array.shape[0] < 1:
        raise FieldError(field, f"must have shape (n, {HORIZON}, 2) with n ≥ 1 "
                                f"(n policies of {HORIZON} steering/acceleration pairs), got {array.shape}")
    bad = ~np.isfinite(array)
    if bad.any():
        policy = int(np.argwhere(bad)[0][0])
        raise FieldError(field, f"policy {policy} contains NaN or infinite actions")
    outside = np.abs(array) > 1.0
    if outside.any():
        policy = int(np.argwhere(outside)[0][0])
        raise FieldError(field, f"actions must lie in [-1, 1]; policy {policy} has {array[policy][outside[policy]][0]:g}")
    return array


def evaluate_policies(actions: np.ndarray, scenario: Scenario | str) -> np.ndarray:
    """Feature sums of policies in a scenario's environment.

    Args:
        actions: ``(n, 20, 2)`` policies with actions in ``[-1, 1]``.
        scenario: a :class:`Scenario` or its name.

    Returns:
        ``(n, 8)`` raw (unscaled) features, all policies rolled out as one batch.
    """
    sc = get_scenario(scenario) if isinstance(scenario, str) else scenario
    return policy_features(check_actions(actions), sc.environment)


def fold_threshold(features: np.ndarray, phi: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """Fold the threshold into the arms: the paper's ``f(s) = (f1..f8, 1)`` (Appendix C).

    Args:
        features: ``(n, d)`` raw features.
        phi: ``(d,)`` constraint weights.
        tau: threshold.

    Returns:
        ``(arms (n, d + 1), phi' (d + 1,))`` with ``arms = (features, 1)`` and
        ``phi' = (phi, -tau)``, so ``phi'^T arm = phi^T f - tau = g`` and the new
        threshold is 0.
    """
    features = np.asarray(features, dtype=float)
    arms = np.concatenate([features, np.ones((features.shape[0], 1))], axis=1)
    return arms, np.append(np.asarray(phi, dtype=float), -float(tau))


def rescale_for_binary(arms: np.ndarray, constraint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-arm positive rescaling that puts the constraint values in ``[-1, 1]`` (Appendix C.2, C.3).

    With the threshold folded in, ``g(x) = phi'^T x`` and feasible means
    ``g <= 0``. An infeasible arm (``g > 0``) is divided by ``max_x g(x) + 1e-6``,
    a feasible one (``g <= 0``) by ``-min_x g(x) + 1e-6``. Both divisors are
    nudged by :data:`RESCALE_NUDGE` away from 0: no division by zero when every
    feasible arm has ``g = 0``, and ``|g| < 1`` strictly, so the binary model
    ``P(y = +1) = (g + 1)/2`` never becomes deterministic. Dividing by a positive
    number keeps the sign of ``g`` (every arm keeps its feasibility, an arm on the
    boundary stays there) and keeps the model linear in ``phi'``. (Recomputing
    ``phi'^T x`` from the rescaled arm rounds differently, so an arm whose ``g`` is
    at the level of rounding error, i.e. on the boundary for all purposes, may
    come out on the other side of 0.)

    (The authors' code instead shifted every coordinate of the divided vector by
    -1e-6 / +1e-6, which moves ``g`` by ``-/+ 1e-6 * sum(phi')`` and could flip an
    arm within that distance of the boundary.)

    Args:
        arms: ``(n, d)`` arms with the threshold folded in.
        constraint: ``(d,)`` ``phi'``.

    Returns:
        ``(rescaled arms (n, d), divisors (n,))``; ``rescaled = arms / divisors[:, None]``.
    """
    arms = np.asarray(arms, dtype=float)
    g = arms @ np.asarray(constraint, dtype=float)
    infeasible = g > 0
    # Only the divisor of a class that has members matters; the other is a dummy.
    upper = (g.max() if infeasible.any() else 0.0) + RESCALE_NUDGE
    lower = (-g.min() if (~infeasible).any() else 0.0) + RESCALE_NUDGE
    scales = np.where(infeasible, upper, lower)
    return arms / scales[:, None], scales


def rescale_without_truth(arms: np.ndarray, norm_bound: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-arm positive rescaling into ``(-1, 1)`` that never reads ``phi'``: for files
    without the truth, whose arms must not reveal which are feasible.

    By Cauchy–Schwarz, ``|phi'^T x| <= ||phi'|| ||x|| <= S ||x||`` for every ``phi'`` with
    ``||phi'|| <= S`` (the file's ``constraint_norm_bound``), so dividing arm ``x`` by
    ``S ||x|| + 1e-6`` (:data:`RESCALE_NUDGE`) puts its constraint value strictly inside
    ``(-1, 1)``, as the binary model ``P(y = +1) = (phi'^T x + 1)/2`` needs (Appendix C.2).
    The divisor is positive, so every arm keeps its feasibility, and the model stays
    linear in ``phi'``. The values ``phi'^T x`` are smaller than after
    :func:`rescale_for_binary`, whose divisors come from the truth: the price of not
    knowing it.

    Args:
        arms: ``(n, d)`` arms with the threshold folded in.
        norm_bound: ``S >= ||phi'||``, > 0.

    Returns:
        ``(rescaled arms (n, d), divisors (n,))``; ``rescaled = arms / divisors[:, None]``.
    """
    arms = np.asarray(arms, dtype=float)
    scales = norm_bound * np.linalg.norm(arms, axis=1) + RESCALE_NUDGE
    return arms / scales[:, None], scales


def build_bandit(
    actions: np.ndarray,
    scenario: Scenario | str,
    *,
    rescale: bool = True,
    rescale_rewards: bool = False,
    norm_bound: float | None = None,
) -> DriverBandit:
    """The bandit instance of a scenario for a set of candidate policies.

    Args:
        actions: ``(n, 20, 2)`` candidate policies.
        scenario: a :class:`Scenario` or its name.
        rescale: apply :func:`rescale_for_binary` (needed for binary feedback; a
            Gaussian-feedback instance can keep the raw scale).
        rescale_rewards: compute the rewards on the rescaled arms, reproducing the
            authors' code (which rescaled the feature vectors in place). The default
            keeps each arm's reward ``theta^T f`` on the unscaled features: the best
            arm is the same either way, but which arms the reward test prunes, and so
            query counts, differ.
        norm_bound: when given, rescale with :func:`rescale_without_truth` and this
            ``S >= ||phi'||`` (the arms of a file without the truth) instead of
            :func:`rescale_for_binary`.

    Returns:
        A :class:`DriverBandit`.
    """
    sc = get_scenario(scenario) if isinstance(scenario, str) else scenario
    actions = check_actions(actions)
    raw = policy_features(actions, sc.environment)
    folded, constraint = fold_threshold(raw, sc.phi, sc.tau)
    if rescale and norm_bound is not None:
        arms, scales = rescale_without_truth(folded, norm_bound)
    elif rescale:
        arms, scales = rescale_for_binary(folded, constraint)
    else:
        arms, scales = folded, np.ones(folded.shape[0])
    reward_weights = np.append(sc.theta, 0.0)
    rewards = arms @ reward_weights if rescale_rewards else raw @ sc.theta
    return DriverBandit(
        scenario=sc.name,
        actions=read_only(actions.copy()),
        raw_features=read_only(raw),
        arms=read_only(arms),
        scales=read_only(scales),
        rewards=read_only(rewards),
        reward_weights=read_only(reward_weights),
        constraint=read_only(constraint),
        threshold=0.0,
        rescaled=bool(rescale),
        rescale_rewards=bool(rescale_rewards),
    )
