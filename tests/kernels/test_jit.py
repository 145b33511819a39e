"""The kernels' on-disk cache is invalidated by an edit of any kernel source, not only of
the function's own file (a compiled function inlines the kernels it calls), and is found
even where neither the package nor the home folder can be written; a worker's copy of an
instance runs on the code compiled for the original."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.numerics.kernels import advance, design, loader, ols, threads


def test_every_kernel_cache_is_stamped_with_all_kernel_sources():
    for kernel in (advance.advance, design.absorb, threads.absorb_pass, threads._absorb_blocks_threaded,
                   ols.rank_one_step, ols.mixture_bounds):
        assert kernel.compiled._cache._impl.locator.get_source_stamp() == loader.sources_digest()


def test_a_pickled_instance_keeps_its_arrays_read_only():
    import pickle

    from cbai_cli.kinds.cbai.families import generate_instance

    instance = generate_instance("unit-sphere", d=3, n=6, seed=1)
    instance.problem, instance.gaps, instance.truth  # cached, so pickled with it
    copy = pickle.loads(pickle.dumps(instance))
    held = [copy.arms, copy.constraint, copy.reward, copy.rewards, copy.gaps, copy.problem.arms,
            copy.problem.rewards, copy.truth.constraint]
    assert all(isinstance(array, np.ndarray) and not array.flags.writeable for array in held)


@pytest.mark.parametrize("name", ["soare-safe.yaml", "amani-a.yaml", "amani-b.yaml"])
def test_a_pickled_safe_instance_keeps_its_arrays_read_only(name):
    import pickle

    from cbai_cli.kinds import load

    instance = load(Path(__file__).parents[2] / "instances" / name)
    problem = pickle.loads(pickle.dumps(instance)).problem
    held = [value for holder in (problem, problem.setting) for value in vars(holder).values()
            if isinstance(value, np.ndarray)]
    assert held and not any(array.flags.writeable for array in held)


def test_a_workers_copy_of_an_instance_compiles_nothing_new():
    """``cbai compare --jobs N`` sends instances to spawned workers by pickling: their runs
    must meet the argument types (numba specialises on the read-only flag) that the runs of
    the original met, so that :mod:`cbai_cli.warm`'s compiled code serves them."""
    import pickle

    from cbai_cli.kinds.cbai.families import generate_instance
    from cbai_cli.numerics.kernels import jit
    from cbai_cli.run.simulate import RunRequest, prepare, run_many

    jit.load()
    instance = generate_instance("irrelevant-dims", d=4, eps=0.2)
    request = RunRequest.of("track-and-stop", "ols", budget=2_000)
    original = run_many(prepare(request, instance), range(2))
    signatures = {kernel: len(kernel.compiled.signatures) for kernel in jit._KERNELS}
    copied = run_many(prepare(request, pickle.loads(pickle.dumps(instance))), range(2))
    assert [run.iterations for run in copied] == [run.iterations for run in original]
    assert {kernel: len(kernel.compiled.signatures) for kernel in jit._KERNELS} == signatures


def private_root_in(folder: Path, monkeypatch) -> Path:
    """:func:`loader.private_cache_root` with ``folder`` as the system's temporary folder."""
    monkeypatch.setattr(loader.tempfile, "gettempdir", lambda: str(folder))
    loader.private_cache_root.cache_clear()
    try:
        return Path(loader.private_cache_root())
    finally:
        loader.private_cache_root.cache_clear()


def test_the_private_cache_folder_is_this_users_alone(tmp_path, monkeypatch):
    import stat

    root = private_root_in(tmp_path, monkeypatch)
    assert root == tmp_path / f"cbai-numba-{os.getuid()}"
    assert root.stat().st_uid == os.getuid() and stat.S_IMODE(root.stat().st_mode) == 0o700


def test_a_shared_private_cache_folder_is_not_used(tmp_path, monkeypatch):
    planted = tmp_path / f"cbai-numba-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)  # anyone could have written compiled code into it
    root = private_root_in(tmp_path, monkeypatch)
    assert root != planted and root.name.startswith("cbai-numba-") and root.is_dir()


def test_the_private_temporary_locator_is_the_kernels_last_resort():
    from numba.core import caching

    from cbai_cli.numerics.kernels import track_and_stop

    implementation = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    last = implementation._locator_classes[-1]
    assert issubclass(last, loader._PrivateTemporaryLocator)
    kernel = next(value for value in vars(track_and_stop).values() if hasattr(value, "py_func"))
    loader.numba_ready()
    locator = last.from_function(kernel.py_func, track_and_stop.__file__)
    assert locator.get_cache_path().startswith(loader.private_cache_root())
    assert locator.get_source_stamp() == loader.sources_digest()


def test_the_stamp_follows_the_compiled_sources_not_the_loop_around_them(tmp_path, monkeypatch):
    import shutil

    for path in loader.KERNELS.glob("*.py"):
        shutil.copy(path, tmp_path / path.name)

    def digest() -> bytes:
        loader.sources_digest.cache_clear()
        try:
            return loader.sources_digest()
        finally:
            loader.sources_digest.cache_clear()

    monkeypatch.setattr(loader, "KERNELS", tmp_path)
    before = digest()
    (tmp_path / "batch.py").write_text((tmp_path / "batch.py").read_text() + "\n# the Python loop changed\n")
    assert digest() == before
    (tmp_path / "design.py").write_text((tmp_path / "design.py").read_text() + "\n# a kernel's module changed\n")
    assert digest() != before



def _loading_kernels(before: str, after: str) -> list[str]:
    """stdout lines of a fresh process that runs ``before``, a compiled kernel, then ``after``."""
    import subprocess
    import sys

    program = (f"import sys, numpy as np\n{before}\n"
               "from cbai_cli.numerics.kernels import jit\n"
               "from cbai_cli.numerics.kernels.select import max_variance_arm\n"
               "jit.load()\n"
               "assert max_variance_arm(np.array([1.0, 3.0, 2.0]), np.ones(3, dtype=bool), False) == 1\n"
               "import numba.core.typing.cffi_utils as c\n" + after)
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout.split()


def test_loading_the_kernels_does_not_import_cffi_and_leaves_it_importable():
    pytest.importorskip("cffi")
    assert _loading_kernels("", "print('cffi' in sys.modules, c.SUPPORTED)\nimport cffi\nprint(type(cffi.FFI()).__name__)") \
        == ["False", "False", "FFI"]


def test_a_process_that_imported_cffi_first_keeps_numbas_cffi_support():
    pytest.importorskip("cffi")
    assert _loading_kernels("import cffi", "print(c.SUPPORTED)") == ["True"]
