"""The study a server holds: one open :class:`Session` on one thread of its own, and the
server's options.

A :class:`Session` is not thread safe, and its SQLite connection may be used only by the
thread that opened it, while the server answers requests from a pool of threads. So the
study is opened on a thread of its own and every use of it runs there, one at a time
(:meth:`Served.call`): that thread is the one lock around the session. Each use is short
(a request's read or write of the journal); pages render on the request's thread
afterwards.
"""

from __future__ import annotations

import mimetypes
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from cbai_cli.serve.pictures import driver_drawer

T = TypeVar("T")


@dataclass(frozen=True)
class Media:
    """An arm's picture: its bytes (a drawn driver picture) or the file that holds it."""

    media_type: str
    content: bytes | None = None
    path: Path | None = None


class Served:
    """An open study and how the server hands out its queries.

    Attributes:
        study: the study file, as given on the command line.
        token: the server's access token (the pages put it in their links).
        lease: seconds a query handed to a rater stays theirs.
        undo_seconds: seconds during which a rater may take back an answer or a skip.
        poll_seconds: how often a waiting rater page and the dashboard ask again.
        labels: every arm's label.
    """

    def __init__(self, study: Path, token: str, lease: float, undo_seconds: float, poll_seconds: float = 3.0) -> None:
        self.study = Path(study)
        self.token = token
        self.lease = lease
        self.undo_seconds = undo_seconds
        self.poll_seconds = poll_seconds
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cbai-study")
        self._session = None
        self._pictures: dict[int, Media] = {}
        self._history: tuple[object, list] | None = None
        self._plot: tuple[object, str] | None = None
        try:
            self.call(self._open)
        except BaseException:
            self._thread.shutdown()
            raise

    def _open(self, _: None) -> None:
        from cbai_cli.session.session import Session

        session = Session.open(self.study)
        try:
            # what the algorithm compiles on first use is compiled now, before a rater waits
            session.warm()
            self.labels = tuple(session.label(arm) for arm in range(session.instance.n_arms))
            self._draw = driver_drawer(session.instance, str(self.study))
        except BaseException:
            session.close()
            raise
        self._session = session

    def call(self, work: Callable[[Any], T]) -> T:
        """``work(session)`` run on the study's thread, after every use asked for before it;
        its result, or its exception raised here."""
        return self._thread.submit(work, self._session).result()

    def close(self) -> None:
        """Close the study (on its thread) and end the thread."""
        if self._session is not None:
            self.call(lambda session: session.close())
            self._session = None
        self._thread.shutdown()

    @property
    def instance(self):
        """The study's instance (read only: it never changes once open)."""
        return self._session.instance

    # ------------------------------------------------------------ on the study's thread
    def media(self, session, arm: int) -> Media | None:
        """The arm's picture: a driver arm's drawn trajectory (drawn once, then kept), or
        the file the study names for it (looked up each time: a file may be replaced while
        the server runs); None when it has none. Call it within :meth:`call`."""
        if self._draw is not None:
            if arm not in self._pictures:
                self._pictures[arm] = Media("image/svg+xml", content=self._draw(arm).encode("utf-8"))
            return self._pictures[arm]
        path = session.media(arm)
        if path is None:
            return None
        return Media(_media_type(path), path=Path(path))

    def media_type(self, session, arm: int) -> str | None:
        """The media type of the arm's picture or file (None: it has none), without drawing
        it. Call it within :meth:`call`."""
        if self._draw is not None:
            return "image/svg+xml"
        path = session.media(arm)
        return None if path is None else _media_type(path)

    def history(self, session, key: object) -> list:
        """The study's history: read again only when ``key`` (what it depends on) changed
        since the last call. Call it within :meth:`call`."""
        if self._history is None or self._history[0] != key:
            self._history = (key, session.history())
        return self._history[1]

    # ------------------------------------------------------------ on any thread
    def plot(self, key: object, draw: Callable[[], str]) -> str:
        """The dashboard's plot: ``draw()`` again only when ``key`` changed since the last
        call. It needs no session, so it runs on the request's thread: two pages drawing
        at once draw the same plot."""
        cached = self._plot
        if cached is None or cached[0] != key:
            cached = (key, draw())
            self._plot = cached
        return cached[1]


def _media_type(path: Path) -> str:
    """The media type of a study's media file, by its suffix (a study accepts only the
    suffixes browsers show or play)."""
    from cbai_cli.kinds.cbai.questions import MEDIA_TYPES

    return MEDIA_TYPES.get(Path(path).suffix.lower()) or mimetypes.guess_type(Path(path).name)[0] \
        or "application/octet-stream"
