"""Live sessions: any algorithm of the registry against real answers, in a durable study.

- :mod:`~cbai_cli.session.journal`: the study file, an append-only SQLite journal;
- :mod:`~cbai_cli.session.session`: :class:`Session`, ask/tell/status over the journal,
  rebuilt by exact replay;
- :mod:`~cbai_cli.session.pending`: the rule for several queries at once;
- :mod:`~cbai_cli.session.values`: observations as people type them;
- :mod:`~cbai_cli.session.command`, :mod:`~cbai_cli.session.render`,
  :mod:`~cbai_cli.session.interactive`: ``cbai session``.
"""

from typing import Any

__all__ = ["ArmStatus", "HandedQuery", "KINDS", "ReplayError", "Session", "Status"]

#: The instance kinds sessions run: finite arms and a constraint to learn (the safe kinds'
#: algorithms choose actions from continuous sets and score regret, which no rater answers).
KINDS = ("cbai",)


def __getattr__(name: str) -> Any:
    """The classes of :mod:`cbai_cli.session.session`, imported on first use so that
    ``cbai --help`` (which registers ``cbai session``) loads no numpy."""
    if name in __all__ and name != "KINDS":
        from cbai_cli.session import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
