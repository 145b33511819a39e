"""Building cbai compiles its kernels into the built package (everything else is in
pyproject.toml): after the usual copy of the sources, :mod:`cbai_cli.warm` runs on
the built files, so numba's cache beside them (``cbai_cli/numerics/kernels/__pycache__``) holds
compiled code for every kernel a command runs, and no command compiles in front of the
user. An editable install, ``CBAI_NO_PRECOMPILE=1`` or a failing compile skips it (the
kernels then compile on first use, as numba does by itself). The cache is tied to this
machine's CPU, Python and numba: installed elsewhere, the kernels compile on first use.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithKernels(build_py):
    """build_py, then the kernels compiled into the built package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("CBAI_NO_PRECOMPILE"):
            return
        built = Path(self.build_lib).resolve()
        environment = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
        # the built package first, then the path this build was given (pip may give its isolated
        # build environment through it)
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(built), os.environ.get("PYTHONPATH")]))
        print("cbai: compiling the kernels into the package (once per install, about a minute)", flush=True)
        done = subprocess.run([sys.executable, "-m", "cbai_cli.warm"], cwd=built, env=environment)
        if done.returncode != 0:
            print("cbai: warning: the kernels could not be compiled now; they compile on first use", flush=True)
        # the compiled kernels stay; the bytecode of the run does not (pip compiles its own)
        for cache in built.rglob("__pycache__"):
            for path in cache.iterdir():
                if path.suffix not in (".nbi", ".nbc"):
                    path.unlink()
            if not any(cache.iterdir()):
                shutil.rmtree(cache)


setup(cmdclass={"build_py": BuildWithKernels})
