"""Round-robin over the arms, as a cbai plugin.

Pulls arms 0, 1, …, K−1, 0, 1, … and eliminates with cbai's adaptive confidence
intervals (any adaptive regime: theory, det or tuned). It is the simplest sound design:
every arm is sampled equally often, so it spends no effort on choosing where to query.

This module is light: it only declares the registry entry. The class lives in
:mod:`cbai_round_robin.algorithm` and is imported when a run starts.
"""

from cbai_cli.algorithms.registry import AlgorithmEntry
from cbai_cli.contracts.options import Option

#: An option of its own: cbai adds it to `cbai solve` and `cbai compare` (``--first-arm``,
#: ``round-robin:det:first-arm=2`` in a spec), checked against its range.
FIRST_ARM = Option("first_arm", "--first-arm", int, "Round-robin: the arm of the first pull (example plugin)", 0,
                   "0", 0)

ENTRY = AlgorithmEntry(
    name="round-robin",
    module="cbai_round_robin.algorithm",
    cls="RoundRobin",
    summary="Round-robin over all arms with adaptive intervals (example plugin)",
    kinds=("cbai",),
    style="adaptive",
    options=("delta", "ridge", "budget", "first_arm"),
    regime_style="adaptive",
    declares=(FIRST_ARM,),
)
