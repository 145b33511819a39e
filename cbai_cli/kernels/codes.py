"""The integer codes by which Python tells the compiled step what to do (no numba here:
the algorithms and regimes declare their codes without loading it)."""

#: Sampling rules (:mod:`cbai_cli.kernels.select`).
G_ACOL, GREEDY_MAXVAR, MAXREW_U = 1, 2, 3
TRACK_AND_STOP = 4  # :func:`cbai_cli.kernels.track_and_stop.track_and_stop_arm`
#: Radius regimes (:mod:`cbai_cli.kernels.radius`).
THEORY, DETERMINANT, TUNED = 0, 1, 2
#: What a run of a batch waits for (:mod:`cbai_cli.kernels.advance`): nothing (it runs),
#: nothing more (its stopping rule fired, or its budget is spent), its next chunk of
#: noise, or the exact refresh.
RUNNING, SOLVED, BUDGET, NEED_NOISE, NEED_REFRESH = 0, 1, 2, 3, 4
