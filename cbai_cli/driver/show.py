"""Pictures of a driver instance's policies: ``cbai driver-arms --show``.

In the style of Figure 1 of Lindner et al. (ICML 2022): a driver instance file keeps
its policies' action sequences in ``data.actions`` and its scenario in
``meta.scenario``, so any arm can be rolled out again in the scenario's
environment and drawn from above:

- :func:`show_arms`: one or more chosen policies, each with its own colour;
- :func:`show_candidates`: every candidate policy, green if feasible and red if
  not, with one arm (e.g. the answer of a ``cbai solve`` run) drawn on top.

:func:`solved_arm` reads that answer from ``cbai solve --json`` output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cbai_cli.driver.dynamics import rollout
from cbai_cli.driver.instances import GENERATOR, check_policies
from cbai_cli.driver.scenarios import Scenario, scenario
from cbai_cli.contracts.errors import InstanceError, OptionError
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.contracts.validation import safe_text

__all__ = ["FIGURE_SUFFIXES", "DriverView", "driver_view", "check_figure_path", "show_arms", "show_candidates",
           "solved_arm", "solved_run", "SolvedRun"]

#: Formats matplotlib's Agg canvas writes without extra packages.
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


@dataclass(frozen=True, eq=False)
class DriverView:
    """What a picture needs from a driver instance file.

    Attributes:
        instance: the instance as loaded.
        scenario: its scenario (environment, traffic).
        trajectories: ``(n, 21, 4)`` every policy rolled out in that environment.
    """

    instance: Instance
    scenario: Scenario
    trajectories: np.ndarray

    @property
    def feasible(self) -> np.ndarray:
        """(n,) each arm's feasibility; a file without the truth has none (one line)."""
        return self.instance.feasible

    def check_arm(self, arm: int) -> int:
        n = self.instance.n_arms
        if not 0 <= arm < n:
            raise OptionError(f"arm {arm} does not exist: this instance has arms 0 to {n - 1}")
        return arm

    def label(self, arm: int) -> str:
        """``arm K (feasible, reward r)``; without the truth, ``arm K (reward r)``."""
        reward = f"reward {self.instance.rewards[arm]:.3g}"
        if not self.instance.has_truth:
            return f"arm {arm} ({reward})"
        state = "feasible" if self.feasible[arm] else "infeasible"
        return f"arm {arm} ({state}, {reward})"


def driver_view(instance: Instance, source: str = "instance") -> DriverView:
    """Check that ``instance`` came from ``cbai driver-arms`` and roll its policies out again.

    Raises:
        InstanceError: when the file lacks the scenario or the action sequences.
    """
    meta = instance.meta
    if meta.get("generator") != GENERATOR or "actions" not in instance.data:
        raise InstanceError(f"{source}: not a driver instance (write one with `cbai driver-arms`); "
                            "--show needs its meta.scenario and data.actions")
    actions = check_policies(instance.data["actions"], f"{source}: data.actions")
    if actions.shape[0] != instance.n_arms:
        raise InstanceError(f"{source}: data.actions holds {actions.shape[0]} policies for {instance.n_arms} arms")
    sc = scenario(str(meta.get("scenario")))
    env = sc.environment
    return DriverView(instance, sc, rollout(env.agent_start, actions, env.dynamics))


def check_figure_path(path: str | Path) -> Path:
    """The picture's path: its suffix picks the format; it must be writable
    (:func:`cbai_cli.io.outputs.check_writable`)."""
    from cbai_cli.io.outputs import check_writable

    path = Path(path)
    if path.suffix.lower() not in FIGURE_SUFFIXES and not path.is_dir():
        raise OptionError(f"the picture must end in {', '.join(FIGURE_SUFFIXES)}, got {path.name!r}")
    return check_writable(path, "-o")


def show_arms(view: DriverView, arms: Sequence[int], path: str | Path) -> Path:
    """Draw the chosen policies in the instance's environment (road, other cars, agent)."""
    from cbai_cli.driver.plot import plot_trajectories

    chosen = [view.check_arm(int(a)) for a in arms]
    if not chosen:
        raise OptionError("give at least one --arm")
    title = f"{view.scenario.name}\n{view.scenario.description}"
    return plot_trajectories(
        check_figure_path(path),
        view.trajectories[chosen],
        view.scenario.environment.traffic.trajectories,
        road=view.scenario.environment.road,
        labels=[view.label(a) for a in chosen],
        title=title,
    )


def show_candidates(view: DriverView, path: str | Path, highlight: int | None = None) -> Path:
    """Draw every candidate policy coloured by feasibility, ``highlight`` on top."""
    from cbai_cli.driver.plot import plot_policies

    if highlight is not None:
        view.check_arm(highlight)
    best = view.instance.best_arm
    what = "best feasible arm" if highlight is not None and highlight == best else "not the best feasible arm"
    suffix = "" if highlight is None else f"\narm {highlight}: {what}"
    return plot_policies(
        check_figure_path(path),
        view.trajectories,
        view.feasible,
        view.scenario.environment.traffic.trajectories,
        highlight=highlight,
        road=view.scenario.environment.road,
        title=f"{view.scenario.name}: {view.instance.n_arms} candidate policies{suffix}",
    )


@dataclass(frozen=True)
class SolvedRun:
    """One run of ``cbai solve --json`` output, as ``--solved`` reads it.

    Attributes:
        source: the output's path as typed (``<stdin>`` for ``-``).
        arm: the recommended arm; None for "no feasible arm".
        instance: the document's ``instance`` name (None when it has none).
        instance_hash: the document's ``instance_hash``, the content hash of the instance
            solved (None in output without it).
        runs: how many runs the document holds.
        seed: the run's seed, when given.
    """

    source: str
    arm: int | None
    instance: str | None
    runs: int
    seed: int | None
    instance_hash: str | None = None


def solved_arm(path: str | Path, run: int = 0) -> int | None:
    """The arm recommended by run ``run`` of ``cbai solve --json`` output (``-``: stdin).

    Returns ``None`` when that run answered "no feasible arm".
    """
    return solved_run(path, run).arm


def solved_run(path: str | Path, run: int = 0) -> SolvedRun:
    """Run ``run`` of ``cbai solve --json`` output (``-``: stdin): its recommended arm, and
    what the document says of the instance it ran on."""
    source = "<stdin>" if str(path) == "-" else str(path)
    from cbai_cli.io.outputs import is_device_or_pipe

    if str(path) != "-" and is_device_or_pipe(path):
        raise InstanceError(f"{source}: not a regular file (a pipe or a device), so not `cbai solve --json` output")
    from cbai_cli.io.files import read_stdin

    try:
        text = read_stdin(None, source) if str(path) == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InstanceError(f"{source}: cannot read: {getattr(error, 'strerror', None) or error}") from None
    try:
        document = json.loads(text)
        recommended = document["runs"][run]["recommended"]
        runs, seed = len(document["runs"]), document["runs"][run].get("seed")
        instance, kind = document.get("instance"), document.get("kind", "cbai")
        instance_hash = document.get("instance_hash")
    except (json.JSONDecodeError, RecursionError, KeyError, IndexError, TypeError, AttributeError):
        raise InstanceError(f"{source}: not the output of `cbai solve --json` (need runs[{run}].recommended)") from None
    if recommended is not None and (isinstance(recommended, bool) or not isinstance(recommended, int)):
        raise InstanceError(f"{source}: runs[{run}].recommended must be an arm index, got {recommended!r}")
    if instance is not None and not isinstance(instance, str):
        raise InstanceError(f"{source}: instance must be the name of the instance solved, got {instance!r}")
    if instance_hash is not None and not isinstance(instance_hash, str):
        raise InstanceError(f"{source}: instance_hash must be the content hash of the instance solved, "
                            f"got {instance_hash!r}")
    if kind != "cbai":
        raise InstanceError(f"{source}: the run was on a {safe_text(kind)} instance; --solved needs the "
                            "`cbai solve --json` output of a driver instance")
    if isinstance(seed, bool) or not isinstance(seed, int):
        seed = None
    return SolvedRun(source, recommended, instance, runs, seed, instance_hash)


def draw(instance_file: str | Path, output: str | Path, arms: Sequence[int] = (), highlight: int | None = None,
         solved: str | Path | None = None) -> str:
    """``cbai driver-arms --show``: draw the policies of a driver instance file and say what
    was drawn. ``arms``: these arms' policies; else all candidates, green if feasible and
    red if not, with ``highlight`` (or the arm recommended in the ``cbai solve --json``
    output ``solved``) on top. At most one of the three may be given."""
    from cbai_cli.contracts.errors import OptionError
    from cbai_cli.io.files import read_mapping
    from cbai_cli.kinds.cbai.instance import from_mapping

    picked = [name for name, value in (("--arm", list(arms) or None), ("--highlight", highlight), ("--solved", solved))
              if value is not None]
    if len(picked) > 1:
        raise OptionError(f"use one of --arm, --highlight and --solved, not {' and '.join(picked)}")
    check_figure_path(output)
    source = "<stdin>" if str(instance_file) == "-" else str(instance_file)
    mapping = read_mapping(instance_file)
    kind = mapping.get("kind", "cbai")
    if kind != "cbai":
        raise InstanceError(f"{source}: --show needs a driver instance (kind: cbai, written by `cbai driver-arms`), "
                            f"got a {safe_text(kind)} instance")
    view = driver_view(from_mapping(mapping, source), source)
    if arms:
        written = show_arms(view, arms, output)
        what = ", ".join(view.label(arm) for arm in arms)
    else:
        answer = None if solved is None else _solved_on(view, solved_run(solved), str(instance_file))
        chosen = highlight if answer is None else answer.arm
        written = show_candidates(view, output, chosen)
        what = f"{view.instance.n_arms} candidates, {int(view.feasible.sum())} feasible" + (
            "" if chosen is None else f"; highlighted {view.label(chosen)}")
        if answer is not None and chosen is None:
            what += "; the run answered 'no feasible arm', nothing highlighted"
        if answer is not None and answer.runs > 1:
            seed = "" if answer.seed is None else f" (seed {answer.seed})"
            what += f", the answer of the first of {answer.runs} runs{seed}"
    return f"drew {view.scenario.name}: {what} to {written}"


def _solved_on(view: DriverView, answer: SolvedRun, instance_file: str) -> SolvedRun:
    """``answer`` if it can be a run on ``view``'s instance: the same instance name, the same
    content hash (two driver files of one scenario share the name ``driver-<scenario>``; output
    written before ``cbai solve --json`` recorded the hash is checked by name and arm range
    only) and an arm that exists."""
    name = view.instance.name
    if answer.instance is not None and answer.instance != name:
        raise InstanceError(f"{answer.source}: the run was on instance {safe_text(answer.instance)!r}, but "
                            f"{safe_text(instance_file)} is {safe_text(name)!r}: --solved needs the "
                            "`cbai solve --json` output of the instance drawn")
    if answer.instance_hash is not None and answer.instance_hash != view.instance.content_hash:
        raise InstanceError(f"{answer.source}: the run was on another instance named {safe_text(name)!r} (content "
                            f"hash {safe_text(answer.instance_hash)}, {safe_text(instance_file)} has "
                            f"{view.instance.content_hash}): --solved needs the `cbai solve --json` output of the "
                            "instance drawn")
    if answer.arm is not None and not 0 <= answer.arm < view.instance.n_arms:
        raise InstanceError(f"{answer.source}: the run recommends arm {answer.arm}, but {safe_text(instance_file)} has "
                            f"arms 0 to {view.instance.n_arms - 1}: the run was on another instance")
    return answer
