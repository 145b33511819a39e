"""cbai from Python: constrained best-arm identification, its bounds, comparisons and studies
with people.

    >>> import cbai
    >>> instance = cbai.Instance.from_arrays(arms, reward, threshold=0.5, constraint=phi)
    >>> solved = cbai.solve(instance, "track-and-stop", delta=0.05, runs=10)
    >>> cbai.bound(instance).lower_bound

Names are imported when first used, so ``import cbai`` (and the ``cbai`` command) stay
fast. docs/python.md shows every one of them at work:

- :class:`Instance` (``Instance.from_arrays``), :func:`load`, :func:`save`, :func:`generate`;
- :func:`solve`, :func:`bound`, :func:`compare` and the results they return
  (:class:`Solved`, :class:`Compared`; ``records()`` gives plain dicts, ready for
  ``pandas.DataFrame(result.records())``);
- :class:`Session`, a study with people;
- :func:`algorithms` (the registry) and the errors, all :class:`CbaiError`:
  :class:`OptionError`, :class:`InstanceError`, :class:`MissingTruthError`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cbai_cli import __version__

#: Each public name and where it lives.
_EXPORTS = {
    "Instance": "cbai_cli.kinds.cbai.instance",
    "load": "cbai_cli.kinds",
    "save": "cbai_cli.kinds",
    "generate": "cbai.api",
    "solve": "cbai.api",
    "bound": "cbai.api",
    "compare": "cbai.api",
    "algorithms": "cbai.api",
    "Solved": "cbai.api",
    "Compared": "cbai.api",
    "Session": "cbai_cli.session",
    "CbaiError": "cbai_cli.contracts.errors",
    "OptionError": "cbai_cli.contracts.errors",
    "InstanceError": "cbai_cli.contracts.errors",
    "MissingTruthError": "cbai_cli.contracts.errors",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from cbai.api import Compared, Solved, algorithms, bound, compare, generate, solve
    from cbai_cli.contracts.errors import CbaiError, InstanceError, MissingTruthError, OptionError
    from cbai_cli.kinds import load, save
    from cbai_cli.kinds.cbai.instance import Instance
    from cbai_cli.session import Session


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'cbai' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # a module attribute from now on: no second look-up
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
