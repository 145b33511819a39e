"""SIGTERM (a job scheduler's cancel or time limit, ``kill``) handled like Ctrl-C.

Inside :func:`terminate_as_interrupt`, SIGTERM raises :class:`~cbai_cli.contracts.errors.Terminated`
(a KeyboardInterrupt) in the main thread, so a command stops on Ctrl-C's path: ``compare``
terminates its worker processes and keeps its store valid, a session command rolls back
the transaction it was in (every answer already acknowledged is in the study), and the
command line says ``cbai: terminated`` and exits with 143
(:mod:`cbai_cli.typer_adapter.group`) instead of vanishing without a word.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from cbai_cli.contracts.errors import Terminated


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` in this (the main) thread while the block runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
