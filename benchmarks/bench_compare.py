"""Throughput of ``cbai compare`` on many short runs: in this process, on J worker
processes with adaptive batching, and on J processes with one run per batch (what
batching saves). Not run by CI.

    python benchmarks/bench_compare.py --runs 1000 --jobs 2

Every configuration must produce the same records (checked), so the timings compare
like with like. Wall time includes starting the worker processes.
"""

from __future__ import annotations

import argparse
import time

from cbai_cli.compare.backends import InProcessBackend, ProcessPoolBackend
from cbai_cli.compare.execute import Scheduler
from cbai_cli.compare.plan import build_grid, build_plan
from cbai_cli.compare.records import stable_part
from cbai_cli.compare.summary import sort_records


def measure(plan, backend_factory, max_batch: int) -> tuple[float, list[dict]]:
    """Seconds to run the plan, and its records in canonical order."""
    records: list[dict] = []
    started = time.perf_counter()
    Scheduler(plan, backend_factory(), records.append, with_bounds=False, max_batch=max_batch).run(plan.runs)
    return time.perf_counter() - started, sort_records(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--source", default="regret-1d")
    parser.add_argument("--algo", default="maxrew-u:tuned:beta=0.25")
    arguments = parser.parse_args()
    plan = build_plan(build_grid([arguments.source], [arguments.algo], seeds=arguments.runs))
    serial_seconds, serial = measure(plan, InProcessBackend, 512)
    mean_run = sum(record["wall_s"] for record in serial) / len(serial)
    print(f"{arguments.runs} runs of {arguments.algo} on {arguments.source}, {1000 * mean_run:.1f} ms per run on average")
    print(f"  this process:                 {serial_seconds:7.2f} s  ({arguments.runs / serial_seconds:7.1f} runs/s)")
    for label, max_batch in (("batched", 512), ("one run per batch", 1)):
        seconds, records = measure(plan, lambda: ProcessPoolBackend(arguments.jobs), max_batch)
        assert [stable_part(record) for record in records] == [stable_part(record) for record in serial], \
            "parallel records differ from the serial ones"
        print(f"  {arguments.jobs} processes, {label + ':':19s}{seconds:7.2f} s  ({arguments.runs / seconds:7.1f} runs/s)")


if __name__ == "__main__":
    main()
