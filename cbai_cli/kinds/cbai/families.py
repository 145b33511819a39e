"""The papers' synthetic instances and random ones, by family name (Lindner et al. 2022,
§4.1–4.2; Amani et al. 2019, Appendix F; "Price of Safety in Linear BAI", §5).

Each family's name, kind and parameters are declared in
:mod:`cbai_cli.kinds.cbai.family_declarations` (no numpy there), so the CLI (``cbai generate
FAMILY --d 10``) and generator specs (``irrelevant-dims:d=10,eps=0.05``) are parsed from one
description; this module adds how each is built.
Seeded families draw from ``numpy.random.default_rng(SeedSequence(seed))`` only.

A family whose answer is fixed by its construction declares it as :class:`KnownAnswers`
(as benchmark test problems carry their optimum): the best arm, the feasible set and,
where they have a closed form, H_CLB, H̄_CLB, C⁺_min and the Proposition 1 bound, each
derived in the docstring of the family's answer function. Families drawn at random
declare none.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from cbai_cli.contracts.errors import OptionError, UnknownNameError, unknown_name_message
from cbai_cli.kinds.cbai.family_declarations import DECLARATIONS, Declaration, Parameter
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise, NoiseModel
from cbai_cli.contracts.options import MAGNITUDE_LIMIT, bytes_text, memory_limit, memory_limit_text


@dataclass(frozen=True)
class KnownAnswers:
    """The answers a generated CBAI instance has by construction.

    ``best_arm`` and ``feasible`` are always given; the bounds are given where they have
    a closed form (None: not declared). Indices are rows of the instance's arms.

    Attributes:
        source: where the answers come from (paper section, derivation).
        best_arm: x* ∈ argmax {θᵀx : φᵀx ≤ τ} (Definition 1), None for "no feasible arm".
        feasible: the arms with φᵀx ≤ τ, increasing.
        at_least: X≥(x*) = {x : θᵀx ≥ θᵀx*} (Theorem 1), increasing.
        h_clb: H_CLB = min_λ max_{x∈X≥(x*)} ‖x‖²_{A_λ⁻¹}/g(x)² (Definition 2).
        h_clb_weights: the minimising λ, one weight per arm, when it is unique.
        h_clb_bar: H̄_CLB, the same min-max over all of X (Theorem 2).
        h_clb_bar_weights: its minimising λ, when unique.
        c_min: C⁺_min = min_x |φᵀx − τ| (Proposition 1).
        prop1_bound: Proposition 1's d/(C⁺_min)², d the rank of the arms.
    """

    source: str
    best_arm: int | None
    feasible: tuple[int, ...]
    at_least: tuple[int, ...]
    h_clb: float | None = None
    h_clb_weights: tuple[float, ...] | None = None
    h_clb_bar: float | None = None
    h_clb_bar_weights: tuple[float, ...] | None = None
    c_min: float | None = None
    prop1_bound: float | None = None


#: Bytes per number of the instance file as it is built and written: the float64 array,
#: the Python lists of the file's mapping and the encoder's copy (measured: ~90 bytes a
#: number for ``cbai generate random --d 30 --n 100000 -o x.npz``; YAML text needs more).
BYTES_PER_FILE_NUMBER = 100


@dataclass(frozen=True)
class Size:
    """What a family's instance costs: ``work`` float64 numbers held while it is built
    (temporaries included) and ``file`` numbers written to its file."""

    work: int
    file: int

    @property
    def bytes(self) -> int:
        return 8 * self.work + BYTES_PER_FILE_NUMBER * self.file


@dataclass(frozen=True, kw_only=True)
class Family(Declaration):
    """A named instance generator: its :class:`Declaration` and how it is built.

    ``seeded`` families draw a new instance for every seed (the unit sphere of
    Figure 2); the others are deterministic. ``build`` returns ``(arms, θ, φ, τ)`` for
    ``kind == "cbai"``; for the other kinds it takes ``name`` and ``meta`` as well and
    returns the whole instance (:mod:`cbai_cli.kinds.safe.files`). ``answers``, when given,
    takes the same parameters as ``build`` and returns the instance's
    :class:`KnownAnswers`.
    """

    build: Callable[..., Any]
    answers: Callable[..., KnownAnswers] | None = None
    size: Callable[..., Size] | None = None

    @property
    def takes_noise(self) -> bool:
        """Whether the family takes a noise model (``--noise``, ``--sigma``); the safe kinds
        carry theirs in the instance (see the kind's ``noise_from_generator``)."""
        from cbai_cli.kinds import get

        return get(self.kind).noise_from_generator

    @property
    def seeded(self) -> bool:
        return any(parameter.name == "seed" for parameter in self.parameters)

    def parameter(self, name: str) -> Parameter:
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        valid = ", ".join(p.name for p in self.parameters) or "none"
        raise OptionError(f"family {self.name!r} has no parameter {name!r} (its parameters: {valid})")

    def resolve(self, **params: Any) -> dict[str, Any]:
        """Every parameter's value: ``params`` converted and range-checked, defaults for the rest."""
        values = {p.name: p.default for p in self.parameters}
        for key, value in params.items():
            parameter = self.parameter(key)
            values[key] = coerce(parameter, value, self.name)
        for parameter in self.parameters:
            _check_range(self.name, parameter.name, values[parameter.name])
        self._check_size(values)
        return values

    def _check_size(self, values: dict[str, Any]) -> None:
        """One line, before anything is allocated, when the instance would take more than
        :func:`~cbai_cli.contracts.options.memory_limit` (its size parameters named)."""
        if self.size is None:
            return
        needed = self.size(**{p.name: values[p.name] for p in self.parameters if p.name in ("n", "d")}).bytes
        if needed > memory_limit():
            given = ", ".join(f"{name} = {values[name]}" for name in ("n", "d") if name in values)
            names = " or ".join(name for name in ("n", "d") if name in values)
            raise OptionError(f"{self.name}: {given} would take about {bytes_text(needed)} of memory, more than "
                              f"{memory_limit_text(memory_limit())}: choose a smaller {names}")

    def generate(self, noise: NoiseModel | None = None, **params: Any) -> Any:
        """Build the instance for ``params`` (defaults filled in, types checked)."""
        values = self.resolve(**params)
        label = "-".join([self.name] + [f"{key}{_short(values[key])}" for key in values])
        if not self.takes_noise:
            if noise is not None:
                raise OptionError(f"{self.name}: the noise is part of the {self.kind} instance "
                                  f"file; --noise and --sigma do not apply")
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

    def known_answers(self, **params: Any) -> KnownAnswers | None:
        """The answers of ``generate(**params)``'s instance, or None when the family
        declares none (parameters are checked either way)."""
        values = self.resolve(**params)
        return None if self.answers is None else self.answers(**values)


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def coerce(parameter: Parameter, value: Any, family: str) -> Any:
    """Convert a string or number to the parameter's type, with a one-line error. A bool is
    no number, and an integer parameter given a float takes it only when the float is an
    integer it holds exactly (below 2^53): ``seed=1e30`` is not the integer written."""
    try:
        if isinstance(value, (bool, np.bool_)):
            raise ValueError
        if parameter.type is int:
            if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
                number = float(value)
                if not (number.is_integer() and abs(number) <= 2**53):
                    raise ValueError
            return int(value)
        return parameter.type(value)
    except (TypeError, ValueError, OverflowError):
        raise OptionError(f"{family}: {parameter.name} must be {parameter.type.__name__}, got {value!r}") from None


def _check_range(family: str, name: str, value: Any) -> None:
    if name == "d" and family == "soare-safe" and value < 2:
        raise OptionError(f"{family}: d must be ≥ 2 (arms e_1..e_d and (cos ω, sin ω, 0, …)), got {value}")
    if name == "d" and family == "unit-sphere" and value < 2:
        raise OptionError(f"{family}: d must be ≥ 2 (the unit sphere of R¹ is the two points ±1, so its arms would "
                          f"repeat), got {value}")
    if name == "T" and value < 1:
        raise OptionError(f"{family}: T must be ≥ 1, got {value}")
    if name == "omega" and not 0 < value < math.pi / 2:
        raise OptionError(f"{family}: omega must lie in (0, π/2) so that the extra arm is the runner-up, got {value}")
    if name == "eta0" and not (math.isfinite(value) and value < 0):
        raise OptionError(f"{family}: eta0 must be < 0 so that the zero action is safe, got {value}")
    if name == "eta0" and value < -MAGNITUDE_LIMIT:  # the instance reader's bound
        raise OptionError(f"{family}: eta0 must be at least {-MAGNITUDE_LIMIT:g}, got {value:g}")
    if name == "eta0" and family == "soare-safe":
        from cbai_cli.kinds.safe.files import soare_forced_exploration_scale

        if not soare_forced_exploration_scale(value) > 0:
            raise OptionError(f"{family}: eta0 = {value:g} is too close to 0: the forced-exploration scale γ_FE = "
                              f"0.4·|η₀| rounds to 0 at 12 decimals; give eta0 ≤ -1.3e-12")
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


def irrelevant_dimensions_answers(d: int, eps: float) -> KnownAnswers:
    """Paper §4.1 Instance 1 (d = 10, ε = 0.05: H_CLB = 400, as ``cbai bound`` prints in
    the README).

    Rewards are 0 for the unit arms and 1 ∓ ε for x_d, x_{d+1}; g = −1, −ε, +ε. So
    x_d (row d−1) is optimal, x_{d+1} (row d) the only infeasible arm, X≥ = {x_d, x_{d+1}},
    C⁺_min = ε (ε < 1) and, the arms spanning R^d, Proposition 1 gives d/ε².

    H_CLB: both targets x/|g(x)| = ((1 ∓ ε)/ε)·e_d lie on e_d, and ‖c·e_d‖²_{A_λ⁻¹} =
    c²/(λ_d(1−ε)² + λ_{d+1}(1+ε)²). The larger target ((1+ε)/ε)·e_d is worst and all weight
    on x_{d+1} (the longer arm along e_d) serves it best: H_CLB = 1/ε², λ = e_{d+1}, unique.

    H̄_CLB adds the targets e_i (|g| = 1), each served only by its own arm: value
    max(1/λ_i, 1/(ε²λ_{d+1})) with λ_d = 0 again. Equal terms with (d−1)a + b = 1 give
    a = ε²/(1 + (d−1)ε²), b = 1/(1 + (d−1)ε²) and H̄_CLB = 1/ε² + d − 1.
    """
    scale = 1.0 + (d - 1) * eps**2
    return KnownAnswers(
        source="paper §4.1 instance 1 (x* = x_d); H_CLB = 1/ε² and H̄_CLB = 1/ε² + d − 1 by hand (Definition 2)",
        best_arm=d - 1,
        feasible=tuple(range(d)),
        at_least=(d - 1, d),
        h_clb=1.0 / eps**2,
        h_clb_weights=(0.0,) * d + (1.0,),
        h_clb_bar=1.0 / eps**2 + d - 1,
        h_clb_bar_weights=(eps**2 / scale,) * (d - 1) + (0.0, 1.0 / scale),
        c_min=eps,
        prop1_bound=d / eps**2,
    )


def _sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    points = rng.standard_normal((n, d))
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def unit_sphere(d: int, n: int, seed: int):
    """n arms and θ uniform on the unit sphere; φ = x_i − x_j for the closest pair
    (i < j) in ℓ2 distance; τ = 0 (paper §4.1, Instance 2)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    arms = _sphere(rng, n, d)
    reward = _sphere(rng, 1, d)[0]
    i, j = closest_pair(arms)
    return arms, reward, arms[i] - arms[j], 0.0


# Relative margin on the least squared distance within which candidate pairs are rechecked
# by the exact sum: the screens below round differently from it, by far less.
PAIR_MARGIN = 1e-6
# Up to this dimension a k-d tree finds the near pairs; above it trees degrade to comparing
# every pair, and a screen by blocks of inner products (BLAS) does that faster.
TREE_DIMENSIONS = 8
# Inner products per block of the screen (128 MB of float64).
SCREEN_BLOCK = 2**24


def closest_pair(points: np.ndarray) -> tuple[int, int]:
    """(i, j), i < j, of the two closest of ``points`` (n, d), n ≥ 2, in ℓ2 distance: the
    pair whose squared distance Σ_k (x_ik − x_jk)² is least, the first in row-major order
    among ties, as the argmin over the upper triangle of all n² squared distances.

    Without those n² numbers: a screen (a k-d tree for d ≤ ``TREE_DIMENSIONS``, else blocks
    of inner products) finds every pair within a margin of the least distance, and only
    those pairs' squared distances are computed, as the full matrix would, so the pair is
    the same at O(n·d) memory.
    """
    pairs = _tree_pairs(points) if points.shape[1] <= TREE_DIMENSIONS else _screened_pairs(points)
    squared = np.sum((points[pairs[:, 0]] - points[pairs[:, 1]]) ** 2, axis=-1)
    first, second = pairs[squared == squared.min()].T
    order = np.lexsort((second, first))[0]
    return int(first[order]), int(second[order])


def closest_pair_work(n: int, d: int) -> int:
    """About how many float64 numbers :func:`closest_pair` holds for n points in d dimensions:
    the points and their k-d tree, or the points and one block of the screen with its
    temporaries."""
    if d <= TREE_DIMENSIONS:
        return 4 * n * d + 8 * n
    return 2 * n * d + 4 * min(n * n, max(SCREEN_BLOCK, n))


def _tree_pairs(points: np.ndarray) -> np.ndarray:
    """(m, 2) every pair i < j within (1 + ``PAIR_MARGIN``) of the least distance, by a k-d tree."""
    from scipy.spatial import cKDTree

    tree = cKDTree(points)
    nearest = float(tree.query(points, k=2)[0][:, 1].min())
    return tree.query_pairs(max(nearest * (1.0 + PAIR_MARGIN), np.finfo(float).tiny), output_type="ndarray")


def _screened_pairs(points: np.ndarray) -> np.ndarray:
    """(m, 2) every pair i < j whose squared distance ‖x_i‖² + ‖x_j‖² − 2·x_iᵀx_j is within a
    margin of the least, by blocks of rows against the rows after them."""
    n = points.shape[0]
    norms = np.einsum("ij,ij->i", points, points)
    rows = max(1, SCREEN_BLOCK // n)
    # The screen's rounding error is at most a few ulps of the norms involved.
    slack = 64 * np.finfo(float).eps * float(norms.max(initial=0.0))
    best = np.inf
    found: list[np.ndarray] = []
    for start in range(0, n - 1, rows):
        stop = min(start + rows, n - 1)
        block = norms[start:stop, None] + norms[None, start + 1:] - 2.0 * (points[start:stop] @ points[start + 1:].T)
        # only pairs j > i: column c of the block is point start + 1 + c
        block[np.arange(stop - start)[:, None] >= np.arange(n - start - 1)[None, :] + 1] = np.inf
        least = float(block.min())
        limit = min(best, least) * (1.0 + PAIR_MARGIN) + slack
        if least <= limit:
            i, c = np.nonzero(block <= limit)
            found.append(np.stack([start + i, start + 1 + c], axis=1))
        best = min(best, least)
    pairs = np.concatenate(found)
    approximate = norms[pairs[:, 0]] + norms[pairs[:, 1]] - 2.0 * np.einsum("ij,ij->i", points[pairs[:, 0]],
                                                                          points[pairs[:, 1]])
    return pairs[approximate <= best * (1.0 + PAIR_MARGIN) + slack]


def regret_1d():
    """10 arms 0.1, 0.2, …, 1.0 in d = 1; θ = φ = 1; τ = 0.25 (paper §4.2). The answer is 0.2."""
    arms = (np.arange(1, 11) / 10.0)[:, None]
    return arms, np.ones(1), np.ones(1), 0.25


def regret_1d_answers() -> KnownAnswers:
    """Paper §4.2: the answer is 0.2 (row 1); 0.1 and 0.2 are the feasible arms.

    In d = 1, ‖x‖²_{A_λ⁻¹} = x²/Σλᵢxᵢ², so H = max_x (x/g(x))² / max_i xᵢ², with all weight
    on the longest arm 1.0 (unique). X≥ = {0.2, …, 1.0}; (x/g(x))² = (x/(x − 0.25))² is
    16 at 0.2, 36 at 0.3 and decreasing beyond (7.1 at 0.4): H_CLB = 36, as the README's
    ``cbai solve`` example prints. The only arm outside X≥, 0.1, gives (0.1/0.15)² = 4/9,
    so H̄_CLB = 36 too. C⁺_min = 0.05 (at 0.2 and 0.3): Proposition 1 gives 1/0.05² = 400.
    """
    longest = (0.0,) * 9 + (1.0,)
    return KnownAnswers(
        source="paper §4.2 (answer 0.2); H_CLB = H̄_CLB = 36 by the one-dimensional closed form (Definition 2)",
        best_arm=1,
        feasible=(0, 1),
        at_least=tuple(range(1, 10)),
        h_clb=36.0,
        h_clb_weights=longest,
        h_clb_bar=36.0,
        h_clb_bar_weights=longest,
        c_min=0.05,
        prop1_bound=400.0,
    )


def random_instance(d: int, n: int, seed: int):
    """Arms, θ and φ uniform in [−1, 1]^d, τ = 0, redrawn until some arm is feasible."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    while True:
        arms = rng.uniform(-1, 1, (n, d))
        reward = rng.uniform(-1, 1, d)
        constraint = rng.uniform(-1, 1, d)
        if np.any(arms @ constraint <= 0):
            return arms, reward, constraint, 0.0


FAMILIES: dict[str, Family] = {}


def register(name: str, build: Callable[..., Any], **more: Any) -> None:
    """Family ``name`` as :data:`~cbai_cli.kinds.cbai.family_declarations.DECLARATIONS` declares
    it, built by ``build`` (``more``: its ``answers`` and ``size``)."""
    if name in FAMILIES:
        raise ValueError(f"family {name!r} is already registered")
    declared = DECLARATIONS[name]
    FAMILIES[name] = Family(**{field.name: getattr(declared, field.name) for field in fields(Declaration)},
                            build=build, **more)


register("irrelevant-dims", irrelevant_dimensions, answers=irrelevant_dimensions_answers,
         size=lambda d: Size(3 * d * d, (d + 3) * d))
register("unit-sphere", unit_sphere, size=lambda d, n: Size(closest_pair_work(n, d), (n + 2) * d))
register("regret-1d", regret_1d, answers=regret_1d_answers)
register("random", random_instance, size=lambda d, n: Size(3 * n * d, (n + 2) * d))


def _safe_builder(function: str) -> Callable[..., Any]:
    """A builder of :mod:`cbai_cli.kinds.safe.files`, imported when a safe instance is generated."""

    def build(**values: Any) -> Any:
        from cbai_cli.kinds.safe import files

        return getattr(files, function)(**values)

    build.__name__ = function
    return build


register("amani-a", _safe_builder("amani_a"))
register("amani-b", _safe_builder("amani_b"))
register("soare-safe", _safe_builder("soare_safe"), size=lambda d: Size(3 * (d + 1) * (d + 1), (d + 3) * (d + 1)))


def family(name: str) -> Family:
    """Look a family up by name; unknown names list the valid ones and the closest match."""
    if isinstance(name, str) and name in FAMILIES:
        return FAMILIES[name]
    raise UnknownNameError(unknown_name_message("family", name, FAMILIES), "family")


def make_noise(kind: str | None, sigma: float | None, default_sigma: float) -> NoiseModel:
    """The noise model from ``--noise`` and ``--sigma`` options (None: not given)."""
    kind = "gaussian" if kind is None else kind
    if kind == "binary":
        if sigma is not None:
            raise OptionError("--sigma makes no sense with --noise binary")
        return BinaryNoise()
    if kind != "gaussian":
        raise OptionError(f"--noise must be 'gaussian' or 'binary', got {kind!r}")
    sigma = default_sigma if sigma is None else sigma
    if isinstance(sigma, (bool, np.bool_)) or not isinstance(sigma, numbers.Real):
        raise OptionError(f"--sigma must be a finite number > 0, got {sigma!r}", "sigma")
    if not sigma > 0 or not np.isfinite(sigma):
        raise OptionError(f"--sigma must be a finite number > 0, got {sigma}")
    if sigma > MAGNITUDE_LIMIT:  # the instance reader's bound: σ² must stay finite
        raise OptionError(f"--sigma must be at most {MAGNITUDE_LIMIT:g}, got {sigma:g}")
    return GaussianNoise(float(sigma))


def generate_instance(name: str, noise: str | None = None, sigma: float | None = None, *, truth: bool = True,
                      **params: Any) -> Any:
    """``cbai generate``: the instance of family ``name`` with the parameters given (None:
    not given, the family's default) and, for CBAI families, the noise model ``noise``
    (gaussian or binary) with scale ``sigma``; without ``truth``, the file of the same
    problem without its hidden constraint (kinds whose truth is optional only)."""
    from cbai_cli.kinds import get

    chosen = family(name)
    if not isinstance(truth, bool):  # "no" would be read as true
        raise OptionError(f"truth must be True or False, got {truth!r}", "truth")
    given = {key: value for key, value in params.items() if value is not None}
    for key in given:
        chosen.parameter(key)
    if not truth and not get(chosen.kind).truth_optional:
        raise OptionError(f"--no-truth does not apply to {chosen.name}: the truth of a {chosen.kind} instance is "
                          "part of it")
    if chosen.takes_noise:
        instance = chosen.generate(make_noise(noise, sigma, chosen.default_sigma), **given)
        return instance if truth else instance.without_truth()
    if noise is not None or sigma is not None:
        raise OptionError(f"--noise and --sigma do not apply to {chosen.name}: the noise is part of its "
                          f"{chosen.kind} instance")
    return chosen.generate(**given)

