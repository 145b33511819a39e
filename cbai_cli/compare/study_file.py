"""Study files of ``cbai compare``: sources, algorithms, seeds and shared options in one YAML file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cbai_cli.compare.specs import coerce_option
from cbai_cli.contracts.errors import InstanceError, OptionError

STUDY_KEYS = ("title", "description", "sources", "algorithms", "seeds", "first_seed", "options")


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


def load_study(path: str | Path) -> Study:
    """Read an experiment file (YAML): ``sources``, ``algorithms``, ``seeds``,
    ``first_seed``, ``options`` (by their spec names: delta, beta, subgaussian, lambda,
    S, epsilon, budget, …; held by their library names), and an optional ``title`` and
    ``description``."""
    from cbai_cli.io.files import YAML_SUFFIXES, read_mapping

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
    from cbai_cli.algorithms.registry import run_option_names

    typed = dict(coerce_option(str(key), value, f"{path}: options", run_option_names()) for key, value in options.items())
    title = mapping.get("title")
    return Study(path=path, sources=strings("sources"), algorithms=strings("algorithms"), seeds=count("seeds", 1),
                 first_seed=count("first_seed", 0), options=typed, title=None if title is None else str(title))


