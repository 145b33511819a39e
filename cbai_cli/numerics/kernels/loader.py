"""numba, loaded on the first compiled call of a kernel (:mod:`cbai_cli.numerics.kernels.jit`).

The compiled code is cached on disk: beside the module (``__pycache__``) or, when the
package directory is not writable, under numba's user cache directory
(``~/.cache/numba``; ``NUMBA_CACHE_DIR`` moves it), and when neither can be written, under
an owner-only folder of the system's temporary folder (:func:`private_cache_root`); two
processes compiling at once each write whole files (numba writes a temporary file and
renames it), so the worst case is compiling twice.

numba keys a function's cache on its own source file only, but a kernel inlines the
kernels of other modules (``advance`` calls ``absorb``): after an edit of
``design.py`` alone, ``advance`` would load its stale compiled code. The locators
registered here stamp every kernel's cache with a digest of all kernel sources (this
package, the radius formulas of :mod:`.forms` among them), so any edit of them recompiles
them all, and an edit elsewhere (a regime, an algorithm's Python) none.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path

import numba
import numba.core.event
from numba.core import caching
from numba.extending import register_jitable

from cbai_cli.numerics.fortran import load_cython_modules
from cbai_cli.numerics.kernels import forms

KERNELS = Path(__file__).resolve().parent


#: The modules of this package that no compiled code is made from: the Python loop around
#: the compiled runs, the warm-up script and the package's docstring (an edit of them
#: recompiles nothing; numba keys each kernel's cache on its argument types besides).
NOT_COMPILED = ("batch.py", "__init__.py")


@functools.cache
def sources_digest() -> bytes:
    """sha256 of the sources every kernel is compiled from (every module of this package but
    :data:`NOT_COMPILED`)."""
    digest = hashlib.sha256()
    for path in sorted(KERNELS.glob("*.py")):
        if path.name not in NOT_COMPILED:
            digest.update(path.read_bytes())
    return digest.digest()


class _KernelStamp:
    """A numba cache locator for this package's functions whose stamp is
    :func:`sources_digest` (other functions: None, numba's own locators)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if Path(py_file).resolve().parent != KERNELS:
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):
        return sources_digest()


@functools.cache
def private_cache_root() -> str:
    """An owner-only folder under the system's temporary folder, ``cbai-numba-<uid>``: the
    kernels' cache when neither the package's folder nor the user's cache folder can be
    written (an install in a read-only image run by a user without a writable home). One
    that exists but is not this user's alone is not used (another user could have planted
    compiled code in it): a fresh folder then, so each process compiles for itself."""
    uid = getattr(os, "getuid", lambda: None)()
    if uid is not None:
        root = Path(tempfile.gettempdir()) / f"cbai-numba-{uid}"
        try:
            root.mkdir(mode=0o700, exist_ok=True)
            info = root.lstat()
            if stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o077:
                return str(root)
        except OSError:
            pass
    return tempfile.mkdtemp(prefix="cbai-numba-")


def _numba_locator(name: str) -> type:
    """numba's locator class ``name`` (numba ≥ 0.68), or ``_name`` (numba 0.60)."""
    return getattr(caching, name, None) or getattr(caching, f"_{name}")


_UserProvidedLocator = _numba_locator("UserProvidedCacheLocator")


class _PrivateTemporaryLocator(_UserProvidedLocator):
    """The last resort: the kernel's cache under :func:`private_cache_root`. Without it numba
    raised "cannot cache function …: no locator available" at import, a traceback for every
    command that runs a kernel."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(private_cache_root(), self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        return super(_UserProvidedLocator, cls).from_function(py_func, py_file)  # whatever NUMBA_CACHE_DIR says


def _register_locators() -> None:
    """Put the stamped locators before numba's own (the names of numba ≥ 0.60 and 0.68), and
    the stamped private temporary one after them all."""
    implementation = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    stamped = []
    for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"):
        base = _numba_locator(name)
        stamped.append(type(f"Kernel{base.__name__.lstrip('_')}", (_KernelStamp, base), {}))
    implementation._locator_classes[:0] = stamped
    implementation._locator_classes.append(type("KernelPrivateTemporaryLocator", (_KernelStamp, _PrivateTemporaryLocator), {}))


def _passive_openmp() -> None:
    """Ask OpenMP's threads to sleep while they wait instead of spinning, unless the user
    chose (``OMP_WAIT_POLICY``).

    numba splits passes (:mod:`cbai_cli.numerics.kernels.threads`) with the first threading layer
    it finds of TBB, OpenMP and its own workqueue. GNU OpenMP's threads spin after each
    parallel region by default: on a machine whose cores are busy with other processes, a
    G-ACOL step at K = 10⁴, d = 100 then took 16–24 ms instead of 0.3–1 ms on one thread.
    Sleeping threads cost about 8 µs a launch, against 4 µs spinning and 30 µs for
    workqueue (docs/sweeps.md). libgomp reads the variable when numba first loads it,
    after this.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _load_threading_layer() -> None:
    """Load numba's threading layer before any kernel runs.

    ``advance``, ``absorb`` and ``select`` are linked with the split passes of
    :mod:`cbai_cli.numerics.kernels.threads`; loaded from the on-disk cache, their code finds the
    threading layer's functions only once the layer is loaded, and crashed (segmentation
    fault, even on a 3-arm instance that never splits a pass) when it was not. Loading it
    costs 35–42 ms once per process (measured, beside numba's import of 0.4–0.8 s).
    """
    numba.get_num_threads()


class _CompileNotice(numba.core.event.Listener):
    """Says once, on stderr, that numba compiles (a cache that misses a kernel: an install
    whose build could not compile them, a numba upgrade), so that a person at a terminal
    knows why the command waits."""

    def __init__(self) -> None:
        self.said = False

    def on_start(self, event) -> None:
        if not self.said:
            self.said = True
            sys.stderr.write("cbai: compiling kernels for this machine (once, then cached; up to a minute; "
                             "`python -m cbai_cli.warm` compiles them all)\n")
            sys.stderr.flush()

    def on_end(self, event) -> None:
        pass


def _notice_compiles() -> None:
    """Install :class:`_CompileNotice` when stderr is a terminal (a log or a test's capture
    gets no such line)."""
    if sys.stderr is not None and sys.stderr.isatty():
        numba.core.event.register("numba:compile", _CompileNotice())


def _typing_without_cffi() -> None:
    """Import numba's CFFI typing support while ``cffi`` cannot be imported, unless something
    in this process imported ``cffi`` already.

    numba's typing context imports it on the first call of a compiled function, and with
    it ``cffi``, whose parser (pycparser) takes 45–50 ms to load (installed here with
    clarabel, one of cvxpy's solvers) and an FFI object to build. No kernel calls a CFFI
    function; numba then types the calls of none (its ``SUPPORTED`` flag is False), so a
    program that needs numba to compile calls of CFFI functions in the same process imports
    ``cffi`` before cbai loads its kernels.
    """
    if "cffi" in sys.modules or "numba.core.typing.cffi_utils" in sys.modules:
        return
    sys.modules["cffi"] = None  # type: ignore[assignment]  # makes `import cffi` raise ImportError
    try:
        import numba.core.typing.cffi_utils  # noqa: F401
    finally:
        del sys.modules["cffi"]


@functools.cache
def numba_ready():
    """numba, set up for the kernels once per process: its typing without CFFI
    (:func:`_typing_without_cffi`), the stamped cache locators, passive OpenMP threads, the
    threading layer, the compile notice and the radius formulas of :mod:`.forms` (plain
    Python, written once; registering them lets compiled code call
    them as they are). scipy's BLAS and LAPACK for numba are loaded first, without the
    rest of ``scipy.linalg`` (:func:`cbai_cli.numerics.fortran.load_cython_modules`)."""
    load_cython_modules()
    _typing_without_cffi()
    _register_locators()
    _passive_openmp()
    _load_threading_layer()
    _notice_compiles()
    for formula in (forms.log_ratio, forms.horizon_form, forms.determinant_form):
        register_jitable(formula)
    return numba
