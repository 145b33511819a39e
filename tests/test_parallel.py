"""BLAS thread variables and spawned worker pools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cbai_cli.numerics.blas_threads import BLAS_THREAD_VARIABLES, pin_blas_threads_by_default, single_threaded_blas

from cbai_cli.run.parallel import spawn_pool

REPO = Path(__file__).resolve().parents[1]


def _environment_after_pinning(**preset: str) -> dict[str, str | None]:
    """The BLAS variables in a fresh interpreter (numpy not loaded) after pinning."""
    script = ("import json, os; from cbai_cli.numerics.blas_threads import BLAS_THREAD_VARIABLES, pin_blas_threads_by_default; "
              "pin_blas_threads_by_default(); print(json.dumps({v: os.environ.get(v) for v in BLAS_THREAD_VARIABLES}))")
    environment = {key: value for key, value in os.environ.items() if key not in BLAS_THREAD_VARIABLES}
    environment.update(preset, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_pinning_sets_every_unset_variable_to_one():
    assert _environment_after_pinning() == {variable: "1" for variable in BLAS_THREAD_VARIABLES}


def test_pinning_keeps_a_value_the_user_chose():
    assert _environment_after_pinning(OPENBLAS_NUM_THREADS="4")["OPENBLAS_NUM_THREADS"] == "4"


def test_pinning_after_numpy_loaded_changes_nothing(monkeypatch):
    for variable in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    pin_blas_threads_by_default()  # numpy is loaded in the test process
    assert not any(variable in os.environ for variable in BLAS_THREAD_VARIABLES)


def test_importing_the_module_leaves_the_environment_alone():
    script = "import os; before = dict(os.environ); import cbai_cli.run.parallel; print(before == dict(os.environ))"
    environment = {key: value for key, value in os.environ.items() if key not in BLAS_THREAD_VARIABLES}
    result = subprocess.run([sys.executable, "-c", script], env={**environment, "PYTHONPATH": str(REPO)},
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


@pytest.fixture
def mixed_environment(monkeypatch) -> dict[str, str | None]:
    """Half of the BLAS variables set to a user's values, the other half unset."""
    chosen: dict[str, str | None] = {}
    for index, variable in enumerate(BLAS_THREAD_VARIABLES):
        if index % 2:
            monkeypatch.setenv(variable, str(index + 2))
            chosen[variable] = str(index + 2)
        else:
            monkeypatch.delenv(variable, raising=False)
            chosen[variable] = None
    return chosen


def test_single_threaded_blas_sets_every_variable_to_one_inside(mixed_environment):
    with single_threaded_blas():
        assert {variable: os.environ.get(variable) for variable in BLAS_THREAD_VARIABLES} == dict.fromkeys(
            BLAS_THREAD_VARIABLES, "1")


def test_single_threaded_blas_restores_set_and_unset_variables(mixed_environment):
    with single_threaded_blas():
        pass
    assert {variable: os.environ.get(variable) for variable in BLAS_THREAD_VARIABLES} == mixed_environment


def test_single_threaded_blas_restores_the_environment_after_an_error(mixed_environment):
    with pytest.raises(RuntimeError):
        with single_threaded_blas():
            raise RuntimeError("worker failed")
    assert {variable: os.environ.get(variable) for variable in BLAS_THREAD_VARIABLES} == mixed_environment


def test_spawned_workers_start_with_one_blas_thread(mixed_environment):
    with spawn_pool(1) as pool:
        seen = pool.submit(os.getenv, "OPENBLAS_NUM_THREADS").result()
    assert seen == "1"
    assert {variable: os.environ.get(variable) for variable in BLAS_THREAD_VARIABLES} == mixed_environment


def test_a_worker_that_dies_ends_the_pool_with_one_user_error():
    from cbai_cli.contracts.errors import WorkerLostError

    with pytest.raises(WorkerLostError, match="a worker process ended abruptly"):
        with spawn_pool(1) as pool:
            pool.submit(os._exit, 1).result()


@pytest.mark.parametrize("jobs", [0, -1, 2.5, True])
def test_jobs_that_are_not_a_positive_integer_are_refused(jobs):
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.run.parallel import check_jobs

    with pytest.raises(OptionError, match="--jobs must be an integer ≥ 1"):
        check_jobs(jobs)


def test_more_than_a_few_workers_per_core_are_refused_in_one_line():
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.run.parallel import JOBS_PER_CORE, check_jobs, default_jobs

    limit = JOBS_PER_CORE * default_jobs()
    assert check_jobs(limit) == limit
    with pytest.raises(OptionError, match=f"at most {limit} workers"):
        check_jobs(limit + 1)
