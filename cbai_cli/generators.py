"""The papers' synthetic instances and random ones, by family name (specs/cbai.md §7,
specs/safe.md §2.8 and §4.7).

Each family declares its parameters, so the CLI (``cbai generate FAMILY --d 10``) and
generator specs (``irrelevant-dims:d=10,eps=0.05``) are parsed from one description.
Seeded families draw from ``numpy.random.default_rng(SeedSequence(seed))`` only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cbai_cli.errors import OptionError, UnknownNameError, unknown_name_message
from cbai_cli.instance import Instance
from cbai_cli.noise import BinaryNoise, GaussianNoise, NoiseModel


@dataclass(frozen=True)
class Parameter:
    """One family parameter: its name, type, default and a line of help."""

    name: str
    type: type
    default: Any
    help: str


@dataclass(frozen=True)
class Family:
    """A named instance generator.

    ``seeded`` families draw a new instance for every seed (the unit sphere of
    Figure 2); the others are deterministic. ``build`` returns ``(arms, θ, φ, τ)`` for
    ``kind == "cbai"``; for the other kinds it takes ``name`` and ``meta`` as well and
    returns the whole instance (:mod:`cbai_cli.safe.files`).
    """

    name: str
    summary: str
    parameters: tuple[Parameter, ...]
    build: Callable[..., Any]
    default_sigma: float = 0.05
    kind: str = "cbai"

    @property
    def takes_noise(self) -> bool:
        """CBAI families take a noise model; the safe kinds carry theirs in the instance."""
        return self.kind == "cbai"

    @property
    def seeded(self) -> bool:
        return any(parameter.name == "seed" for parameter in self.parameters)

    def parameter(self, name: str) -> Parameter:
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        valid = ", ".join(p.name for p in self.parameters) or "none"
        raise OptionError(f"family {self.name!r} has no parameter {name!r} (its parameters: {valid})")

    def generate(self, noise: NoiseModel | None = None, **params: Any) -> Any:
        """Build the instance for ``params`` (defaults filled in, types checked)."""
        values = {p.name: p.default for p in self.parameters}
        for key, value in params.items():
            parameter = self.parameter(key)
            values[key] = coerce(parameter, value, self.name)
        for parameter in self.parameters:
            _check_range(self.name, parameter.name, values[parameter.name])
        label = "-".join([self.name] + [f"{key}{_short(values[key])}" for key in values])
        if not self.takes_noise:
            if noise is not None:
                raise OptionError(f"{self.name}: the noise is part of the {self.kind} instance "
                                  f"(specs/safe.md); --noise and --sigma do not apply")
            return self.build(name=label, meta={"generator": self.name, "params": values}, **values)
        arms, reward, constraint, threshold = self.build(**values)
        noise = noise if noise is not None else GaussianNoise(self.default_sigma)
        return Instance(
            name=label,
            arms=arms,
            reward=reward,
            constraint=constraint,
            threshold=threshold,
            noise=noise,
            meta={"generator": self.name, "params": values},
        )


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def coerce(parameter: Parameter, value: Any, family: str) -> Any:
    """Convert a string or number to the parameter's type, with a one-line error."""
    try:
        if parameter.type is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(value)
        return parameter.type(value)
    except (TypeError, ValueError):
        raise OptionError(f"{family}: {parameter.name} must be {parameter.type.__name__}, got {value!r}") from None


def _check_range(family: str, name: str, value: Any) -> None:
    if name == "d" and family == "soare-safe" and value < 2:
        raise OptionError(f"{family}: d must be ≥ 2 (arms e_1..e_d and (cos ω, sin ω, 0, …)), got {value}")
    if name == "T" and value < 1:
        raise OptionError(f"{family}: T must be ≥ 1, got {value}")
    if name == "omega" and not 0 < value < math.pi / 2:
        raise OptionError(f"{family}: omega must lie in (0, π/2) so that the extra arm is the runner-up, got {value}")
    if name == "eta0" and not (math.isfinite(value) and value < 0):
        raise OptionError(f"{family}: eta0 must be < 0 so that the zero action is safe, got {value}")
    if name in ("d", "n") and value < 1:
        raise OptionError(f"{family}: {name} must be ≥ 1, got {value}")
    if name == "n" and family == "unit-sphere" and value < 2:
        raise OptionError(f"{family}: n must be ≥ 2 (φ is the difference of the closest pair), got {value}")
    if name == "eps" and not 0 < value < 1:
        raise OptionError(f"{family}: eps must lie in (0, 1), got {value}")
    if name == "seed" and value < 0:
        raise OptionError(f"{family}: seed must be ≥ 0, got {value}")


def irrelevant_dimensions(d: int, eps: float):
    """Arms e_1..e_{d−1}, (1−ε)e_d, (1+ε)e_d; θ = φ = e_d; τ = 1 (paper §4.1, Instance 1).

    x_d = (1−ε)e_d is the constrained optimum; x_{d+1} is infeasible.
    """
    arms = np.vstack([np.eye(d)[: d - 1], (1 - eps) * np.eye(d)[d - 1], (1 + eps) * np.eye(d)[d - 1]])
    unit = np.eye(d)[d - 1]
    return arms, unit.copy(), unit.copy(), 1.0


def _sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    points = rng.standard_normal((n, d))
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def unit_sphere(d: int, n: int, seed: int):
    """n arms and θ uniform on the unit sphere; φ = x_i − x_j for the closest pair
    (i < j) in ℓ2 distance; τ = 0 (paper §4.1, Instance 2)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    arms = _sphere(rng, n, d)
    reward = _sphere(rng, 1, d)[0]
    squared = np.sum((arms[:, None, :] - arms[None, :, :]) ** 2, axis=-1)
    squared[np.tril_indices(n)] = np.inf
    i, j = np.unravel_index(np.argmin(squared), squared.shape)
    return arms, reward, arms[i] - arms[j], 0.0


def regret_1d():
    """10 arms 0.1, 0.2, …, 1.0 in d = 1; θ = φ = 1; τ = 0.25 (paper §4.2). The answer is 0.2."""
    arms = (np.arange(1, 11) / 10.0)[:, None]
    return arms, np.ones(1), np.ones(1), 0.25


def random_instance(d: int, n: int, seed: int):
    """Arms, θ and φ uniform in [−1, 1]^d, τ = 0, redrawn until some arm is feasible."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    while True:
        arms = rng.uniform(-1, 1, (n, d))
        reward = rng.uniform(-1, 1, d)
        constraint = rng.uniform(-1, 1, d)
        if np.any(arms @ constraint <= 0):
            return arms, reward, constraint, 0.0


_D = Parameter("d", int, 10, "dimension")
FAMILIES: dict[str, Family] = {}


def register(family: Family) -> None:
    if family.name in FAMILIES:
        raise ValueError(f"family {family.name!r} is already registered")
    FAMILIES[family.name] = family


register(Family("irrelevant-dims", "paper §4.1 instance 1: d−1 irrelevant unit arms and two arms at 1±ε", (
    _D, Parameter("eps", float, 0.05, "distance ε of the two relevant arms from the boundary")), irrelevant_dimensions))
register(Family("unit-sphere", "paper §4.1 instance 2: n arms on the unit sphere, φ from the closest pair", (
    Parameter("d", int, 30, "dimension"), Parameter("n", int, 30, "number of arms"),
    Parameter("seed", int, 0, "random seed")), unit_sphere))
register(Family("regret-1d", "paper §4.2: arms 0.1..1.0 in one dimension, τ = 0.25", (), regret_1d))
register(Family("random", "arms, θ, φ uniform in [−1, 1]^d, τ = 0, at least one feasible arm", (
    Parameter("d", int, 5, "dimension"), Parameter("n", int, 20, "number of arms"),
    Parameter("seed", int, 0, "random seed")), random_instance))


def _safe_builder(function: str) -> Callable[..., Any]:
    """A builder of :mod:`cbai_cli.safe.files`, imported when a safe instance is generated."""

    def build(**values: Any) -> Any:
        from cbai_cli.safe import files

        return getattr(files, function)(**values)

    build.__name__ = function
    return build


register(Family("amani-a", "Safe-LUCB App. F instance A: box [−1, 1]², safety gap Δ > 0 (specs/safe.md §2.8)", (
    Parameter("T", int, 100_000, "horizon T"),), _safe_builder("amani_a"), kind="safe-regret"))
register(Family("amani-b", "Safe-LUCB App. F instance B: box [−1, 1]², Δ = 0, x* on the constraint (§2.8)", (
    Parameter("T", int, 100_000, "horizon T"),), _safe_builder("amani_b"), kind="safe-regret"))
register(Family("soare-safe", "Price of Safety §5: Soare et al. arms with a safety parameter limiting e_2 (§4.7)", (
    Parameter("d", int, 3, "dimension (d + 1 arms)"), Parameter("omega", float, 0.1, "angle ω of the extra arm"),
    Parameter("eta0", float, -0.5, "safety threshold η₀ < 0")), _safe_builder("soare_safe"), kind="safe-bai"))


def family(name: str) -> Family:
    """Look a family up by name; unknown names list the valid ones and the closest match."""
    if name in FAMILIES:
        return FAMILIES[name]
    raise UnknownNameError(unknown_name_message("family", name, FAMILIES))


def make_noise(kind: str | None, sigma: float | None, default_sigma: float) -> NoiseModel:
    """The noise model from ``--noise`` and ``--sigma`` options."""
    kind = kind or "gaussian"
    if kind == "binary":
        if sigma is not None:
            raise OptionError("--sigma makes no sense with --noise binary")
        return BinaryNoise()
    if kind != "gaussian":
        raise OptionError(f"--noise must be 'gaussian' or 'binary', got {kind!r}")
    sigma = default_sigma if sigma is None else sigma
    if not sigma > 0 or not np.isfinite(sigma):
        raise OptionError(f"--sigma must be a finite number > 0, got {sigma}")
    return GaussianNoise(float(sigma))


def generate_instance(name: str, noise: str | None = None, sigma: float | None = None, **params: Any) -> Any:
    """``cbai generate``: the instance of family ``name`` with the parameters given (None:
    not given, the family's default) and, for CBAI families, the noise model ``noise``
    (gaussian or binary) with scale ``sigma``."""
    chosen = family(name)
    given = {key: value for key, value in params.items() if value is not None}
    for key in given:
        chosen.parameter(key)
    if chosen.takes_noise:
        return chosen.generate(make_noise(noise, sigma, chosen.default_sigma), **given)
    if noise is not None or sigma is not None:
        raise OptionError(f"--noise and --sigma do not apply to {chosen.name}: the noise is part of its "
                          f"{chosen.kind} instance")
    return chosen.generate(**given)
