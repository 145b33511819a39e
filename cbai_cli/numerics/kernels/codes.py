"""The integer codes by which Python tells the compiled step what to do, and the size
rule by which both sides choose how a pass reads the arm matrix (no numba here: the
algorithms and regimes declare their codes without loading it)."""

#: Sampling rules (:mod:`cbai_cli.numerics.kernels.select`).
G_ACOL, GREEDY_MAXVAR, MAXREW_U = 1, 2, 3
TRACK_AND_STOP = 4  # :func:`cbai_cli.numerics.kernels.track_and_stop.track_and_stop_arm`
ADAPTIVE_UNIFORM, G_ACOL_UNIFORM, MAXREW_F = 5, 6, 7
TRACK_AND_STOP_ROLLOUT = 8  # :func:`cbai_cli.numerics.kernels.rollout.rollout_arm` (``ols`` only)
#: The rules that read one uniform of the algorithm's own stream per pull
#: (:func:`cbai_cli.numerics.kernels.select.uniform_choice`).
UNIFORM_RULES = (ADAPTIVE_UNIFORM, G_ACOL_UNIFORM, MAXREW_F)
#: Radius regimes (:mod:`cbai_cli.numerics.kernels.radius`).
THEORY, DETERMINANT, TUNED = 0, 1, 2
#: What a run of a batch waits for (:mod:`cbai_cli.numerics.kernels.advance`): nothing (it runs),
#: nothing more (its stopping rule fired, or its budget is spent), its next chunk of
#: noise, or the exact refresh.
RUNNING, SOLVED, BUDGET, NEED_NOISE, NEED_REFRESH = 0, 1, 2, 3, 4

#: Arm matrices with at least this many entries (2 MB) do not stay in cache between two
#: passes: from there, and with at least :data:`STREAM_MIN_DIM` coordinates, where a
#: product costs more than the prediction's few scans of (K,) vectors, the design update
#: computes the next greedy gain's product in its own pass
#: (:class:`cbai_cli.numerics.linalg.DesignState`), each row read once for both products
#: (:func:`cbai_cli.numerics.kernels.threads.pair_products`).
STREAM_ENTRIES = 1 << 18
STREAM_MIN_DIM = 32


def streams(k: int, d: int) -> bool:
    """Whether the passes over a (k, d) arm matrix stream it: one read of each row for two
    products (:data:`STREAM_ENTRIES`)."""
    return k * d >= STREAM_ENTRIES and d >= STREAM_MIN_DIM


#: Bytes of arm rows in one block of a pass over the arm matrix: about 512 kB, so that the
#: per-arm work and a second product read the block from cache.
BLOCK_BYTES = 1 << 19


def block_rows(d: int) -> int:
    """Rows per block of a pass over arms of dimension d: :data:`BLOCK_BYTES` of them, a
    multiple of 64 rows, at least 64 (:func:`cbai_cli.numerics.kernels.threads.pair_products` computes
    every row alike in any block)."""
    return max(64, BLOCK_BYTES // (8 * max(d, 1)) // 64 * 64)
