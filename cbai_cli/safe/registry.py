"""The registry of safe-bandit algorithms: names, the instance kind each runs on, options.

The CLI builds ``--algo`` help, ``cbai algorithms`` and its option checks from here, so
help text and code cannot drift apart. This module imports nothing heavy: ``cbai
--help`` reads it without loading numpy or the safe library. Names must not collide
with the CBAI algorithms and aliases of :mod:`cbai_cli.algorithms.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cbai_cli.algorithms.registry import ALGORITHMS, ALIASES
from cbai_cli.errors import OptionError, UnknownNameError, unknown_name_message


@dataclass(frozen=True)
class SafeOption:
    """A ``cbai solve`` option of safe algorithms.

    Attributes:
        flag: the command-line flag (``--confidence-set``); in ``cbai compare`` specs the
            same name without dashes (``safe-lucb:confidence-set=ellipsoid``).
        field: the :class:`~cbai_cli.safe.solving.SafeRunSpec` attribute it sets.
        values: accepted values, for help; ``choices`` when they are a fixed list.
        default: what applies when it is not given, for help.
        help: one line.
        type: ``str``, ``int`` or ``bool`` (a switch).
    """

    flag: str
    field: str
    values: str
    default: str
    help: str
    choices: tuple[str, ...] = ()
    type: type = str

    @property
    def spec_name(self) -> str:
        """The option's name in ``cbai compare`` algorithm specs and study files."""
        return self.flag.lstrip("-")


# One place for every safe-only option, so a CBAI run can say whose option it is.
OPTIONS: dict[str, SafeOption] = {
    option.flag: option
    for option in (
        SafeOption("--exploration", "exploration", "gap | t23 | heuristic | N", "gap if Δ > 0, else t23",
                   "Safe-LUCB's pure-exploration length T': ⌈T_Δ⌉ from the known safety gap, ⌈T_0⌉ "
                   "(the T^{2/3} rule), the plug-in Δ̂ heuristic (not the paper's) or N rounds (specs/safe.md §2.4)"),
        SafeOption("--T", "horizon", "N ≥ 1", "the file's T", "Horizon T of a safe-regret run (the T' rules use it)",
                   type=int),
        SafeOption("--dw", "dw", "ball | ellipsoid", "ball",
                   "Safe-LUCB's exploration set D^w: the paper's ball ‖x‖ ≤ c/(‖B‖S) or the authors' code's "
                   "ellipsoid ‖Bx‖ ≤ c/S (specs/safe.md §2.5d)", ("ball", "ellipsoid")),
        SafeOption("--confidence-set", "confidence_set", "polytope | ellipsoid", "polytope",
                   "Safe-LUCB's confidence set: the L1 outer polytope of the authors' code, or the ellipsoid "
                   "itself (finite action sets; specs/safe.md §2.5a, §2.7)", ("polytope", "ellipsoid")),
        SafeOption("--intersect", "intersect", "switch", "off",
                   "Safe-LUCB: intersect all past confidence polytopes (2-D box; the authors' intersectCLB.m, "
                   "specs/safe.md §2.5b step 5)", type=bool),
        SafeOption("--rule", "rule", "greedy | ratio", "greedy", "LinGapE's arm selection rule (specs/safe.md §3.3)",
                   ("greedy", "ratio")),
        SafeOption("--updates", "updates", "static | dynamic", "static",
                   "Safe-LinGapE's safe scales γ̄: from forced exploration only, or refreshed every pull (§4.5)",
                   ("static", "dynamic")),
        SafeOption("--budget", "budget", "N ≥ 1", "1,000,000",
                   "Stop a BAI run after N pulls with its anytime answer (exit 1)", type=int),
    )
}


@dataclass(frozen=True)
class SafeAlgorithmSpec:
    """One registered safe-bandit algorithm.

    Attributes:
        name: the CLI name.
        kind: the instance kind it runs on (``safe-regret`` or ``safe-bai``).
        summary: one line for help and listings.
        options: the ``cbai solve`` flags it accepts besides --seed, --runs and --json.
    """

    name: str
    kind: str
    summary: str
    options: tuple[str, ...]

    def check_options(self, given: list[str]) -> None:
        """One-line error for the first given flag this algorithm does not use."""
        for flag in given:
            if flag not in self.options:
                accepted = ", ".join(self.options) or "none"
                raise OptionError(f"{flag} does not apply to {self.name} (its options: {accepted})")


SAFE_ALGORITHMS: dict[str, SafeAlgorithmSpec] = {}


def register(spec: SafeAlgorithmSpec) -> None:
    if spec.name in SAFE_ALGORITHMS or spec.name in ALGORITHMS or spec.name in ALIASES:
        raise ValueError(f"algorithm name {spec.name!r} is already registered")
    unknown = [flag for flag in spec.options if flag not in OPTIONS]
    if unknown:
        raise ValueError(f"{spec.name}: unknown option(s) {unknown}")
    SAFE_ALGORITHMS[spec.name] = spec


for _spec in (
    SafeAlgorithmSpec("safe-lucb", "safe-regret",
                      "Safe-LUCB (Amani et al. 2019): explore in the safe ball D^w, then optimistic actions "
                      "in the estimated safe set", ("--exploration", "--T", "--dw", "--confidence-set", "--intersect")),
    SafeAlgorithmSpec("lingape", "safe-bai",
                      "LinGapE (Xu et al. 2018): full pulls, ignores safety (the price-of-safety baseline)",
                      ("--rule", "--budget")),
    SafeAlgorithmSpec("safe-lingape", "safe-bai",
                      "Safe-LinGapE: forced exploration at γ_FE, then LinGapE on the safely scaled arms γ̄_k·x_k",
                      ("--rule", "--updates", "--budget")),
):
    register(_spec)


def names_for(kind: str) -> list[str]:
    """The algorithms that run on instances of ``kind`` (CBAI names for ``cbai``)."""
    if kind == "cbai":
        return list(ALGORITHMS)
    return [name for name, spec in SAFE_ALGORITHMS.items() if spec.kind == kind]


def owners(flag: str) -> list[str]:
    """The safe algorithms that accept ``flag``."""
    return [name for name, spec in SAFE_ALGORITHMS.items() if flag in spec.options]


def algorithm_for_kind(name: str, kind: str) -> SafeAlgorithmSpec | None:
    """The safe spec for ``name`` on an instance of ``kind``; None for a CBAI algorithm on
    a ``cbai`` instance (the CBAI registry resolves it). An algorithm of another kind is a
    one-line error naming the algorithms that do fit."""
    fitting = ", ".join(names_for(kind))
    if name in SAFE_ALGORITHMS:
        spec = SAFE_ALGORITHMS[name]
        if spec.kind != kind:
            raise OptionError(f"algorithm {name!r} runs on {spec.kind} instances, but this is a {kind} instance "
                              f"(algorithms for {kind}: {fitting})")
        return spec
    if name in ALGORITHMS or name in ALIASES:
        if kind != "cbai":
            raise OptionError(f"algorithm {name!r} runs on cbai instances, but this is a {kind} instance "
                              f"(algorithms for {kind}: {fitting})")
        return None
    valid = {**ALGORITHMS, **ALIASES} if kind == "cbai" else {n: None for n in names_for(kind)}
    raise UnknownNameError(unknown_name_message("algorithm", name, valid))


def option_by_spec_name(name: str) -> SafeOption | None:
    """The safe option written ``name`` in a compare spec (``exploration``, ``T``, ``dw``, …)."""
    for option in OPTIONS.values():
        if option.spec_name == name:
            return option
    return None
