"""Live sessions: any algorithm of the registry against real answers, in a durable study.

- :mod:`~cbai_cli.session.journal`: the study file, an append-only SQLite journal;
- :mod:`~cbai_cli.session.session`: :class:`Session`, ask/tell/status over the journal,
  rebuilt by exact replay;
- :mod:`~cbai_cli.session.pending`: the rule for several queries at once;
- :mod:`~cbai_cli.session.values`: observations as people type them;
- :mod:`~cbai_cli.session.command`, :mod:`~cbai_cli.session.render`,
  :mod:`~cbai_cli.session.interactive`: ``cbai session``.
"""

from cbai_cli.session.session import ArmStatus, HandedQuery, ReplayError, Session, Status

__all__ = ["ArmStatus", "HandedQuery", "ReplayError", "Session", "Status"]
