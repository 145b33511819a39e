"""Time the yes/no lower bound (:func:`cbai_cli.kinds.cbai.bernoulli_bound.bernoulli_design`, the
H_Bern of ``cbai bound``) on yes/no instance files and report its certified bracket (not run by CI).

For each file: the H_CLB design (the first allocation, as ``cbai bound`` uses it), then the
design of H_Bern, timed alone in process CPU seconds; its rounds, its certified relative gap
(value − lower)/value and H_Bern = 1/(2·value) with the upper end 1/(2·lower) the gap allows.

    for s in $(seq 1 13); do cbai driver-arms --n 200 --seed $s -o driver-n200-seed$s.yaml; done
    cbai driver-arms --n 1000 --seed 0 -o driver-n1000-seed0.npz
    python benchmarks/bench_bernoulli_bound.py driver-n200-seed*.yaml driver-n1000-seed0.npz \\
        --json benchmarks/results/bench_bernoulli_bound.json
    git worktree add /tmp/old 62c33ee   # the plain cutting planes, for comparison
    python benchmarks/bench_bernoulli_bound.py driver-n200-seed*.yaml driver-n1000-seed0.npz --code /tmp/old \
        --json benchmarks/results/bench_bernoulli_bound_62c33ee.json

BLAS threads are pinned to one before numpy is imported, as the CLI does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="yes/no instance files (YAML or NPZ)")
    parser.add_argument("--json", type=Path, help="write the rows to this results document")
    parser.add_argument("--code", type=Path, help="a checkout of cbai to time instead of this one (another commit)")
    args = parser.parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    sys.path.insert(0, str(args.code or Path(__file__).resolve().parent.parent))
    from cbai_cli.kinds.cbai.bernoulli_bound import bernoulli_design
    from cbai_cli.kinds.cbai.bounds import at_least_set, h_clb_design
    from cbai_cli.kinds.cbai.instance import load

    rows = []
    print("| instance | K | targets | rounds | CPU s | certified gap | H_Bern | H_Bern at most |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.files:
        instance = load(name)
        targets = at_least_set(instance)
        start = h_clb_design(instance, targets).weights
        began = time.process_time()
        design = bernoulli_design(instance.problem.arms, instance.truth.constraint, instance.problem.threshold,
                                  targets, start)
        seconds = time.process_time() - began
        row = {"instance": Path(name).name, "arms": int(instance.n_arms), "targets": int(targets.sum()),
               "rounds": design.rounds, "cpu_seconds": round(seconds, 2), "gap": float(f"{design.gap:.2g}"),
               "h_bernoulli": float(f"{design.h_bernoulli:.6g}"),
               "h_bernoulli_upper": float(f"{0.5 / design.lower:.6g}") if design.lower > 0 else None}
        rows.append(row)
        print(f"| {row['instance']} | {row['arms']} | {row['targets']} | {row['rounds']} | {seconds:.2f} | "
              f"{design.gap:.1e} | {design.h_bernoulli:.6g} | {row['h_bernoulli_upper'] or math.inf:.6g} |", flush=True)
    if args.json is not None:
        # the command with no path of this machine: files by name, the results document under the repository
        words = [Path(name).name for name in args.files] + (["--code", "CHECKOUT"] if args.code else [])
        words += ["--json", "benchmarks/results/" + args.json.name]
        document = {"command": "python benchmarks/bench_bernoulli_bound.py " + " ".join(words),
                    "date": datetime.date.today().isoformat(), "instances": rows}
        args.json.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
