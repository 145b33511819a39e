"""Compile every kernel a command may run, once, ahead of the user.

numba compiles a kernel for each signature it is first called with and keeps the code in
its on-disk cache (:mod:`cbai_cli.numerics.kernels.jit`), so a command that runs a kernel for the
first time waits for the compiler (about 20 s for the default algorithm). :func:`warm_up`
calls the kernels the way commands do, so that the cache holds them all: every algorithm
of the cbai kind in every regime it accepts, as a single run (``cbai solve``), as a batch
of runs (``cbai compare``) and through ask/tell (``cbai session``), on a Gaussian and on a
binary instance, and a few steps on an arm set large enough for the threaded passes
(:mod:`cbai_cli.numerics.kernels.threads`). The package's build runs it (setup.py), so the
compiled code ships with the install; ``python -m cbai_cli.warm`` runs it again
(after a numba upgrade, say). It changes no record: it only fills the cache.
"""

from __future__ import annotations

import sys
import time

import numpy as np

#: (arms, dimension) of the large arm sets a few steps run on: the threaded passes, the
#: passes that stream the matrix (d ≥ 32, :func:`cbai_cli.numerics.kernels.codes.streams`) with the
#: prediction of the next greedy direction, and both.
LARGE_SHAPES = ((100_000, 10), (10_000, 32), (100_000, 32))


def _runs() -> list[tuple[str, str | None, dict]]:
    """(algorithm, regime, options) of every cbai algorithm in every regime it accepts, and
    with every option value that chooses another rule (an entry's ``value_regimes``:
    Track-and-Stop's ``--step rollout``) in the regimes that run it and do not take it by
    default (there the first run already has it)."""
    from cbai_cli.algorithms.registry import entries

    runs = []
    for name, entry in entries().items():
        if "cbai" not in entry.kinds:
            continue
        for regime in entry.regimes or (None,):
            options = {"beta": 1.0} if regime == "tuned" else {}
            runs.append((name, regime, options))
        runs += [(name, regime, {option: value}) for option, value, regimes in entry.value_regimes
                 for regime in regimes if entry.defaults(regime).get(option) != value]
    return runs


def warm_up(say=print) -> None:
    """Run every kernel a command may run, as commands run them (see the module docstring)."""
    import dataclasses

    from cbai_cli.compare.study import CompareSettings, compare
    from cbai_cli.kinds.cbai.families import generate_instance
    from cbai_cli.numerics.kernels import jit
    from cbai_cli.kinds.cbai.noise import BinaryNoise
    from cbai_cli.contracts.protocol import Answer
    from cbai_cli.run.simulate import RunRequest, prepare, run_once

    started = time.perf_counter()
    jit.load()  # runs short enough to interpret would compile nothing
    gaussian = generate_instance("irrelevant-dims", d=4, eps=0.2)
    # the same arms scaled into [−1, 1] for yes/no answers
    binary = dataclasses.replace(gaussian, arms=gaussian.arms / 2, noise=BinaryNoise())
    runs = _runs()
    for instance in (gaussian, binary):
        for name, regime, options in runs:
            prepared = prepare(RunRequest.of(name, regime, budget=2_000, **options), instance)
            run_once(prepared, seed=0)
            learner = prepared.make_algorithm(np.random.default_rng(0))
            for _ in range(3):  # ask/tell one query at a time, as a session does
                if learner.done:
                    break
                query = learner.ask()
                learner.tell(query, Answer(np.zeros(len(query.arms))))
        say(f"warmed single runs and ask/tell on {instance.noise.kind} answers "
            f"({time.perf_counter() - started:.0f} s)")
    specs = tuple(f"{name}:{regime}" + "".join(f":{key}={value}" for key, value in options.items())
                  if regime is not None else name for name, regime, options in runs)
    compare(CompareSettings(sources=("irrelevant-dims:d=4,eps=0.2",), algorithms=specs, seeds=2, jobs=1,
                            bounds=False, options={"budget": 2_000}))
    say(f"warmed batches of runs ({time.perf_counter() - started:.0f} s)")
    rng = np.random.default_rng(0)
    for arms, dim in LARGE_SHAPES:
        large = generate_instance("random", d=dim, n=arms, seed=0)
        for name, regime, options in runs:
            if not prepare(RunRequest.of(name, regime, **options), gaussian).spec.style == "adaptive":
                continue
            prepared = prepare(RunRequest.of(name, regime, budget=4, **options), large)
            run_once(prepared, seed=int(rng.integers(1 << 30)))
    say(f"warmed large arm sets ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    warm_up(lambda text: print(f"cbai: {text}", file=sys.stderr))
