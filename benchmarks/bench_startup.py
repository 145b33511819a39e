"""Start-up as a new user meets it: a fresh virtual environment, the README's install line,
then the first and later commands, whole processes, wall seconds.

Builds a venv under a temporary folder (numba's cache empty: the install's build compiles
the kernels into the package, setup.py), installs this checkout with `python -m pip install
.` (the README's line), then times with the venv's `cbai`, from the checkout's folder:

- the first `cbai solve instances/irrelevant-dims-d10-eps0.05.yaml` after the install, then
  the same command again (median of ``--repeats``);
- `cbai bound` of a shipped instance of each kind (the same file; safe-regret and safe-bai
  ones, whose bounds solve small linear programs) and `cbai --help` (medians);
- a shell loop of ``--loop`` `cbai solve` calls over the shipped small instances.

Writes the table to benchmarks/results/startup.md and, with ``--guide``, into docs/guide.md
between the markers ``<!-- startup -->`` and ``<!-- /startup -->``.

    python benchmarks/bench_startup.py --guide
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTANCE = "instances/irrelevant-dims-d10-eps0.05.yaml"
SMALL = ("instances/irrelevant-dims-d10-eps0.05.yaml", "instances/regret-1d.yaml", "instances/random-d5-n20-seed0.yaml",
         "instances/unit-sphere-d30-n30-seed0.npz")
#: A shipped instance of each kind but cbai, for ``cbai bound``.
BOUNDED = ("instances/amani-a.yaml", "instances/soare-safe.yaml")
MARKERS = ("<!-- startup -->", "<!-- /startup -->")


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--loop", type=int, default=100, help="cbai solve calls in the shell loop")
    parser.add_argument("--guide", action="store_true", help="also write the table into docs/guide.md")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cbai-startup-"))
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, cbai = str(venv / "bin" / "python"), str(venv / "bin" / "cbai")
    env = {key: value for key, value in os.environ.items() if key not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["CBAI_CACHE_DIR"] = str(folder / "cache")
    install = timed([python, "-m", "pip", "install", "--quiet", "."], env)
    first = timed([cbai, "solve", INSTANCE], env)
    warm = statistics.median(timed([cbai, "solve", INSTANCE], env) for _ in range(args.repeats))
    bounds = {path: statistics.median(timed([cbai, "bound", path], env) for _ in range(args.repeats))
              for path in (INSTANCE, *BOUNDED)}
    help_ = statistics.median(timed([cbai, "--help"], env) for _ in range(args.repeats))
    files = [SMALL[number % len(SMALL)] for number in range(args.loop)]
    loop = timed(["bash", "-c", f"for f in {' '.join(files)}; do {cbai} solve $f > /dev/null; done"], env)
    load = os.getloadavg()[0]
    rows = [("`python -m pip install .` (the README's line; the build compiles the kernels)", install),
            (f"first `cbai solve {INSTANCE}` after it", first),
            ("the same again (median)", warm),
            *((f"`cbai bound {path}` (median)", seconds) for path, seconds in bounds.items()),
            ("`cbai --help` (median)", help_),
            (f"a shell loop of {args.loop} `cbai solve` calls over the shipped small instances", loop)]
    text = "\n".join([f"`python benchmarks/bench_startup.py` on a fresh venv, Python {sys.version.split()[0]}, "
                      f"load average {load:.1f} when it ended (wall seconds of whole processes)", "",
                      "| step | seconds |", "|---|---:|", *(f"| {name} | {seconds:.2f} |" for name, seconds in rows)])
    print(text)
    (ROOT / "benchmarks" / "results" / "startup.md").write_text(text + "\n")
    if args.guide:
        guide = (ROOT / "docs" / "guide.md").read_text()
        start, end = guide.index(MARKERS[0]) + len(MARKERS[0]), guide.index(MARKERS[1])
        (ROOT / "docs" / "guide.md").write_text(guide[:start] + "\n" + text + "\n" + guide[end:])


if __name__ == "__main__":
    main()
