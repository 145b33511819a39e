"""Atomic writes: a file is whole or as it was.

:func:`write_atomic` (or :func:`atomic_file` for a file written in pieces) writes a
temporary ``.NAME.PID-HOST.XXXXXXXX.tmp`` next to the target and renames it over the target
when complete. Ctrl-C or SIGTERM during the write removes the temporary; one left behind by
a killed process (SIGKILL, power loss) is removed the next time the same target is written
(:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cbai_cli.contracts.errors import InstanceError
from cbai_cli.contracts.validation import safe_text
from cbai_cli.io.outputs import reason


# A temporary file is "." + target name + "." + writer PID "-" host tag + "." + mkstemp's
# random part + ".tmp"; the PID says whether its writer still runs.
_TEMPORARY = r"\.{name}\.(?P<pid>\d+)-(?P<host>[0-9a-f]{{8}})\.[A-Za-z0-9_]+\.tmp"
#: A temporary of the same target at least this old (seconds) is removed even when its writer
#: cannot be checked (another host on a shared folder); writes take seconds at most.
STALE_TEMPORARY_AGE_S = 3600.0


def _host_tag() -> str:
    """8 hex digits naming this host, so that a PID is only checked on the host it belongs to."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]


def temporary_prefix(path: str | Path, pid: int | None = None) -> str:
    """How the temporary files of a write to ``path`` by process ``pid`` (default: this one)
    on this host begin: ``.NAME.PID-HOST.``; ``mkstemp`` adds a random part and ``.tmp``."""
    return f".{Path(path).name}.{os.getpid() if pid is None else pid}-{_host_tag()}."


class _RemoveTemporaries:
    """The SIGTERM and SIGHUP handler while atomic writes hold temporary files: it removes
    them and ends the process as the signal's default action would (status 128 + signum),
    in the handler itself. It raises no exception to unwind the writes: Python runs a
    handler between any two bytecodes, also inside a finaliser, where an exception is
    printed and dropped, and the signal would be lost (a traced run would go on after
    SIGTERM).

    Attributes:
        targets: the :class:`AtomicFile` objects whose temporary files are open now.
    """

    def __init__(self) -> None:
        self.targets: list[AtomicFile] = []

    def __call__(self, signum: int, frame: Any) -> None:
        for target in self.targets:
            target.remove_temporary()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # pragma: no cover - kill() delivers the signal before it returns


@contextmanager
def _signals_remove_temporary(target: AtomicFile) -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP remove ``target``'s temporary file and end the
    process (:class:`_RemoveTemporaries`); only where they would kill the process anyway
    (default action, or this handler of an enclosing write) and in the main thread (where
    Python runs signal handlers). Handlers installed by others (``compare``'s) are left
    alone: theirs raise, and the write's block removes the file as it unwinds."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signums = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    current = [signal.getsignal(signum) for signum in signums]
    handler = next((each for each in current if isinstance(each, _RemoveTemporaries)), None) or _RemoveTemporaries()
    mine = [signum for signum, each in zip(signums, current) if each is signal.SIG_DFL]
    handler.targets.append(target)
    for signum in mine:
        signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum in mine:
            signal.signal(signum, signal.SIG_DFL)
        handler.targets.remove(target)


def _writer_is_gone(pid: int) -> bool:
    """Whether no process with this PID runs on this host (POSIX only: elsewhere unknown)."""
    if os.name != "posix" or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # EPERM: it runs, as another user
        return False
    return False


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files of ``path`` that :func:`write_atomic` left behind when its
    process was killed: regular files named ``.NAME.PID-HOST.*.tmp`` whose writer on this
    host is gone, or older than :data:`STALE_TEMPORARY_AGE_S`. Returns what was removed."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    pattern = re.compile(_TEMPORARY.format(name=re.escape(path.name)))
    host, removed = _host_tag(), []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        pid = int(match["pid"])
        if pid == os.getpid() and match["host"] == host:
            continue  # this process's own write in another thread
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = time.time() - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if age >= STALE_TEMPORARY_AGE_S or (match["host"] == host and _writer_is_gone(pid)):
            try:
                os.unlink(entry.path)
            except OSError:
                continue
            removed.append(Path(entry.path))
    return removed


def write_atomic(path: str | Path, write) -> None:
    """Write a file through ``write(binary_file)`` into a temporary file, then rename it.

    A crash, Ctrl-C or SIGTERM leaves either the old file or the new one, never half of one;
    Ctrl-C and SIGTERM also remove the temporary file (SIGTERM then ends the process as it
    would have), and temporaries of the same target left by a killed process are removed
    first (:func:`remove_stale_temporaries`). A path that is a symbolic link is written
    through: the file it names is replaced, and the link stays.

    Raises:
        InstanceError: ``PATH: folder F does not exist`` or ``PATH: cannot write: REASON``
            (permissions, a full disk, a read-only file system).
    """
    shown = safe_text(Path(path))
    try:
        with atomic_file(path) as target:
            write(target.stream)
            target.commit()
    except OSError as error:
        raise InstanceError(f"{shown}: cannot write: {reason(error)}") from None


class AtomicFile:
    """The temporary file of one atomic write, open for writing (:func:`atomic_file`).

    Attributes:
        path: the target (the file a symbolic link names, when the target is one).
        stream: the temporary file, open in binary mode; None once committed or discarded.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stream: Any = None
        self._temporary: str | None = None

    def open(self) -> None:
        directory = self.path.parent if str(self.path.parent) else Path(".")
        handle, self._temporary = tempfile.mkstemp(prefix=temporary_prefix(self.path), suffix=".tmp", dir=directory)
        self.stream = os.fdopen(handle, "wb")

    def commit(self) -> None:
        """Flush and sync the temporary file and rename it over the target.

        Raises:
            OSError: the file could not be completed or renamed (it is then removed).
        """
        try:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
            # mkstemp creates the file 0600; give it the permissions a plain open() would.
            os.chmod(self._temporary, 0o666 & ~_umask())
            os.replace(self._temporary, self.path)
        except BaseException:
            self.discard()
            raise
        self.stream = None
        self._temporary = None

    def remove_temporary(self) -> None:
        """Remove the temporary file by name, leaving its stream alone (what a signal handler
        may do whatever was running when it came; the process then ends)."""
        if self._temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._temporary)

    def discard(self) -> None:
        """Close and remove the temporary file (at once: a full disk gets its space back);
        nothing is left to commit. Errors of closing are ignored: the file goes anyway."""
        if self.stream is not None:
            with contextlib.suppress(OSError, ValueError):  # a buffer that cannot be flushed any more
                self.stream.close()
            self.stream = None
        _discard(self._temporary)
        self._temporary = None


@contextmanager
def atomic_file(path: str | Path) -> Iterator[AtomicFile]:
    """:func:`write_atomic` as a block, for a file written in pieces while other work goes
    on (``cbai solve --trace``): yields an :class:`AtomicFile` whose temporary file is open
    beside the target; the block calls :meth:`AtomicFile.commit` once the file is complete.
    Leaving the block otherwise (an exception, Ctrl-C, SIGTERM, or without a commit) removes
    the temporary file, so the target keeps its old content; SIGTERM then ends the process
    as it would have.

    Raises:
        InstanceError: ``PATH: folder F does not exist``.
        OSError: the temporary file cannot be made (the caller names the output).
    """
    shown = safe_text(Path(path))
    # through a link to the file it names: renaming over the link itself would replace the
    # link with a file and leave the file the user pointed at as it was
    path = Path(os.path.realpath(path)) if Path(path).is_symlink() else Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise InstanceError(f"{shown}: folder {safe_text(directory)} does not exist")
    remove_stale_temporaries(path)
    target = AtomicFile(path)
    try:
        with _signals_remove_temporary(target):
            target.open()
            yield target
    finally:
        target.discard()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _discard(temporary: str | None) -> None:
    if temporary is not None:
        Path(temporary).unlink(missing_ok=True)
