"""The eight features of the Driver environment (Lindner et al., ICML 2022, Table C.1).

For a state ``(x, y, h, v)`` of the agent and the states of the other cars:

1. target velocity: ``-(v - 0.4)^2``
2. target location: ``-(x - 0.17)^2`` (centre of the right lane)
3. off street: ``1`` if ``|x| > 0.255`` else ``0``
4. not in lane: ``1 / (1 + exp(-b d + a))`` with ``d = min_c (x - c)^2`` over lane
   centres (a *squared* distance), ``b = 10000``, ``a = 10``
5. heading alignment: ``|cos h|`` (0 when driving straight along the road)
6. driving backwards: ``1`` if ``v < 0``
7. too fast: ``1`` if ``v > 0.6``
8. too close to other cars: ``sum_cars exp(-b (c1 dx^2 + c2 dy^2) + b a)`` with
   ``b = 30``, ``a = 0.01``, ``c2 = 1`` and ``c1 = 10``. Table C.1 of the paper says
   ``c1 = 4``; the code that generated the paper's arms uses 10, which is our
   default (``FeatureParams(close_c1=4.0)`` gives the table's value).

A policy's feature vector (its bandit arm) is the sum of these over the 20 states
*after* each step, with the agent and the other cars both already updated.
The same vector serves the reward ``theta^T f`` and the constraint ``phi^T f``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cbai_cli.driver.dynamics import rollout
from cbai_cli.driver.road import DEFAULT_ROAD

if TYPE_CHECKING:  # only for annotations: scenarios imports this module
    from cbai_cli.driver.scenarios import Environment

__all__ = [
    "N_FEATURES",
    "FEATURE_NAMES",
    "FeatureParams",
    "DEFAULT_FEATURE_PARAMS",
    "state_features",
    "trajectory_features",
    "policy_features",
]

N_FEATURES = 8
FEATURE_NAMES = (
    "target velocity",
    "target location",
    "off street",
    "not in lane",
    "heading alignment",
    "driving backwards",
    "too fast",
    "too close",
)


@dataclass(frozen=True)
class FeatureParams:
    """Constants of the features (Table C.1; defaults = the authors' code).

    Attributes:
        target_speed: speed of feature 1 (0.4).
        target_x: x of feature 2, the right lane's centre (0.17).
        half_width: feature 3 fires when ``|x|`` exceeds this (half the road, 0.255).
        lane_centres: lane centres for feature 4.
        lane_b, lane_a: slope and offset of the lane sigmoid (10000, 10).
        speed_limit: feature 7 fires when ``v`` exceeds this (0.6).
        close_b, close_a: scale and offset of the proximity term (30, 0.01).
        close_c1: weight of the lateral distance (10 in the code; Table C.1 prints 4).
        close_c2: weight of the longitudinal distance (1).
    """

    target_speed: float = 0.4
    target_x: float = 0.17
    half_width: float = DEFAULT_ROAD.half_width
    lane_centres: tuple[float, ...] = DEFAULT_ROAD.lane_centres
    lane_b: float = 10000.0
    lane_a: float = 10.0
    speed_limit: float = 0.6
    close_b: float = 30.0
    close_a: float = 0.01
    close_c1: float = 10.0
    close_c2: float = 1.0


DEFAULT_FEATURE_PARAMS = FeatureParams()


def state_features(
    agent: np.ndarray,
    cars: np.ndarray,
    params: FeatureParams = DEFAULT_FEATURE_PARAMS,
) -> np.ndarray:
    """Features of single states (Table C.1), vectorised.

    Args:
        agent: ``(..., 4)`` agent states.
        cars: ``(m, ..., 4)`` states of the ``m`` other cars at the same instants;
            each ``cars[j]`` must broadcast against ``agent`` (e.g. agent
            ``(n, T, 4)`` and cars ``(m, T, 4)``). ``m = 0`` is allowed.
        params: feature constants.

    Returns:
        ``(..., 8)`` feature values, in the order of :data:`FEATURE_NAMES`.
    """
    agent = np.asarray(agent, dtype=float)
    cars = np.asarray(cars, dtype=float)
    x = agent[..., 0]
    y = agent[..., 1]
    h = agent[..., 2]
    v = agent[..., 3]
    out = np.empty(agent.shape[:-1] + (8,))
    out[..., 0] = -np.square(v - params.target_speed)
    out[..., 1] = -np.square(x - params.target_x)
    out[..., 2] = np.abs(x) > params.half_width
    # Squared distance to the nearest lane centre. The exponent a - b*d is at most
    # a = 10, so exp cannot overflow; for large d it underflows harmlessly to 0.
    d = np.square(x - params.lane_centres[0])
    for centre in params.lane_centres[1:]:
        d = np.minimum(d, np.square(x - centre))
    out[..., 3] = 1.0 / (1.0 + np.exp(params.lane_a - params.lane_b * d))
    out[..., 4] = np.abs(np.cos(h))
    out[..., 5] = v < 0
    out[..., 6] = v > params.speed_limit
    close = np.zeros(x.shape)
    # A loop over the (at most three) other cars, not over policies.
    for car in cars:
        dx2 = np.square(x - car[..., 0])
        dy2 = np.square(y - car[..., 1])
        # Exponent at most b*a = 0.3: no overflow.
        weighted = params.close_c1 * dx2 + params.close_c2 * dy2
        close = close + np.exp(-params.close_b * weighted + params.close_b * params.close_a)
    out[..., 7] = close
    return out


def trajectory_features(
    agent_trajectories: np.ndarray,
    car_trajectories: np.ndarray,
    params: FeatureParams = DEFAULT_FEATURE_PARAMS,
) -> np.ndarray:
    """Summed features of whole trajectories: the bandit arm of each policy.

    Args:
        agent_trajectories: ``(n, T + 1, 4)`` agent states, index 0 = start.
        car_trajectories: ``(m, T + 1, 4)`` other cars' states at the same instants.
        params: feature constants.

    Returns:
        ``(n, 8)``: features summed over the ``T`` post-step states ``1..T``
        (the start state does not count, as in the authors' code).
    """
    agent_trajectories = np.asarray(agent_trajectories, dtype=float)
    car_trajectories = np.asarray(car_trajectories, dtype=float)
    if agent_trajectories.ndim != 3 or agent_trajectories.shape[2] != 4:
        raise ValueError(f"agent_trajectories must be (n, T+1, 4), got {agent_trajectories.shape}")
    if car_trajectories.ndim != 3 or car_trajectories.shape[1:] != agent_trajectories.shape[1:]:
        raise ValueError(
            f"car_trajectories must be (m, {agent_trajectories.shape[1]}, 4), got {car_trajectories.shape}"
        )
    per_step = state_features(agent_trajectories[:, 1:], car_trajectories[:, 1:], params)
    return per_step.sum(axis=1)


def policy_features(actions: np.ndarray, environment: Environment) -> np.ndarray:
    """Roll out policies in an environment and return their feature sums.

    Args:
        actions: ``(n, T, 2)`` action sequences (``T`` = the environment's horizon).
        environment: start state, dynamics, precomputed other-car trajectories
            ``(m, T + 1, 4)`` and feature constants.

    Returns:
        ``(n, 8)`` features, one row per policy.
    """
    actions = np.asarray(actions, dtype=float)
    if actions.ndim != 3 or actions.shape[1:] != (environment.horizon, 2):
        raise ValueError(f"actions must have shape (n, {environment.horizon}, 2), got {actions.shape}")
    trajectories = rollout(environment.agent_start, actions, environment.dynamics)
    return trajectory_features(trajectories, environment.traffic.trajectories, environment.features)
