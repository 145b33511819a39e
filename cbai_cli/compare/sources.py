"""Sources of ``cbai compare``: instance files, folders and generator specs, as groups.

- an instance file (.yaml, .yml, .npz): one group, the same instance for every seed;
- a folder: one group per instance file directly inside it, in name order;
- a generator spec ``FAMILY[:NAME=VALUE,...]`` such as ``irrelevant-dims:d=10,eps=0.05``.
  One parameter may list values separated by ``|`` (a sweep, as on the x axis of the
  paper's Figure 2); each value is its own group. ``sigma=`` and ``noise=`` choose the
  noise model as ``cbai generate --sigma/--noise`` do. A seeded family (unit-sphere,
  random) draws a fresh instance per seed, as the paper does for the unit sphere: the
  instance of seed s is exactly ``cbai generate FAMILY ... --seed s``. Giving ``seed=``
  in the spec fixes one instance instead.
"""

from __future__ import annotations

import errno
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbai_cli.compare.specs import parse_pairs
from cbai_cli.contracts.errors import (
    CbaiError,
    InstanceError,
    OptionError,
    UnknownNameError,
    unknown_name_message,
)

if TYPE_CHECKING:
    from cbai_cli.kinds.cbai.noise import NoiseModel

INSTANCE_SUFFIXES = (".yaml", ".yml", ".npz")
NOISE_KEYS = ("noise", "sigma")


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
    instance: Any = None

    @property
    def per_seed(self) -> bool:
        """Whether every seed draws its own instance."""
        return self.instance is None

    @property
    def kind(self) -> str:
        """The instance kind of the group (cbai, safe-regret or safe-bai)."""
        if self.instance is not None:
            return self.instance.kind
        from cbai_cli.kinds.cbai.families import family

        return family(self.family).kind

    def instance_for(self, seed: int) -> Any:
        """The instance of seed ``seed`` (the fixed one, or a fresh draw with that seed)."""
        if self.instance is not None:
            return self.instance
        from cbai_cli.kinds.cbai.families import family

        return family(self.family).generate(self.noise, **dict(self.params), seed=seed)


def parse_source(text: Any, index: int, base: Path | None = None) -> list[Group]:
    """The groups of one source: a file, a folder, a generator spec, or an instance held in
    memory (labelled by its name)."""
    if not isinstance(text, str):
        return [Group(label=text.name, source=text.name, source_index=index, instance=text)]
    text = text.strip()
    if not text:
        raise OptionError("empty source")
    path = Path(text)
    located = base / path if base is not None and not path.is_absolute() else path
    if _names_something(located):
        if located.is_dir():
            return _folder_groups(text, located, index)
        if located.is_file():
            return [_file_group(text, located, index)]
        from cbai_cli.io.files import not_regular

        raise not_regular(text)  # a FIFO, a device
    name, colon, _ = text.partition(":")
    from cbai_cli.kinds.cbai.families import FAMILIES

    if name in FAMILIES:
        return _generator_groups(text, index)
    if colon and "/" not in name and Path(name).suffix.lower() not in INSTANCE_SUFFIXES:
        raise UnknownNameError(f"source {text!r}: " + unknown_name_message("family", name, FAMILIES))
    if Path(text).suffix.lower() in INSTANCE_SUFFIXES or "/" in text:
        raise InstanceError(f"{text}: no such file or folder")
    raise OptionError(f"source {text!r}: no such file or folder, and not a generator spec "
                      f"(families: {', '.join(FAMILIES)}; e.g. irrelevant-dims:d=10,eps=0.05)")


def _names_something(path: Path) -> bool:
    """Whether ``path`` names something on disk; a text too long to be a file name (a sweep
    of hundreds of values) names nothing, so it is read as a generator spec."""
    try:
        return path.exists()
    except OSError as error:
        if error.errno != errno.ENAMETOOLONG:
            raise
        return False


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
    from cbai_cli.kinds.cbai.families import coerce, family, make_noise

    name, colon, body = text.partition(":")
    chosen = family(name)
    where = f"generator spec {text!r}"
    if colon and not body.strip():
        raise OptionError(f"{where}: nothing after ':' (write {name}:NAME=VALUE,...)")
    written = parse_pairs(text, body, "generator spec") if body.strip() else {}
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


