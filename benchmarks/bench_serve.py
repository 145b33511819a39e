"""Latency of ``cbai session serve`` under concurrent raters, at a given journal size.

Usage:
    python benchmarks/bench_serve.py [--prefill 20000] [--raters 8] [--rounds 100] [--algo g-acol]
                                     [--undo-seconds 0] [--seed 0]

Makes a study that does not stop early (irrelevant-dims, d = 10, ε = 0.001, σ = 1: the
algorithm needs far more answers than the benchmark gives it), fills its journal with
``--prefill`` answers through the Python API (``Session.ask`` and ``Session.record``, a
hundred at a time, values drawn from the instance's hidden φ), then starts
``python -m cbai_cli session serve`` on a free 127.0.0.1 port and measures:

- start → ready: from starting the process to its ready line (imports, the study's
  opening and replay, the algorithm's warm-up; numba's cache is warm after a first run);
- ready → first question: the first ``GET /api/next`` after the ready line;
- with ``--raters`` threads at once, each doing ``--rounds`` times ``GET /api/next`` then
  ``POST /api/answer`` (urllib, a new connection per request, as the tests do): the p50
  and p95 of each request and of the pair, and the answers per second of all raters.

Prints a Markdown table. Timings depend on the machine; nothing here is asserted by tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def prefill(study: Path, instance, answers: int, seed: int) -> float:
    """Record ``answers`` answers drawn from the instance's truth; the seconds it took."""
    import numpy as np

    from cbai_cli.session.session import Session

    rng = np.random.default_rng(seed)
    means = instance.truth.means(instance.problem.arms)
    sigma = instance.noise.sigma
    started = time.perf_counter()
    with Session.open(study) as session:
        done = 0
        while done < answers:
            queries = session.ask(min(100, answers - done), rater="prefill")
            if not queries:
                raise SystemExit(f"the study stopped after {done} answers; use a harder instance")
            rows = [(query.id, float(means[query.arm] + sigma * rng.standard_normal())) for query in queries]
            session.record(rows, rater="prefill")
            done += len(rows)
    return time.perf_counter() - started


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefill", type=int, default=20_000, help="answers in the journal before the server starts")
    parser.add_argument("--raters", type=int, default=8, help="raters at once")
    parser.add_argument("--rounds", type=int, default=100, help="next + answer pairs per rater")
    parser.add_argument("--algo", default="g-acol")
    parser.add_argument("--undo-seconds", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import numpy as np

    from cbai_cli.kinds.cbai.families import generate_instance
    from cbai_cli.session.session import Session
    from tests.serve.conftest import start_server

    instance = generate_instance("irrelevant-dims", d=10, eps=0.001, sigma=1.0)
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    study = folder / "study.db"
    Session.start(study, instance, args.algo, seed=args.seed).close()
    fill_seconds = prefill(study, instance, args.prefill, args.seed)

    started = time.perf_counter()
    server = start_server(study, "--undo-seconds", args.undo_seconds)
    ready = time.perf_counter()
    status, first = server.call("GET", "/api/next?rater=first")
    first_question = time.perf_counter() - ready
    assert status == 200 and first["query"] is not None, first

    means = instance.truth.means(instance.problem.arms)
    timings: dict[str, list[float]] = {"next": [], "answer": [], "pair": []}
    failures: list[str] = []
    lock = threading.Lock()

    def rater(index: int) -> None:
        rng = np.random.default_rng([args.seed, index])
        for round_ in range(args.rounds):
            t0 = time.perf_counter()
            status, reply = server.call("GET", f"/api/next?rater=r{index}")
            t1 = time.perf_counter()
            if status != 200 or reply["query"] is None:
                failures.append(f"next: {status} {reply}")
                return
            query = reply["query"]
            value = float(means[query["arm"]] + rng.standard_normal())
            status, recorded = server.call("POST", "/api/answer", {"id": query["id"], "rater": f"r{index}",
                                                                    "answer": value, "key": f"r{index}/{round_}"})
            t2 = time.perf_counter()
            if status != 200:
                failures.append(f"answer: {status} {recorded}")
                return
            with lock:
                timings["next"].append(t1 - t0)
                timings["answer"].append(t2 - t1)
                timings["pair"].append(t2 - t0)

    threads = [threading.Thread(target=rater, args=(index,)) for index in range(args.raters)]
    load_start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    load_seconds = time.perf_counter() - load_start
    server.stop()
    if failures:
        raise SystemExit(f"{len(failures)} request(s) failed, the first: {failures[0]}")

    answers = len(timings["pair"])
    print(f"`python benchmarks/bench_serve.py --prefill {args.prefill} --raters {args.raters} --rounds {args.rounds} "
          f"--algo {args.algo} --undo-seconds {args.undo_seconds:g}` on {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}; prefill of {args.prefill:,} answers through the Python API: "
          f"{fill_seconds:.1f} s\n")
    print("| measure | value |")
    print("| --- | --- |")
    print(f"| start → ready (process start to the ready line) | {ready - started:.2f} s |")
    print(f"| ready → first question (`GET /api/next`) | {first_question * 1000:.0f} ms |")
    for name in ("next", "answer", "pair"):
        what = {"next": "`GET /api/next`", "answer": "`POST /api/answer`", "pair": "next + answer"}[name]
        values = timings[name]
        print(f"| {what}, p50 / p95 ({args.raters} at once) | {statistics.median(values) * 1000:.1f} / "
              f"{percentile(values, 0.95) * 1000:.1f} ms |")
    print(f"| answers per second, all raters | {answers / load_seconds:.0f} |")


if __name__ == "__main__":
    main()
