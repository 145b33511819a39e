"""Standard output that fails in one line.

A write to stdout can fail outside cbai's control: the reader of a pipe went away
(``cbai algorithms | head -1``) or the disk under ``cbai solve … --json > out.json`` is
full. :class:`GuardedStdout` stands in for ``sys.stdout`` while a command runs and turns
such a failure into :class:`~cbai_cli.contracts.errors.OutputError`, which the command line reports
as one line with exit code 2 (:mod:`cbai_cli.typer_adapter.group`) instead of a traceback; a
reader that went away (:class:`~cbai_cli.contracts.errors.ReaderGone`) ends it quietly, as Unix
tools end.
"""

from __future__ import annotations

import os
from typing import Any, TextIO

from cbai_cli.contracts.errors import OutputError, ReaderGone


def stdout_error(error: OSError) -> OutputError:
    """The one-line error for ``error``, a failed write to stdout."""
    if isinstance(error, BrokenPipeError):
        return ReaderGone("-: cannot write: standard output was closed by its reader")
    return OutputError(f"-: cannot write to standard output: {error.strerror or error}")


def write_fully(stream: TextIO, text: str) -> None:
    """Write ``text`` to ``stream`` to its last byte, or raise the OSError that stopped it.

    Where the stream has a file descriptor, what it buffered is flushed and ``text`` goes
    through ``os.write`` until every byte is taken: CPython's buffered writer returned
    without an error after a partial write (a disk that filled, a pipe whose reader left
    after the first 64 KiB) and the rest was lost in silence. A stream without a descriptor
    (a test's capture) takes a plain write and flush."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    left = memoryview(text.encode(getattr(stream, "encoding", None) or "utf-8",
                                  getattr(stream, "errors", None) or "strict"))
    while left:
        left = left[os.write(descriptor, left):]


def quiet_stdout(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at the null device, so that the interpreter's final
    flush of what is left in it stays quiet once its failure has been reported."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor behind it (a test's capture)
        pass


class GuardedStdout:
    """``stream`` whose ``write`` and ``flush`` raise :class:`~cbai_cli.contracts.errors.OutputError`
    where ``stream`` raises OSError; every other attribute is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            write_fully(self._opened(), text)
        except OSError as error:
            raise stdout_error(error) from None
        return len(text)

    def flush(self) -> None:
        if self._stream is None:  # nothing was written to a closed standard output
            return
        try:
            self._stream.flush()
        except OSError as error:
            raise stdout_error(error) from None

    def _opened(self) -> TextIO:
        """The stream; a process started with standard output closed (``>&-``) has None."""
        if self._stream is None:
            raise OutputError("-: cannot write: standard output is closed")
        return self._stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
