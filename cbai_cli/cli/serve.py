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

import contextlib
import errno
import math
import signal
import socket
import threading
from pathlib import Path
from typing import Optional

import typer

from cbai_cli.contracts.errors import OptionError
from cbai_cli.session.defaults import DEFAULT_GRACE, DEFAULT_LEASE

#: The longest lease and undo grace the session takes (s): a week, as
#: :data:`cbai_cli.session.session.LONGEST_WAIT` (not imported from there: it loads numpy).
LONGEST_WAIT = 7 * 24 * 3600.0
#: How long requests under way may take to finish once the server is asked to stop.
GRACEFUL_SECONDS = 5


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
            run(served, listener, host)
        finally:
            served.close()
    finally:
        listener.close()
    typer.echo(f"stopped; every answer is recorded in {study}")


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (not yet listening); one line when it cannot be."""
    if not host.strip():
        raise OptionError("--host must be an address or a name, e.g. 127.0.0.1", "host")
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise OptionError(f"--host {host}: not an address of this machine nor a name it can resolve ({reason})",
                          "host") from None
    family, kind, protocol, _, address = found[0]
    listener = socket.socket(family, kind, protocol)
    # a restarted server may bind the port at once, though connections of its previous run
    # linger in TIME_WAIT; a port another process listens on is still refused
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
    except OSError as error:
        listener.close()
        if error.errno == errno.EADDRINUSE:
            message = f"port {port} on {host} is in use (another server?); choose another with --port, or 0 for a free one"
        elif error.errno == errno.EADDRNOTAVAIL:
            message = f"--host {host} is not an address of this machine"
        elif error.errno == errno.EACCES:
            message = f"port {port}: permission denied (ports below 1024 need privileges); choose one from 1024 up"
        else:
            message = f"cannot listen on {host} port {port}: {error.strerror or error}"
        raise OptionError(message, "port" if error.errno in (errno.EADDRINUSE, errno.EACCES) else "host") from None
    return listener


def links(host: str, port: int, token: str) -> tuple[str, str]:
    """The rater page's and the dashboard's address, each with the token."""
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    return f"{base}/?token={token}", f"{base}/dashboard?token={token}"


def run(served, listener: socket.socket, host: str) -> None:
    """Serve until Ctrl-C or SIGTERM; print the links once the server listens."""
    try:
        import uvicorn

        from cbai_cli.serve.app import build_app
    except ImportError as error:  # a broken install: both are dependencies of cbai
        raise OptionError(f"cbai session serve needs Starlette and uvicorn ({error}); pip install starlette "
                          "uvicorn") from None
    rater, owner = links(host, listener.getsockname()[1], served.token)

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            if not self.should_exit:
                typer.echo(f"rater page: {rater}")
                typer.echo(f"dashboard: {owner}")

        @contextlib.contextmanager
        def capture_signals(self):
            # uvicorn's own raises the signal again once it has shut down; here the server
            # stopped as asked, so the command goes on to close the study and end normally
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    config = uvicorn.Config(build_app(served), log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=GRACEFUL_SECONDS, server_header=False)
    Server(config).run(sockets=[listener])
