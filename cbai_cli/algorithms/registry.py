"""The one registry of CBAI algorithms: names, capabilities, aliases.

The CLI lists algorithms from here, so help text and code cannot drift apart.
Registering a name or alias twice is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from cbai_cli.errors import OptionError, UnknownNameError, unknown_name_message

ROUND_REGIMES = ("static",)
ADAPTIVE_REGIMES = ("theory", "det", "tuned")
# The paper's tuned multiplier √β = 0.5 (authors' ``sqbeta_tuned``).
PAPER_TUNED_BETA = 0.25


@dataclass(frozen=True)
class AlgorithmSpec:
    """One registered algorithm.

    Attributes:
        name: the CLI name.
        module, cls: where the class lives (imported only when run, so ``--help``
            stays fast).
        summary: one line for help and listings.
        style: ``round`` (round-based, static intervals) or ``adaptive``.
        regimes: the confidence regimes it accepts; the first is the default.
        needs_oracle: given the H_CLB design of the true constraint (Oracle only).
        guaranteed_stop: False when it can fail to stop (MaxRew-F).
    """

    name: str
    module: str
    cls: str
    summary: str
    style: str
    needs_oracle: bool = False
    guaranteed_stop: bool = True

    @property
    def regimes(self) -> tuple[str, ...]:
        return ROUND_REGIMES if self.style == "round" else ADAPTIVE_REGIMES

    @property
    def default_regime(self) -> str:
        return self.regimes[0]

    def load(self) -> type:
        import importlib

        return getattr(importlib.import_module(self.module), self.cls)

    def check_regime(self, regime: str) -> None:
        if regime not in self.regimes:
            raise OptionError(
                f"algorithm {self.name!r} cannot use regime {regime!r} (it accepts: {', '.join(self.regimes)})"
            )


@dataclass(frozen=True)
class Alias:
    """A method string of the authors' code: an algorithm plus an implied regime."""

    target: str
    regime: str | None = None
    beta: float | None = None


ALGORITHMS: dict[str, AlgorithmSpec] = {}
ALIASES: dict[str, Alias] = {}


def register(spec: AlgorithmSpec) -> None:
    if spec.name in ALGORITHMS or spec.name in ALIASES:
        raise ValueError(f"algorithm name {spec.name!r} is already registered")
    ALGORITHMS[spec.name] = spec


def register_alias(name: str, alias: Alias) -> None:
    if name in ALGORITHMS or name in ALIASES:
        raise ValueError(f"algorithm alias {name!r} is already registered")
    if alias.target not in ALGORITHMS:
        raise ValueError(f"alias {name!r} points to unknown algorithm {alias.target!r}")
    ALIASES[name] = alias


def resolve(name: str) -> tuple[AlgorithmSpec, Alias | None]:
    """The spec for a name or alias; unknown names list valid ones and the closest."""
    if name in ALGORITHMS:
        return ALGORITHMS[name], None
    if name in ALIASES:
        alias = ALIASES[name]
        return ALGORITHMS[alias.target], alias
    raise UnknownNameError(unknown_name_message("algorithm", name, {**ALGORITHMS, **ALIASES}))


_PACKAGE = "cbai_cli.algorithms"
for _spec in (
    AlgorithmSpec("acol", f"{_PACKAGE}.acol", "ACOL", "ACOL (Alg. 1): rounds of the design over U_t, static intervals", "round"),
    AlgorithmSpec("oracle", f"{_PACKAGE}.oracle", "Oracle", "Oracle (App. B.1): the H_CLB design of the true φ", "round", needs_oracle=True),
    AlgorithmSpec("g-allocation", f"{_PACKAGE}.g_allocation", "GAllocation", "G-Allocation (App. B.2): the G-optimal design", "round"),
    AlgorithmSpec("uniform", f"{_PACKAGE}.uniform", "Uniform", "Uniform: rounds of the uniform allocation", "round"),
    AlgorithmSpec("g-acol", f"{_PACKAGE}.g_acol", "GACOL", "G-ACOL (Alg. 2): greedy variance reduction within U", "adaptive"),
    AlgorithmSpec("greedy-maxvar", f"{_PACKAGE}.greedy_maxvar", "GreedyMaxVar", "Greedy MaxVar: greedy variance reduction over all of X", "adaptive"),
    AlgorithmSpec("adaptive-uniform", f"{_PACKAGE}.adaptive_uniform", "AdaptiveUniform", "Adaptive Uniform: uniform over X", "adaptive"),
    AlgorithmSpec("g-acol-uniform", f"{_PACKAGE}.g_acol_uniform", "GACOLUniform", "G-ACOL Uniform: uniform over U", "adaptive"),
    AlgorithmSpec("maxrew-u", f"{_PACKAGE}.maxrew_u", "MaxRewU", "MaxRew-U: highest-reward uncertain arm", "adaptive"),
    AlgorithmSpec("maxrew-f", f"{_PACKAGE}.maxrew_f", "MaxRewF", "MaxRew-F: highest-reward feasible arm (may not stop; use --budget)", "adaptive", guaranteed_stop=False),
):
    register(_spec)

for _method, _target in (
    ("adaptive_static", "acol"),
    ("adaptive", "g-acol"),
    ("adaptive_maxvar_all", "greedy-maxvar"),
    ("adaptive_uniform_all", "adaptive-uniform"),
    ("adaptive_uniform", "g-acol-uniform"),
    ("adaptive_greedy_reward_uncertain", "maxrew-u"),
    ("adaptive_greedy_reward_feasible", "maxrew-f"),
):
    if ALGORITHMS[_target].style == "adaptive":
        register_alias(_method, Alias(_target, "theory"))
        register_alias(f"{_method}_tuned", Alias(_target, "tuned", PAPER_TUNED_BETA))
    else:
        register_alias(_method, Alias(_target, "static"))
