"""Round-robin over the arms, as a cbai plugin.

Pulls arms 0, 1, …, K−1, 0, 1, … and eliminates with cbai's adaptive confidence
intervals (any adaptive regime: theory, det or tuned). It is the simplest sound design:
every arm is sampled equally often, so it spends no effort on choosing where to query.

This module is light: it only declares the registry entry. The class lives in
:mod:`cbai_round_robin.algorithm` and is imported when a run starts.
"""

from cbai_cli.algorithms.registry import AlgorithmEntry

ENTRY = AlgorithmEntry(
    name="round-robin",
    module="cbai_round_robin.algorithm",
    cls="RoundRobin",
    summary="Round-robin over all arms with adaptive intervals (example plugin)",
    kinds=("cbai",),
    style="adaptive",
    options=("delta", "ridge", "budget"),
    regime_style="adaptive",
)
