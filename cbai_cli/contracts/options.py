"""Every option of a run, declared once: name, type, range, default, flag, help; and the
options of the live-session commands (:data:`SESSION_OPTIONS`).

The Typer options of ``cbai solve`` and ``cbai compare``, the ``NAME:REGIME:OPTION=VALUE``
specs of ``cbai compare`` and study files, the request of a run and every range check
derive from :data:`OPTIONS`. Which algorithm reads which option is declared by the
algorithm's registry entry (:mod:`cbai_cli.algorithms.registry`) and by the confidence
regime it runs with (:mod:`cbai_cli.numerics.confidence`), not here.

Library code names options by :attr:`Option.name` (``ridge``, ``norm_bound``); the
command line spells them :attr:`Option.flag` (``--lambda``, ``--S``) and compare specs
:attr:`Option.spec_name` (``lambda``, ``S``). Errors carry the option's name in
:attr:`cbai_cli.contracts.errors.OptionError.parameter`; their text names the flag, which is what
a user of the command line typed.

This module imports nothing heavy: ``cbai --help`` reads it.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cbai_cli.contracts.errors import CbaiError, OptionError


class QueryLimitError(CbaiError):
    """A query asks for more observations than one run can count (:data:`QUERY_LIMIT`)."""

#: The most observations one run may ask for, in all. Counts of pulls travel as int64
#: and their Gaussian sums are drawn with float64 arithmetic, exact for integers below
#: 2^53 ≈ 9.0e15; a run that would need more (a round-based algorithm whose rounds grow
#: without end, an absurd ``--epsilon``) cannot be simulated faithfully and is refused
#: (:class:`QueryLimitError`), and ``--budget`` cannot exceed it.
QUERY_LIMIT = 10**15

#: The most memory one command may plan to hold unless :data:`MEMORY_VARIABLE` says
#: otherwise: an instance to generate or read, the plan and records of a comparison, the
#: results of ``solve --runs``, a design solve (each estimated before anything is built, so
#: that a larger request is one line instead of a MemoryError).
DEFAULT_MEMORY_LIMIT = 4 * 2**30
#: The environment variable that sets another limit: bytes, or a number with K, M, G or T
#: (binary units: 8G is 8 GiB).
MEMORY_VARIABLE = "CBAI_MEMORY_LIMIT"
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def memory_limit() -> int:
    """The most memory one command may plan to hold, in bytes: :data:`MEMORY_VARIABLE` when
    set, else :data:`DEFAULT_MEMORY_LIMIT`; a value that is not a positive size is one line."""
    text = os.environ.get(MEMORY_VARIABLE, "")
    if not text.strip():
        return DEFAULT_MEMORY_LIMIT
    match = _SIZE.fullmatch(text)
    limit = int(float(match.group(1)) * _UNITS[match.group(2).upper()]) if match else 0
    if limit <= 0:
        raise OptionError(f"{MEMORY_VARIABLE}={text!r}: expected a size such as 8G or 8589934592 (bytes)")
    return limit


def memory_limit_text(limit: int) -> str:
    """The limit for messages, with how to raise it: ``the limit of 4 GiB (CBAI_MEMORY_LIMIT raises it)``."""
    return f"the limit of {bytes_text(limit)} ({MEMORY_VARIABLE} raises it)"


def bytes_text(count: float) -> str:
    """A number of bytes as people read it: ``4 GiB``, ``1.5 MiB``, ``512 bytes``."""
    for unit, size in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if count >= size:
            return f"{count / size:,.3g} {unit}"
    return f"{count:,.0f} bytes"


#: The largest magnitude a number of an instance, an observation or a noise scale may have:
#: squares and products of such numbers (designs, norms, Gram matrices, σ²) stay finite in float64.
MAGNITUDE_LIMIT = 1e100

#: Bytes the result of one run of ``solve --runs`` takes until it is shown (measured: about
#: 1.9 KB a run of regret-1d, its result and its JSON entry).
SOLVE_RUN_BYTES = 4 * 2**10

#: The longest safe-regret run: a run keeps its regret curve (8 bytes a round) in memory
#: and plays about 20,000 rounds a second, so 10^8 rounds are 800 MB and over an hour.
HORIZON_LIMIT = 10**8

#: Seconds after which the design solves of bounds that ``--bound``/``--bounds`` forces on
#: ``cbai solve``/``cbai compare`` stop with a certified interval (``cbai bound`` has no cap
#: unless ``--time-limit`` sets one). At K = 10⁴, d = 30 a solve is certified in a few seconds.
FORCED_BOUND_TIME_LIMIT = 60.0

_SWITCHES = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


@dataclass(frozen=True)
class Option:
    """One option of a run.

    Attributes:
        name: the library's name (a keyword of :class:`cbai_cli.run.simulate.RunRequest`).
        flag: the command-line flag.
        type: ``float``, ``int``, ``str`` or ``bool`` (a switch); ``Path`` for a file that
            a command reads (the tables of commands only: :meth:`check` takes none).
        help: one line for ``--help`` and ``cbai algorithms``.
        default: the value used when the option is not given, or None when the default
            depends on the algorithm or the instance (``default_text`` says how).
        default_text: the default as help shows it.
        low, high: the range of a number; ``low_open``/``high_open`` exclude the end.
        choices: the accepted words of a ``str`` option with a fixed list.
        values: the accepted values as help shows them.
        aliases: short flags of the command line (``-n``).
        metavar: the value's name in help (``SECONDS``); empty: the type's.
        multiple: the option may be repeated, its value a list (``--arm 3 --arm 7``).
        off: the flag that turns a switch off (``--no-bound``); a switch given neither way is None.
        must: the accepted values in words for the error of a value out of range (``a number
            of seconds > 0 and at most 604,800 (a week)``); empty: from the range.
    """

    name: str
    flag: str
    type: type
    help: str
    default: Any = None
    default_text: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    values: str = ""
    aliases: tuple[str, ...] = ()
    metavar: str = ""
    must: str = ""
    multiple: bool = False
    off: str = ""

    @property
    def spec_name(self) -> str:
        """The option's name in ``cbai compare`` specs and study files."""
        return self.flag.lstrip("-")

    def range_text(self) -> str:
        """The accepted values in words: ``(0, 1)``, ``≥ 1``, ``greedy or ratio``."""
        if self.choices:
            return " or ".join(self.choices)
        if self.low is not None and self.high is not None:
            return f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"
        if self.low is not None:
            return f"{'>' if self.low_open else '≥'} {self.low:g}"
        return self.values

    def check(self, value: Any) -> Any:
        """``value`` as a plain Python value of the option's type, if it is one and lies in
        the declared range; else :class:`OptionError` naming the option. None (not given)
        stays None.

        The type is checked as strictly as a spec's text is by :meth:`coerce`: an ``int``
        option takes an integral number, a ``float`` option a real number, neither a bool;
        a ``bool`` option takes a bool only (the word ``"false"`` is not one); a ``str``
        option takes text. Numpy scalars become the Python number or bool they hold, so
        every value that passes can be written to JSON.
        """
        if value is None:
            return None
        value = self._typed(value)
        if self.choices:
            if value not in self.choices:
                raise OptionError(f"{self.flag} must be {self.range_text()}, got {value!r}", self.name)
            return value
        if self.type in (str, bool) or self._inside(value):
            return value
        if self.must:
            raise OptionError(f"{self.flag} must be {self.must}, got {shown(value)}", self.name)
        if self.low is not None and self.high is not None and self.type is float:
            raise OptionError(f"{self.flag} must lie in {self.range_text()}, got {value}", self.name)
        if self.low is not None and not self._inside(value, high=False):
            what = "a finite number > " if self.low_open and self.type is float else "≥ " if not self.low_open else "> "
            raise OptionError(f"{self.flag} must be {what}{self.low:g}, got {shown(value)}", self.name)
        large = f"{value:,}" if value < 10**20 else shown(value)  # not 300 digits
        raise OptionError(f"{self.flag} must be at most {self.high:g}, got {large}", self.name)

    def _inside(self, value: int | float, high: bool = True) -> bool:
        """Whether a number lies in the declared range (its upper end only when ``high``); a
        float must be finite."""
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = not high or self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below

    def _typed(self, value: Any) -> Any:
        """``value`` converted to the option's Python type, or :class:`OptionError` when it
        is not a value of that type (see :meth:`check`)."""
        flag = _is_bool(value)
        if self.type is bool:
            if flag:
                return bool(value)
        elif self.type is str:
            if isinstance(value, str):
                return str(value)
        elif not flag and isinstance(value, numbers.Real):
            if self.type is int and isinstance(value, numbers.Integral):
                return int(value)
            try:
                number = float(value)
            except OverflowError:  # an integer beyond float's range (10**400): no float holds it
                number = None
            if number is not None and self.type is float:
                return number
            if number is not None and math.isfinite(number) and number.is_integer():
                return int(number)
        expected = {bool: "true or false (a bool)", int: "an integer", float: "a real number",
                    str: f"text ({self.range_text()})" if self.range_text() else "text"}[self.type]
        raise OptionError(f"{self.flag} must be {expected}, got {shown(value)}", self.name)

    def coerce(self, value: Any, where: str) -> Any:
        """A value written in a spec or a study file (text or YAML scalar), converted to the
        option's type; the range is checked by :meth:`check` when the run is prepared."""
        try:
            if self.type is bool:
                switch = value if isinstance(value, bool) else _SWITCHES.get(str(value).lower())
                if switch is None:
                    raise ValueError
                return switch
            if self.type is str:
                return str(value)
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
            if self.type is int:
                if not number.is_integer():
                    raise ValueError
                return int(number)
            if not math.isfinite(number):
                raise ValueError
            return number
        except (TypeError, ValueError):
            expected = {bool: "true or false", int: "an integer", float: "a finite number"}[self.type]
            raise OptionError(f"{where}: {self.spec_name} must be {expected}, got {value!r}", self.name) from None


def option_table(*options: Option) -> dict[str, Option]:
    """``options`` by name; a name or flag given twice is an error."""
    table: dict[str, Option] = {}
    for option in options:
        if option.name in table or any(other.flag == option.flag for other in table.values()):
            raise ValueError(f"option {option.name!r} ({option.flag}) is declared twice")
        table[option.name] = option
    return table


OPTIONS: dict[str, Option] = option_table(
    Option("delta", "--delta", float, "Target error probability δ (of a safe BAI file: δ_r)", 0.05,
           "0.05, or the safe file's", 0.0, 1.0, True, True),
    Option("beta", "--beta", float, "Tuned regime: radius √β (the paper's β is 0.25)", None, "none", 0.0,
           low_open=True),
    Option("subgaussian", "--subgaussian", float, "Sub-Gaussian scale R of one observation", None,
           "σ, or 1 for binary noise; the paper used 1", 0.0, MAGNITUDE_LIMIT, low_open=True),
    Option("ridge", "--lambda", float, "Ridge λ of the adaptive design matrix", 0.1, "0.1, or the safe file's", 0.0,
           low_open=True),
    Option("norm_bound", "--S", float, "Bound S ≥ ‖φ‖ of the theory and det regimes (of a safe file: S ≥ ‖μ*‖, or "
           "S_θ ≥ ‖θ*‖ for safe BAI)", None, "the instance's, else 1", 0.0, low_open=True),
    Option("rounding_epsilon", "--epsilon", float, "Rounding ε of round-based algorithms", 0.01, "0.01", 0.0,
           low_open=True),
    Option("budget", "--budget", int, "Stop after this many queries (pulls) and give the anytime answer; at most "
           "10^15, the most one run can count", None, "none (safe BAI: 1,000,000)", 1.0, QUERY_LIMIT),
    Option("exploration", "--exploration", str,
           "Safe-LUCB's pure-exploration length T': ⌈T_Δ⌉ from the known safety gap, ⌈T_0⌉ (the T^{2/3} "
           "rule), the plug-in Δ̂ heuristic (not the paper's) or N rounds (Amani et al. 2019, §3)",
           None, "gap if Δ > 0, else t23", values="gap | t23 | heuristic | N"),
    Option("horizon", "--T", int, "Horizon T of a safe-regret run (the T' rules use it); at most 10^8, as a run keeps "
           "its regret curve, 8 bytes a round, in memory", None, "the file's T", 1.0, HORIZON_LIMIT),
    Option("dw", "--dw", str, "Safe-LUCB's exploration set D^w: the paper's ball ‖x‖ ≤ c/(‖B‖S) or the authors' "
           "code's ellipsoid ‖Bx‖ ≤ c/S", "ball", "ball", choices=("ball", "ellipsoid")),
    Option("confidence_set", "--confidence-set", str, "Safe-LUCB's confidence set: the L1 outer polytope of the "
           "authors' code, or the ellipsoid itself (finite action sets)", "polytope", "polytope",
           choices=("polytope", "ellipsoid")),
    Option("intersect", "--intersect", bool, "Safe-LUCB: intersect all past confidence polytopes (2-D box; the "
           "authors' intersectCLB.m)", False, "off", values="switch"),
    Option("rule", "--rule", str, "LinGapE's arm selection rule (Xu et al. 2018, Algorithm 1)", "greedy", "greedy",
           choices=("greedy", "ratio")),
    Option("step", "--step", str, "Track-and-Stop's last choice between the Frank–Wolfe vertex and the active target: "
           "the vertex unless one pull of the target lowers its variance more, or a mode per target decided on a model "
           "of its ols certificate (rollout; needs --regime ols, no forced exploration; docs/track-and-stop.md)",
           "vertex-or-target", "rollout under --regime ols, else vertex-or-target",
           choices=("vertex-or-target", "rollout")),
    Option("coordinates", "--coordinates", str, "The coordinates an adaptive algorithm's design and intervals work "
           "in: the features as written, or those of the arms' D-optimal design, where one pull of that design has "
           "information I, whatever the features' units (d-optimal needs --regime ols; docs/ols.md, \"The prior's "
           "shape\")", "features", "d-optimal under --regime ols, else features", choices=("features", "d-optimal")),
    Option("solver", "--solver", str, "Design solver of the bounds: auto, fw (certified first-order), cvxpy "
           "(exact)", "auto", "auto", choices=("auto", "fw", "cvxpy")),
    Option("time_limit", "--time-limit", float, "Seconds after which the design solver of the bounds stops with a "
           "certified interval [lower, upper] of H_CLB instead of its target gap (a capped result depends on the "
           "machine's speed)", None, f"none; {FORCED_BOUND_TIME_LIMIT:g} s for the bounds that --bound forces on solve and "
           "compare", 0.0,
           low_open=True),
    Option("tolerance", "--tolerance", float, "Relative duality gap to which the design solves of the bounds are "
           "certified (a parameter of cbai_cli.kinds.cbai.bounds.compute_bounds, no flag of a command)", 1e-6, "1e-06", 0.0, 1.0,
           True, True),
    Option("updates", "--updates", str, "Safe-LinGapE's safe scales γ̄: from forced exploration only, or refreshed "
           "every pull", "static", "static", choices=("static", "dynamic")),
    Option("safety_delta", "--delta-s", float, "Safe-LinGapE's safety confidence δ'_s of its conservative safe scales "
           "γ̄ (\"Price of Safety\", §4)", None, "the file's delta_s", 0.0, 1.0, True, True),
    Option("safety_norm_bound", "--S-mu", float, "Safe-LinGapE's known bound S_μ ≥ ‖μ*‖ on the safety parameter", None,
           "the file's S_mu", 0.0, low_open=True),
)

#: The help of ``-q/--quiet``, the switch of every command that shows progress.
QUIET_HELP = ("No progress on stderr (a live display on a terminal; elsewhere a line every few seconds, "
              "CBAI_PROGRESS_INTERVAL seconds when set); warnings and errors still print.")

#: The longest lease and the longest undo grace of a live session (s): a week.
LONGEST_WAIT = 7 * 24 * 3600.0
#: The most queries one ``cbai session next`` hands out: an adaptive algorithm asks one at a
#: time, about a millisecond each on the shipped instances, so a count of 10²⁹ would never return.
MAX_HANDED = 10_000
_WAIT = f"at most {LONGEST_WAIT:,.0f} (a week)"

#: The options of the live-session commands (``cbai session next``, ``ask``, ``serve`` …)
#: that are no option of a run: the command line adds them as declared here (``--help``
#: shows their ``default``), and :class:`cbai_cli.session.session.Session` and
#: :func:`cbai_cli.serve.listen.serve` check values with them.
SESSION_OPTIONS: dict[str, Option] = option_table(
    Option("count", "--count", int, "Hand out up to N queries at once (at most 10,000).", 1, low=1.0, high=MAX_HANDED,
           aliases=("-n",), must=f"an integer ≥ 1 and at most {MAX_HANDED:,} (queries handed out at once)"),
    Option("rater", "--rater", str, "Who answers (a rater id; default: anonymous). Each rater is handed queries of "
           "their own.", metavar="ID"),
    Option("lease", "--lease", float, "How long a query handed to a rater stays theirs before it returns to the pool "
           "(an answer after it is still kept).", 300.0, low=0.0, high=LONGEST_WAIT, low_open=True,
           metavar="SECONDS", must=f"a number of seconds > 0 and {_WAIT}"),
    Option("undo_seconds", "--undo-seconds", float, "How long a rater may take back their last answer or skip (0: "
           "never; `u` at the terminal); the algorithm is told an answer only after it.", 10.0, low=0.0,
           high=LONGEST_WAIT, metavar="S", must=f"a number of seconds ≥ 0 and {_WAIT}"),
    Option("host", "--host", str, "Address to listen on. Keep 127.0.0.1 and put a reverse proxy with TLS in front to "
           "serve other machines (docs/sessions.md).", "127.0.0.1"),
    Option("port", "--port", int, "Port to listen on; 0 picks a free one (the links show it).", 8000, low=0.0,
           high=65535.0, must="0 to 65535"),
    Option("token", "--token", str, "The access token every link and API call carries (8 to 256 URL-safe "
           "characters); default: a new random one, printed in the links."),
    Option("seed", "--seed", int, "Seed of the algorithm's random stream (the one `cbai solve --seed` gives it).", 0),
    Option("answers", "--file", Path, "Record many: a CSV file with columns id,value, one row per answer ('-' reads "
           "it from stdin).", metavar="CSV"),
    Option("pictures", "--pictures", Path, "Where driver instances' trajectory pictures go (default: the study's "
           "folder).", metavar="FOLDER"),
)


#: The options of ``cbai solve`` and ``cbai bound`` that are parameters of
#: :func:`cbai_cli.run.solving.solving` and :func:`cbai_cli.kinds.bound_file`, not of a run:
#: the command line adds them as declared here.
SOLVE_OPTIONS: dict[str, Option] = option_table(
    Option("seed", "--seed", int, "Seed of the first run.", 0),
    Option("runs", "--runs", int, "Run seeds seed, seed+1, …, seed+runs−1.", 1),
    Option("trace", "--trace", str, "Write one line per query to FILE (.csv or .jsonl); single run only."),
    Option("bound", "--bound", bool, "Compute the instance's bounds (H_CLB, Theorem 1) after the runs; default: only "
           f"when K·d ≤ 10⁶ and K·d³ ≤ 3·10⁸. Forced bounds stop after {FORCED_BOUND_TIME_LIMIT:g} s with a certified "
           "interval.", off="--no-bound"),
    Option("guess", "--guess-constraint", str, "Size a study: use this guess of the hidden constraint φ (cbai files; "
           "it replaces the file's): d numbers separated by commas in the file's coordinates, e.g. 0.5,-0.2,1, or a "
           "FILE: a cbai instance (.yaml, .yml, .npz) whose constraint is taken, a vector .npy or .txt. The output "
           "says its numbers are for a guessed constraint.", metavar="FILE|VALUES"),
)

#: The options of ``cbai driver-arms`` (:func:`cbai_cli.driver.command.driver_arms`): the
#: command line adds them as declared here, None when not given; their help names the
#: library's defaults (tests/cli/test_driver_arms.py compares them).
DRIVER_OPTIONS: dict[str, Option] = option_table(
    Option("output", "--output", str, "Instance file to write (.npz recommended, or .yaml); with --scenario all, one "
           "file per scenario named FILE-base.npz, FILE-different-reward.npz, FILE-different-environment.npz. With "
           "--show: the picture (.png, .pdf, .svg).", aliases=("-o",), metavar="FILE"),
    Option("n", "--n", int, "Number of candidate policies, one CEM each (default 1000, the paper's)."),
    Option("seed", "--seed", int, "Root seed; policy i uses child i of SeedSequence(seed) (default 0)."),
    Option("scenario", "--scenario", str, "base, different-reward, different-environment, or all (default base)."),
    Option("jobs", "--jobs", int, "Worker processes for the CEM runs (default 1; any value gives the same policies).",
           aliases=("-j",)),
    Option("feedback", "--feedback", str, "binary (default: yes/no answers, arms rescaled per arm so φᵀx ∈ [−1, 1]) "
           "or gaussian (no rescaling)."),
    Option("sigma", "--sigma", float, "Noise σ of --feedback gaussian (default 0.1)."),
    Option("rescale_rewards", "--rescale-rewards", bool, "Compute rewards on the rescaled arms, as the authors' code "
           "did (default: θᵀ of the unscaled features).", False),
    Option("policies", "--policies", Path, "Evaluate these action sequences (.npy, n × 20 × 2, in [−1, 1]) instead "
           "of running the CEM."),
    Option("no_truth", "--no-truth", bool, "Leave out the hidden constraint (a user study's file, for `cbai session`): "
           "binary arms are rescaled by S‖x‖, which does not reveal feasibility.", False),
    Option("show", "--show", Path, "Draw policies of this driver instance file instead of building one; needs -o "
           "PICTURE."),
    Option("arms", "--arm", int, "With --show: draw this arm's policy (repeat for several).", metavar="K",
           multiple=True),
    Option("highlight", "--highlight", int, "With --show: draw all candidates, green if feasible and red if not, "
           "this arm on top."),
    Option("solved", "--solved", str, "With --show: highlight the arm recommended in `cbai solve FILE --json` output "
           "(a file, or - for stdin)."),
)


def declare(options: Iterable[Option]) -> None:
    """Add the options that a plugin's algorithm reads (its registry entry's ``declares``),
    all or none: a name, flag or spec name that another option has is an error, so a plugin
    can neither shadow nor change an option of cbai's."""
    options = list(options)
    table = dict(OPTIONS)
    for option in options:
        if not isinstance(option, Option):
            raise TypeError(f"an option is an Option, got a {type(option).__name__}")
        if not option.flag.startswith("--") or len(option.flag) < 3:
            raise ValueError(f"option {option.name!r}: its flag must start with --, got {option.flag!r}")
        for other in table.values():
            if option.name == other.name or option.flag == other.flag or option.spec_name == other.spec_name:
                raise ValueError(f"option {option.name!r} ({option.flag}) clashes with the option {other.name!r} "
                                 f"({other.flag})")
        table[option.name] = option
    OPTIONS.update({option.name: option for option in options})


def by_spec_name(name: str) -> Option | None:
    """The option written ``name`` in a compare spec or study file (``lambda``, ``S``, ``T``)."""
    for option in OPTIONS.values():
        if option.spec_name == name:
            return option
    return None


def by_flag(flag: str) -> Option:
    """The option of a command-line flag."""
    return next(option for option in OPTIONS.values() if option.flag == flag)


def default(name: str) -> Any:
    """The declared default of option ``name``."""
    return OPTIONS[name].default


def refuse_unknown(names: Iterable[Any]) -> None:
    """One line naming the given option names that :data:`OPTIONS` does not declare. The
    options of plugins' algorithms are declared when the registry loads its plugins
    (:func:`cbai_cli.algorithms.registry.load_plugins`), which callers that take them do first."""
    unknown = [str(name) for name in names if name not in OPTIONS]
    if unknown:
        raise OptionError(f"unknown option(s) {', '.join(unknown)} (valid: {', '.join(OPTIONS)})", unknown[0])


def checked(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with every given (non-None) option checked against its type and range,
    as plain Python values (:meth:`Option.check`); an undeclared name is an error."""
    refuse_unknown(values)
    return {name: OPTIONS[name].check(value) for name, value in values.items() if value is not None}


def check_seed(seed: Any, flag: str = "--seed", parameter: str = "seed") -> int:
    """``seed`` as a Python int if it is an integer ≥ 0 (numpy integers converted); else
    :class:`OptionError` naming ``flag``. A bool is no seed, and neither is None: numpy would
    draw it from the system's entropy, a run nobody can repeat."""
    if _is_bool(seed) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise OptionError(f"{flag} must be an integer ≥ 0, got {shown(seed)}", parameter)
    return int(seed)


def _is_bool(value: Any) -> bool:
    """Whether ``value`` is a bool, Python's or numpy's (numpy is not imported for this:
    a numpy bool exists only once numpy is)."""
    numpy = sys.modules.get("numpy")
    return isinstance(value, bool) or numpy is not None and isinstance(value, numpy.bool_)


def shown(value: Any) -> str:
    """``value`` for a one-line message: an integer in scientific notation from 10^20 on
    (never hundreds of digits), anything else as its repr cut to 60 characters."""
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        value = int(value)
        if abs(value) < 10**20:
            return str(value)
        try:
            return f"{float(value):g}"
        except OverflowError:  # beyond float: its order of magnitude from its bit length
            return f"about {'-' if value < 0 else ''}1e+{int(value.bit_length() * math.log10(2))}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: Flags of the command line that are not run options, and the library's parameter each is.
COMMAND_FLAGS = {"--algo": "algorithm", "--algos": "algorithms", "--regime": "regime", "--seed": "seed",
                 "--runs": "runs", "--seeds": "seeds", "--first-seed": "first_seed", "--jobs": "jobs"}


def library_message(message: str) -> str:
    """``message`` with every flag of the command line in it named as the library's
    parameter (``--delta must lie in (0, 1)`` → ``delta must lie in (0, 1)``)."""
    names = {**COMMAND_FLAGS, **{option.flag: option.name for option in OPTIONS.values()}}
    flags = "|".join(re.escape(flag) for flag in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])({flags})(?![\w-])", lambda found: names[found.group(1)], message)


@contextmanager
def library_errors() -> Iterator[None]:
    """Inside, a :class:`~cbai_cli.contracts.errors.CbaiError` names the library's parameters,
    not the command line's flags (:func:`library_message`): what the Python API raises."""
    try:
        yield
    except CbaiError as error:
        if error.args and isinstance(error.args[0], str):
            error.args = (library_message(error.args[0]), *error.args[1:])
        raise

