"""Output files: checked before long work starts, and OS failures at write time as one line.

Every command that writes a file calls :func:`check_writable` on it before anything
long (runs, CEMs) starts, so a typo in a path costs nothing; and writes inside
:func:`write_errors`, so a failure the check cannot foresee (a full disk, a folder
removed meanwhile) still ends as one :class:`~cbai_cli.contracts.errors.OptionError` naming the
file and the operating system's reason, never a traceback.

Messages: ``WHAT PATH: is a folder``, ``WHAT PATH: folder F does not exist``,
``WHAT PATH: cannot write: REASON`` (``WHAT`` is the option, such as ``--plot``;
without one the message starts with the path).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cbai_cli.contracts.errors import CbaiError, OptionError
from cbai_cli.contracts.validation import safe_text


def named(path: str | Path, what: str = "") -> str:
    """``"--plot fig.png"`` for ``what = "--plot"``, else the path alone."""
    return f"{what} {path}" if what else str(path)


def reason(error: BaseException) -> str:
    """An exception's message as one printable line: the operating system's words for an
    OS error ("No space left on device", not repeating the file name), else its text."""
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return safe_text(text.splitlines()[0] if text.splitlines() else text)


def typed_path(path: str | Path, what: str = "") -> Path:
    """``path`` as a :class:`~pathlib.Path`; given as text (what the user typed), an empty
    path and one ending in a slash are refused with one line: :class:`~pathlib.Path` reads
    them as ``.`` and as the name without the slash."""
    if isinstance(path, str) and not path:
        raise OptionError(f"{named(repr(path), what)}: an empty path names no file")
    if isinstance(path, str) and path.endswith(("/", os.sep)):
        raise OptionError(f"{named(path, what)}: ends with a slash, so names a folder, not a file")
    return Path(path)


def is_device_or_pipe(path: str | Path) -> bool:
    """Whether ``path`` names something that is neither a regular file nor a folder (a pipe,
    a device, a socket): reading it may never end (/dev/zero), and renaming a file over it
    would replace it (as root, /dev/null)."""
    path = Path(path)
    return path.exists() and not path.is_file() and not path.is_dir()


def file_identity(path: str | Path) -> tuple[int, int] | None:
    """(device, inode) of the file ``path`` names now, what stays the same while the path
    names that file; None when it names nothing that can be looked at."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def unwritable_reason(path: str | Path) -> str | None:
    """Why the existing file ``path`` cannot be written (a read-only file system, or
    permission denied), or None when it can be."""
    if os.access(path, os.W_OK):
        return None
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "read-only file system"
    except (OSError, AttributeError):  # AttributeError: a system without statvfs
        pass
    return "permission denied"


def check_writable(path: str | Path, what: str = "") -> Path:
    """Fail now, with one line, unless a file can be written at ``path``: it is not a
    folder, its folder exists, and a new file can be created in that folder (tried for
    real, so every reason counts: permissions, a read-only or full file system, /proc).

    Files are written through a temporary file in the same folder and renamed over the
    target (:func:`cbai_cli.io.atomic.write_atomic`), which is exactly what the probe
    checks. Returns ``path`` as a :class:`~pathlib.Path`, after :func:`typed_path`'s checks
    of the text.
    """
    path = typed_path(path, what)
    if path.is_dir():
        raise OptionError(f"{named(path, what)}: is a folder")
    if is_device_or_pipe(path):
        raise OptionError(f"{named(path, what)}: is not a regular file (a device or a pipe); "
                          "cbai writes whole files and renames them into place")
    folder = Path(os.path.realpath(path)).parent if path.is_symlink() else path.parent  # written through
    if not folder.is_dir():
        if folder.exists():
            raise OptionError(f"{named(path, what)}: {folder} is not a folder")
        raise OptionError(f"{named(path, what)}: folder {folder} does not exist")
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as error:
        raise OptionError(f"{named(path, what)}: cannot write: {reason(error)}") from None
    os.close(handle)
    os.unlink(probe)
    return path


@contextmanager
def write_errors(path: str | Path, what: str = "") -> Iterator[None]:
    """Re-raise an :class:`OSError` of writing ``path`` in the block as one line
    ``WHAT PATH: cannot write: REASON``. User errors (:class:`CbaiError`) pass as they are.

    Only errors about no file (a full disk while writing) or about a file in ``path``'s
    folder (its temporary file, the rename) are translated; any other OSError is not
    about this output and stays what it is.
    """
    try:
        yield
    except CbaiError:
        raise
    except OSError as error:
        if not _concerns(error, Path(path)):
            raise
        if isinstance(error, IsADirectoryError) and Path(path).is_dir():
            raise OptionError(f"{named(path, what)}: is a folder") from None
        raise OptionError(f"{named(path, what)}: cannot write: {reason(error)}") from None


def _concerns(error: OSError, path: Path) -> bool:
    """Is ``error`` about ``path``, a file beside it, or no file at all?"""
    names = [name for name in (error.filename, error.filename2) if isinstance(name, (str, bytes, os.PathLike))]
    if not names:
        return True
    folder = os.path.abspath(path.parent)
    absolute = [os.path.abspath(os.fsdecode(name)) for name in names]
    return any(name == folder or os.path.dirname(name) == folder for name in absolute)
