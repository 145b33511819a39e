"""The adaptive CBAI step compiled with numba (docs/sweeps.md, docs/ols.md).

Only :mod:`.loader` imports numba, on the first call of a kernel's compiled view: a
process runs the kernels as Python until that pays (:mod:`.jit`), so ``cbai --help``,
``bound``, ``generate``, the safe kinds and small runs never load it.

- :mod:`.forms`: the radius formulas as plain Python, called by :mod:`cbai_cli.numerics.confidence`
  and by compiled code.
- :mod:`.jit`: a kernel's two views, interpreted and compiled (the ``njit`` settings:
  on-disk cache, numpy's error model, no fast-math), and when a process turns to the
  compiled one.
- :mod:`.loader`: numba's set-up for the kernels (the stamped cache locators, the
  threading layer, the registration of the radius formulas of :mod:`.forms`).
- :mod:`.blas`: the dot products, computed by scipy's BLAS in both views.
- :mod:`.radius`: the radius regimes ``theory``, ``det``, ``tuned`` as a code and a
  vector of constants.
- :mod:`.design`: the Sherman–Morrison absorb of one observation, with the per-arm
  caches updated in one blocked pass over the arm matrix, and ``observe``, one pull into a
  run's state (design, radius intervals, elimination), the update of the ask/tell path and
  of the compiled loop.
- :mod:`.elimination`: the intervals of a radius and the update of U, F and r̄.
- :mod:`.select`: the sampling rules with a kernel code.
- :mod:`.advance`: whole runs of a batch of B states, until each stops or needs Python
  (the radius regimes, and the ``ols`` regime with its fit's kernels).
- :mod:`.threads`: the passes over the arm matrix, split across numba's threads on large
  arm sets (bitwise the serial passes).
- :mod:`.track_and_stop`: Track-and-Stop's sampling rule, one call per step from
  :meth:`cbai_cli.algorithms.track_and_stop.TrackAndStop.select` and from :mod:`.advance`.
- :mod:`.ols`: the ``ols`` regime's per-pull work (the least-squares fit's rank-one step
  and the mixture intervals), called from :mod:`cbai_cli.numerics.ols`.
- :mod:`.state`: a run's state as typed sets of arrays with a leading axis of B runs (the
  ridge design and elimination state; the ``ols`` fit and intervals), of which the Python
  classes are views.
- :mod:`.span`: the ``ols`` fit's recomputations, extensions, epochs and tangent lines.
- :mod:`.fit`: ``observe_fit``, one pull into an ``ols`` run's state (design, fit, mixture
  intervals, elimination), the update of the ask/tell path and of the compiled loop, and
  ``update_fit``, the fit's part alone.
- :mod:`.batch`: the stack of B runs' states and the Python loop around :mod:`.advance`
  (noise chunks, exact refreshes of A⁻¹).
"""
