"""Frozen holders whose read-only arrays stay read-only through pickling."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ReadOnlyWhenUnpickled"]


class ReadOnlyWhenUnpickled:
    """A frozen holder of read-only arrays that stay read-only through pickling.

    numpy's unpickled arrays are writable, so a worker's copy (``cbai compare --jobs``, Dask)
    would hold writable arrays where the original holds read-only ones. Besides breaking the
    promise that nobody can change them, that makes every compiled kernel that reads them
    meet new argument types (numba specialises on the flag) and compile in front of the user,
    although :mod:`cbai_cli.warm` compiled them all for the read-only ones."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        for value in state.values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        self.__dict__.update(state)
