"""Read-only arrays: the driver's frozen dataclasses must not change behind their backs."""

from __future__ import annotations

import numpy as np

__all__ = ["read_only"]


def read_only(values: np.ndarray) -> np.ndarray:
    """``values`` as an array with writing switched off (no copy: pass a fresh array)."""
    result = np.asarray(values)
    result.setflags(write=False)
    return result
