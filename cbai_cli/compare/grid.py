"""What a comparison runs: instance groups × algorithm choices × seeds, and its plan.

Sources (the positional arguments of ``cbai compare``, or ``sources:`` of a study file):

- an instance file (.yaml, .yml, .npz): one group, the same instance for every seed;
- a folder: one group per instance file directly inside it, in name order;
- a generator spec ``FAMILY[:NAME=VALUE,...]`` such as ``irrelevant-dims:d=10,eps=0.05``.
  One parameter may list values separated by ``|`` (a sweep, as on the x axis of the
  paper's Figure 2); each value is its own group. ``sigma=`` and ``noise=`` choose the
  noise model as ``cbai generate --sigma/--noise`` do. A seeded family (unit-sphere,
  random) draws a fresh instance per seed, as the paper does for the unit sphere: the
  instance of seed s is exactly ``cbai generate FAMILY ... --seed s``. Giving ``seed=``
  in the spec fixes one instance instead.

Algorithm specs: ``NAME[:REGIME][:OPTION=VALUE,...]``, e.g. ``acol``,
``g-acol:tuned:beta=0.25``, ``g-acol:theory``, ``maxrew-u:tuned:beta=0.25,budget=10000``.
The options are those of ``cbai solve`` (beta, subgaussian, lambda, S, epsilon, budget,
delta). Options given once for all algorithms apply where they mean something (β to the
tuned regime, λ to adaptive algorithms, ε to round-based ones, S to theory and det), so
``--beta 0.25`` can sit beside ``acol``; an option written in a spec always applies.

Randomness (common random numbers): run (instance, seed s, algorithm) draws from
``SeedSequence(s, spawn_key=(k,))`` with k the instance's content hash read as an
integer. Every algorithm on seed s of an instance faces the same noise stream, and no
result depends on which process runs it or in which order.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbai_cli.errors import CbaiError, InstanceError, OptionError, UnknownNameError, unknown_name_message
from cbai_cli.simulate import RunSpec

if TYPE_CHECKING:
    from cbai_cli.instance import Instance
    from cbai_cli.noise import NoiseModel

INSTANCE_SUFFIXES = (".yaml", ".yml", ".npz")
# Option name in specs and study files → (RunSpec field, type).
SPEC_OPTIONS: dict[str, tuple[str, type]] = {
    "delta": ("delta", float),
    "beta": ("beta", float),
    "subgaussian": ("subgaussian", float),
    "lambda": ("ridge", float),
    "S": ("norm_bound", float),
    "epsilon": ("rounding_epsilon", float),
    "budget": ("budget", int),
}
NOISE_KEYS = ("noise", "sigma")
STUDY_KEYS = ("title", "description", "sources", "algorithms", "seeds", "first_seed", "options")
DEFAULT_SEEDS = 10


@dataclass(frozen=True)
class SharedOptions:
    """The options of ``cbai solve`` given once for every algorithm (None: the default)."""

    delta: float = 0.05
    beta: float | None = None
    subgaussian: float | None = None
    ridge: float | None = None
    norm_bound: float | None = None
    rounding_epsilon: float | None = None
    budget: int | None = None


@dataclass(frozen=True)
class AlgorithmChoice:
    """One algorithm spec, parsed: its label (the spec as written), the request it means
    (a :class:`RunSpec`, or a :class:`~cbai_cli.safe.solving.SafeRunSpec` for a safe
    algorithm) and the instance kind it runs on."""

    label: str
    request: Any
    kind: str = "cbai"


@dataclass(frozen=True, eq=False)
class Group:
    """One instance group: a row block of the tables and a point of a sweep.

    Attributes:
        label: the group's name in tables, records and run keys (the spec with the
            swept value filled in, or the file's path as written).
        source: the source text it came from (the groups of one sweep share it).
        source_index: position of that source, so a study's panels keep their order.
        swept: (parameter, value) when the source sweeps a parameter, else None.
        family, params, noise: the generator of a per-seed group.
        instance: the instance when it is the same for every seed, else None.
    """

    label: str
    source: str
    source_index: int
    swept: tuple[str, Any] | None = None
    family: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    noise: NoiseModel | None = None
    instance: Instance | None = None

    @property
    def per_seed(self) -> bool:
        """Whether every seed draws its own instance."""
        return self.instance is None

    @property
    def kind(self) -> str:
        """The instance kind of the group (cbai, safe-regret or safe-bai)."""
        if self.instance is not None:
            return self.instance.kind
        from cbai_cli.generators import family

        return family(self.family).kind

    def instance_for(self, seed: int) -> Instance:
        """The instance of seed ``seed`` (the fixed one, or a fresh draw with that seed)."""
        if self.instance is not None:
            return self.instance
        from cbai_cli.generators import family

        return family(self.family).generate(self.noise, **dict(self.params), seed=seed)


@dataclass(frozen=True)
class Study:
    """An experiment file: sources, algorithms, seeds and shared options in one place."""

    path: Path
    sources: tuple[str, ...] = ()
    algorithms: tuple[str, ...] = ()
    seeds: int | None = None
    first_seed: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    title: str | None = None

    @property
    def base(self) -> Path:
        """Relative instance paths in the file are read from the file's folder."""
        return self.path.parent


@dataclass(frozen=True, eq=False)
class Grid:
    """Groups × algorithms × seeds, validated."""

    groups: tuple[Group, ...]
    algorithms: tuple[AlgorithmChoice, ...]
    seeds: tuple[int, ...]
    title: str | None = None

    def idle_groups(self) -> list[Group]:
        """Groups that no algorithm of the grid can run on (another instance kind)."""
        kinds = {choice.kind for choice in self.algorithms}
        return [group for group in self.groups if group.kind not in kinds]


@dataclass(frozen=True)
class PlannedRun:
    """One run of the grid.

    ``index`` is its position in the whole grid (group, then seed, then algorithm), the
    same in every shard; ``run_key`` identifies it in a store (see :func:`run_key`).
    """

    index: int
    group: int
    seed: int
    algorithm: int
    run_key: str


@dataclass(frozen=True, eq=False)
class Plan:
    """The runs one process is responsible for (all of them, or one shard's), with
    the instance of each (group, seed) cell."""

    grid: Grid
    runs: tuple[PlannedRun, ...]
    instances: Mapping[tuple[int, int], Instance]

    def instance(self, run: PlannedRun) -> Instance:
        return self.instances[(run.group, run.seed)]


# ---------------------------------------------------------------- algorithm specs

def split_algorithm_specs(texts: Iterable[str]) -> list[str]:
    """Split ``--algos`` values at commas into specs.

    A piece without ``:`` that holds ``=`` continues the options of the previous spec,
    so ``g-acol:tuned:beta=0.25,budget=100,acol`` is two specs.
    """
    specs: list[str] = []
    for text in texts:
        for piece in text.split(","):
            piece = piece.strip()
            if not piece:
                raise OptionError(f"--algos {text!r}: empty algorithm spec")
            if "=" in piece and ":" not in piece:
                if not specs or "=" not in specs[-1]:
                    raise OptionError(f"--algos {text!r}: option {piece!r} does not follow an algorithm spec with options "
                                      "(write NAME:REGIME:OPTION=VALUE,...)")
                specs[-1] += "," + piece
            else:
                specs.append(piece)
    return specs


def _parse_options(text: str, items: str, where: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in items.split(","):
        name, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not name or not value:
            raise OptionError(f"{where} {text!r}: expected OPTION=VALUE, got {item.strip()!r}")
        options[name] = value
    return options


def coerce_option(name: str, value: Any, where: str) -> Any:
    """An option value of a spec or study file, converted to its type."""
    if name not in SPEC_OPTIONS:
        raise OptionError(f"{where}: unknown option {name!r} (valid: {', '.join(SPEC_OPTIONS)})")
    kind = SPEC_OPTIONS[name][1]
    try:
        if isinstance(value, bool):
            raise ValueError
        if kind is int:
            number = float(value)
            if not number.is_integer():
                raise ValueError
            return int(number)
        number = float(value)
        if not math.isfinite(number):
            raise ValueError
        return number
    except (TypeError, ValueError):
        raise OptionError(f"{where}: {name} must be {'an integer' if kind is int else 'a finite number'}, got {value!r}") from None


def parse_algorithm(text: str, shared: SharedOptions) -> AlgorithmChoice:
    """``NAME[:REGIME][:OPTION=VALUE,...]`` merged with the shared options."""
    from cbai_cli.algorithms.registry import resolve

    from cbai_cli.safe.registry import SAFE_ALGORITHMS

    parts = [part.strip() for part in text.split(":")]
    name, rest = parts[0], parts[1:]
    if not name:
        raise OptionError(f"algorithm spec {text!r}: missing the algorithm name")
    if name in SAFE_ALGORITHMS:
        return _parse_safe_algorithm(text, parts, shared)
    try:
        spec, alias = resolve(name)
    except UnknownNameError:
        from cbai_cli.algorithms.registry import ALGORITHMS, ALIASES

        raise UnknownNameError(unknown_name_message("algorithm", name, {**ALGORITHMS, **ALIASES, **SAFE_ALGORITHMS})) from None
    regime: str | None = None
    written: dict[str, Any] = {}
    if len(rest) > 2:
        raise OptionError(f"algorithm spec {text!r}: expected NAME[:REGIME][:OPTION=VALUE,...]")
    for position, part in enumerate(rest):
        if not part:
            raise OptionError(f"algorithm spec {text!r}: empty field between ':'")
        if "=" in part:
            if position != len(rest) - 1:
                raise OptionError(f"algorithm spec {text!r}: options come last (NAME[:REGIME][:OPTION=VALUE,...])")
            written = {key: coerce_option(key, value, f"algorithm spec {text!r}")
                       for key, value in _parse_options(text, part, "algorithm spec").items()}
        elif position == 0:
            regime = part
        else:
            raise OptionError(f"algorithm spec {text!r}: expected NAME[:REGIME][:OPTION=VALUE,...]")
    if regime is not None:
        spec.check_regime(regime)
    effective = regime or (alias.regime if alias is not None and alias.regime else None) or spec.default_regime
    # A shared option applies where it means something; a written one always applies,
    # so a misplaced one is reported by prepare() with the solve command's message.
    applies = {
        "beta": effective == "tuned",
        "ridge": spec.style == "adaptive",
        "rounding_epsilon": spec.style == "round",
        "norm_bound": effective in ("theory", "det"),
    }
    fields: dict[str, Any] = {}
    for option, (field_name, _) in SPEC_OPTIONS.items():
        if option in written:
            fields[field_name] = written[option]
        elif applies.get(field_name, True):
            fields[field_name] = getattr(shared, field_name)
    label = ":".join(parts)
    return AlgorithmChoice(label=label, request=RunSpec(algorithm=name, regime=regime, **fields))


def _parse_safe_algorithm(text: str, parts: list[str], shared: SharedOptions) -> AlgorithmChoice:
    """``NAME[:OPTION=VALUE,...]`` of a safe algorithm: no regime (the confidence levels
    are fields of the instance file); options as ``cbai solve`` flags without dashes
    (``safe-lucb:exploration=0``, ``safe-lingape:updates=dynamic,rule=ratio``). Of the
    shared options only ``budget`` applies, to the BAI algorithms."""
    from cbai_cli.safe.registry import OPTIONS, SAFE_ALGORITHMS, option_by_spec_name
    from cbai_cli.safe.solving import SafeRunSpec

    name, rest = parts[0], parts[1:]
    spec = SAFE_ALGORITHMS[name]
    accepted = ", ".join(OPTIONS[flag].spec_name for flag in spec.options)
    where = f"algorithm spec {text!r}"
    if len(rest) > 1 or (rest and "=" not in rest[0]):
        raise OptionError(f"{where}: {name} has no confidence regime; write {name}[:OPTION=VALUE,...] "
                          f"(its options: {accepted})")
    fields: dict[str, Any] = {}
    for key, value in (_parse_options(text, rest[0], "algorithm spec").items() if rest else ()):
        option = option_by_spec_name(key)
        if option is None or option.flag not in spec.options:
            raise OptionError(f"{where}: {name} has no option {key!r} (its options: {accepted})")
        fields[option.field] = _coerce_safe_option(option, value, where)
    if "budget" not in fields and shared.budget is not None and "--budget" in spec.options:
        fields["budget"] = shared.budget
    return AlgorithmChoice(label=":".join(parts), request=SafeRunSpec(algorithm=name, **fields), kind=spec.kind)


def _coerce_safe_option(option, value: str, where: str) -> Any:
    """A safe option's value from a spec: an integer, a switch (true/false) or text; the
    allowed texts are checked by the algorithm's ``prepare``, with ``cbai solve``'s message."""
    if option.type is int:
        try:
            return int(value)
        except ValueError:
            raise OptionError(f"{where}: {option.spec_name} must be an integer, got {value!r}") from None
    if option.type is bool:
        switch = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(value.lower())
        if switch is None:
            raise OptionError(f"{where}: {option.spec_name} must be true or false, got {value!r}")
        return switch
    return value


def parse_algorithms(texts: Iterable[str], shared: SharedOptions) -> tuple[AlgorithmChoice, ...]:
    """Every spec of ``--algos`` (or a study's ``algorithms:``), each once."""
    choices: list[AlgorithmChoice] = []
    for text in split_algorithm_specs(texts):
        choice = parse_algorithm(text, shared)
        if any(existing.label == choice.label for existing in choices):
            raise OptionError(f"algorithm spec {choice.label!r} is given twice")
        choices.append(choice)
    if not choices:
        raise OptionError("no algorithms: give --algos SPEC[,SPEC...] (see `cbai algorithms`)")
    return tuple(choices)


# ---------------------------------------------------------------- sources

def parse_source(text: str, index: int, base: Path | None = None) -> list[Group]:
    """The groups of one source: a file, a folder or a generator spec."""
    text = text.strip()
    if not text:
        raise OptionError("empty source")
    path = Path(text)
    located = base / path if base is not None and not path.is_absolute() else path
    if located.is_dir():
        return _folder_groups(text, located, index)
    if located.is_file():
        return [_file_group(text, located, index)]
    name, colon, _ = text.partition(":")
    from cbai_cli.generators import FAMILIES

    if name in FAMILIES:
        return _generator_groups(text, index)
    if colon and "/" not in name and Path(name).suffix.lower() not in INSTANCE_SUFFIXES:
        raise UnknownNameError(f"source {text!r}: " + unknown_name_message("family", name, FAMILIES))
    if Path(text).suffix.lower() in INSTANCE_SUFFIXES or "/" in text:
        raise InstanceError(f"{text}: no such file or folder")
    raise OptionError(f"source {text!r}: no such file or folder, and not a generator spec "
                      f"(families: {', '.join(FAMILIES)}; e.g. irrelevant-dims:d=10,eps=0.05)")


def _file_group(label: str, path: Path, index: int) -> Group:
    from cbai_cli.kinds import load

    if path.suffix.lower() not in INSTANCE_SUFFIXES:
        raise InstanceError(f"{label}: unknown file type {path.suffix or '(none)'!r}; use .yaml, .yml or .npz")
    return Group(label=label, source=label, source_index=index, instance=load(path))


def _folder_groups(text: str, folder: Path, index: int) -> list[Group]:
    files = sorted(child for child in folder.iterdir() if child.is_file() and child.suffix.lower() in INSTANCE_SUFFIXES)
    if not files:
        raise InstanceError(f"{text}: the folder holds no .yaml, .yml or .npz instance files")
    return [_file_group(str(Path(text) / child.name), child, index) for child in files]


def _generator_groups(text: str, index: int) -> list[Group]:
    from cbai_cli.generators import coerce, family, make_noise

    name, colon, body = text.partition(":")
    chosen = family(name)
    where = f"generator spec {text!r}"
    if colon and not body.strip():
        raise OptionError(f"{where}: nothing after ':' (write {name}:NAME=VALUE,...)")
    written = _parse_options(text, body, "generator spec") if body.strip() else {}
    tokens: dict[str, list[str]] = {}
    swept: str | None = None
    for key, value in written.items():
        values = [token.strip() for token in value.split("|")]
        if any(not token for token in values):
            raise OptionError(f"{where}: empty value in {key}={value}")
        if len(values) > 1:
            if swept is not None:
                raise OptionError(f"{where}: only one parameter may list several values (both {swept} and {key} do)")
            if key == "noise":
                raise OptionError(f"{where}: the noise kind cannot be swept; sweep sigma instead")
            swept = key
        tokens[key] = values
    typed: dict[str, list[Any]] = {}
    for key, values in tokens.items():
        if key == "sigma":
            typed[key] = [coerce_sigma(token, where) for token in values]
        elif key == "noise":
            typed[key] = values
        else:
            try:
                parameter = chosen.parameter(key)
            except OptionError as error:
                raise OptionError(f"{where}: {error} (noise keys: {', '.join(NOISE_KEYS)})") from None
            typed[key] = [coerce(parameter, token, chosen.name) for token in values]
    sweep_values = typed[swept] if swept is not None else [None]
    groups = []
    for position, value in enumerate(sweep_values):
        chosen_values = {key: (values[position] if key == swept else values[0]) for key, values in typed.items()}
        label_tokens = {key: (values[position] if key == swept else values[0]) for key, values in tokens.items()}
        label = name + (":" + ",".join(f"{key}={token}" for key, token in label_tokens.items()) if label_tokens else "")
        try:
            noise_kind, sigma = chosen_values.pop("noise", None), chosen_values.pop("sigma", None)
            if chosen.takes_noise:
                noise = make_noise(noise_kind, sigma, chosen.default_sigma)
            elif noise_kind is not None or sigma is not None:
                raise OptionError(f"the noise of a {chosen.kind} instance is part of the instance; "
                                  "noise= and sigma= do not apply")
            else:
                noise = None
            params = tuple(chosen_values.items())
            fixed = None
            if not chosen.seeded or "seed" in chosen_values:
                fixed = chosen.generate(noise, **chosen_values)
        except CbaiError as error:
            raise type(error)(f"{where}: {error}") from None
        groups.append(Group(label=label, source=text, source_index=index,
                            swept=(swept, value) if swept is not None else None,
                            family=chosen.name, params=params, noise=noise, instance=fixed))
    return groups


def coerce_sigma(token: str, where: str) -> float:
    try:
        sigma = float(token)
    except ValueError:
        raise OptionError(f"{where}: sigma must be a number, got {token!r}") from None
    if not (math.isfinite(sigma) and sigma > 0):
        raise OptionError(f"{where}: sigma must be a finite number > 0, got {token!r}")
    return sigma


def parse_sources(texts: Sequence[str], base: Path | None = None) -> tuple[Group, ...]:
    """Every group of every source, in the order given; labels must be distinct."""
    if not texts:
        raise OptionError("no sources: give instance files, folders or generator specs "
                          "(e.g. irrelevant-dims:d=10,eps=0.02|0.05), or --config STUDY.yaml")
    groups: list[Group] = []
    for index, text in enumerate(texts):
        for group in parse_source(text, index, base):
            if any(existing.label == group.label for existing in groups):
                raise OptionError(f"source {group.label!r} is given twice")
            groups.append(group)
    return tuple(groups)


# ---------------------------------------------------------------- study files

def load_study(path: str | Path) -> Study:
    """Read an experiment file (YAML): ``sources``, ``algorithms``, ``seeds``,
    ``first_seed``, ``options`` (delta, beta, subgaussian, lambda, S, epsilon, budget),
    and an optional ``title`` and ``description``."""
    from cbai_cli.fileio import YAML_SUFFIXES, read_mapping

    path = Path(path)
    if path.suffix.lower() not in YAML_SUFFIXES:
        raise OptionError(f"--config {path}: a study file is YAML (.yaml or .yml)")
    try:
        mapping = read_mapping(path)
    except InstanceError as error:
        raise OptionError(str(error)) from None
    unknown = [str(key) for key in mapping if key not in STUDY_KEYS]
    if unknown:
        raise OptionError(f"{path}: unknown key(s) {', '.join(unknown)} (valid: {', '.join(STUDY_KEYS)})")

    def strings(key: str) -> tuple[str, ...]:
        value = mapping.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, (str, int, float)) for item in value):
            raise OptionError(f"{path}: {key} must be a list of strings")
        return tuple(str(item) for item in value)

    def count(key: str, minimum: int) -> int | None:
        value = mapping.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise OptionError(f"{path}: {key} must be an integer ≥ {minimum}, got {value!r}")
        return value

    options = mapping.get("options", {}) or {}
    if not isinstance(options, dict):
        raise OptionError(f"{path}: options must be a mapping like {{delta: 0.05, subgaussian: 1}}")
    typed = {str(key): coerce_option(str(key), value, f"{path}: options") for key, value in options.items()}
    title = mapping.get("title")
    return Study(path=path, sources=strings("sources"), algorithms=strings("algorithms"), seeds=count("seeds", 1),
                 first_seed=count("first_seed", 0), options=typed, title=None if title is None else str(title))


# ---------------------------------------------------------------- plan

def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``i/n`` (1 ≤ i ≤ n) as (i, n)."""
    if text is None:
        return None
    part, slash, total = text.partition("/")
    try:
        index, count = int(part), int(total)
    except ValueError:
        raise OptionError(f"--shard must look like i/n (e.g. 2/8), got {text!r}") from None
    if not slash or count < 1 or not 1 <= index <= count:
        raise OptionError(f"--shard i/n needs 1 ≤ i ≤ n, got {text!r}")
    return index, count


def stream_key(instance: Instance) -> int:
    """The SeedSequence spawn key of an instance: its content hash as an integer."""
    return int(instance.content_hash, 16)


def run_key(group: Group, instance: Instance, seed: int, choice: AlgorithmChoice) -> str:
    """A short hash naming one run in a store: the group, the instance's content, the
    seed, the spec and every requested option. Resuming skips runs whose key is stored."""
    identity = [group.label, instance.content_hash, seed, choice.label, asdict(choice.request)]
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def build_plan(grid: Grid, shard: tuple[int, int] | None = None) -> Plan:
    """The runs of the grid in canonical order (group, seed, algorithm), or those of one
    shard: shard i/n holds every n-th (group, seed) cell starting at the i-th, so all
    algorithms of a cell run in the same shard and the shards partition the grid. An
    algorithm runs on the groups of its instance kind only (CBAI algorithms on cbai
    instances, Safe-LUCB on safe-regret, LinGapE and Safe-LinGapE on safe-bai)."""
    runs: list[PlannedRun] = []
    instances: dict[tuple[int, int], Instance] = {}
    index = 0
    cell = 0
    for group_index, group in enumerate(grid.groups):
        for seed in grid.seeds:
            mine = shard is None or cell % shard[1] == shard[0] - 1
            cell += 1
            if not mine:
                index += len(grid.algorithms)
                continue
            instance = group.instance_for(seed)
            instances[(group_index, seed)] = instance
            for algorithm_index, choice in enumerate(grid.algorithms):
                if choice.kind == group.kind:
                    runs.append(PlannedRun(index, group_index, seed, algorithm_index,
                                           run_key(group, instance, seed, choice)))
                index += 1
    return Plan(grid, tuple(runs), instances)


def validate(grid: Grid) -> None:
    """Check every (group, algorithm) pair of one kind as ``cbai solve`` would, before any
    run: an unknown regime, tuned without β, an option the algorithm cannot use…; and
    that every algorithm has some group of its kind to run on."""
    from cbai_cli.compare.requests import prepare_request

    kinds = {group.kind for group in grid.groups}
    for choice in grid.algorithms:
        if choice.kind not in kinds:
            from cbai_cli.safe.registry import names_for

            raise OptionError(f"algorithm spec {choice.label!r} runs on {choice.kind} instances, and no source is one "
                              f"(sources: {', '.join(sorted(kinds))} instances; their algorithms: "
                              f"{', '.join(name for kind in sorted(kinds) for name in names_for(kind))})")
    for group in grid.groups:
        instance = group.instance_for(grid.seeds[0])
        for choice in grid.algorithms:
            if choice.kind != group.kind:
                continue
            try:
                prepare_request(choice.request, instance, solve_oracle=False)
            except OptionError as error:
                raise OptionError(f"algorithm spec {choice.label!r}: {error}") from None


def build_grid(sources: Sequence[str], algorithms: Sequence[str], seeds: int, first_seed: int = 0,
               shared: SharedOptions = SharedOptions(), base: Path | None = None, title: str | None = None) -> Grid:
    """Parse and validate sources, algorithm specs and seeds into a :class:`Grid`."""
    if seeds < 1:
        raise OptionError(f"--seeds must be ≥ 1, got {seeds}")
    if first_seed < 0:
        raise OptionError(f"--first-seed must be ≥ 0, got {first_seed}")
    choices = parse_algorithms(algorithms, shared)
    groups = parse_sources(sources, base)
    grid = Grid(groups, choices, tuple(range(first_seed, first_seed + seeds)), title)
    validate(grid)
    return grid
