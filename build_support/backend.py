"""cbai's build backend: setuptools', with cbai's own dependencies installed into the build
environment too, so that building the package can compile its kernels (setup.py runs
:mod:`cbai_cli.warm` on the built files, and the compiled code ships in the wheel).

The dependencies are read from pyproject.toml, where they are declared once.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F401,F403 - the PEP 517 hooks, as setuptools gives them


def _dependencies() -> list[str]:
    """``project.dependencies`` of pyproject.toml (none on a Python without tomllib: the
    build then skips the compile, and the kernels compile on first use)."""
    if sys.version_info < (3, 11):
        return []
    import tomllib

    with open(Path(__file__).resolve().parents[1] / "pyproject.toml", "rb") as handle:
        return list(tomllib.load(handle)["project"]["dependencies"])


def get_requires_for_build_wheel(config_settings=None):
    return build_meta.get_requires_for_build_wheel(config_settings) + _dependencies()
