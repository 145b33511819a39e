"""The study a server holds: one open :class:`Session` behind one lock, and the server's options.

A :class:`Session` is not thread safe and the server answers requests from a pool of
threads, so every use of it holds :attr:`Served.lock`; each use is short (a request's
read or write of the journal), and pages render after they let go of it.
"""

from __future__ import annotations

import mimetypes
import threading
from dataclasses import dataclass
from pathlib import Path

from cbai_cli.serve.pictures import driver_drawer


@dataclass(frozen=True)
class Media:
    """An arm's picture: its bytes (a drawn driver picture) or the file that holds it."""

    media_type: str
    content: bytes | None = None
    path: Path | None = None


class Served:
    """An open study and how the server hands out its queries.

    Attributes:
        session: the open study; use it only while holding ``lock``.
        lock: the one lock around ``session``.
        study: the study file, as given on the command line.
        token: the server's access token (the pages put it in their links).
        labels: every arm's label.
        lease: seconds a query handed to a rater stays theirs.
        undo_seconds: seconds during which a rater may take back an answer or a skip.
        poll_seconds: how often a waiting rater page and the dashboard ask again.
    """

    def __init__(self, session, study: Path, token: str, lease: float, undo_seconds: float,
                 poll_seconds: float = 3.0) -> None:
        self.session = session
        self.lock = threading.Lock()
        self.study = Path(study)
        self.token = token
        self.labels = tuple(session.label(arm) for arm in range(session.instance.n_arms))
        self.lease = lease
        self.undo_seconds = undo_seconds
        self.poll_seconds = poll_seconds
        self._draw = driver_drawer(session.instance, str(study))
        self._pictures: dict[int, Media] = {}
        self._plot: tuple[object, str] | None = None
        self._history: tuple[object, list] | None = None

    def media(self, arm: int) -> Media | None:
        """The arm's picture: a driver arm's drawn trajectory (drawn once, then kept), or
        the file the study names for it (looked up each time: the owner may add files
        while the server runs); None when it has none. Call it holding ``lock``."""
        if self._draw is not None:
            if arm not in self._pictures:
                self._pictures[arm] = Media("image/svg+xml", content=self._draw(arm).encode("utf-8"))
            return self._pictures[arm]
        path = self.session.media(arm)
        if path is None:
            return None
        return Media(mimetypes.guess_type(path.name)[0] or "application/octet-stream", path=Path(path))

    def has_media(self, arm: int) -> bool:
        """Whether the arm has a picture to show, without drawing it. Call it holding ``lock``."""
        return self._draw is not None or self.session.media(arm) is not None

    def cached_history(self, key: object, read) -> list:
        """The study's history: ``read()`` again only when ``key`` (what it depends on)
        changed since the last call. Call it holding ``lock``."""
        if self._history is None or self._history[0] != key:
            self._history = (key, read())
        return self._history[1]

    def plot(self, key: object, draw) -> str:
        """The dashboard's plot: ``draw()`` again only when ``key`` changed since the last
        call. Drawing needs no session, so call it without the lock: two pages drawing at
        once draw the same plot."""
        cached = self._plot
        if cached is None or cached[0] != key:
            cached = (key, draw())
            self._plot = cached
        return cached[1]
