"""``cbai session serve STUDY``: serve a study to raters until stopped.

The command checks its options, binds its socket (so a port in use is one line before
anything is loaded), opens the study and warms its algorithm up, and only when the server
listens prints the two links: the rater page and the owner's dashboard, each with the
token. Ctrl-C or SIGTERM stops it: requests under way finish (at most a few seconds),
the study is closed and the command ends with exit code 0; every answer acknowledged to a
rater was committed to the study before the acknowledgement. A port in use, a host that is
not this machine's, a study that cannot be opened: one line on stderr, exit code 2.

Starlette and uvicorn are imported when the command runs, so ``cbai --help`` stays fast.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer

from cbai_cli.contracts.errors import OptionError
from cbai_cli.serve.listen import bind, run
from cbai_cli.session.defaults import DEFAULT_GRACE, DEFAULT_LEASE

#: The longest lease and undo grace the session takes (s): a week, as
#: :data:`cbai_cli.session.session.LONGEST_WAIT` (not imported from there: it loads numpy).
LONGEST_WAIT = 7 * 24 * 3600.0


def serve(
    study: Path = typer.Argument(..., metavar="STUDY", help="The study file (SQLite) made by `cbai session start`."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on. Keep 127.0.0.1 and put a reverse "
                             "proxy with TLS in front to serve other machines (docs/sessions.md)."),
    port: int = typer.Option(8000, "--port", help="Port to listen on; 0 picks a free one (the links show it)."),
    token: Optional[str] = typer.Option(None, "--token", help="The access token every link and API call carries "
                                        "(8 to 256 URL-safe characters); default: a new random one, printed in "
                                        "the links."),
    lease: float = typer.Option(DEFAULT_LEASE, "--lease", metavar="SECONDS", help="How long a query handed to a "
                                "rater stays theirs before others may get it (an answer after it is still kept)."),
    undo_seconds: float = typer.Option(DEFAULT_GRACE, "--undo-seconds", metavar="S", help="How long a rater may take "
                                       "back their last answer or skip (0: never); the algorithm is told an answer "
                                       "only after it."),
) -> None:
    """Serve the study to raters over HTTP: a rater page, an owner dashboard and a JSON API (/openapi.json)."""
    from cbai_cli.serve.auth import checked_token

    if not (math.isfinite(lease) and 0 < lease <= LONGEST_WAIT):
        raise OptionError(f"--lease must be a number of seconds > 0 and at most {LONGEST_WAIT:,.0f} (a week), got "
                          f"{lease:g}", "lease")
    if not (math.isfinite(undo_seconds) and 0 <= undo_seconds <= LONGEST_WAIT):
        raise OptionError(f"--undo-seconds must be a number of seconds ≥ 0 and at most {LONGEST_WAIT:,.0f} (a week), "
                          f"got {undo_seconds:g}", "undo_seconds")
    if not 0 <= port <= 65535:
        raise OptionError(f"--port must be 0 to 65535, got {port}", "port")
    token = checked_token(token)
    listener = bind(host, port)
    try:
        from cbai_cli.serve.served import Served

        served = Served(study, token, lease, undo_seconds)
        try:
            run(served, listener, host, typer.echo)
        finally:
            served.close()
    finally:
        listener.close()
    typer.echo(f"stopped; every answer is recorded in {study}")
