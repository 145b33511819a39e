"""Shared fixtures: small instances with known answers; Hypothesis profiles.

Hypothesis profiles: ``ci`` (loaded when the environment variable ``CI`` is set, as CI
services do) is derandomised: every run tries the same examples, with no example
database and no deadline, and prints the blob that reproduces a failure. ``dev`` (the
default otherwise) is Hypothesis's own defaults, random examples and the local database.
``pytest --hypothesis-profile NAME`` still chooses explicitly. Tests that set
``max_examples`` keep their count under both profiles.
"""

from __future__ import annotations

import os
import subprocess

from cbai_cli.numerics.blas_threads import pin_blas_threads_by_default

# As the CLI does: single-threaded BLAS before numpy loads.
pin_blas_threads_by_default()

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, max_examples=100, print_blob=True)
settings.register_profile("dev")
settings.load_profile("ci" if os.environ.get("CI") else "dev")

from cbai_cli.kinds.cbai.families import family
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.kinds.cbai.noise import GaussianNoise


@pytest.fixture(autouse=True, scope="session")
def _private_study_cache(tmp_path_factory):
    """Study snapshots (:mod:`cbai_cli.session.snapshots`) go to a folder of this test run,
    for in-process sessions and for the processes tests start, never to the user's cache."""
    previous = os.environ.get("CBAI_CACHE_DIR")
    os.environ["CBAI_CACHE_DIR"] = str(tmp_path_factory.mktemp("cbai-cache"))
    yield
    if previous is None:
        os.environ.pop("CBAI_CACHE_DIR", None)
    else:
        os.environ["CBAI_CACHE_DIR"] = previous


@pytest.fixture(autouse=True, scope="session")
def _no_timed_progress_lines():
    """Progress lines come every CBAI_PROGRESS_INTERVAL seconds on a stderr that is no
    terminal: a day here, so that what a test sees on stderr never depends on how fast the
    machine is (tests of progress set their own interval)."""
    from cbai_cli.run.progress import INTERVAL_VARIABLE

    previous = os.environ.get(INTERVAL_VARIABLE)
    os.environ[INTERVAL_VARIABLE] = "86400"
    yield
    if previous is None:
        os.environ.pop(INTERVAL_VARIABLE, None)
    else:
        os.environ[INTERVAL_VARIABLE] = previous


@pytest.fixture
def small_disk(tmp_path, request):
    """A folder on a 64 KiB tmpfs of its own, where writes run out of space (root mounts
    one; elsewhere the test skips and says why); another size by indirect
    parametrisation (``@pytest.mark.parametrize("small_disk", ["1m"], indirect=True)``)."""
    folder = tmp_path / "small"
    folder.mkdir()
    size = getattr(request, "param", "64k")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def irrelevant_dims() -> Instance:
    """d = 10, ε = 0.05: H_CLB = 400, C⁺_min = 0.05, x* = arm 9."""
    return family("irrelevant-dims").generate(d=10, eps=0.05)


@pytest.fixture
def small_instance() -> Instance:
    """Three arms in R², best feasible arm 1, gaps well away from 0."""
    return Instance(
        name="small",
        arms=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        reward=np.array([0.0, 1.0]),
        constraint=np.array([1.0, 0.5]),
        threshold=0.75,
        noise=GaussianNoise(0.05),
    )
