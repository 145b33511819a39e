"""The progress reporter: plain lines at their interval, a quiet reporter silent, the
terminal display held back for its delay, and the interval read from the environment."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from cbai_cli.contracts.errors import OptionError
from cbai_cli.run.progress import INTERVAL_VARIABLE, Progress, ProgressStyle, reporting


class Clock:
    """A clock that reads the times it is given, one per reading."""

    def __init__(self, *times: float) -> None:
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0)


def test_plain_lines_come_once_per_interval(capsys):
    # started at 100; updates at 101 (too early), 105 (due), 107 (too early after 105), 110.5 (due)
    progress = Progress("solve", ProgressStyle(interval=5.0), total=10, unit="runs",
                        clock=Clock(100.0, 101.0, 105.0, 107.0, 110.5))
    progress.update(1, "{:,} queries", 1000)
    progress.update(2, "{:,} queries", 12345)
    progress.update(3, "{:,} queries", 20000)
    progress.update(4, "{:,} queries", 1234567)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("cbai: solve: 2/10 runs done, 12,345 queries, 5.0 s\n"
                            "cbai: solve: 4/10 runs done, 1,234,567 queries, 10.5 s\n")


def test_an_interval_of_zero_gives_a_line_at_every_update(capsys):
    progress = Progress("bound", ProgressStyle(interval=0.0), clock=Clock(0.0, 0.3, 0.3))
    progress.update(None, "{} design", "H_CLB")
    progress.update(None, "{} design, round {}, relative gap {:.1e}", "H_CLB", 3, 0.0039)
    assert capsys.readouterr().err == ("cbai: bound: H_CLB design, 0.3 s\n"
                                       "cbai: bound: H_CLB design, round 3, relative gap 3.9e-03, 0.3 s\n")


def test_quiet_and_closed_reporters_print_nothing(capsys):
    quiet = Progress("solve", ProgressStyle(quiet=True, interval=0.0), total=2, unit="runs", clock=Clock(0.0))
    quiet.update(1)
    with reporting("solve", ProgressStyle(interval=0.0), 2, "runs", clock=Clock(0.0)) as closed:
        closed.close()
        closed.update(2)
    assert capsys.readouterr() == ("", "")


def test_the_terminal_display_waits_for_its_delay(capsys):
    progress = Progress("solve", ProgressStyle(terminal=True, delay=1.5), total=3, unit="runs", clock=Clock(0.0, 1.4))
    progress.update(1)
    assert progress._display is None and capsys.readouterr() == ("", "")


def test_a_line_counts_only_what_it_knows():
    progress = Progress("compare", ProgressStyle(), total=None, clock=Clock(0.0))
    assert progress.text(3, "", 2.04) == "2.0 s"
    assert Progress("compare", ProgressStyle(), 7, "runs", Clock(0.0)).text(3, "", 61.26) == "3/7 runs done, 61.3 s"


@pytest.mark.parametrize(("text", "interval"), [("0", 0.0), ("2.5", 2.5), (" 7 ", 7.0)])
def test_the_interval_comes_from_the_environment(monkeypatch, text, interval):
    monkeypatch.setenv(INTERVAL_VARIABLE, text)
    style = ProgressStyle.for_stderr(quiet=True)
    assert (style.interval, style.quiet) == (interval, True)


@pytest.mark.parametrize("text", ["soon", "-1", "inf", "nan", ""])
def test_an_interval_that_is_no_number_of_seconds_is_one_line(monkeypatch, text):
    monkeypatch.setenv(INTERVAL_VARIABLE, text)
    with pytest.raises(OptionError, match=f"^{INTERVAL_VARIABLE} must be a number of seconds ≥ 0, got "):
        ProgressStyle.for_stderr(quiet=False)


class Updates:
    """Records every update it is told, as a :class:`Progress` would be told them."""

    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def update(self, done=None, detail="", *values) -> None:
        self.seen.append((done, *values))


def _records(results) -> list[dict]:
    return [{**result.to_dict(), "wall_s": None} for result in results]


@settings(max_examples=8, deadline=None)
@given(first=st.integers(0, 2**20), runs=st.integers(1, 20),
       spec=st.sampled_from([("g-acol", None, {}), ("acol", None, {}), ("maxrew-u", "tuned", {"beta": 0.25}),
                             ("track-and-stop", None, {})]))
def test_a_tally_watches_runs_without_changing_them(first, runs, spec):
    # compiled batches (g-acol, maxrew-u, track-and-stop), round-based runs (acol), and more
    # seeds than one batch of 16: the last update counts every run and every query
    from cbai_cli.kinds.cbai.families import generate_instance
    from cbai_cli.run.simulate import RunRequest, RunTally, prepare, run_many

    name, regime, options = spec
    prepared = prepare(RunRequest.of(name, regime, **options), generate_instance("irrelevant-dims", d=3, eps=0.2))
    seeds = range(first, first + runs)
    updates = Updates()
    watched = run_many(prepared, seeds, progress=RunTally(updates))
    assert _records(watched) == _records(run_many(prepared, seeds))
    assert updates.seen[-1] == (runs, sum(result.iterations for result in watched))
    counts = [seen[1] for seen in updates.seen]
    assert counts == sorted(counts) and [seen[0] for seen in updates.seen] == sorted(seen[0] for seen in updates.seen)
