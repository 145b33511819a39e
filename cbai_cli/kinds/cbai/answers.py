"""Observations as people type them, in the algorithm's units.

Gaussian noise (Lindner et al. 2022, §2): an observation is any finite number, the
noisy value of φᵀx. Binary noise (Appendix C): an observation is y ∈ {−1, +1} with
P(y = +1) = (φᵀx + 1)/2, so +1 is the answer that counts against feasibility (the
constraint value is high) and −1 the answer that counts for it. People may type
``1``/``0``, ``1``/``-1`` or ``yes``/``no`` (``y``/``n``) for +1/−1. Numbers are read
as written, without Python's digit-group underscores (``1_0`` is refused, not read as 10),
as the binary words and the query ids are read exactly.
"""

from __future__ import annotations

import math

from cbai_cli.contracts.errors import OptionError
from cbai_cli.contracts.options import MAGNITUDE_LIMIT
from cbai_cli.contracts.validation import safe_text

#: The words of binary observations and the value each stands for.
BINARY_WORDS = {"1": 1.0, "+1": 1.0, "1.0": 1.0, "yes": 1.0, "y": 1.0,
                "0": -1.0, "-1": -1.0, "−1": -1.0, "0.0": -1.0, "-1.0": -1.0, "no": -1.0, "n": -1.0}


def observation(noise_kind: str, text: str | float) -> float:
    """The observation ``text`` stands for under noise ``noise_kind`` (``gaussian`` or
    ``binary``); a value the model cannot produce is one :class:`OptionError`."""
    raw = str(text).strip()
    shown = safe_text(raw if len(raw) <= 40 else raw[:40] + "…")  # not a 100,000-digit line
    if noise_kind == "binary":
        value = BINARY_WORDS.get(raw.lower())
        if value is None:
            raise OptionError(f"{shown!r} is not a binary observation (give 1 or 0, 1 or -1, yes or no)")
        return value
    if "_" in raw:  # float() reads '1_0' as 10, where a person may have meant 1.0
        raise OptionError(f"{shown!r} is not a number (Gaussian noise takes numbers written without '_' "
                          "between digits)")
    try:
        value = float(raw.replace("−", "-"))
    except ValueError:
        raise OptionError(f"{shown!r} is not a number (Gaussian noise takes numbers)") from None
    if not math.isfinite(value):
        raise OptionError(f"{shown!r} is not a finite number (Gaussian noise takes finite numbers)")
    if abs(value) > MAGNITUDE_LIMIT:
        # the bound of an instance's numbers: sums of up to 10¹⁵ such values and their products
        # with the arms stay finite, so a recorded value can never make the study unfinishable
        raise OptionError(f"{shown!r} is too large (observations lie within ±{MAGNITUDE_LIMIT:g})")
    return value
