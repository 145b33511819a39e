"""Every `cbai session` command on a long study: wall time of whole processes.

Builds (once, then reuses) a study of N answers on a driver instance: `cbai driver-arms
--n 200 --seed 7`, binary answers drawn from its hidden truth, an algorithm that does not
stop before N (adaptive-uniform at δ = 1e-6), answers told at once (no undo grace). Then
times each command as a new process, `--repeats` times, with the snapshot cache as it is
(warm: the study's writer left a snapshot) and with an empty cache (cold: a full replay),
and prints a markdown table of medians.

    python benchmarks/bench_session_cli.py --answers 20000 --out benchmarks/results/session_cli.md
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from report import emit  # benchmarks/report.py, beside this script

ROOT = Path(__file__).resolve().parents[1]


def build(folder: Path, answers: int) -> Path:
    """The study of ``answers`` answers (made once per folder)."""
    study = folder / f"driver-{answers}.db"
    if study.exists():
        return study
    from cbai_cli.kinds import load
    from cbai_cli.session import Session

    instance_path = folder / "driver.yaml"
    if not instance_path.exists():
        subprocess.run([sys.executable, "-m", "cbai_cli", "driver-arms", "--n", "200", "--seed", "7", "-o",
                        str(instance_path), "-q"], check=True)
    instance = load(instance_path)
    means = instance.truth.means(instance.problem.arms)
    rng = np.random.default_rng(1)
    started = time.perf_counter()
    with Session.start(study, instance, "adaptive-uniform", delta=1e-6) as session:
        for _ in range(answers):
            [query] = session.ask(rater="bench")
            answer = 1.0 if rng.random() < (means[query.arm] + 1) / 2 else -1.0
            session.answer(query.id, answer, rater="bench")
    print(f"built {study} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return study


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "cbai-bench-session")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    cache = args.folder / "cache"
    os.environ["CBAI_CACHE_DIR"] = str(cache)
    study = build(args.folder, args.answers)
    cbai = [sys.executable, "-m", "cbai_cli", "session"]
    commands = {
        "status": ["status", str(study)],
        "status --json": ["status", str(study), "--json"],
        "next --rater NEW (a new query each time)": ["next", str(study), "--rater", "r{repeat}"],
        "record (a surplus answer to query 1)": ["record", str(study), "1", "yes", "--rater", "r2"],
        "skip": ["skip", str(study), "1", "--rater", "r3"],
        "log --csv": ["log", str(study), "--csv"],
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    timed(cbai + ["status", str(study)], env)  # a snapshot of this code's state, and numba's cache warm
    rows = []
    for name, arguments in commands.items():
        def command(repeat: int, cold: bool) -> list[str]:
            return cbai + [word.replace("{repeat}", f"{'cold' if cold else 'warm'}-{repeat}") for word in arguments]

        warm = [timed(command(repeat, False), env) for repeat in range(args.repeats)]
        cold = []
        for repeat in range(args.repeats):
            cold.append(timed(command(repeat, True), {**env, "CBAI_CACHE_DIR": str(args.folder / "empty-cache")}))
            shutil.rmtree(args.folder / "empty-cache", ignore_errors=True)
        rows.append((name, statistics.median(warm), statistics.median(cold)))
        timed(cbai + ["status", str(study)], env)  # leave a snapshot for the next command
    load = os.getloadavg()[0]
    lines = [f"`python benchmarks/bench_session_cli.py --answers {args.answers} --repeats {args.repeats}` "
             f"(load average {load:.1f} when it ended; median wall seconds of a whole process)", "",
             "| command | with the snapshot | without (full replay) |", "|---|---:|---:|"]
    lines += [f"| `cbai session {name}` | {warm:.2f} | {cold:.2f} |" for name, warm, cold in rows]
    lines += ["", f"The study: {args.answers:,} answers of one rater on `cbai driver-arms --n 200 --seed 7` "
              "(adaptive-uniform, δ = 1e-6); each `next` is a new rater's, so the algorithm asks a new query."]
    emit(lines, args.out)


if __name__ == "__main__":
    main()
