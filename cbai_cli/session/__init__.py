"""Live sessions: any algorithm of the registry against real answers from several raters,
in a durable study.

- :mod:`~cbai_cli.session.journal`: the study file, an append-only SQLite journal of
  queries and events (leases, answers, skips, undos);
- :mod:`~cbai_cli.session.state`: the state, a function of the journal (folding answers
  into the algorithm, hand-outs, surplus answers);
- :mod:`~cbai_cli.session.session`: :class:`Session`, ask/answer/skip/undo/status over the
  journal, caught up incrementally; :mod:`~cbai_cli.session.snapshots`: the state kept in
  the user's cache so that a new process reads only what is new;
- :mod:`~cbai_cli.session.pending`: the rule for several queries at once;
- :mod:`~cbai_cli.session.estimate`: the answers still needed;
- :mod:`~cbai_cli.kinds.cbai.answers`: observations as people type them (what a study asks
  is :mod:`cbai_cli.kinds.cbai.questions`);
- :mod:`~cbai_cli.session.commands`: the ``cbai session`` commands as library calls, each
  returning a report (:mod:`~cbai_cli.cli.session` prints it); :mod:`~cbai_cli.session.render`,
  :mod:`~cbai_cli.session.interactive`, :mod:`~cbai_cli.session.answers_file`,
  :mod:`~cbai_cli.session.export`: their tables, ``ask`` and files; :mod:`~cbai_cli.session.upgrade`:
  studies of the previous journal schema. ``cbai session serve`` is :mod:`cbai_cli.serve`.
"""

from typing import Any

__all__ = ["ArmStatus", "HandedQuery", "NothingToUndo", "Recorded", "ReplayError", "Session", "Status",
           "UnknownQuery"]


def __getattr__(name: str) -> Any:
    """The classes of :mod:`cbai_cli.session.session`, imported on first use so that
    ``cbai --help`` (which registers ``cbai session``) loads no numpy."""
    if name in __all__:
        from cbai_cli.session import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
