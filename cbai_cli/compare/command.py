"""``cbai compare`` as one call: show stores (``--from``) without running anything, or
plan, run with a progress display on stderr and show the tables (JSON, CSV, figure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cbai_cli.contracts.options import FORCED_BOUND_TIME_LIMIT, QUIET_HELP, Option, option_table

if TYPE_CHECKING:  # the command line reads COMPARE_OPTIONS without loading the study's numpy
    from cbai_cli.compare.study import CompareSettings

#: The options of ``cbai compare`` that are parameters of :class:`~cbai_cli.compare.study.CompareSettings`
#: or of :func:`compare_command`: the command line adds them as declared here, None when not
#: given (the study file's value, else the default the help names; tests/cli/test_compare.py
#: compares those with the library's).
COMPARE_OPTIONS: dict[str, Option] = option_table(
    Option("algorithms", "--algos", str, "Algorithm specs NAME[:REGIME][:OPTION=VALUE,...], comma-separated or "
           "repeated: acol, g-acol:tuned:beta=0.25, maxrew-f:tuned:beta=0.25,budget=100000, safe-lucb:exploration=0, "
           "safe-lingape:updates=dynamic,rule=ratio. Options are solve's flags without dashes (lambda, S, epsilon, T, "
           "confidence-set, …); safe algorithms take no regime. Options given as flags apply to every spec that reads "
           "them; a value written in a spec wins, and is named on stderr when it differs.", aliases=("-a",),
           metavar="SPEC[,SPEC...]", multiple=True),
    Option("seeds", "--seeds", int, "Seeds per instance group (default 10).", metavar="N"),
    Option("first_seed", "--first-seed", int, "First seed (default 0): seeds S, S+1, …", metavar="S"),
    Option("config", "--config", Path, "Study file (YAML) with sources, algorithms, seeds and options; command-line "
           "values win.", metavar="STUDY.yaml"),
    Option("jobs", "--jobs", int, "Worker processes (default: the number of cores; 1 runs here).", aliases=("-j",),
           metavar="J"),
    Option("shard", "--shard", str, "Run only shard i of n (i/n, 1 ≤ i ≤ n), e.g. one per job of a Slurm array.",
           metavar="I/N"),
    Option("scheduler", "--scheduler", str, "Run on a Dask cluster at this address (pip install 'cbai[dask]').",
           metavar="ADDRESS"),
    Option("out", "--out", str, "Store records as they finish (.jsonl or .sqlite); re-running skips stored runs. "
           "Several processes may share one .sqlite store: each run is done once, and each process ends with the "
           "whole table.", aliases=("-o",), metavar="FILE"),
    Option("lease", "--lease", float, "With a shared .sqlite --out: seconds this process's claimed runs stay its own "
           "after its last heartbeat, before another process takes them over (default 60).", metavar="SECONDS"),
    Option("from_stores", "--from", Path, "Show the tables and plots of stores (repeat to merge shards) without "
           "running anything; with --out, also copy their records into that store.", metavar="FILE", multiple=True),
    Option("bounds", "--bounds", bool, "Compute each instance's lower bound for the ratio column; default: only when "
           f"K·d ≤ 10⁶ and K·d³ ≤ 3·10⁸. Forced bounds stop after {FORCED_BOUND_TIME_LIMIT:g} s with the certified "
           "lower end.", off="--no-bounds"),
    Option("as_json", "--json", bool, "Print one JSON document (records and summary) instead of tables.", False),
    Option("as_csv", "--csv", bool, "Print one CSV row per run instead of tables.", False),
    Option("plot", "--plot", str, "Write a figure (.png, .pdf or .svg): median queries (pulls, regret) with IQR "
           "against the swept parameter; regret curves for safe-regret groups.", metavar="FILE"),
    Option("title", "--title", str, "Title of the tables and figure (default: the study file's title, if any)."),
    Option("quiet", "--quiet", bool, f"{QUIET_HELP} Nor compare's messages; a warning before a run estimated at more "
           "than 10^9 queries still prints.", False, aliases=("-q",)),
)


def compare_command(settings: CompareSettings, from_stores: Sequence[Path], title: str | None, *, as_json: bool,
                    as_csv: bool, plot: Path | None, quiet: bool, echo: Callable[[str], None],
                    warn: Callable[[str], None]) -> None:
    """Show the stores ``from_stores`` (with ``settings.out``, copied into it), or plan and
    run ``settings`` (:func:`~cbai_cli.compare.study.plan_comparison`,
    :func:`~cbai_cli.compare.study.run_comparison`) and show the records. ``echo`` gets
    the lines for the user (not with ``quiet``, except where the runs stored before an
    interruption are, and how to resume), ``warn`` the warnings of a request with runs to
    do (even with ``quiet``). A Ctrl-C, SIGTERM or a lost worker propagates."""
    from cbai_cli.compare.render import show_comparison
    from cbai_cli.compare.study import RecordCounter, merge_stores, plan_comparison, run_comparison
    from cbai_cli.contracts.errors import WorkerLostError
    from cbai_cli.run.progress import ProgressStyle, reporting

    out = settings.out
    say = (lambda text: None) if quiet else (lambda text: echo(f"cbai compare: {text}"))
    if from_stores:
        settings.check_nothing_to_run()
        merged = merge_stores(from_stores, out)
        for message in merged.messages(out):
            say(message)
        show_comparison(merged.records, title, as_json=as_json, as_csv=as_csv, plot=plot)
        return
    planned = plan_comparison(settings)
    for message in planned.messages():
        say(message)
    for warning in planned.warnings():
        warn(warning)
    stored_now = RecordCounter()
    try:
        with reporting("compare", ProgressStyle.for_stderr(quiet), len(planned.pending), "runs") as progress:
            result = run_comparison(planned, progress.update, on_record=stored_now, tell=say)
    except (KeyboardInterrupt, WorkerLostError):
        if out is not None:
            echo(f"cbai compare: {stored_now.count} new runs are stored in {out}; run the same command again to resume")
        raise
    if result.by_others:
        say(f"{result.by_others} of the runs were done by other processes writing {out}")
    show_comparison(result.records, title or result.title, as_json=as_json, as_csv=as_csv, plot=plot)
