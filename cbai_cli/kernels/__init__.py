"""The adaptive CBAI step compiled with numba (docs/sweeps.md, docs/ols.md).

The modules that import numba (:mod:`.jit` and everything that uses it) are imported
only when an adaptive run starts, so ``cbai --help``, ``bound``, ``generate`` and the
safe kinds never load it; :mod:`.batch` and this package's ``__init__`` import neither
numba nor numpy at import time.

- :mod:`.forms`: the radius formulas as plain Python, called by :mod:`cbai_cli.confidence`
  and by compiled code.
- :mod:`.jit`: the ``njit`` settings (on-disk cache, numpy's error model, no fast-math)
  and the registration of the radius formulas of :mod:`.forms`.
- :mod:`.radius`: the radius regimes ``theory``, ``det``, ``tuned`` as a code and a
  vector of constants.
- :mod:`.design`: the Sherman–Morrison absorb of one observation, with the per-arm
  caches updated in one blocked pass over the arm matrix.
- :mod:`.elimination`: the intervals of a radius and the update of U, F and r̄.
- :mod:`.select`: the sampling rules with a kernel code.
- :mod:`.advance`: whole runs of a batch of B states, until each stops or needs Python
  (the radius regimes, and the ``ols`` regime with its fit's kernels).
- :mod:`.threads`: the passes over the arm matrix, split across numba's threads on large
  arm sets (bitwise the serial passes).
- :mod:`.track_and_stop`: Track-and-Stop's sampling rule, one call per step from
  :meth:`cbai_cli.algorithms.track_and_stop.TrackAndStop.select` and from :mod:`.advance`.
- :mod:`.ols`: the ``ols`` regime's per-pull work (the least-squares fit's rank-one step
  and the mixture intervals), called from :mod:`cbai_cli.ols`.
- :mod:`.batch`: the batch state (arrays with a leading axis of B runs, and the ``ols``
  fits') and the Python loop around :mod:`.advance` (noise chunks, exact refreshes, the
  fits' recomputations and epochs).
"""
