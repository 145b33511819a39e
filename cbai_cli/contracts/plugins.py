"""Pieces of other packages, through entry points: algorithms, confidence regimes, instance kinds.

A package adds to cbai by naming objects in one of the entry-point groups of
:data:`GROUPS` (docs/extending.md): an :class:`~cbai_cli.algorithms.registry.AlgorithmEntry`,
a regime class (:func:`cbai_cli.numerics.confidence.register_regime`) or a
:class:`~cbai_cli.kinds.KindEntry`, or a sequence of them. Each group is read once per
process, the first time its registry is read; a plugin that fails to load or clashes with
a registered name is one line naming the entry point, not a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cbai_cli.contracts.errors import OptionError

#: What each entry-point group adds.
GROUPS = {"cbai.algorithms": "algorithm", "cbai.regimes": "confidence regime", "cbai.kinds": "instance kind"}

_READ: set[str] = set()  # the groups this process has read (a cache: reading twice would register twice)


@functools.cache
def _installed() -> Any:
    """Every entry point of the installed distributions, read once. Parsing every
    distribution's entry points costs about 10 ms; when no ``entry_points.txt`` so much as
    mentions ``cbai.`` (reading the texts costs 2 ms) no group of :data:`GROUPS` has an
    entry point, and there is nothing to parse."""
    from importlib.metadata import EntryPoints, distributions, entry_points

    if not any("cbai." in (distribution.read_text("entry_points.txt") or "") for distribution in distributions()):
        return EntryPoints(())
    return entry_points()


def load_entry_points(group: str, register: Callable[[Any], None]) -> None:
    """Hand every object that the entry points of ``group`` name (each item of a list or
    tuple) to ``register``, once per process; a failure is an
    :class:`~cbai_cli.contracts.errors.OptionError` naming the plugin."""
    if group in _READ:
        return
    _READ.add(group)
    for point in _installed().select(group=group):
        try:
            loaded = point.load()
            for item in (loaded if isinstance(loaded, (list, tuple)) else (loaded,)):
                register(item)
        except Exception as error:  # a broken third-party package must not look like a cbai bug
            raise OptionError(f"{GROUPS[group]} plugin {point.name!r} ({point.value}): {error}") from None
