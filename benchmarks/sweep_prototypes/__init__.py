"""MEASUREMENT PROTOTYPES, not part of the cbai package (issue 13, part 1).

Two ways to run many seeds of one adaptive CBAI algorithm (G-ACOL, Greedy MaxVar;
regimes theory, det, tuned) on one instance as one computation, written to measure
them against the package's single-run path (``run_once`` per seed):

- :mod:`.lockstep`: the state of B runs as numpy arrays with a leading batch axis,
  finished runs dropped from the arrays;
- :mod:`.compiled`: the whole step loop of a run compiled with numba, for one run or a
  batch of runs in one call.

Both reproduce the package's arithmetic operation for operation (the same BLAS
products, the same elementwise formulas, the same exact refreshes), and draw their
noise from the run's own stream of :func:`cbai_cli.simulate.run_streams`, so their
results equal ``cbai solve --json`` for the same seeds whatever the batch size
(``python benchmarks/bench_sweep.py --check`` verifies it). They implement only what
the measurement needs: Gaussian noise, one pull per step, no traces, no sessions.
``benchmarks/bench_sweep.py`` times them; docs/sweeps.md says what was measured.
"""
