"""Point-mass car dynamics of the Driver environment (Lindner et al., ICML 2022, Appendix C).

State ``s = (x, y, h, v)``: position, heading ``h`` (radians, ``pi/2`` points up
the road, i.e. towards +y) and speed ``v``. Action ``a = (a1, a2)``: steering and
acceleration, both meant to lie in ``[-1, 1]``. One step of length ``dt``::

    x <- x + v cos(h) dt
    y <- y + v sin(h) dt
    h <- h + v a1 dt
    v <- clip(v + (a2 - friction * v) dt, -speed_limit, speed_limit)

Every increment is computed from the state *before* the step. The paper's
formula in Appendix C omits ``dt``; the authors' code multiplies every increment
by ``dt = 0.2``, and that is what produced the paper's arms, so we do too.

Everything here is vectorised over a batch of cars: a roll-out of ``n`` action
sequences loops over the time steps only, never over the cars.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["HORIZON", "STATE_DIM", "ACTION_DIM", "Dynamics", "DEFAULT_DYNAMICS", "step", "rollout"]

#: Episode length T: a policy is a sequence of 20 actions (the environment is deterministic).
HORIZON = 20
#: (x, y, h, v)
STATE_DIM = 4
#: (steering, acceleration)
ACTION_DIM = 2


@dataclass(frozen=True)
class Dynamics:
    """Constants of the car model (Appendix C).

    Attributes:
        dt: length of one time step (0.2 in the authors' code).
        friction: the friction coefficient alpha (1).
        speed_limit: speed is clipped to ``[-speed_limit, speed_limit]`` after every step (1).
    """

    dt: float = 0.2
    friction: float = 1.0
    speed_limit: float = 1.0

    def __post_init__(self) -> None:
        if not (self.dt > 0 and np.isfinite(self.dt)):
            raise ValueError(f"dt must be positive and finite, got {self.dt!r}")
        if not (self.speed_limit > 0):
            raise ValueError(f"speed_limit must be positive, got {self.speed_limit!r}")


DEFAULT_DYNAMICS = Dynamics()


def step(states: np.ndarray, actions: np.ndarray, dynamics: Dynamics = DEFAULT_DYNAMICS) -> np.ndarray:
    """Advance a batch of cars by one time step.

    Args:
        states: ``(..., 4)`` current states ``(x, y, h, v)``.
        actions: ``(..., 2)`` actions ``(a1, a2)``, broadcastable against ``states[..., 0]``.
            Actions are used as given (no clipping here: the cross-entropy method
            clips its samples, and a user-supplied policy is validated by the caller).
        dynamics: model constants.

    Returns:
        ``(..., 4)`` new states, a fresh array (the input is not modified).
    """
    states = np.asarray(states, dtype=float)
    actions = np.asarray(actions, dtype=float)
    new = _advance(
        states[..., 0], states[..., 1], states[..., 2], states[..., 3], actions[..., 0], actions[..., 1], dynamics
    )
    return np.stack(np.broadcast_arrays(*new), axis=-1)


def _advance(
    x: np.ndarray,
    y: np.ndarray,
    h: np.ndarray,
    v: np.ndarray,
    a1: np.ndarray,
    a2: np.ndarray,
    dynamics: Dynamics,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One step on the state components; the single place the update formula lives."""
    dt = dynamics.dt
    # All four increments read the pre-step (x, y, h, v): the new heading must not
    # leak into this step's position update. The grouping (v * cos h) * dt follows
    # the reference implementation, so our features match its arms as far as
    # floating point allows.
    return (
        x + (v * np.cos(h)) * dt,
        y + (v * np.sin(h)) * dt,
        h + (v * a1) * dt,
        np.clip(v + (a2 - dynamics.friction * v) * dt, -dynamics.speed_limit, dynamics.speed_limit),
    )


def rollout(
    start: np.ndarray,
    actions: np.ndarray,
    dynamics: Dynamics = DEFAULT_DYNAMICS,
) -> np.ndarray:
    """Roll out ``n`` action sequences from a common (or per-sequence) start state.

    Args:
        start: ``(4,)`` one start state for all sequences, or ``(n, 4)`` one per sequence.
        actions: ``(n, T, 2)`` action sequences (``T = 20`` for the Driver policies).
        dynamics: model constants.

    Returns:
        ``(n, T + 1, 4)`` trajectories; index 0 is the start state, index ``t`` the
        state after ``t`` steps. The loop runs over the ``T`` time steps only; each
        step advances all ``n`` cars with one vectorised call.
    """
    actions = np.asarray(actions, dtype=float)
    if actions.ndim != 3 or actions.shape[2] != ACTION_DIM:
        raise ValueError(f"actions must have shape (n, T, {ACTION_DIM}), got {actions.shape}")
    n, horizon, _ = actions.shape
    start = np.asarray(start, dtype=float)
    if start.shape not in ((STATE_DIM,), (n, STATE_DIM)):
        raise ValueError(f"start must have shape ({STATE_DIM},) or ({n}, {STATE_DIM}), got {start.shape}")
    trajectory = np.empty((n, horizon + 1, STATE_DIM))
    trajectory[:, 0] = start
    # Work on contiguous component vectors (n,) rather than strided columns of an
    # (n, 4) array: about a third faster for the CEM's batches of 50.
    x, y, h, v = (np.ascontiguousarray(trajectory[:, 0, k]) for k in range(STATE_DIM))
    a1 = np.ascontiguousarray(actions[:, :, 0].T)  # (T, n)
    a2 = np.ascontiguousarray(actions[:, :, 1].T)
    for t in range(horizon):
        x, y, h, v = _advance(x, y, h, v, a1[t], a2[t], dynamics)
        trajectory[:, t + 1, 0] = x
        trajectory[:, t + 1, 1] = y
        trajectory[:, t + 1, 2] = h
        trajectory[:, t + 1, 3] = v
    return trajectory
