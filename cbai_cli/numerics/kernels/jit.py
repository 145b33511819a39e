"""How every kernel runs: as Python until it pays to load compiled code, then compiled.

A kernel is a plain Python function decorated here (:class:`Kernel`). It has two views
that compute the same bits:

- ``kernel.interpreted``: the function run by Python, calling the other kernels'
  interpreted views. Loading numba and the compiled code costs about half a second per
  process (numba's import, its registries, the cached code); a small run needs
  milliseconds of arithmetic, which Python does in a few tenths at most.
- ``kernel.compiled``: numba's dispatcher of the same function, calling the other kernels'
  dispatchers (:mod:`.loader` loads numba, with the on-disk cache, on first use).

Calling ``kernel(...)`` from Python runs the interpreted view until the process has spent
:data:`INTERPRETED_SECONDS` in interpreted kernels or compiled code is loaded (:func:`load`),
then the compiled one; an interpreted call that raises (Python's float arithmetic, where
numpy's gives ±∞ or NaN) is undone on its array arguments and run compiled. Both views run
the same source with numba's settings chosen so that they round alike: ``error_model="numpy"`` (a division by zero gives ±∞/NaN, as the
numpy scalars that the interpreted view reads from arrays do; it runs with numpy's
floating-point warnings off) and no fast-math (every operation rounds as Python's). The
one exception, :func:`njit_reassociating`, computes the products of the passes over large
arm matrices, which only arm sets too large to interpret (:data:`INTERPRETED_ENTRIES`)
reach. ``tests/kernels/test_interpreted.py`` runs every rule and regime both ways and
compares the records.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

#: ``prange`` in a kernel's loops: numba's parallel range in the compiled view, ``range`` in
#: the interpreted one.
prange = range

#: Seconds of interpreted kernels after which a process loads the compiled code (which
#: costs about 0.5 s): enough for a shipped instance's run (10–90 ms interpreted), little
#: beside a sweep's seconds.
INTERPRETED_SECONDS = 0.15
#: The largest arm matrix (K·d entries) that kernels run interpreted: a pass over a larger
#: one takes milliseconds in Python.
INTERPRETED_ENTRIES = 20_000

_KERNELS: list[Kernel] = []


class _Process:
    """What this process has loaded: whether compiled code is in use, and the seconds spent
    in interpreted kernels called from Python so far (a cache of the process, like numba's
    own: no record depends on it)."""

    loaded = False
    interpreted_seconds = 0.0


class Kernel:
    """A kernel: ``py_func`` with numba's ``options``; calling it runs the interpreted view
    or, once compiled code is loaded, the compiled one (the module docstring)."""

    def __init__(self, function: Callable, options: dict[str, Any], name: str | None = None) -> None:
        self.py_func = function
        self.options = options
        self.python: Callable | None = None  # the interpreted view, when not py_func itself
        self._views: dict[str, Callable] = {}
        functools.update_wrapper(self, function)
        if name is not None:  # numba keys the on-disk cache on the name: one function, two kernels
            self.__name__ = self.__qualname__ = name
        _KERNELS.append(self)

    def __call__(self, *args):
        if not _Process.loaded:
            started = time.perf_counter()
            done, result = interpret(self, args)
            if not interpreted_for(time.perf_counter() - started) or not done:
                load()
            if done:
                return result
        return self.compiled(*args)

    @property
    def interpreted(self) -> Callable:
        """The function run by Python, calling the interpreted views of the kernels it calls."""
        return self._views.get("interpreted") or _build("interpreted")[self]

    @property
    def compiled(self) -> Callable:
        """numba's dispatcher, calling the dispatchers of the kernels it calls."""
        return self._views.get("compiled") or _build("compiled")[self]

    def __repr__(self) -> str:
        return f"<kernel {self.py_func.__module__}.{self.py_func.__qualname__}>"


def interpret(kernel: Kernel, args: tuple) -> tuple[bool, Any]:
    """``(True, result)`` of ``kernel``'s interpreted view on ``args``, numpy's floating-point
    warnings off; ``(False, None)``, with every writable array and every generator of
    ``args`` (and of a tuple among them: a state's arrays) as it was, when Python's float
    arithmetic raised (where numpy's scalars, as
    the compiled code, give ±∞ or NaN): the caller then runs the compiled view."""
    values = [item for value in args for item in (value if isinstance(value, tuple) else (value,))]
    arrays = [(value, value.copy()) for value in values if isinstance(value, np.ndarray) and value.flags.writeable]
    generators = [(value, value.bit_generator.state) for value in values if isinstance(value, np.random.Generator)]
    try:
        with np.errstate(all="ignore"):
            return True, kernel.interpreted(*args)
    except (ArithmeticError, ValueError):
        for array, saved in arrays:
            array[...] = saved
        for generator, state in generators:
            generator.bit_generator.state = state
        return False, None


def njit(function: Callable, name: str | None = None) -> Kernel:
    """``function`` as a kernel, compiled once per signature and cached on disk (under
    ``name`` when given: a function made into two kernels needs a name for each)."""
    return Kernel(function, {"cache": True, "error_model": "numpy", "nogil": True}, name)


def njit_inlined(function: Callable) -> Kernel:
    """:func:`njit` whose compiled view is written into every compiled kernel that calls it
    (numba's ``inline="always"``): a callee on the hot path of the whole-run loop costs no
    call there (passing a run's state as a tuple of arrays to a separate function measured
    about 5 % a pull of G-ACOL), and stays one function called from Python too."""
    return Kernel(function, {"cache": True, "error_model": "numpy", "nogil": True, "inline": "always"})


def njit_threaded(function: Callable) -> Kernel:
    """:func:`njit` with its :data:`prange` loops split across numba's threads
    (:mod:`cbai_cli.numerics.kernels.threads`). Such a function holds a prange loop over blocks and
    nothing else that numba's parallel transforms could rewrite (array expressions or
    reductions, whose order they would change)."""
    return Kernel(function, {"cache": True, "error_model": "numpy", "nogil": True, "parallel": True})


def njit_reassociating(function: Callable, name: str | None = None) -> Kernel:
    """:func:`njit` allowed to reassociate sums (LLVM's ``reassoc`` flag only, no other
    fast-math assumption), so that a dot product's loop is vectorised into partial sums.

    Its results depend on the compiled code, not on the data's path through it: the same
    arguments give the same bits in every call on one machine (a CPU with other vector
    units may round differently, as its BLAS would). Interpreted, it sums in order: it is
    reached only on arm sets larger than :data:`INTERPRETED_ENTRIES`.
    """
    return Kernel(function, {"cache": True, "error_model": "numpy", "nogil": True, "fastmath": {"reassoc"}}, name)


def njit_interpreted_as(python: Callable) -> Callable[[Callable], Kernel]:
    """:func:`njit` whose interpreted view is ``python``: a function that computes the same
    bits by the same library call as the compiled code (:mod:`cbai_cli.numerics.kernels.blas`)."""

    def decorate(function: Callable) -> Kernel:
        kernel = njit(function)
        kernel.python = python
        return kernel

    return decorate


def loaded() -> bool:
    """Whether this process runs compiled kernels."""
    return _Process.loaded


def load() -> None:
    """Run compiled kernels from now on in this process (numba is imported and each kernel's
    code loaded from the cache on its first call)."""
    _build("compiled")
    _Process.loaded = True


def interpreting(entries: int) -> bool:
    """Whether a run on an arm matrix of ``entries`` (K·d) starts interpreted."""
    return not _Process.loaded and entries <= INTERPRETED_ENTRIES


#: The modules of this package that define no kernel: numba's set-up and the warm-up script.
_NOT_KERNELS = ("loader", "warm")


def interpreted_for(seconds: float) -> bool:
    """Count ``seconds`` spent in interpreted kernels by a caller that runs their views
    itself (:func:`cbai_cli.numerics.kernels.batch.run_compiled`); returns whether the process may
    go on interpreting."""
    _Process.interpreted_seconds += seconds
    return _Process.interpreted_seconds < INTERPRETED_SECONDS


def _import_kernels() -> None:
    """Every module of this package that defines kernels, so that every kernel is registered."""
    package = importlib.import_module("cbai_cli.numerics.kernels")
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in _NOT_KERNELS:
            importlib.import_module(f"cbai_cli.numerics.kernels.{module.name}")


@functools.cache
def _build(view: str) -> dict[Kernel, Callable]:
    """Every kernel's ``view``: each function rebuilt over a copy of its module's globals in
    which the kernels are replaced by their views (and, compiled, :data:`prange` by numba's),
    so that a view calls views of its own kind only."""
    _import_kernels()
    numba = importlib.import_module("cbai_cli.numerics.kernels.loader").numba_ready() if view == "compiled" else None
    namespaces: dict[int, dict] = {}
    views: dict[Kernel, Callable] = {}
    for kernel in _KERNELS:
        function = kernel.py_func
        namespace = namespaces.setdefault(id(function.__globals__), dict(function.__globals__))
        rebuilt = types.FunctionType(function.__code__, namespace, kernel.__name__, function.__defaults__,
                                     function.__closure__)
        rebuilt.__qualname__, rebuilt.__doc__ = kernel.__qualname__, function.__doc__
        if numba is not None:
            views[kernel] = numba.njit(**kernel.options)(rebuilt)
        else:
            views[kernel] = kernel.python or rebuilt
    for namespace in namespaces.values():
        for name, value in namespace.items():
            if isinstance(value, Kernel):
                namespace[name] = views[value]
            elif value is prange and numba is not None:
                namespace[name] = numba.prange
    for kernel, function in views.items():
        kernel._views[view] = function
    return views
