"""Time per adaptive step with every pass on one thread and with the passes split across
numba's threads (not run by CI).

Usage:
    python benchmarks/bench_threads.py [--cells ALGORITHM,K,D ...] [--steps 150] [--threads-from ENTRIES]
                                       [--compiled BLOCK]

Each cell runs one ask/answer/tell loop (tuned radius 10 unless the cell names its regime,
``ALGORITHM:REGIME``, so that nothing is decided and every step does the full work; the
constraint's gaps are 100 times smaller than the noise, so that ``ols`` decides nothing
either for a long time; random Gaussian arms, as ``bench_adaptive.py``) in one
fresh process, alternating step by step between every pass serial and the passes split
as a normal run splits them (K·d ≥ ``cbai_cli.numerics.kernels.threads.THREADS_FROM``, or
``--threads-from``), and times every step. On a shared machine the minimum over the
``--steps`` steps of each kind is the least disturbed one (both cores free for the
split steps); the 10th percentile and the median show how often that was. BLAS is pinned
to one thread before numpy loads.

``--compiled BLOCK`` times the compiled whole-run loop instead (what ``cbai solve`` and
``cbai compare`` run: :func:`cbai_cli.numerics.kernels.batch.run_compiled` with a budget of BLOCK
more pulls, alternating serial and split blocks); a step's time is its block's wall time
over BLOCK, and ``--steps`` counts steps as before.

``--floor`` also times, in turn with the two kinds of step, a plain read of the arm
matrix split across numba's threads (the sum of each row, vectorised): the physical floor
of a step, one pass over the matrix, measured in the same seconds as the steps so that
the step's cost above it does not depend on the virtual machine's memory bandwidth at
the time (a sample is ``BLOCK`` reads with ``--compiled``).

``ols`` runs take the features' coordinates (:func:`report.in_features`), as the results files
were measured.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = ["g-acol,100000,100", "g-acol,10000,100", "g-acol,100000,10", "g-acol,2000,100", "g-acol,5000,100",
         "g-acol,8300,32", "g-acol,20000,32", "g-acol,50000,10"]


def row_sums():
    """A numba kernel reading every row of a matrix once on all of numba's threads."""
    import numba

    @numba.njit(parallel=True, fastmath={"reassoc"})
    def read(arms, out):
        for i in numba.prange(arms.shape[0]):
            total = 0.0
            for j in range(arms.shape[1]):
                total += arms[i, j]
            out[i] = total

    return read


def cell(spec: str, steps: int, threads_from: int | None, compiled: int | None = None, floor: bool = False) -> dict:
    """Step times (µs) of one cell, serial and split, alternating; ``compiled``: the steps
    per block of the compiled loop (None: one ask/answer/tell step at a time); ``floor``:
    also the time of one read of the arm matrix (``read``)."""
    import numpy as np

    from cbai_cli.kinds.cbai.instance import Instance
    from cbai_cli.kinds.cbai.kind import Environment
    from cbai_cli.kinds.cbai.noise import GaussianNoise
    from report import in_features  # benchmarks/report.py, beside this script
    from cbai_cli.run.simulate import RunRequest, prepare
    from cbai_cli.numerics.kernels import threads
    from cbai_cli.numerics.kernels.batch import run_compiled

    name, k, d = spec.split(",")
    k, d = int(k), int(d)
    rng = np.random.default_rng(0)
    instance = Instance(name="bench", arms=rng.standard_normal((k, d)), reward=rng.standard_normal(d),
                        constraint=rng.standard_normal(d) * 0.01, threshold=0.0, noise=GaussianNoise(1.0))
    algorithm, _, regime = name.partition(":")
    request = RunRequest.of(algorithm, regime, **in_features(regime)) if regime else RunRequest.of(algorithm, "tuned", beta=100.0)
    learner = prepare(request, instance).make_algorithm(np.random.default_rng(1))
    environment = Environment(instance.problem.arms, instance.truth, np.random.default_rng(2))
    default = threads.THREADS_FROM
    split = default if threads_from is None else threads_from
    times: dict[str, list[float]] = {"serial": [], "split": [], "read": []}
    per_sample = compiled or 1
    # serial: a limit no matrix reaches, so that both modes run the same compiled kernels
    modes = [("serial", 1 << 62), ("split", split)] + [("read", None)] * floor
    read, sums = row_sums(), np.empty(k)
    try:
        for _ in range(steps // per_sample + 5):
            for mode, limit in modes:
                threads.THREADS_FROM = limit  # this benchmark process only: what threads_from() returns
                started = time.perf_counter()
                if mode == "read":
                    for _ in range(per_sample):
                        read(instance.problem.arms, sums)
                elif compiled:
                    run_compiled([learner], [environment], compiled, limit)
                else:
                    query = learner.ask()
                    learner.tell(query, environment.answer(query))
                times[mode].append(1e6 * (time.perf_counter() - started) / per_sample)
    finally:
        threads.THREADS_FROM = default  # the next cell starts from the module's own value
    return {mode: np.array(values[5:]) for mode, values in times.items()}  # the first samples compile and warm up


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", nargs="+", default=CELLS, metavar="ALGORITHM,K,D")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--threads-from", type=int)
    parser.add_argument("--compiled", type=int, metavar="BLOCK")
    parser.add_argument("--floor", action="store_true", help="also time one read of the arm matrix")
    args = parser.parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    sys.path.insert(0, os.path.dirname(HERE))
    import numpy as np

    path = f"the compiled loop in blocks of {args.compiled} steps" if args.compiled else "the ask/answer/tell step"
    print(f"µs per step of {path}, over {args.steps} steps of each kind, alternating; load average "
          f"{os.getloadavg()[0]:.2f} at start" + (f"; split from K·d = {args.threads_from}"
                                                  if args.threads_from is not None else ""))
    print()
    floor = " read min / p10 / median | split − read, median |" if args.floor else ""
    print("| algorithm | K | d | serial min | split min | speed-up | serial p10 / median | split p10 / median |"
          + floor)
    print("|---|---:|---:|---:|---:|---:|---:|---:|" + "---:|---:|" * args.floor)
    for spec in args.cells:
        times = cell(spec, args.steps, args.threads_from, args.compiled, args.floor)
        serial, split, read = times["serial"], times["split"], times["read"]
        name, k, d = spec.split(",")
        row = (f"| {name} | {int(k)} | {int(d)} | {serial.min():,.0f} | {split.min():,.0f} | "
               f"{serial.min() / split.min():.2f}× | {np.percentile(serial, 10):,.0f} / {np.median(serial):,.0f} | "
               f"{np.percentile(split, 10):,.0f} / {np.median(split):,.0f} |")
        if args.floor:
            row += (f" {read.min():,.0f} / {np.percentile(read, 10):,.0f} / {np.median(read):,.0f} | "
                    f"{np.median(split - read):,.0f} |")
        print(row, flush=True)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
