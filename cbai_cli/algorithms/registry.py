"""The one registry of algorithms, CBAI and safe: names, capabilities, options, aliases.

Every algorithm has one :class:`AlgorithmEntry`: the instance kinds it runs on, its
style, the confidence regimes it accepts, the options (:mod:`cbai_cli.contracts.options`) it
reads, and whether it always stops. ``cbai algorithms``, the ``--algo`` help, compare's
spec parser and every option check read this registry, so help text and code cannot
drift apart. Registering a name or alias twice is an error.

Third-party algorithms join through the entry-point group ``cbai.algorithms``: each
entry point names an :class:`AlgorithmEntry` (or a sequence of them), registered the
first time the registry is read (:func:`entries`). See docs/extending.md.

This module imports nothing heavy (classes are named by module path and imported only
when run), so ``cbai --help`` stays fast.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from cbai_cli.contracts.errors import OptionError, UnknownNameError, unknown_name_message

ENTRY_POINT_GROUP = "cbai.algorithms"
# The paper's tuned multiplier √β = 0.5 (authors' ``sqbeta_tuned``).
PAPER_TUNED_BETA = 0.25
STYLES = ("round", "adaptive")


def _regimes() -> Mapping[str, Any]:
    from cbai_cli.numerics.confidence import regimes

    return regimes()


@dataclass(frozen=True)
class Configured:
    """What an algorithm's ``configure`` function makes of a checked request.

    Attributes:
        view: the first argument of the algorithm's constructor: the learner's view of
            the instance (never the hidden truth).
        config: the algorithm's configuration, its second argument.
        budget: the query budget of a run (None: until the algorithm stops).
        options: the options in effect, as plain values, for tables and records.
        notes: remarks for the user (defaults chosen, caveats of the regime).
        init: further keyword arguments of the constructor (the Oracle's design).
        instance: the instance as run, when configuring changed it (``--T``).
        warnings: what to tell the user before a run starts (a run that will take very
            long); the commands print them on stderr, once per request.
    """

    view: Any
    config: Any
    budget: int | None
    options: Mapping[str, Any]
    notes: tuple[str, ...] = ()
    init: Mapping[str, Any] = field(default_factory=dict)
    instance: Any = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class AlgorithmEntry:
    """One registered algorithm.

    Attributes:
        name: the CLI name.
        module, cls: where the class lives (imported only when run).
        summary: one line for help and listings.
        kinds: the instance kinds it runs on (``cbai``, ``safe-regret``, ``safe-bai``).
        style: ``round`` (asks for whole rounds of pulls) or ``adaptive`` (one query at
            a time).
        options: the options it reads whatever its regime (names of
            :data:`cbai_cli.contracts.options.OPTIONS`); a regime adds the ones its radius reads.
        regime_style: which confidence regimes it accepts: those whose ``adaptive`` flag
            matches (``round`` or ``adaptive``), or None for algorithms without a
            confidence regime (the safe ones: their radii are the papers' own, their
            confidence levels, ridge and norm bounds options whose defaults are the
            instance file's). The default regime is ``preferred_regime`` when set, else the
            first accepted one.
        configure: ``"module:function"`` that turns a checked request into the
            algorithm's configuration (see :func:`cbai_cli.run.simulate.prepare`); None
            uses the instance kind's standard one.
        needs_oracle: given the H_CLB design of the true constraint (Oracle only).
        guaranteed_stop: False when it can fail to stop (MaxRew-F).
        preferred_regime: the regime a run uses when none is asked for (None: the
            first accepted one).
        default_for: the instance kinds whose runs use this algorithm when none is
            named (``cbai solve FILE`` without ``--algo``; see :func:`default_algorithm`).
        declares: options of its own (:class:`cbai_cli.contracts.options.Option`), added to the
            options table when it is registered (a plugin's; cbai's algorithms declare theirs
            in :mod:`cbai_cli.contracts.options`); each must be listed in ``options`` too. Its class
            reads their values from ``config.own_options``.
        value_regimes: (option, value, regimes): a value of one of its options that runs only
            in those regimes (Track-and-Stop's ``--step rollout`` models the ``ols``
            intervals); :meth:`check_values` refuses it in another.
        regime_defaults: (option, value, regimes): the option's default in those regimes
            (:meth:`defaults`); its declared default
            (:attr:`cbai_cli.contracts.options.Option.default`) holds in the others.
            Track-and-Stop takes ``--step rollout`` under ``ols`` and ``vertex-or-target``,
            the option's declared default, under the regimes rollout cannot run in.
    """

    name: str
    module: str
    cls: str
    summary: str
    kinds: tuple[str, ...]
    style: str
    options: tuple[str, ...] = ()
    regime_style: str | None = None
    configure: str | None = None
    needs_oracle: bool = False
    guaranteed_stop: bool = True
    preferred_regime: str | None = None
    default_for: tuple[str, ...] = ()
    declares: tuple[Any, ...] = ()
    value_regimes: tuple[tuple[str, Any, tuple[str, ...]], ...] = ()
    regime_defaults: tuple[tuple[str, Any, tuple[str, ...]], ...] = ()

    @property
    def regimes(self) -> tuple[str, ...]:
        """The regimes it accepts, the default first (then in the order regimes are declared)."""
        if self.regime_style is None:
            return ()
        adaptive = self.regime_style == "adaptive"
        accepted = tuple(name for name, regime in _regimes().items() if regime.adaptive == adaptive)
        first = self.default_regime
        return (first, *(name for name in accepted if name != first)) if first in accepted else accepted

    @property
    def default_regime(self) -> str | None:
        """The regime a run uses when none is asked for: ``preferred_regime``, else the
        regime of its style that declares itself the default."""
        if self.regime_style is None:
            return None
        adaptive = self.regime_style == "adaptive"
        styled = {name: regime for name, regime in _regimes().items() if regime.adaptive == adaptive}
        if self.preferred_regime in styled:
            return self.preferred_regime
        return next((name for name, regime in styled.items() if regime.default), None)

    def load(self) -> type:
        """The algorithm's class, imported now; one line naming the entry when it cannot be."""
        return self._imported(self.module, self.cls, "class")

    def load_configure(self):
        """The entry's ``configure`` function, imported now; one line naming the entry when it
        cannot be."""
        module, _, function = (self.configure or "").partition(":")
        return self._imported(module, function, "configure function")

    def _imported(self, module: str, attribute: str, what: str) -> Any:
        # A registered entry names code only by path; a typo or a package missing at run time
        # is the user's mistake, said as the plugin loader says it, not a traceback mid-run.
        try:
            return getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError, ValueError) as error:
            raise OptionError(f"algorithm {self.name!r}: its {what} {module}:{attribute} cannot be imported: {error}",
                              "algorithm") from None

    def check_regime(self, regime: str) -> None:
        if not self.regimes:
            raise OptionError(f"--regime does not apply to {self.name} (it has no confidence regime)", "regime")
        if regime not in self.regimes:
            raise OptionError(
                f"algorithm {self.name!r} cannot use regime {regime!r} (it accepts: {', '.join(self.regimes)})",
                "regime")

    def reads(self, regime: str | None) -> tuple[str, ...]:
        """The options a run in ``regime`` reads: the algorithm's own and the regime's; a
        regime it cannot use is the error of :meth:`check_regime`."""
        if regime is not None:
            self.check_regime(regime)
        extra = _regimes()[regime].reads if regime is not None else ()
        return tuple(dict.fromkeys((*self.options, *extra)))

    def accepts(self, regime: str | None) -> tuple[str, ...]:
        """The options that may be given: those read, and those the regime tolerates."""
        extra = _regimes()[regime].tolerated if regime is not None else ()
        return tuple(dict.fromkeys((*self.reads(regime), *extra)))

    def check_options(self, given: Iterable[str], regime: str | None) -> None:
        """One-line error for the first given option this run cannot use, and for an
        option the regime needs that is missing."""
        from cbai_cli.contracts.options import OPTIONS

        given = list(given)
        accepted = self.accepts(regime)
        for name in given:
            if name in accepted:
                continue
            flag = OPTIONS[name].flag
            if self.regime_style is None:
                own = ", ".join(OPTIONS[option].flag for option in self.options) or "none"
                raise OptionError(f"{flag} does not apply to {self.name} (its options: {own})", name)
            owners = [entry.name for entry in entries().values() if name in entry.options]
            if not owners:  # an option only a confidence regime reads
                readers = [other for other, kind in _regimes().items() if name in kind.reads]
                if not readers:  # an option of other commands (the bounds' --solver)
                    raise OptionError(f"{flag} is not an option of a run", name)
                raise OptionError(f"{flag} only applies to --regime {' or '.join(readers)} "
                                  f"(this run uses {regime!r})", name)
            raise OptionError(f"{flag} does not apply to {self.name} (it is an option of {', '.join(owners)})", name)
        if regime is not None:
            for name in _regimes()[regime].requires:
                if name not in given:
                    hint = _regimes()[regime].hint
                    raise OptionError(f"--regime {regime} needs {OPTIONS[name].flag}" + (f" ({hint})" if hint else ""),
                                      name)

    def check_values(self, given: Mapping[str, Any], regime: str | None) -> None:
        """One-line error for a given option value that runs only in other regimes
        (``value_regimes``)."""
        from cbai_cli.contracts.options import OPTIONS

        for name, value, regimes in self.value_regimes:
            if given.get(name) == value and regime not in regimes:
                raise OptionError(f"{OPTIONS[name].flag} {value} needs --regime {' or '.join(regimes)} "
                                  f"(this run uses {regime!r})", name)

    def defaults(self, regime: str | None) -> dict[str, Any]:
        """The options whose default in ``regime`` is not their declared one, by name, with
        that default (``regime_defaults``)."""
        return {name: value for name, value, regimes in self.regime_defaults if regime in regimes}

    def default_of(self, name: str, regime: str | None) -> Any:
        """The default of option ``name`` in a run of ``regime``: :meth:`defaults`, else the
        option's declared default."""
        from cbai_cli.contracts.options import OPTIONS

        return self.defaults(regime).get(name, OPTIONS[name].default)

    def describe_option_names(self) -> tuple[str, ...]:
        """Every option some run of this algorithm reads, in any of its regimes."""
        return tuple(dict.fromkeys((*self.options, *(name for regime in self.regimes for name in self.reads(regime)))))

    def describe(self) -> dict[str, Any]:
        """The entry as ``cbai algorithms --json`` shows it."""
        from cbai_cli.contracts.options import OPTIONS

        names = self.describe_option_names()
        return {
            "name": self.name,
            "kinds": list(self.kinds),
            "style": self.style,
            "regimes": list(self.regimes),
            "default_regime": self.default_regime,
            "options": [{"name": name, "flag": OPTIONS[name].flag, "type": OPTIONS[name].type.__name__,
                         "range": OPTIONS[name].range_text(), "default": OPTIONS[name].default_text,
                         "help": OPTIONS[name].help} for name in names],
            "guaranteed_stop": self.guaranteed_stop,
            "summary": self.summary,
            "module": self.module,
        }


@dataclass(frozen=True)
class Alias:
    """A method string of the authors' code: an algorithm plus an implied regime."""

    target: str
    regime: str | None = None
    beta: float | None = None


ALGORITHMS: dict[str, AlgorithmEntry] = {}
_VIEW: Mapping[str, AlgorithmEntry] = MappingProxyType(ALGORITHMS)
ALIASES: dict[str, Alias] = {}


def _check_new(name: str) -> None:
    if name in ALGORITHMS or name in ALIASES:
        raise ValueError(f"algorithm name {name!r} is already registered")


def register(entry: AlgorithmEntry) -> None:
    """Add an algorithm; a name already taken (by an algorithm or an alias), a name that is
    not a non-empty str, an unknown option or instance kind, and a style or regime style
    outside :data:`STYLES` (or a regime style other than the style) are errors."""
    from cbai_cli.kinds import KINDS
    from cbai_cli.contracts.options import OPTIONS, declare

    if not isinstance(entry.name, str) or not entry.name:
        raise ValueError(f"an algorithm's name must be a non-empty str, got {entry.name!r}")
    _check_new(entry.name)
    unlisted = [option.name for option in entry.declares if option.name not in entry.options]
    if unlisted:
        raise ValueError(f"{entry.name}: declares option(s) {unlisted} that its options do not list")
    unlisted = [name for name, _, _ in entry.value_regimes if name not in entry.options]
    if unlisted:
        raise ValueError(f"{entry.name}: restricts the values of option(s) {unlisted} that its options do not list")
    unlisted = [name for name, _, _ in entry.regime_defaults if name not in entry.options]
    if unlisted:
        raise ValueError(f"{entry.name}: sets defaults of option(s) {unlisted} that its options do not list")
    for name, value, regimes in entry.regime_defaults:
        refused = [regime for regime in regimes for other, only, allowed in entry.value_regimes
                   if other == name and only == value and regime not in allowed]
        if refused:
            raise ValueError(f"{entry.name}: its default {name}={value!r} in regime {refused[0]!r} is a value "
                             "that regime cannot run")
    declared = {option.name for option in entry.declares}
    unknown = [name for name in entry.options if name not in OPTIONS and name not in declared]
    if unknown:
        raise ValueError(f"{entry.name}: unknown option(s) {unknown}")
    if entry.style not in STYLES:
        raise ValueError(f"{entry.name}: style must be one of {', '.join(STYLES)}, got {entry.style!r}")
    if entry.regime_style is not None and entry.regime_style != entry.style:
        # A round-based algorithm under adaptive regimes (or the reverse) has no intervals to read.
        raise ValueError(f"{entry.name}: regime style must be None or its style {entry.style!r}, "
                         f"got {entry.regime_style!r}")
    if not entry.kinds:
        raise ValueError(f"{entry.name}: no instance kind")
    # the kinds registered so far: plugins' kinds are read before plugins' algorithms (cbai_cli.contracts.plugins)
    unknown_kinds = [kind for kind in entry.kinds if kind not in KINDS]
    if unknown_kinds:
        raise ValueError(f"{entry.name}: unknown instance kind(s) {unknown_kinds} (known: {', '.join(KINDS)})")
    if entry.preferred_regime is not None and entry.preferred_regime not in entry.regimes:
        raise ValueError(f"{entry.name}: preferred regime {entry.preferred_regime!r} is not one it accepts")
    for kind in entry.default_for:
        if kind not in entry.kinds:
            raise ValueError(f"{entry.name}: default for {kind} instances, which it does not run on")
        taken = [other.name for other in ALGORITHMS.values() if kind in other.default_for]
        if taken:
            raise ValueError(f"{entry.name}: {taken[0]} is already the default for {kind} instances")
    declare(entry.declares)
    ALGORITHMS[entry.name] = entry


def register_alias(name: str, alias: Alias) -> None:
    _check_new(name)
    if alias.target not in ALGORITHMS:
        raise ValueError(f"alias {name!r} points to unknown algorithm {alias.target!r}")
    ALIASES[name] = alias


def _register_plugin(entry: Any) -> None:
    if not isinstance(entry, AlgorithmEntry):
        raise TypeError(f"it names a {type(entry).__name__}, not an AlgorithmEntry")
    register(entry)


def load_plugins() -> None:
    """Register the algorithms of the ``cbai.algorithms`` entry points, once per process
    (:func:`cbai_cli.contracts.plugins.load_entry_points`), after the kinds' (an algorithm
    names the kinds it runs on)."""
    from cbai_cli.contracts.plugins import load_entry_points
    from cbai_cli.kinds import kind_entries

    kind_entries()
    load_entry_points(ENTRY_POINT_GROUP, _register_plugin)


def entries() -> Mapping[str, AlgorithmEntry]:
    """Every registered algorithm, plugins included: a read-only view of the registry
    (:func:`register` adds to it)."""
    load_plugins()
    return _VIEW


def resolve(name: str) -> tuple[AlgorithmEntry, Alias | None]:
    """The entry for a name or alias; unknown names (and names that are not a str) list
    valid ones and the closest."""
    known = entries()
    if isinstance(name, str):
        if name in known:
            return known[name], None
        if name in ALIASES:
            alias = ALIASES[name]
            return known[alias.target], alias
    raise UnknownNameError(unknown_name_message("algorithm", name, {**known, **ALIASES}), "algorithm")


def _entries_for(kinds: tuple[str, ...] | None) -> dict[str, Any]:
    """The registry's entries that run on some kind of ``kinds`` (every entry for None)."""
    return {name: entry for name, entry in entries().items()
            if kinds is None or any(kind in kinds for kind in entry.kinds)}


@functools.cache
def _options_read(algorithms: int, regimes: int) -> dict[str, frozenset[str]]:
    """Every algorithm's :meth:`AlgorithmEntry.describe_option_names`, for the registries of
    that many algorithms and regimes (they only grow, so their sizes name their contents):
    the help of every option reads them, about 80 times as the command line loads."""
    return {name: frozenset(entry.describe_option_names()) for name, entry in entries().items()}


def option_users(name: str, kinds: tuple[str, ...] | None = None) -> str:
    """Who reads option ``name``, for help: algorithms (all of a kind named as such) and regimes;
    only those of ``kinds`` when given."""
    read = _options_read(len(ALGORITHMS), len(_regimes()))
    readers = [entry for entry in _entries_for(kinds).values() if name in read[entry.name]]
    shown = dict.fromkeys(kind for entry in readers for kind in entry.kinds if kinds is None or kind in kinds)
    parts = []
    for kind in shown:
        mine = [entry for entry in readers if kind in entry.kinds]
        styles = {entry.style for entry in mine}
        alike = [entry for entry in entries().values() if kind in entry.kinds and entry.style in styles]
        if len(mine) == len(names_for(kind)):
            parts.append(f"every {kind} algorithm")
        elif len(mine) == len(alike) and len(styles) == 1:
            parts.append(f"every {styles.pop()} {kind} algorithm")
        else:
            parts.append(", ".join(entry.name for entry in mine))
    regimes = [regime for regime, declared in _regimes().items() if name in declared.reads]
    if regimes and len(regimes) < len(_regimes()):
        parts.append(f"regimes {', '.join(regimes)}")
    return "; ".join(parts)


def run_option_names(kinds: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The options some algorithm reads (in some regime; an algorithm of ``kinds`` when given),
    in the order of the table."""
    from cbai_cli.contracts.options import OPTIONS

    read = {name for entry in _entries_for(kinds).values() for name in entry.describe_option_names()}
    return tuple(name for name in OPTIONS if name in read)


def algorithm_help(with_defaults: bool = False, kinds: tuple[str, ...] | None = None) -> str:
    """The ``--algo`` help: every algorithm with its instance kinds (only those that run on
    ``kinds``, when given), and the aliases; with ``with_defaults``, also what runs when
    ``--algo`` is left out (:func:`default_algorithm`)."""
    listed = _entries_for(kinds)
    text = ("Algorithm: " + "; ".join(f"{name} ({', '.join(entry.kinds)})" for name, entry in listed.items())
            + ". The authors' method strings (" + ", ".join(list(ALIASES)[:3]) + ", …) are accepted too; "
            "see `cbai algorithms`.")
    if with_defaults:
        shown = dict.fromkeys(kind for entry in listed.values() for kind in entry.kinds
                              if kinds is None or kind in kinds)
        text += " Default: " + ", ".join(f"{default_algorithm(kind)} for {kind} files" for kind in shown) + "."
    return text


def names_for(kind: str) -> list[str]:
    """The algorithms that run on instances of ``kind``."""
    return [name for name, entry in entries().items() if kind in entry.kinds]


def default_algorithm(kind: str) -> str:
    """The algorithm ``cbai solve`` runs on an instance of ``kind`` when none is named:
    the one whose entry declares itself the default for the kind (track-and-stop for
    ``cbai``, safe-lingape for ``safe-bai``), else the first registered for the kind
    (safe-lucb for ``safe-regret``, its only algorithm)."""
    known = entries()
    declared = [name for name, entry in known.items() if kind in entry.default_for]
    if declared:
        return declared[0]
    fitting = names_for(kind)
    if not fitting:
        raise OptionError(f"no algorithm runs on {kind} instances", "algorithm")
    return fitting[0]


def entry_of(cls: type) -> AlgorithmEntry | None:
    """The first registered entry whose class is ``cls`` (by module and name), None for a
    class no entry names."""
    return next((entry for entry in entries().values()
                 if entry.module == cls.__module__ and entry.cls == cls.__name__), None)


def for_kind(name: str | None, kind: str) -> tuple[AlgorithmEntry, Alias | None]:
    """The entry for ``name`` on an instance of ``kind`` (None: :func:`default_algorithm`);
    an algorithm of another kind is a one-line error naming the algorithms that do fit."""
    if name is None:
        name = default_algorithm(kind)
    entry, alias = resolve(name)
    if kind not in entry.kinds:
        raise OptionError(f"algorithm {name!r} runs on {', '.join(entry.kinds)} instances, but this is a {kind} "
                          f"instance (algorithms for {kind}: {', '.join(names_for(kind))})", "algorithm")
    return entry, alias


_SAFE = "cbai_cli.algorithms.safe"
# The constants of a safe instance file that every safe algorithm reads as options, the file's
# value when not given: the confidence δ (safe-bai: δ_r), the ridge λ and the norm bound S
# (safe-bai: S_θ); cbai_cli.kinds.safe.files says which field of the setting each replaces.
SAFE_CONSTANTS = ("delta", "ridge", "norm_bound")
# The options every CBAI algorithm of a style reads (its regime adds those of its radius).
CBAI_OPTIONS = {"round": ("delta", "rounding_epsilon", "budget"), "adaptive": ("delta", "ridge", "budget", "coordinates")}
# The option values every CBAI algorithm of a style runs only in some regimes, and its
# defaults there: the D-optimal coordinates need the ols intervals (whose guarantee has no
# norm bound S to restate in them) and are their default.
CBAI_REGIME_VALUES = {"round": (), "adaptive": (("coordinates", "d-optimal", ("ols",)),)}


def cbai_entry(name: str, module: str, cls: str, summary: str, style: str, options: tuple[str, ...] = (),
               **capabilities: Any) -> AlgorithmEntry:
    """The entry of a CBAI algorithm of ``cbai_cli.algorithms``: the ``cbai`` kind, the
    regimes and options of its style, and its own ``options``."""
    shared = CBAI_REGIME_VALUES[style]
    capabilities["value_regimes"] = (*shared, *capabilities.get("value_regimes", ()))
    capabilities["regime_defaults"] = (*shared, *capabilities.get("regime_defaults", ()))
    return AlgorithmEntry(name, f"cbai_cli.algorithms.{module}", cls, summary, ("cbai",), style,
                          (*CBAI_OPTIONS[style], *options), style, **capabilities)


for _entry in (
    cbai_entry("acol", "acol", "ACOL", "ACOL (Alg. 1): rounds of the design over U_t, static intervals", "round"),
    cbai_entry("oracle", "oracle", "Oracle", "Oracle (App. B.1): the H_CLB design of the true φ", "round",
               needs_oracle=True),
    cbai_entry("g-allocation", "g_allocation", "GAllocation", "G-Allocation (App. B.2): the G-optimal design", "round"),
    cbai_entry("uniform", "uniform", "Uniform", "Uniform: rounds of the uniform allocation", "round"),
    cbai_entry("g-acol", "g_acol", "GACOL", "G-ACOL (Alg. 2): greedy variance reduction within U", "adaptive"),
    cbai_entry("greedy-maxvar", "greedy_maxvar", "GreedyMaxVar", "Greedy MaxVar: greedy variance reduction over all of X",
               "adaptive"),
    cbai_entry("adaptive-uniform", "adaptive_uniform", "AdaptiveUniform", "Adaptive Uniform: uniform over X", "adaptive"),
    cbai_entry("g-acol-uniform", "g_acol_uniform", "GACOLUniform", "G-ACOL Uniform: uniform over U", "adaptive"),
    cbai_entry("maxrew-u", "maxrew_u", "MaxRewU", "MaxRew-U: highest-reward uncertain arm", "adaptive"),
    cbai_entry("track-and-stop", "track_and_stop", "TrackAndStop",
               "Track-and-Stop: Frank–Wolfe steps on the plug-in H_CLB objective over X≥(x̂*), the rollout step "
               "under ols (forced exploration and vertex-or-target otherwise), elimination stop (the default)",
               "adaptive", ("step",), preferred_regime="ols", default_for=("cbai",),
               value_regimes=(("step", "rollout", ("ols",)),), regime_defaults=(("step", "rollout", ("ols",)),)),
    cbai_entry("maxrew-f", "maxrew_f", "MaxRewF", "MaxRew-F: highest-reward feasible arm (may not stop; use --budget)",
               "adaptive", guaranteed_stop=False),
    AlgorithmEntry("safe-lucb", f"{_SAFE}.safe_lucb", "SafeLUCB",
                   "Safe-LUCB (Amani et al. 2019): explore in the safe ball D^w, then optimistic actions in the "
                   "estimated safe set", ("safe-regret",), "adaptive",
                   ("exploration", "horizon", "dw", "confidence_set", "intersect", *SAFE_CONSTANTS),
                   configure="cbai_cli.kinds.safe.solving:configure_safe_lucb"),
    AlgorithmEntry("lingape", f"{_SAFE}.lingape", "LinGapE",
                   "LinGapE (Xu et al. 2018): full pulls, ignores safety (the price-of-safety baseline)",
                   ("safe-bai",), "adaptive", ("rule", "budget", *SAFE_CONSTANTS),
                   configure="cbai_cli.kinds.safe.solving:configure_lingape"),
    AlgorithmEntry("safe-lingape", f"{_SAFE}.safe_lingape", "SafeLinGapE",
                   "Safe-LinGapE: forced exploration at γ_FE, then LinGapE on the safely scaled arms γ̄_k·x_k",
                   ("safe-bai",), "adaptive",
                   ("rule", "updates", "budget", *SAFE_CONSTANTS, "safety_delta", "safety_norm_bound"),
                   configure="cbai_cli.kinds.safe.solving:configure_safe_lingape", default_for=("safe-bai",)),
):
    register(_entry)

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
