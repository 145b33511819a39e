"""Running a grid: same records for any number of jobs, shards or a Dask cluster;
common random numbers; batching; resume after an interruption."""

from __future__ import annotations

import os
import signal
from dataclasses import replace

import pytest

from cbai_cli.contracts.options import FORCED_BOUND_TIME_LIMIT
from cbai_cli.compare.backends import InProcessBackend
from cbai_cli.compare.execute import Scheduler
from cbai_cli.compare.tasks import start_worker
from cbai_cli.compare.plan import build_grid, build_plan
from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.compare.store import read_store
from cbai_cli.compare.study import compare, plan_comparison, run_comparison

from tests.compare.common import SMALL, settings, stable


@pytest.fixture(scope="module")
def serial_records():
    """The small grid run in this process."""
    return stable(compare(SMALL).records)


def test_every_run_has_a_record_with_the_stable_keys(serial_records):
    assert len(serial_records) == 3 * 4 * 3
    assert set(serial_records[0]) | {"wall_s", "cbai_version", "numpy_version", "scipy_version", "cvxpy_version"} == set(RECORD_KEYS)


def test_two_processes_give_the_same_records_as_one(serial_records):
    assert stable(compare(settings(jobs=2)).records) == serial_records


def test_the_random_rules_give_the_same_records_for_any_number_of_jobs():
    random_rules = settings(algorithms=("adaptive-uniform:tuned:beta=0.25", "g-acol-uniform:tuned:beta=0.25"))
    assert stable(compare(random_rules).records) == stable(compare(replace(random_rules, jobs=2)).records)


def test_two_shards_merged_give_the_same_records_as_one_run(serial_records):
    merged = compare(settings(shard="1/2")).records + compare(settings(shard="2/2")).records
    assert stable(merged) == serial_records


def test_dask_local_cluster_gives_the_same_records(serial_records):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        records = compare(settings(jobs=None, scheduler=cluster.scheduler_address)).records
    assert stable(records) == serial_records


def test_algorithms_on_one_seed_share_the_noise_stream():
    # The budget is never reached, so both specs run the same algorithm: with common
    # random numbers they must make the same queries on every seed.
    result = compare(settings(algorithms=("g-acol:tuned:beta=0.25", "g-acol:tuned:beta=0.25,budget=1000000")))
    by_spec: dict[str, list] = {}
    for record in stable(result.records):
        by_spec.setdefault(record["spec"], []).append((record["group"], record["seed"], record["iterations"]))
    first, second = by_spec.values()
    assert first == second


def test_different_seeds_give_different_noise():
    records = stable(compare(settings(sources=("irrelevant-dims:d=3,eps=0.05",), seeds=6,
                                      algorithms=("g-acol:tuned:beta=0.25",))).records)
    assert len({record["iterations"] for record in records}) > 1


def test_records_carry_instance_options_and_versions(serial_records):
    record = compare(settings(seeds=1, sources=("regret-1d",), algorithms=("g-acol:tuned:beta=0.25",))).records[0]
    assert (record["instance"], record["algorithm"], record["regime"], record["beta"]) == ("regret-1d", "g-acol", "tuned", 0.25)
    assert len(record["instance_hash"]) == 16 and record["numpy_version"] and record["cbai_version"]
    assert record["stopped"] == "solved" and record["correct"] is True


class CountingBackend(InProcessBackend):
    """Runs here and remembers the size of every batch."""

    def __init__(self, workers: int) -> None:
        super().__init__()
        self.workers = workers
        self.sizes: list[int] = []

    def submit(self, tasks: tuple) -> int:
        self.sizes.append(len(tasks))
        return super().submit(tasks)


def test_short_runs_are_batched():
    plan = build_plan(build_grid(["regret-1d"], ["g-acol:tuned:beta=0.25"], seeds=400))
    backend = CountingBackend(workers=2)
    records: list[dict] = []
    Scheduler(plan, backend, records.append, with_bounds=False).run(plan.runs)
    assert len(records) == 400 and backend.sizes[0] == 1 and len(backend.sizes) < 40


def test_last_batches_are_split_across_workers():
    plan = build_plan(build_grid(["regret-1d"], ["g-acol:tuned:beta=0.25"], seeds=40))
    backend = CountingBackend(workers=4)
    Scheduler(plan, backend, lambda record: None, with_bounds=False).run(plan.runs)
    assert max(backend.sizes) <= 10


def test_bounds_are_computed_once_per_instance_and_reach_every_record(monkeypatch):
    calls: list[str] = []
    limits: set = set()

    def fake_bound(instance, delta, time_limit):
        calls.append(instance.content_hash)
        limits.add(time_limit)
        return 10.0

    monkeypatch.setattr("cbai_cli.compare.tasks.reference_lower_bound", fake_bound)
    result = compare(settings(bounds=True))
    assert {record["lower_bound"] for record in result.records} == {10.0}
    assert len(calls) == len(set(calls)) == 2 + 4
    assert limits == {FORCED_BOUND_TIME_LIMIT}  # forced bounds are capped


class Interrupt(KeyboardInterrupt):
    """Stands for Ctrl-C arriving after some records are stored."""


def interrupt_after(count: int):
    seen = [0]

    def on_record(record: dict) -> None:
        seen[0] += 1
        if seen[0] == count:
            raise Interrupt

    return on_record


def test_interrupted_run_leaves_exactly_the_finished_records(tmp_path):
    out = tmp_path / "runs.jsonl"
    with pytest.raises(Interrupt):
        run_comparison(plan_comparison(settings(out=out)), on_record=interrupt_after(7))
    contents = read_store(out)
    assert len(contents.records) == 7 and contents.skipped_lines == 0


@pytest.mark.parametrize("suffix", ["jsonl", "sqlite"])
def test_resume_skips_exactly_the_stored_runs(tmp_path, suffix, serial_records):
    out = tmp_path / f"runs.{suffix}"
    with pytest.raises(Interrupt):
        run_comparison(plan_comparison(settings(out=out)), on_record=interrupt_after(10))
    stored = {record["run_key"] for record in read_store(out).records}
    resumed = plan_comparison(settings(out=out))
    assert {run.run_key for run in resumed.pending} == {run.run_key for run in resumed.plan.runs} - stored
    result = run_comparison(resumed)
    assert (result.reused, result.ran) == (10, len(serial_records) - 10)
    assert stable(read_store(out).records) == serial_records


def test_rerun_of_a_finished_study_runs_nothing(tmp_path):
    out = tmp_path / "runs.sqlite"
    compare(settings(out=out))
    again = compare(settings(out=out))
    assert again.ran == 0 and again.reused == len(again.records) == 36


@pytest.mark.parametrize(("flag", "threshold", "computed"), [(None, 10**6, True), (None, 1, False), (True, 1, True),
                                                             (False, 10**6, False)])
def test_bounds_by_default_only_below_the_size_threshold(monkeypatch, flag, threshold, computed):
    monkeypatch.setattr("cbai_cli.kinds.cbai.bounds.AUTO_BOUND_ENTRIES", threshold)
    monkeypatch.setattr("cbai_cli.compare.tasks.reference_lower_bound", lambda instance, delta, time_limit: 10.0)
    result = compare(settings(bounds=flag))
    assert {record["lower_bound"] for record in result.records} == ({10.0} if computed else {None})


@pytest.mark.parametrize("chosen, share, expected", [(None, 1, "1"), (None, 2, "2"), ("1", 2, "1"), ("4", 2, "2")])
def test_a_worker_gets_its_share_of_the_cores_for_numba_threads(monkeypatch, chosen, share, expected):
    monkeypatch.setenv("NUMBA_NUM_THREADS", chosen or "")  # restored after the test, unset or not
    if chosen is None:
        monkeypatch.delenv("NUMBA_NUM_THREADS")
    previous = signal.getsignal(signal.SIGINT)
    try:
        start_worker(share)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert os.environ["NUMBA_NUM_THREADS"] == expected


@pytest.fixture
def one_worker():
    """A process pool of one worker, closed after the test."""
    from cbai_cli.compare.backends import ProcessPoolBackend

    backend = ProcessPoolBackend(1)
    yield backend
    backend.close(cancel=True)


def test_a_worker_returns_each_batch_with_its_ticket(one_worker):
    first, second = one_worker.submit(()), one_worker.submit(())
    assert [one_worker.next_done()[0], one_worker.next_done()[0]] == [first, second]


def test_an_exception_in_a_worker_is_raised_in_the_parent(one_worker):
    from cbai_cli.compare.tasks import BoundTask

    one_worker.submit((BoundTask(None, 0.05),))  # None has no kind: perform fails in the worker
    with pytest.raises(AttributeError):
        one_worker.next_done()


def test_a_killed_worker_ends_the_wait_with_an_error_naming_it(one_worker):
    import multiprocessing

    from cbai_cli.contracts.errors import WorkerLostError

    [worker] = multiprocessing.active_children()
    os.kill(worker.pid, signal.SIGKILL)
    worker.join()
    with pytest.raises(WorkerLostError, match=f"worker process {worker.pid} was killed by SIGKILL"):
        one_worker.submit(())
        one_worker.next_done()


def test_closing_without_cancel_ends_the_workers():
    import multiprocessing

    from cbai_cli.compare.backends import ProcessPoolBackend

    backend = ProcessPoolBackend(2)
    backend.submit(())
    backend.next_done()
    backend.close(cancel=False)
    assert multiprocessing.active_children() == []


def test_a_script_that_starts_workers_unguarded_is_told_to_guard_its_call(tmp_path):
    # each spawned worker imports the script afresh, whose unguarded compare() fails in its start-up
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text("from cbai_cli.compare.study import CompareSettings, compare\n"
                      "compare(CompareSettings(sources=('regret-1d',), algorithms=('acol',), seeds=2, jobs=2))\n")
    process = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert process.returncode != 0
    last = process.stderr.strip().splitlines()[-1]
    assert last.startswith("cbai_cli.contracts.errors.WorkerLostError: worker process")
    assert last.endswith('call compare under `if __name__ == "__main__":`, since each worker imports the script '
                         "afresh)")


@pytest.mark.parametrize(("path", "spec", "script"), [("/home/u/study.py", None, True),
                                                      ("/usr/local/bin/cbai", None, False),
                                                      ("/x/cbai_cli/__main__.py", "cbai_cli.__main__", False),
                                                      (None, None, False)])
def test_only_a_users_script_is_told_to_guard_its_call(monkeypatch, path, spec, script):
    import importlib.machinery
    import sys
    import types

    from cbai_cli.compare.backends import user_script

    main = types.ModuleType("__main__")
    if path is not None:
        main.__file__ = path
    main.__spec__ = importlib.machinery.ModuleSpec(spec, None) if spec else None
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert user_script() is script
