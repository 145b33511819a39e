"""What each instance family takes, declared without numpy: its name, kind, summary and
parameters (name, type, default, help). :mod:`cbai_cli.kinds.cbai.families` adds the
builders; ``cbai generate --help`` reads these declarations alone, so it loads no numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cbai_cli.contracts.options import Option

#: The Gaussian noise scale σ of a generated CBAI instance when ``--sigma`` is not given.
DEFAULT_SIGMA = 0.05


@dataclass(frozen=True)
class Parameter:
    """One family parameter: its name, type, default and a line of help."""

    name: str
    type: type
    default: Any
    help: str


@dataclass(frozen=True)
class Declaration:
    """A family as the command line and generator specs see it: ``kind`` is the kind of
    instance it builds, ``default_sigma`` its noise scale unless one is given (families
    whose kind carries the noise in the instance ignore it)."""

    name: str
    kind: str
    summary: str
    parameters: tuple[Parameter, ...] = ()
    default_sigma: float = DEFAULT_SIGMA


def _parameter(name: str, type: type, help: str) -> Callable[[Any], Parameter]:
    """The parameter ``name`` of every family that takes it, given its default there."""
    return lambda default: Parameter(name, type, default, help)


_D = _parameter("d", int, "dimension")
_EPS = _parameter("eps", float, "distance ε of the relevant arms from the boundary")
_N = _parameter("n", int, "number of arms")
_SEED = _parameter("seed", int, "random seed")
_T = _parameter("T", int, "horizon T")
_OMEGA = _parameter("omega", float, "angle ω of the extra arm")
_ETA0 = _parameter("eta0", float, "safety threshold η₀ < 0")

DECLARATIONS: dict[str, Declaration] = {declared.name: declared for declared in (
    Declaration("irrelevant-dims", "cbai", "paper §4.1 instance 1: d−1 irrelevant unit arms and two arms at 1±ε",
                (_D(10), _EPS(0.05))),
    Declaration("unit-sphere", "cbai", "paper §4.1 instance 2: n arms on the unit sphere, φ from the closest pair",
                (_D(30), _N(30), _SEED(0))),
    Declaration("regret-1d", "cbai", "paper §4.2: arms 0.1..1.0 in one dimension, τ = 0.25"),
    Declaration("random", "cbai", "arms, θ, φ uniform in [−1, 1]^d, τ = 0, at least one feasible arm",
                (_D(5), _N(20), _SEED(0))),
    Declaration("amani-a", "safe-regret", "Safe-LUCB App. F instance A: box [−1, 1]², safety gap Δ > 0",
                (_T(100_000),)),
    Declaration("amani-b", "safe-regret", "Safe-LUCB App. F instance B: box [−1, 1]², Δ = 0, x* on the constraint "
                "(§2.8)", (_T(100_000),)),
    Declaration("soare-safe", "safe-bai", "Price of Safety §5: Soare et al. arms with a safety parameter limiting e_2 "
                "(§4.7); d + 1 arms", (_D(3), _OMEGA(0.1), _ETA0(-0.5))),
)}


def families_help() -> str:
    """The families by kind, in words: ``irrelevant-dims, …, random (cbai); amani-a, … (safe-regret); …``."""
    kinds = {declared.kind: [] for declared in DECLARATIONS.values()}
    for declared in DECLARATIONS.values():
        kinds[declared.kind].append(declared.name)
    return "; ".join(f"{', '.join(names)} ({kind})" for kind, names in kinds.items())


def generate_options() -> dict[str, Option]:
    """The options of ``cbai generate`` that :func:`~cbai_cli.kinds.cbai.families.generate_instance`
    takes: every family parameter (``--d``, ``--T``), its help naming the families that take it
    and their defaults, one option per name in the order the families declare them; then the
    noise model of CBAI families."""
    taking: dict[str, list[tuple[str, Parameter]]] = {}
    for declared in DECLARATIONS.values():
        for parameter in declared.parameters:
            taking.setdefault(parameter.name, []).append((declared.name, parameter))
    options = {}
    for name, uses in taking.items():
        first = uses[0][1]
        defaults = {f"{parameter.default:g}" for _, parameter in uses}
        where = (f"{', '.join(family for family, _ in uses)}; default {defaults.pop()}" if len(defaults) == 1 else
                 "default " + ", ".join(f"{parameter.default:g} for {family}" for family, parameter in uses))
        options[name] = Option(name, f"--{name}", first.type, f"{first.help[0].upper()}{first.help[1:]} ({where}).")
    options["sigma"] = Option("sigma", "--sigma", float, f"Gaussian noise σ (cbai families; default {DEFAULT_SIGMA:g}).")
    options["noise"] = Option("noise", "--noise", str, "Noise model: gaussian (default) or binary (cbai families).")
    return options
