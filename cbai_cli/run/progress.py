"""Where a long command is, on stderr only: a live display on a terminal, plain lines elsewhere.

The work tells a :class:`Progress` where it is between its steps (a run of ``solve``, a
few hundred queries of a compiled run, a round of a design solve, a record of
``compare``), through :meth:`Progress.update`; the reporter shows it when it is due:

- on a terminal, a transient Rich display that appears once the command has run for
  ``delay`` seconds (a short command shows nothing) and is gone when it ends;
- elsewhere (a log file, a pipe, a batch job), one plain line every ``interval`` seconds,
  ``cbai: solve: 3/10 runs done, 12,345 queries, 12.4 s``;
- with ``--quiet``, nothing.

The reporter reads a clock and writes to stderr, nothing else: what the work computes and
what a command prints on stdout do not depend on it. Plain lines come at updates only (no
timer thread), so a test that sets ``interval`` to 0 gets one at every update.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cbai_cli.contracts.errors import OptionError

#: Seconds between the plain lines of a command whose stderr is no terminal.
PLAIN_INTERVAL = 5.0
#: Seconds a command runs before its terminal display appears.
TERMINAL_DELAY = 1.5
#: Seconds between two redraws of the terminal display asked by updates (Rich redraws the
#: clock by itself): updates come every few hundred queries, far more often than a person reads.
_REDRAW_INTERVAL = 0.1
#: The environment variable that sets the seconds between plain lines, for tests and scripts
#: (0: a line at every update).
INTERVAL_VARIABLE = "CBAI_PROGRESS_INTERVAL"


@dataclass(frozen=True)
class ProgressStyle:
    """How progress shows: not at all (``quiet``), as a live display (``terminal``), or as a
    plain line every ``interval`` seconds; the live display waits ``delay`` seconds."""

    quiet: bool = False
    terminal: bool = False
    interval: float = PLAIN_INTERVAL
    delay: float = TERMINAL_DELAY

    @classmethod
    def for_stderr(cls, quiet: bool) -> ProgressStyle:
        """The style of a command: quiet as asked, a live display when stderr is a terminal,
        plain lines every :data:`INTERVAL_VARIABLE` seconds when that is set (else
        :data:`PLAIN_INTERVAL`).

        Raises:
            OptionError: the variable is set to something other than a number of seconds ≥ 0.
        """
        text = os.environ.get(INTERVAL_VARIABLE)
        interval = PLAIN_INTERVAL
        if text is not None:
            try:
                interval = float(text)
            except ValueError:
                interval = math.nan
            if not 0 <= interval < math.inf:
                raise OptionError(f"{INTERVAL_VARIABLE} must be a number of seconds ≥ 0, got {text!r}")
        stream = sys.stderr
        terminal = stream is not None and hasattr(stream, "isatty") and stream.isatty()
        return cls(quiet=quiet, terminal=terminal, interval=interval)


class Progress:
    """The progress of one command named ``command``: ``total`` steps counted in ``unit``
    (None: a phase and a detail only, as the rounds of a design solve). ``clock`` is read at
    every update (seconds, monotonic)."""

    def __init__(self, command: str, style: ProgressStyle, total: int | None = None, unit: str = "",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.command = command
        self.style = style
        self.total = total
        self.unit = unit
        self._clock = clock
        self._start = clock()
        self._last = self._start  # when the last line or redraw was made
        self._display: Any = None
        self._task: Any = None
        self._closed = False

    def update(self, done: int | None = None, detail: str = "", *values: Any) -> None:
        """The work has finished ``done`` of :attr:`total` steps (None: not counted), and is at
        ``detail`` (a format string of ``values``, formatted only when shown)."""
        if self.style.quiet or self._closed:
            return
        now = self._clock()
        if self.style.terminal:
            if now - self._start < self.style.delay or now - self._last < _REDRAW_INTERVAL:
                return
            self._last = now
            self._draw(done, detail.format(*values))
            return
        if now - self._last < self.style.interval:
            return
        self._last = now
        sys.stderr.write(f"cbai: {self.command}: {self.text(done, detail.format(*values), now - self._start)}\n")
        sys.stderr.flush()

    def text(self, done: int | None, detail: str, elapsed: float) -> str:
        """One plain progress line without its ``cbai: COMMAND:`` prefix."""
        parts = []
        if done is not None and self.total is not None:
            parts.append(f"{done:,}/{self.total:,} {self.unit} done")
        if detail:
            parts.append(detail)
        parts.append(f"{elapsed:.1f} s")
        return ", ".join(parts)

    def _draw(self, done: int | None, detail: str) -> None:
        if self._display is None:
            self._display, self._task = _live_display(self, self._start)
            self._display.start()
        fields = {"detail": detail}
        if done is not None:
            fields["completed"] = done
        self._display.update(self._task, **fields)

    def close(self) -> None:
        """Take the display off the terminal (before a command prints its results); later
        updates show nothing."""
        self._closed = True
        if self._display is not None:
            self._display.stop()
            self._display = None


def _live_display(progress: Progress, start: float) -> tuple[Any, Any]:
    """A transient Rich display on stderr for ``progress`` (a bar when it counts its steps, a
    spinner otherwise) with the seconds since ``start``, and its one task."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, ProgressColumn, SpinnerColumn,
                               TextColumn, TimeRemainingColumn)
    from rich.text import Text

    clock = progress._clock

    class Elapsed(ProgressColumn):
        """Seconds since the command started (Rich's own column counts from its task's start)."""

        def render(self, task) -> Text:
            return Text(f"{clock() - start:.1f} s")

    if progress.total is None:
        columns = (SpinnerColumn(), TextColumn(progress.command), TextColumn("{task.fields[detail]}"), Elapsed())
    else:
        columns = (TextColumn(progress.command), BarColumn(), MofNCompleteColumn(), TextColumn(progress.unit),
                   TextColumn("{task.fields[detail]}"), Elapsed(), TextColumn("ETA"), TimeRemainingColumn())
    # stdout stays the process's own: results printed after the display never pass through it
    display = RichProgress(*columns, console=Console(stderr=True), transient=True, redirect_stdout=False)
    task = display.add_task(progress.command, total=progress.total, detail="")
    return display, task


@contextmanager
def reporting(command: str, style: ProgressStyle, total: int | None = None, unit: str = "",
              clock: Callable[[], float] = time.monotonic) -> Iterator[Progress]:
    """A :class:`Progress` for the block, closed when it ends (also by an error or Ctrl-C)."""
    progress = Progress(command, style, total, unit, clock)
    try:
        yield progress
    finally:
        progress.close()
