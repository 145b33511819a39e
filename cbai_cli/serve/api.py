"""What each route of :data:`cbai_cli.serve.routes.ROUTES` computes, free of the web framework.

Each function takes the served study, the request's checked parameters and its checked
JSON body (None for routes without one) and returns a JSON document (a dict), a
:class:`Content` (a page, a picture, CSV) or a :class:`FileContent`. A request the study
refuses raises: :class:`HttpError` with its status, or an error of the session that
:func:`status_of` maps to one. Every use of the session runs on the study's own thread
(:meth:`Served.call`).
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cbai_cli.contracts.errors import CbaiError, OptionError
from cbai_cli.serve.served import Served
from cbai_cli.session.export import write_csv


class HttpError(Exception):
    """A refused request: its status and the one line of its ``{"error": ...}`` body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Content:
    """A response that is not a JSON document."""

    body: bytes | str
    media_type: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileContent:
    """A file sent as it is."""

    path: Path
    media_type: str
    headers: dict[str, str] = field(default_factory=dict)


#: For pictures and files: even an SVG holding a script runs nothing on the server's origin.
MEDIA_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                 "sandbox", "X-Content-Type-Options": "nosniff"}


def status_of(error: BaseException) -> int:
    """The HTTP status of an error raised while answering a request: 404 for an unknown
    query, 409 for nothing to undo, 503 when the study file fails, 400 for any other
    mistake of the request; 500 for anything else (a bug)."""
    from cbai_cli.serve.schema import SchemaError
    from cbai_cli.session.journal import StudyFileError
    from cbai_cli.session.session import NothingToUndo, UnknownQuery

    if isinstance(error, HttpError):
        return error.status
    for kind, status in ((SchemaError, 400), (UnknownQuery, 404), (NothingToUndo, 409), (StudyFileError, 503),
                         (CbaiError, 400)):
        if isinstance(error, kind):
            return status
    return 500


# ------------------------------------------------------------------ pages


def rater_page(served: Served, params: dict[str, Any], body: None) -> Content:
    from cbai_cli.serve.html import content_security_policy, nonce
    from cbai_cli.serve.rater_page import rater_page as page

    script_nonce = nonce()
    return Content(page(served.token, served.poll_seconds, script_nonce, served.study.name), "text/html",
                   {"Content-Security-Policy": content_security_policy(script_nonce)})


#: The most arms the dashboard's plot over the answers shows (the most rewarding still open).
OPEN_ARMS_SHOWN = 8


def dashboard(served: Served, params: dict[str, Any], body: None) -> Content:
    from cbai_cli.serve.dashboard import Snapshot, dashboard_page
    from cbai_cli.serve.html import content_security_policy, nonce
    from cbai_cli.serve.plot import arms_svg, intervals_svg

    def read(session) -> tuple[dict[str, Any], object, list]:
        status = session.status().to_json()
        # what the plot depends on: the answers told, and undone ones change the counts too
        key = (status["answered"], status.get("held"), status.get("surplus"), status.get("skipped"), status["done"])
        return status, key, served.history(session, key)

    status, key, history = served.call(read)
    threshold = status.get("threshold")
    if threshold is None:
        threshold = float(served.instance.threshold)
    rewards = served.instance.rewards
    arms = status.get("arms") or []
    recommended = status.get("recommended")
    # over the answers, the arms still open and the recommendation, at most OPEN_ARMS_SHOWN by reward
    open_arms = sorted({arm["arm"] for arm in arms if arm.get("state") == "uncertain"}
                       | ({recommended} if recommended is not None else set()), key=lambda arm: (-rewards[arm], arm))

    def draw() -> str:
        return (arms_svg(arms, rewards, served.labels, threshold, recommended)
                + '<p class="muted">Over the answers: the arms still open and the recommended one'
                + (f" (the {OPEN_ARMS_SHOWN} most rewarding)" if len(open_arms) > OPEN_ARMS_SHOWN else "") + "</p>"
                + intervals_svg(history, threshold, served.labels, shown=open_arms[:OPEN_ARMS_SHOWN]))

    plot = served.plot(key, draw)
    script_nonce = nonce()
    snapshot = Snapshot(served.study.name, status, served.labels, plot, served.token, time.time())
    return Content(dashboard_page(snapshot, script_nonce, served.poll_seconds), "text/html",
                   {"Content-Security-Policy": content_security_policy(script_nonce)})


def media(served: Served, params: dict[str, Any], body: None) -> Content | FileContent:
    arm = params["arm"]
    if not 0 <= arm < len(served.labels):
        raise HttpError(404, f"no arm {arm}: this study has arms 0 to {len(served.labels) - 1}")
    found = served.call(lambda session: served.media(session, arm))
    if found is None:
        raise HttpError(404, f"arm {arm} has no picture")
    if found.content is not None:
        return Content(found.content, found.media_type, MEDIA_HEADERS)
    if not found.path.is_file():  # removed since the study named it
        raise HttpError(404, f"arm {arm}'s media file is gone")
    return FileContent(found.path, found.media_type, MEDIA_HEADERS)


def openapi(served: Served, params: dict[str, Any], body: None) -> dict[str, Any]:
    from cbai_cli import __version__
    from cbai_cli.serve.routes import openapi as document

    return document(__version__)


# ------------------------------------------------------------------ the API


def describe(served: Served, session, handed) -> dict[str, Any]:
    """A handed-out query as the API shows it (on the study's thread)."""
    questions = session.questions
    media_type = served.media_type(session, handed.arm)
    return {"id": handed.id, "arm": handed.arm, "label": handed.label, "question": questions.question,
            "answers": list(questions.answers), "numbers": bool(questions.numbers),
            "media": f"/media/{handed.arm}" if media_type is not None else None, "media_type": media_type,
            "expires": handed.expires}


def next_query(served: Served, params: dict[str, Any], body: None) -> dict[str, Any]:
    def work(session) -> dict[str, Any]:
        handed = session.ask(1, rater=params["rater"], lease=served.lease)
        return {"done": bool(session.done), "query": describe(served, session, handed[0]) if handed else None}

    return served.call(work)


def answer(served: Served, params: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    from cbai_cli.session.journal import StudyFileError
    from cbai_cli.session.session import UnknownQuery

    def work(session) -> dict[str, Any]:
        try:
            recorded = session.answer(body["id"], body["answer"], rater=body["rater"], key=body.get("key"),
                                      hold=served.undo_seconds)
        except (UnknownQuery, StudyFileError):
            raise
        except OptionError as error:  # an answer the study does not take, or a key reused for another one
            raise HttpError(422, str(error)) from None
        return {"recorded": True, "surplus": bool(recorded.surplus), "done": bool(session.done)}

    return served.call(work)


def skip(served: Served, params: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    served.call(lambda session: session.skip(body["id"], rater=body["rater"], hold=served.undo_seconds))
    return {"skipped": True}


def undo(served: Served, params: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    def work(session) -> dict[str, Any]:
        handed = session.undo(rater=body["rater"], lease=served.lease)
        # None: the study stopped meanwhile, so there is nothing to answer again
        return {"undone": True, "query": describe(served, session, handed) if handed is not None else None}

    return served.call(work)


def status(served: Served, params: dict[str, Any], body: None) -> dict[str, Any]:
    return served.call(lambda session: session.status().to_json())


def log(served: Served, params: dict[str, Any], body: None) -> dict[str, Any] | Content:
    records = served.call(lambda session: session.records())
    if params.get("format", "json") == "json":
        return {"records": records}
    text = io.StringIO()
    write_csv(records, text)
    return Content(text.getvalue(), "text/csv; charset=utf-8",
                   {"Content-Disposition": f'attachment; filename="{served.study.stem}-log.csv"'})
