"""Traffic settings, environments and the three named scenarios of Figure 1.

Lindner et al. (ICML 2022), Section 4.3, Figure 1 and Appendix C.

- Two traffic settings: ``changing_lane`` (one car that drifts from the right
  lane towards the middle lane and back) and ``blocked`` (three standing cars,
  one in each lane). The other cars do not react to the agent, so their
  trajectories are rolled out once, when the :class:`Traffic` is built.
- An :class:`Environment` is a traffic setting plus the agent's start state
  ``(0, -0.1, pi/2, v0)``: ``v0 = 0.41``, or ``0.1`` with blocked traffic.
- A :class:`Scenario` adds the reward ``theta`` and constraint ``(phi, tau)``:
  ``base`` (changing_lane, target velocity ``theta = e1``), ``different-reward``
  (changing_lane, target location ``theta = e2``) and ``different-environment``
  (blocked, target velocity). All share ``phi = (0, 0, 0.3, 0.05, 0.02, 0.5, 0.3, 0.8)``
  and ``tau = 1``. Feasible means ``phi^T f <= tau``.

Every object here is a frozen dataclass whose arrays are read-only, so one
object can be handed to many callers. Nothing is cached at module level: the
lookup functions build a fresh object (a 20-step roll-out of at most three
cars), and callers keep and reuse it, e.g. for all iterations of a CEM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cbai_cli.driver.dynamics import DEFAULT_DYNAMICS, HORIZON, Dynamics, rollout
from cbai_cli.driver.features import DEFAULT_FEATURE_PARAMS, N_FEATURES, FeatureParams
from cbai_cli.driver.road import DEFAULT_ROAD, LEFT_LANE, MIDDLE_LANE, RIGHT_LANE, Road
from cbai_cli.contracts.errors import UnknownNameError

__all__ = [
    "TRAFFIC_NAMES",
    "SCENARIO_NAMES",
    "THETA_TARGET_VELOCITY",
    "THETA_TARGET_LOCATION",
    "PHI",
    "TAU",
    "UnknownScenarioError",
    "Traffic",
    "Environment",
    "Scenario",
    "traffic",
    "environment",
    "scenario",
]


def _frozen(a: np.ndarray | list | tuple, dtype: type = float) -> np.ndarray:
    """A read-only float copy: dataclass fields must not change behind our back."""
    out = np.array(a, dtype=dtype)
    out.setflags(write=False)
    return out


#: Reward of the target-velocity task: feature 1.
THETA_TARGET_VELOCITY = _frozen(np.eye(N_FEATURES)[0])
#: Reward of the target-location task: feature 2.
THETA_TARGET_LOCATION = _frozen(np.eye(N_FEATURES)[1])
#: The constraint weights shared by all scenarios (App. C and Table C.1, last column).
PHI = _frozen([0.0, 0.0, 0.3, 0.05, 0.02, 0.5, 0.3, 0.8])
#: The constraint threshold shared by all scenarios.
TAU = 1.0

AGENT_START_Y = -0.1
AGENT_START_SPEED = 0.41
#: The agent starts slowly in front of the blocking cars.
AGENT_START_SPEED_BLOCKED = 0.1

TRAFFIC_NAMES = ("changing_lane", "blocked")
SCENARIO_NAMES = ("base", "different-reward", "different-environment")


class UnknownScenarioError(UnknownNameError, ValueError):
    """An unknown scenario or traffic name.

    A :class:`ValueError` for library users and a :class:`cbai_cli.contracts.errors.CbaiError`
    so the CLI reports it as a one-line usage error.
    """


def _unknown(kind: str, name: object, valid: tuple[str, ...]) -> UnknownScenarioError:
    return UnknownScenarioError(f"unknown {kind} {name!r}; valid names: {', '.join(valid)}")


@dataclass(frozen=True, eq=False)
class Traffic:
    """The other cars: fixed action sequences and their precomputed trajectories.

    Attributes:
        name: ``changing_lane`` or ``blocked``.
        start_states: ``(m, 4)`` start states of the ``m`` cars.
        actions: ``(m, T, 2)`` their action sequences.
        dynamics: the car model they follow (the agent's).
        trajectories: ``(m, T + 1, 4)`` their states, index 0 = start. Computed from
            the fields above; the cars ignore the agent, so this is done once.
    """

    name: str
    start_states: np.ndarray = field(repr=False)
    actions: np.ndarray = field(repr=False)
    dynamics: Dynamics = DEFAULT_DYNAMICS
    trajectories: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        start = _frozen(self.start_states)
        actions = _frozen(self.actions)
        if start.ndim != 2 or start.shape[1] != 4:
            raise ValueError(f"start_states must be (m, 4), got {start.shape}")
        if actions.ndim != 3 or actions.shape[0] != start.shape[0] or actions.shape[2] != 2:
            raise ValueError(f"actions must be ({start.shape[0]}, T, 2), got {actions.shape}")
        object.__setattr__(self, "start_states", start)
        object.__setattr__(self, "actions", actions)
        object.__setattr__(self, "trajectories", _frozen(rollout(start, actions, self.dynamics)))

    @property
    def n_cars(self) -> int:
        return int(self.start_states.shape[0])

    @property
    def horizon(self) -> int:
        return int(self.actions.shape[1])


@dataclass(frozen=True, eq=False)
class Environment:
    """Everything needed to turn a policy into features (no reward, no constraint).

    Attributes:
        traffic: the other cars.
        agent_start: ``(4,)`` agent start state.
        road: lane geometry (for drawing; the features carry their own copy).
        features: feature constants (Table C.1).
    """

    traffic: Traffic
    agent_start: np.ndarray
    road: Road = DEFAULT_ROAD
    features: FeatureParams = DEFAULT_FEATURE_PARAMS

    def __post_init__(self) -> None:
        start = _frozen(self.agent_start)
        if start.shape != (4,):
            raise ValueError(f"agent_start must be (4,), got {start.shape}")
        object.__setattr__(self, "agent_start", start)

    @property
    def dynamics(self) -> Dynamics:
        """The agent follows the same car model as the other cars."""
        return self.traffic.dynamics

    @property
    def horizon(self) -> int:
        return self.traffic.horizon


@dataclass(frozen=True, eq=False)
class Scenario:
    """A named bandit problem: environment, reward ``theta`` and constraint ``phi^T f <= tau``.

    Attributes:
        name: registry name.
        description: one line for help texts.
        environment: where the policies are evaluated.
        theta: ``(8,)`` reward weights (maximised).
        phi: ``(8,)`` constraint weights.
        tau: threshold; feasible iff ``phi^T f <= tau``.
    """

    name: str
    description: str
    environment: Environment
    theta: np.ndarray
    phi: np.ndarray
    tau: float

    def __post_init__(self) -> None:
        theta, phi = _frozen(self.theta), _frozen(self.phi)
        if theta.shape != (N_FEATURES,) or phi.shape != (N_FEATURES,):
            raise ValueError(f"theta and phi must be ({N_FEATURES},), got {theta.shape} and {phi.shape}")
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "phi", phi)
        object.__setattr__(self, "tau", float(self.tau))


def _changing_lane() -> Traffic:
    # One car starts in the right lane level with the agent's nose, drives
    # straight, steers left for 6 steps, right for 6 and straight again, always
    # with acceleration 0.328 (so it slowly loses speed against friction 1).
    straight = 0.328
    actions = [(0.0, straight)] * 5 + [(1.0, straight)] * 6 + [(-1.0, straight)] * 6 + [(0.0, straight)] * 3
    return Traffic(
        name="changing_lane",
        start_states=[[RIGHT_LANE, 0.0, np.pi / 2, 0.41]],
        actions=[actions],
    )


def _blocked() -> Traffic:
    # Three standing cars, one per lane, staggered ahead of the agent.
    starts = [
        [LEFT_LANE, 0.6, np.pi / 2, 0.0],
        [MIDDLE_LANE, 0.65, np.pi / 2, 0.0],
        [RIGHT_LANE, 0.7, np.pi / 2, 0.0],
    ]
    return Traffic(name="blocked", start_states=starts, actions=np.zeros((3, HORIZON, 2)))


def traffic(name: str) -> Traffic:
    """The traffic setting ``name`` (``changing_lane`` or ``blocked``), trajectories precomputed."""
    if name == "changing_lane":
        return _changing_lane()
    if name == "blocked":
        return _blocked()
    raise _unknown("traffic setting", name, TRAFFIC_NAMES)


def environment(traffic_name: str) -> Environment:
    """The environment with traffic ``traffic_name`` and its agent start state."""
    cars = traffic(traffic_name)
    speed = AGENT_START_SPEED_BLOCKED if traffic_name == "blocked" else AGENT_START_SPEED
    return Environment(traffic=cars, agent_start=[MIDDLE_LANE, AGENT_START_Y, np.pi / 2, speed])


_SCENARIOS = {
    "base": ("changing_lane", THETA_TARGET_VELOCITY, "lane-changing car, reward: drive at speed 0.4"),
    "different-reward": ("changing_lane", THETA_TARGET_LOCATION, "lane-changing car, reward: reach the right lane"),
    "different-environment": ("blocked", THETA_TARGET_VELOCITY, "three standing cars, reward: drive at speed 0.4"),
}


def scenario(name: str) -> Scenario:
    """The named scenario of Figure 1 (see :data:`SCENARIO_NAMES`).

    Raises:
        UnknownScenarioError: (a ``ValueError``) for an unknown name, listing the valid ones.
    """
    if not isinstance(name, str) or name not in _SCENARIOS:
        raise _unknown("scenario", name, SCENARIO_NAMES)
    traffic_name, theta, description = _SCENARIOS[name]
    return Scenario(
        name=name,
        description=description,
        environment=environment(traffic_name),
        theta=theta,
        phi=PHI,
        tau=TAU,
    )
