"""Serving a study over HTTP (``cbai session serve``): the options checked and the listening
socket bound before anything heavy loads (so a port in use is one line), the links with the
token, and the server that runs until Ctrl-C or SIGTERM and then lets requests under way
finish. Starlette and uvicorn are imported only when the server runs."""

from __future__ import annotations

import contextlib
import errno
import signal
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from cbai_cli.contracts.errors import OptionError
from cbai_cli.contracts.options import SESSION_OPTIONS

#: How long requests under way may take to finish once the server is asked to stop.
GRACEFUL_SECONDS = 5


def serve(study: Path, host: str, port: int, token: str | None, lease: float, undo_seconds: float,
          announce: Callable[[str], None]) -> None:
    """Serve ``study`` on ``host``:``port`` until Ctrl-C or SIGTERM (:func:`run`), then close it.
    The options are checked (:data:`~cbai_cli.contracts.options.SESSION_OPTIONS`; ``token``
    None: a new one) and the socket bound before the study is opened and its algorithm
    warmed up; every answer acknowledged to a rater was committed to the study before the
    acknowledgement."""
    from cbai_cli.serve.auth import checked_token

    lease = SESSION_OPTIONS["lease"].check(lease)
    undo_seconds = SESSION_OPTIONS["undo_seconds"].check(undo_seconds)
    port = SESSION_OPTIONS["port"].check(port)
    token = checked_token(token)
    listener = bind(host, port)
    try:
        from cbai_cli.serve.served import Served

        served = Served(study, token, lease, undo_seconds)
        try:
            run(served, listener, host, announce)
        finally:
            served.close()
    finally:
        listener.close()


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


def run(served, listener: socket.socket, host: str, announce: Callable[[str], None]) -> None:
    """Serve ``served`` on ``listener`` until Ctrl-C or SIGTERM; once the server listens, hand
    ``announce`` the two links, one line each."""
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
                announce(f"rater page: {rater}")
                announce(f"dashboard: {owner}")

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
