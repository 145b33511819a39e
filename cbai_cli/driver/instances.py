"""Driver policies as CBAI instance files: the library side of ``cbai driver-arms``.

Lindner et al. (ICML 2022), Section 4.3 and Appendix C.2 (binary feedback) and C.3
(the arms and their rescaling); docs/driver.md has the commands and measurements.

:func:`driver_instance` turns ``n`` action sequences and a scenario into an
ordinary :class:`~cbai_cli.kinds.cbai.instance.Instance`:

- arms: the 9-dimensional ``(f1..f8, 1) / scale`` of every policy, with the
  threshold folded in (``phi' = (phi, -tau)``, ``tau = 0``,
  ``threshold_known: true``), so ``cbai bound`` and ``cbai solve`` see exactly
  the paper's ``f(s) = (f1..f8, 1)`` model;
- feedback: binary (the default; every arm divided by a positive per-arm scale
  so that ``phi'^T x`` lies in ``[-1, 1]``), or Gaussian with ``sigma = 0.1`` on
  the unscaled arms;
- rewards: per-arm ``reward_values = theta^T f`` on the *unscaled* features (the
  rescaling is a device of the feedback model and should not change which arms
  the reward test prunes); ``rescale_rewards`` reproduces the authors' code,
  which computed rewards on the rescaled arms;
- ``data``: the action sequences, the raw features and the scales, so every arm
  can be traced back to a trajectory (``cbai driver-arms --show``);
- ``meta``: scenario, seed, n, feedback and the counts of distinct policies,
  distinct arms and feasible arms; with binary feedback, what a study asks its raters
  ("Does this driving feel safe?", yes being the answer for feasibility).

Without the truth (``--no-truth``, the file of a user study whose answers come from
people) the file has no ``constraint``, ``meta`` leaves out the scenario's ``phi``,
``tau`` and the feasible count, and binary feedback rescales the arms with
:func:`~cbai_cli.driver.bandit.rescale_without_truth`, whose divisors do not reveal
which arms are feasible; the policies stay in ``data`` so that people can be shown them.

Identical policies (the authors' published 1000-policy set holds only 20) are
counted and reported: they waste queries and design computations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cbai_cli.driver.bandit import DriverBandit, build_bandit, check_actions
from cbai_cli.driver.cem import CEMConfig
from cbai_cli.driver.duplicates import distinct_rows
from cbai_cli.driver.dynamics import HORIZON
from cbai_cli.driver.policies import PolicySet, build_policies
from cbai_cli.driver.scenarios import SCENARIO_NAMES, UnknownScenarioError, scenario
from cbai_cli.contracts.errors import InstanceError, OptionError
from cbai_cli.io.files import instance_errors
from cbai_cli.kinds.cbai.instance import Instance, save
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise, NoiseModel
from cbai_cli.contracts.options import MAGNITUDE_LIMIT, memory_limit, memory_limit_text
from cbai_cli.run.parallel import check_jobs

__all__ = [
    "GENERATOR",
    "ALL_SCENARIOS",
    "FEEDBACK_KINDS",
    "DEFAULT_GAUSSIAN_SIGMA",
    "DEFAULT_N_POLICIES",
    "Feedback",
    "DriverArmSet",
    "scenario_names",
    "output_paths",
    "check_policies",
    "load_policies",
    "driver_instance",
    "build_arm_sets",
    "write_arm_sets",
]

#: What a study of a driver instance with binary feedback asks its raters (``meta.question``).
RATER_QUESTION = "Does this driving feel safe?"
#: ``meta.generator`` of every driver instance; ``--show`` checks for it.
GENERATOR = "driver-arms"
#: ``--scenario all`` writes one file per scenario.
ALL_SCENARIOS = "all"
FEEDBACK_KINDS = ("binary", "gaussian")
#: The paper's Gaussian alternative for the driver (its anytime experiments).
DEFAULT_GAUSSIAN_SIGMA = 0.1
#: The paper's arm set has 1000 candidate policies.
DEFAULT_N_POLICIES = 1000

#: Memory one policy takes while an arm set is built and written, generously: its
#: HORIZON steering/acceleration pairs and its trajectory of up to four numbers a step, in
#: float64, twice (the policies and the arrays of the file); checked before the CEM runs.
POLICY_BYTES = 2 * 8 * HORIZON * (2 + 4)


@dataclass(frozen=True)
class Feedback:
    """How the simulated person answers, and what that does to the arms.

    Attributes:
        kind: ``binary`` (y in {-1, +1}, P(y = +1) = (phi'^T x + 1)/2; needs the
            per-arm rescaling, Appendix C.2) or ``gaussian`` (y = phi'^T x + N(0, sigma^2),
            no rescaling).
        sigma: the Gaussian noise level; ``None`` means 0.1. Must stay ``None`` for binary.
        rescale_rewards: compute rewards on the rescaled arms as the authors' code
            did (binary only: without rescaling the two are the same).
    """

    kind: str = "binary"
    sigma: float | None = None
    rescale_rewards: bool = False

    def __post_init__(self) -> None:
        if self.kind not in FEEDBACK_KINDS:
            raise OptionError(f"--feedback must be one of {', '.join(FEEDBACK_KINDS)}, got {self.kind!r}")
        if self.kind == "binary" and self.sigma is not None:
            raise OptionError("--sigma applies to --feedback gaussian only (binary feedback has no noise level)")
        if self.sigma is not None and not (math.isfinite(self.sigma) and self.sigma > 0):
            raise OptionError(f"--sigma must be a finite number > 0, got {self.sigma}")
        if self.sigma is not None and self.sigma > MAGNITUDE_LIMIT:  # the instance reader's bound: σ² must stay finite
            raise OptionError(f"--sigma must be at most {MAGNITUDE_LIMIT:g}, got {self.sigma:g}")
        if self.kind == "gaussian" and self.rescale_rewards:
            raise OptionError("--rescale-rewards needs --feedback binary: Gaussian feedback does not rescale the arms")

    @property
    def rescale(self) -> bool:
        """Binary feedback needs every constraint value in [-1, 1]; Gaussian keeps the raw scale."""
        return self.kind == "binary"

    @property
    def noise(self) -> NoiseModel:
        if self.kind == "binary":
            return BinaryNoise()
        return GaussianNoise(self.sigma if self.sigma is not None else DEFAULT_GAUSSIAN_SIGMA)


@dataclass(frozen=True, eq=False)
class DriverArmSet:
    """One scenario's instance and what a user should know about it.

    Attributes:
        instance: the CBAI instance (ready for ``instance.save``).
        bandit: the underlying arrays (raw features, scales, constraint values).
        distinct_policies: number of distinct action sequences.
        distinct_arms: number of distinct arms (rows of ``instance.arms``).
        feasible_arms: arms with ``phi'^T x <= 0``; None when the file has no truth.
        best_arm: index of the constrained-optimal arm, ``None`` if none is feasible
            (or the file has no truth).
    """

    instance: Instance
    bandit: DriverBandit
    distinct_policies: int
    distinct_arms: int
    feasible_arms: int | None
    best_arm: int | None

    @property
    def n(self) -> int:
        return self.instance.n_arms

    @property
    def scenario(self) -> str:
        return self.bandit.scenario

    def summary(self) -> str:
        """One line: counts, duplicates, the best arm, the feedback."""
        n = self.n
        repeats = n - self.distinct_policies
        duplicates = f" ({repeats} repeated: identical arms waste queries)" if repeats else ""
        if self.instance.has_truth:
            best = "no feasible arm" if self.best_arm is None else f"best feasible arm {self.best_arm}"
            answer = f"{self.feasible_arms} feasible, {best}"
        else:
            answer = "no truth in the file"
        noise = self.instance.noise
        feedback = "binary feedback, rescaled arms" if noise.kind == "binary" else f"Gaussian feedback σ = {noise.sigma:g}"
        return (f"{self.scenario}: {n} policies, {self.distinct_policies} distinct{duplicates}; "
                f"{self.distinct_arms} distinct arms, {answer}; {feedback}")


def scenario_names(choice: str) -> tuple[str, ...]:
    """The scenarios of ``--scenario``: one name, or all three for ``all``.

    Raises:
        UnknownScenarioError: (a CbaiError) for an unknown name, listing the valid ones.
    """
    if choice == ALL_SCENARIOS:
        return SCENARIO_NAMES
    if choice not in SCENARIO_NAMES:
        raise UnknownScenarioError(f"unknown scenario {choice!r}; valid names: {', '.join(SCENARIO_NAMES + (ALL_SCENARIOS,))}")
    return (choice,)


def output_paths(output: str | Path, names: Sequence[str]) -> dict[str, Path]:
    """Where each scenario's file goes: ``output`` itself for one scenario; for several,
    ``STEM-SCENARIO.SUFFIX`` beside it (``arms.npz`` gives ``arms-base.npz``, ...)."""
    path = Path(output)
    if str(output) == "-":
        raise OptionError("driver-arms writes files: give -o FILE.npz (or .yaml)")
    if path.suffix.lower() not in (".npz", ".yaml", ".yml"):
        raise OptionError(f"-o {path}: an instance file's name must end in .npz (recommended: the file holds "
                          "n × 20 × 2 actions) or .yaml")
    if len(names) == 1:
        return {names[0]: path}
    return {name: path.with_name(f"{path.stem}-{name}{path.suffix}") for name in names}


def check_policies(actions: object, source: str = "policies") -> np.ndarray:
    """Validate action sequences: a finite ``(n, 20, 2)`` float array with entries in [-1, 1].

    Raises:
        InstanceError: one line naming ``source`` and the broken rule (see
            :func:`~cbai_cli.driver.bandit.check_actions`).
    """
    with instance_errors():
        return check_actions(actions, source)


def load_policies(path: str | Path) -> np.ndarray:
    """Read ``n × 20 × 2`` action sequences from a ``.npy`` file (no pickles) and validate them."""
    path = Path(path)
    if path.suffix.lower() != ".npy":
        raise InstanceError(f"{path}: --policies reads a .npy array of shape (n, {HORIZON}, 2)")
    from cbai_cli.io.files import read_npy

    return check_policies(read_npy(path), str(path))


def driver_instance(
    actions: np.ndarray,
    scenario_name: str,
    feedback: Feedback = Feedback(),
    *,
    seed: int | None = None,
    source: str = "cem",
    policies: PolicySet | None = None,
    truth: bool = True,
) -> DriverArmSet:
    """The CBAI instance of one scenario for a set of candidate policies.

    Args:
        actions: ``(n, 20, 2)`` policies (validated with :func:`check_policies`).
        scenario_name: ``base``, ``different-reward`` or ``different-environment``.
        feedback: binary (rescaled) or Gaussian, and the reward convention.
        seed: the root seed the policies were built with (``None`` for imported ones).
        source: where the policies came from (``cem`` or a file name), kept in ``meta``.
        policies: the :class:`PolicySet` they came from, if built here; its
            provenance (which of the six problems, own-problem feasibility) goes into ``data``.
        truth: False writes the file of a real problem: no constraint, no ``phi``,
            ``tau`` or feasible count in ``meta``, arms rescaled without the truth.

    Returns:
        A :class:`DriverArmSet`.
    """
    actions = check_policies(actions, source)
    sc = scenario(scenario_name)
    # S >= ||phi'|| for the theory/det regimes: phi' = (phi, -tau) is fixed by the
    # scenario, not by the arms, and its norm (1.443) exceeds the default S = 1.
    norm_bound = math.ceil(float(np.linalg.norm(np.append(sc.phi, -sc.tau))) * 100) / 100
    bandit = build_bandit(actions, sc, rescale=feedback.rescale, rescale_rewards=feedback.rescale_rewards,
                          norm_bound=None if truth else norm_bound)
    n = actions.shape[0]
    distinct_policies = distinct_rows(actions).n_distinct
    distinct_arms = distinct_rows(bandit.arms).n_distinct
    data = {"actions": actions, "raw_features": bandit.raw_features, "scales": bandit.scales}  # Instance copies them
    if policies is not None:
        data["cem_problem"] = np.asarray(policies.problem, dtype=float)
        data["cem_feasible"] = np.asarray(policies.feasible, dtype=float)
    noise = feedback.noise
    meta = {
        "generator": GENERATOR,
        "scenario": sc.name,
        "description": sc.description,
        "policies": source,
        "seed": seed,
        "n": n,
        "distinct_policies": distinct_policies,
        "distinct_arms": distinct_arms,
        "feasible_arms": int(bandit.feasible.sum()),
        "feedback": noise.kind,
        "rescaled": bandit.rescaled,
        "rescale_rewards": bandit.rescale_rewards,
        # The scenario's own coordinates, before folding: feasible iff phi^T f <= tau.
        "theta": sc.theta.tolist(),
        "phi": sc.phi.tolist(),
        "tau": sc.tau,
    }
    if noise.kind == "binary":
        # what a study asks passengers: a safe drive is a feasible one, so "yes" is the answer that
        # counts for feasibility (the −1 of the paper's binary feedback, Appendix C)
        meta["question"] = RATER_QUESTION
        meta["answers"] = {"yes": "feasible", "no": "infeasible"}
    if not truth:
        for hidden in ("feasible_arms", "phi", "tau"):
            del meta[hidden]
    instance = Instance(
        name=f"driver-{sc.name}",
        arms=bandit.arms,  # Instance copies and freezes every array
        constraint=bandit.constraint if truth else None,
        reward_values=bandit.rewards,
        threshold=bandit.threshold,
        threshold_known=True,
        noise=noise,
        constraint_norm_bound=norm_bound,
        meta=meta,
        data=data,
    )
    return DriverArmSet(
        instance=instance,
        bandit=bandit,
        distinct_policies=distinct_policies,
        distinct_arms=distinct_arms,
        feasible_arms=int(bandit.feasible.sum()) if truth else None,
        best_arm=instance.best_arm if truth else None,
    )


def build_arm_sets(
    scenario_choice: str,
    feedback: Feedback = Feedback(),
    *,
    n: int = DEFAULT_N_POLICIES,
    seed: int = 0,
    jobs: int = 1,
    policies_file: str | Path | None = None,
    config: CEMConfig = CEMConfig(),
    progress: Callable[[int, int], None] | None = None,
    truth: bool = True,
) -> list[DriverArmSet]:
    """Everything ``cbai driver-arms`` computes, without writing: one arm set per scenario.

    The policies are computed once (``n`` CEM runs, ``jobs`` workers, policy ``i``
    from child ``i`` of ``SeedSequence(seed)``) or read from ``policies_file``,
    then evaluated in each chosen scenario's environment; without ``truth``, each file
    describes a real problem (see :func:`driver_instance`).
    """
    names = scenario_names(scenario_choice)  # fail on a bad name before minutes of CEM
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise OptionError(f"--n must be a positive integer, got {n!r}")
    if n * POLICY_BYTES > memory_limit():
        from cbai_cli.contracts.options import bytes_text

        raise OptionError(f"--n {n:,} policies would need about {bytes_text(n * POLICY_BYTES)} of memory, more "
                          f"than {memory_limit_text(memory_limit())}: at most {memory_limit() // POLICY_BYTES:,} fit")
    check_jobs(jobs)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise OptionError(f"--seed must be a non-negative integer, got {seed!r}")
    if policies_file is not None:
        actions = load_policies(policies_file)
        return [driver_instance(actions, name, feedback, source=Path(policies_file).name, truth=truth) for name in names]
    built = build_policies(n, seed, jobs=jobs, config=config, progress=progress)
    return [driver_instance(built.actions, name, feedback, seed=seed, policies=built, truth=truth) for name in names]


def write_arm_sets(arm_sets: Sequence[DriverArmSet], output: str | Path) -> dict[str, Path]:
    """Save each arm set (atomically, by extension) under :func:`output_paths`; returns the paths."""
    paths = output_paths(output, [s.scenario for s in arm_sets])
    for arm_set in arm_sets:
        save(arm_set.instance, paths[arm_set.scenario])
    return paths


def build_driver_files(output: str | Path | None, *, n: int | None = None, seed: int | None = None,
                       scenario: str | None = None, jobs: int | None = None, feedback: str | None = None,
                       sigma: float | None = None, rescale_rewards: bool = False,
                       policies: str | Path | None = None, truth: bool = True,
                       progress: Callable[[int, int], None] | None = None) -> list[str]:
    """``cbai driver-arms -o FILE``: build the driver instance of each chosen scenario (paper
    §4.3: CEM policies as arms) and write it, without its hidden constraint unless
    ``truth``; returns one summary line per file. ``None`` means not given (the defaults:
    1000 policies, seed 0, scenario base, binary feedback)."""
    if output is None:
        raise OptionError("give -o FILE.npz for the instance (or --show FILE to draw one)")
    if policies is not None and (n is not None or jobs is not None or seed is not None):
        raise OptionError("--policies replaces the CEM: --n, --seed and --jobs do not apply")
    choice = scenario if scenario is not None else "base"
    settings = Feedback(feedback if feedback is not None else "binary", sigma, rescale_rewards)
    paths = output_paths(output, scenario_names(choice))  # bad names fail before the CEM runs
    arm_sets = build_arm_sets(choice, settings, n=n if n is not None else DEFAULT_N_POLICIES,
                              seed=seed if seed is not None else 0, jobs=jobs if jobs is not None else 1,
                              policies_file=policies, progress=progress, truth=truth)
    write_arm_sets(arm_sets, output)
    return [f"{arm_set.summary()}; wrote {paths[arm_set.scenario]}" for arm_set in arm_sets]
