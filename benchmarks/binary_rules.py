"""Track-and-Stop's last choice, between the Frank–Wolfe vertex and the target, measured
(docs/binary.md, "Frank–Wolfe vertex or target").

Every rule here pulls like ``track-and-stop --step vertex-or-target`` with ``ols`` up to its last
choice: x̂*, R = U ∩ X≥(x̂*), the forced step, the active target y* = argmax_{y∈R}
‖y‖²_{A⁻¹}/ĝ(y)² and its Frank–Wolfe vertex a = argmax_a (aᵀA⁻¹y*)². They differ only in
what they pull then:

- ``vertex``: a, always (the plain Frank–Wolfe step);
- ``vertex-or-target``: a when its exact one-pull decrease of y*'s ridge variance,
  (aᵀA⁻¹y*)²/(1 + aᵀA⁻¹a), exceeds y*'s own, (y*ᵀA⁻¹y*)²/(1 + y*ᵀA⁻¹y*); else y*;
- ``target``: y* itself (the forced step kept);
- ``deficit``: whichever of a and y* is expected to finish y*'s certificate in fewer pulls.
  With ĝ = φ̂ᵀy* − τ (ridge prediction), the side that must pass τ, w_LS the least-squares
  half-width of y* alone (``least_squares_bounds``), w_m its own mean's half-width on that
  side (N_y pulls) and v = y*ᵀA⁻¹y*:
  own mean, T_m = N_y·((w_m/ĝ)² − 1)⁺ (the squared width falls like 1/N), or
  2·(log(1/(κδ·share)) + 1)/ĝ² before the first pull;
  least squares, the information 1/v must grow to (1/v)·(w_LS/ĝ)² (the squared width falls
  like v), one pull of b adding Δ_b = 1/(v − gain_b) − 1/v with gain_b the exact decrease
  above, so T_b = ((w_LS/ĝ)² − 1)/(v·Δ_b);
  pull a when T_a < min(T_m, T_y*), else y* (y* also when y* lies outside the span, w_LS = ∞);
- ``hysteresis``: per active target a mode, vertex or target, that changes only when the other
  choice's one-pull gain (the exact decrease above) exceeds twice the mode's: set when y* becomes
  the target (the vertex if its gain exceeds twice y*'s), kept between steps; no forced step;
- ``hysteresis-own-design``: ``hysteresis`` while y* is (within 5 %) its own c-optimal design,
  ``vertex-or-target`` (without the forced step) for the targets whose c-optimal design reaches them
  through other arms;
- ``rollout``: one step of policy improvement over y* only (MaxRew-U's pulls, no forced step), on a
  model of y*'s certificate that reads the design only: a when "a, then y* only" is modelled to
  certify y* in fewer pulls than "y* only", else y*;
- ``rollout-burst``: the same with bursts of 8, 32, 128, … Frank–Wolfe steps for y* as the
  deviation (each four times the last, below y* only's modelled pulls, at most 8,192), as a mode per target re-chosen when the pulls grow by 10 % (compiled:
  ``track-and-stop --step rollout``, docs/track-and-stop.md);
- ``target-unforced`` and ``vertex-or-target-unforced``: ``target`` and ``vertex-or-target``
  without the forced step (step 3 never taken), which separate what the forced step and what the
  vertex pulls cost where MaxRew-U wins;

and the compiled rules of cbai (:func:`run_many`, :data:`COMPILED`): ``track-and-stop``
(``--step vertex-or-target``, the same pulls as ``vertex-or-target``), ``rollout-burst``
(``--step rollout``, track-and-stop's default with ``ols``), ``maxrew-u`` with ``ols``
(argmax_{x∈U} θᵀx, no forced step) and ``g-acol`` with ``ols``.
With κ = 1, y* is almost always MaxRew-U's arm (R holds the most rewarding uncertain arm and
its ties), so ``target`` is MaxRew-U with the forced step.

The stop and the answer are the elimination of the ``ols`` intervals in every rule, so each
is δ-correct (the intervals hold at all times whatever the sampling rule; docs/ols.md).
The prototypes are Python ``select`` methods (the ask/tell loop, numpy passes over the arms,
one ``least_squares_bounds`` a pull for ``deficit``): about 0.1–0.3 ms a pull.

For each source (an instance file, or a generator spec of ``cbai compare`` with its seed
fixed) and seeds 0 … ``--seeds``−1 (:func:`run_streams`, as ``cbai solve --runs``), δ = 0.05,
every rule in the coordinates of ``--coordinates`` (``features``, the features as written, in
which most of docs/binary.md's comparisons were measured; ``d-optimal``, the default of ``ols`` runs,
docs/ols.md "The prior's shape"), or in those its name fixes (``maxrew-u@features``):
the Theorem 1 bound at R = 1 (σ = 1 for the Gaussian specs), and per rule the queries of
every run and the runs right. ``--render`` prints the tables of docs/binary.md: median
queries per rule with their ratios to the Theorem 1 bound and to its kl form, and each rule's
median over the best median of the reference rules, the plain Frank–Wolfe step (``vertex``) and
``maxrew-u`` unless ``--reference`` names others (the paired geometric mean of the queries seed
by seed in brackets); with ``--first``, the first rule against the best of all the others
(:func:`render_first`). With ``--pulls`` the document also keeps every run's pulls of each arm and
the H_CLB design, and the table says where each rule's queries go (:func:`render_pulls`).

    cbai driver-arms --n 200 --seed 7 -o driver-n200-seed7.yaml   # likewise seeds 12 and 5
    python benchmarks/binary_rules.py driver-n200-seed7.yaml driver-n200-seed12.yaml \\
        driver-n200-seed5.yaml --seeds 200 --rules vertex,maxrew-u,target,vertex-or-target,deficit \\
        --json benchmarks/results/binary_rules_driver.json
    python benchmarks/binary_rules.py --fresh 141 --seeds 200 --rules vertex,maxrew-u,deficit,vertex-or-target \\
        --json benchmarks/results/binary_rules_fresh141.json
    python benchmarks/binary_rules.py --render benchmarks/results/binary_rules_driver.json
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cbai_cli.algorithms.track_and_stop import TrackAndStop
from cbai_cli.kinds import load
from cbai_cli.kinds.cbai.bounds import compute_bounds, kl_of_errors
from cbai_cli.numerics.design.solver import optimal_design
from cbai_cli.numerics.kernels import rollout
from cbai_cli.numerics.kernels import track_and_stop as rule
from cbai_cli.numerics.kernels.rollout import MEAN_EXTRA
from cbai_cli.run.simulate import RunRequest, drive, prepare, run_many, run_streams, start_run
from report import measure_each, render_files, results_parser  # benchmarks/report.py, beside this script

DELTA = 0.05
#: Theorem 1's kl form over Theorem 1 at δ = DELTA: 2·kl(δ, 1 − δ)·H_CLB over 2·log(1/(2.4δ))·H_CLB
KL_FORM = kl_of_errors(DELTA) / math.log(1.0 / (2.4 * DELTA))
#: the compiled rules of cbai by their name here: the algorithm and its options, with ``ols``
COMPILED = {"track-and-stop": ("track-and-stop", {"step": "vertex-or-target"}), "maxrew-u": ("maxrew-u", {}),
            "rollout-burst": ("track-and-stop", {"step": "rollout"}), "g-acol": ("g-acol", {})}
#: the coordinates a rule may run in (``--coordinates``, ``RULE@COORDINATES``)
COORDINATES = ("features", "d-optimal")
#: ``hysteresis-own-design``: y* counts as its own c-optimal design at this share of pulling it alone
OWN_DESIGN = 0.95


class LastChoice(TrackAndStop):
    """Track-and-Stop's steps 1–3 (class docstring of :class:`TrackAndStop`) in numpy, with the
    last choice (:meth:`choose`) between the Frank–Wolfe vertex and the active target open."""

    #: whether step 3, the forced step, is taken (the ``-unforced`` rules skip it)
    forced = True

    def select(self) -> int:
        design, state = self.design, self.state
        rewards, tau = self.problem.rewards, self.problem.threshold
        answer = rule.empirical_answer(rewards, tau, state.uncertain, state.feasible, state.last_upper,
                                       design.predictions, self.optimism)
        cutoff = rule.reward_cutoff(rewards, answer)
        least, top = rule.relevant_extremes(design.norms2, design.predictions, tau, state.uncertain, rewards, cutoff)
        if self.forced and rule.exploration_due(design.norms2, least, design.arms.shape[1], design.n_samples):
            self.forced_pulls += 1
            return int(design.greedy_arm(least))
        target = int(rule.active_target(design.norms2, design.predictions, tau, state.uncertain, rewards, cutoff, top))
        products = design.arms @ (design.inverse @ design.arms[target])
        vertex = int(np.argmax(products * products))
        return vertex if vertex == target else self.choose(target, vertex, products)

    def choose(self, target: int, vertex: int, products: np.ndarray) -> int:
        """The pull, ``vertex`` (a) or ``target`` (y*); ``products`` (K,) the aᵀA⁻¹y*."""
        raise NotImplementedError

    def gains(self, target: int, vertex: int, products: np.ndarray) -> tuple[float, float]:
        """(gain_a, gain_y*): the exact one-pull decreases of y*ᵀA⁻¹y*."""
        norms2 = self.design.norms2
        return (products[vertex] ** 2 / (1.0 + norms2[vertex]), products[target] ** 2 / (1.0 + norms2[target]))


class Vertex(LastChoice):
    def choose(self, target, vertex, products):
        return vertex


class Target(LastChoice):
    def choose(self, target, vertex, products):
        return target


class VertexOrTarget(LastChoice):
    def choose(self, target, vertex, products):
        gain_a, gain_y = self.gains(target, vertex, products)
        return vertex if gain_a > gain_y else target


class Deficit(LastChoice):
    def choose(self, target, vertex, products):
        intervals, tau = self.intervals, self.problem.threshold
        lower, upper = intervals.least_squares_bounds()
        half_width = (upper[target] - lower[target]) / 2
        gap = abs(self.design.predictions[target] - tau)
        if not np.isfinite(half_width) or gap == 0.0:
            return target
        side = 0 if self.design.predictions[target] > tau else 1
        pulls, mean_width = intervals.fit.counts[target], intervals.mean_widths[side, target]
        if pulls > 0 and np.isfinite(mean_width):
            own_mean = pulls * max((mean_width / gap) ** 2 - 1.0, 0.0)
        else:
            own_mean = 2.0 * (intervals.mean_thresholds[side, target] + MEAN_EXTRA) / gap**2
        variance = self.design.norms2[target]
        needed = (half_width / gap) ** 2 - 1.0
        gain_a, gain_y = self.gains(target, vertex, products)
        by_vertex = needed * (variance - gain_a) / gain_a  # needed / (v·Δ_a), Δ_a = gain/(v(v − gain))
        by_target = needed * (variance - gain_y) / gain_y
        return vertex if by_vertex < min(own_mean, by_target) else target


class Hysteresis(LastChoice):
    """Per active target, a mode kept between steps: at the step y* becomes the target, the
    vertex if its one-pull gain exceeds ``switch`` times y*'s own, else y*; afterwards the mode
    moves to the vertex only when its gain exceeds ``switch`` times y*'s, and back only when
    y*'s exceeds ``switch`` times the vertex's. No forced step."""

    forced = False
    switch = 2.0

    def select(self) -> int:
        if self.design.n_samples == 0:
            self.mode_target, self.mode_vertex = -1, False
        return super().select()

    def switch_for(self, target: int) -> float:
        """The factor by which the other choice's gain must exceed the mode's, for ``target``."""
        return self.switch

    def choose(self, target, vertex, products):
        gain_a, gain_y = self.gains(target, vertex, products)
        switch = self.switch_for(target)
        if target != self.mode_target:
            self.mode_target, self.mode_vertex = target, gain_a > switch * gain_y
        elif self.mode_vertex and gain_y > switch * gain_a:
            self.mode_vertex = False
        elif not self.mode_vertex and gain_a > switch * gain_y:
            self.mode_vertex = True
        return vertex if self.mode_vertex else target


class HysteresisOwnDesign(Hysteresis):
    """:class:`Hysteresis` where y* is, within :data:`OWN_DESIGN`, its own c-optimal design
    (min_λ y*ᵀA_λ⁺y* over the simplex, :func:`optimal_design` with y* the one target, is at least
    ``OWN_DESIGN`` times the 1 of pulling y* alone); elsewhere ``vertex-or-target`` (a switch of 1).
    The c-optimal value depends on the arms only and is solved once per arm that becomes y*."""

    def select(self) -> int:
        if self.design.n_samples == 0:
            self.own_design: dict[int, bool] = {}
        return super().select()

    def switch_for(self, target: int) -> float:
        if target not in self.own_design:
            arms = self.design.arms
            self.own_design[target] = optimal_design(arms, arms[target][None, :]).value >= OWN_DESIGN
        return self.switch if self.own_design[target] else 1.0


class Rollout(LastChoice):
    """One step of policy improvement over ``target`` (pull y* until it is certified), on the
    ``rollout`` step's model of y*'s certificate (:func:`rollout.pulls_to_certify`,
    :func:`rollout.own_mean_pulls`, docs/track-and-stop.md, "The rollout step"): pull a when
    "a now, then y* only" certifies y* in fewer pulls than "y* only". No forced step.
    (``rollout-burst``, the same with bursts as the deviation and a mode per target, is
    ``track-and-stop --step rollout``.)"""

    forced = False

    def choose(self, target, vertex, products):
        gap = abs(self.design.predictions[target] - self.problem.threshold)
        if gap == 0.0:
            return target
        intervals = self.intervals
        state, b = intervals.fit.state
        own = rollout.own_mean_pulls(target, self.design.predictions[target], self.problem.threshold, gap,
                                     state.counts[b, target], state.mean_widths[b], state.mean_thresholds[b])
        constants = (intervals.prior.scales, intervals.prior.log_weights, -math.log(intervals.least_squares_delta),
                     intervals.subgaussian)
        gram = intervals.fit.gram
        y, a = self.design.arms[target], self.design.arms[vertex]
        by_target = 1 + min(rollout.pulls_to_certify(gram + np.outer(y, y), y, gap, *constants), own - 1)
        by_vertex = 2 + min(rollout.pulls_to_certify(gram + np.outer(a, a) + np.outer(y, y), y, gap, *constants),
                            own - 1)
        return vertex if by_vertex < by_target else target


class TargetUnforced(Target):
    forced = False


class VertexOrTargetUnforced(VertexOrTarget):
    forced = False


PROTOTYPES = {"vertex": Vertex, "vertex-or-target": VertexOrTarget, "target": Target, "deficit": Deficit,
              "target-unforced": TargetUnforced, "vertex-or-target-unforced": VertexOrTargetUnforced,
              "hysteresis": Hysteresis, "hysteresis-own-design": HysteresisOwnDesign, "rollout": Rollout}
#: the rules against which the others are placed: the plain Frank–Wolfe step and MaxRew-U
REFERENCE = ("vertex", "maxrew-u")


def reference_rules(names: list[str], reference: list[str] | None = None) -> tuple[str, ...]:
    """The rules of ``reference`` (a document's ``--reference``; :data:`REFERENCE` when None) among
    ``names`` (none: the first rule of the document stands in for them)."""
    return tuple(name for name in (REFERENCE if reference is None else reference) if name in names)


#: ``--fresh``: the irrelevant-dims shape no earlier draw used, and the highest bound a seeded draw may have
#: (a Python loop of 0.1–0.3 ms a pull over 200 seeds)
FRESH_FIXED = "irrelevant-dims:d=15,eps=0.15,sigma=1"
FRESH_HIGH = 1000.0


def fresh_sources(first_seed: int) -> list[str]:
    """Gaussian instances nobody tuned on: :data:`FRESH_FIXED` and, for each seeded shape of
    ``benchmarks/guaranteed.py`` (unit-sphere and random, three shapes each), the first seed from
    ``first_seed`` up whose Theorem 1 bound lies in [``guaranteed.FRESH_LOW``, :data:`FRESH_HIGH`]
    (chosen by the bound only, never a run)."""
    from guaranteed import FRESH_LOW, FRESH_SEEDED  # a sibling script

    from cbai_cli.kinds.cbai.families import generate_instance

    sources = [FRESH_FIXED]
    for name, shape in FRESH_SEEDED:
        params = {key: int(value) for key, value in (item.split("=") for item in shape.split(","))}
        seed = first_seed
        while not FRESH_LOW <= compute_bounds(generate_instance(name, sigma=1.0, seed=seed, **params),
                                              delta=DELTA).lower_bound <= FRESH_HIGH:
            seed += 1
        sources.append(f"{name}:{shape},seed={seed},sigma=1")
    return sources


def instance_of(source: str):
    """An instance file, or a ``cbai compare`` generator spec with its seed fixed."""
    if Path(source).suffix in (".yaml", ".yml", ".npz"):
        return load(source)
    from cbai_cli.compare.sources import parse_source

    (group,) = parse_source(source, 0)
    return group.instance


def runs(instance, name: str, seeds: int, coordinates: str, pulls: bool = False, ridge: float | None = None) -> dict:
    """``{"queries": [...], "right": r}`` of rule ``name`` with ``ols`` over seeds 0 … seeds−1, in
    ``coordinates`` or in those a name ``RULE@COORDINATES`` fixes; with ``pulls``, also
    ``"pulls"``: each run's pulls of the arms it pulled, ``"ARM:PULLS ARM:PULLS …"`` (one line of
    the results file a run; the compiled rules then run one seed at a time, the same runs). ``ridge``:
    the sampling rules' ridge λ (``--lambda``; None: its default), which the ``ols`` intervals do not read."""
    name, _, fixed = name.partition("@")
    coordinates = fixed or coordinates
    if name in COMPILED and not pulls:
        algorithm, options = COMPILED[name]
        request = RunRequest.of(algorithm, "ols", delta=DELTA, coordinates=coordinates, ridge=ridge, **options)
        results = run_many(prepare(request, instance), range(seeds))
        return {"queries": [r.iterations for r in results], "right": sum(bool(r.correct) for r in results)}
    algorithm, options = COMPILED.get(name, ("track-and-stop", {}))
    prepared = prepare(RunRequest.of(algorithm, "ols", delta=DELTA, coordinates=coordinates, ridge=ridge, **options),
                       instance)
    queries, right, counts = [], 0, []
    for seed in range(seeds):
        if name in COMPILED:
            learner, environment, _ = start_run(prepared, seed)
        else:
            noise, stream, _ = run_streams(seed)
            learner = PROTOTYPES[name](prepared.configured.view, prepared.configured.config, stream)
            environment = prepared.kind.environment(prepared.instance, noise)
        loop = drive(learner, environment, None)
        assert loop.solved
        queries.append(loop.used)
        right += instance.is_correct(learner.recommendation())
        counts.append(" ".join(f"{arm}:{count:.0f}" for arm, count in enumerate(learner.intervals.fit.counts.tolist())
                               if count))
    return {"queries": queries, "right": right, **({"pulls": counts} if pulls else {})}


def ridge_list(text: str) -> list[float]:
    """``--ridges``: comma-separated ridges λ, each a positive number."""
    ridges = [float(value) for value in text.split(",")]
    if not all(ridge > 0 for ridge in ridges):
        raise ValueError(text)
    return ridges


def ridge_name(name: str, ridge: float | None) -> str:
    """A rule's name in a results document: ``name``, or ``NAME λ=RIDGE`` when run with a ridge of
    ``--ridges``."""
    return name if ridge is None else f"{name} λ={ridge:g}"


def measure(source: str, names: list[str], seeds: int, coordinates: str, pulls: bool = False,
            ridges: Sequence[float | None] = (None,)) -> dict:
    instance = instance_of(source)
    started = time.perf_counter()
    bounds = compute_bounds(instance, delta=DELTA)
    result = {"source": source, "bound": bounds.lower_bound, "rules": {}}
    if pulls:
        result["design"] = bounds.h_clb.weights.tolist()
    for rule, ridge in ((rule, ridge) for rule in names for ridge in ridges):
        name = ridge_name(rule, ridge)
        result["rules"][name] = runs(instance, rule, seeds, coordinates, pulls, ridge)
        queries, right = result["rules"][name]["queries"], result["rules"][name]["right"]
        print(f"{source} {name}: median {np.median(queries):.0f} ({np.median(queries) / result['bound']:.2f}×), "
              f"{right}/{seeds} right", file=sys.stderr, flush=True)
    result["seconds"] = time.perf_counter() - started
    return result


def _caption(document: dict, note: str = "") -> str:
    """A table's first line: the command, its date and what the cells hold."""
    return (f"`{document['command']}` ({document['date']}; δ = {DELTA}, R = 1; median queries and their ratios to "
            f"Theorem 1 / to its kl form{note})")


def _queries(median: float, bound: float) -> str:
    """A rule's cell: its median queries and their ratios to Theorem 1 and to its kl form."""
    return f"{median:,.0f} ({median / bound:.2f}× / {median / (bound * KL_FORM):.2f}×)"


def _against(rules: dict, name: str, best: str) -> str:
    """Rule ``name``'s median over rule ``best``'s and, in brackets, the geometric mean over the
    seeds of its queries over the same seed's run of ``best``."""
    queries, reference = (np.asarray(rules[rule]["queries"], dtype=float) for rule in (name, best))
    paired = np.exp(np.mean(np.log(queries / reference)))
    return f"{np.median(queries) / np.median(reference):.3f} ({paired:.3f})"


def render(document: dict) -> str:
    names = list(dict.fromkeys(name for item in document["instances"] for name in item["rules"]))
    reference_names = reference_rules(names, document.get("reference"))
    others = [name for name in names if name not in (reference_names or names[:1])]
    lines = [_caption(document), "",
             "| instance | seeds | Theorem 1 (R = 1) | kl form | " + " | ".join(names) + " | best of " + " and ".join(reference_names or names[:1])
             + " | " + " | ".join(f"{name} / best" for name in others) + " | runs right |",
             "|---|---:|---:|---:|" + "---:|" * len(names) + "---|" + "---:|" * len(others) + "---:|"]
    for item in document["instances"]:
        bound, rules = item["bound"], item["rules"]
        medians = {name: float(np.median(rules[name]["queries"])) for name in names}
        best = min(reference_names or names[:1], key=lambda name: medians[name])
        right = sum(rule["right"] for rule in rules.values())
        seeds = len(rules[best]["queries"])
        lines.append(f"| {Path(item['source']).name} | {seeds} | {bound:,.1f} | {bound * KL_FORM:,.1f} | "
                     + " | ".join(_queries(medians[name], bound) for name in names)
                     + f" | {best} | " + " | ".join(_against(rules, name, best) for name in others)
                     + f" | {right}/{len(rules) * seeds} |")
    return "\n".join(lines)


def best_other(rules: dict, others: list[str]) -> tuple[dict[str, float], str]:
    """The median queries of each of an instance's ``rules`` and, of ``others``, the rule the
    instance ran with the least median."""
    medians = {name: float(np.median(rule["queries"])) for name, rule in rules.items()}
    return medians, min((name for name in others if name in rules), key=medians.get)


def render_first(document: dict) -> str:
    """The table of a document's first rule against the best of all its others: per instance the
    first rule's median queries and the best other rule's (least median among those the instance
    ran), each with its ratios to Theorem 1 and to its kl form, the ratio of the two medians and,
    in brackets, the geometric mean over the seeds of the first rule's queries over the same
    seed's run of the best other."""
    names = list(dict.fromkeys(name for item in document["instances"] for name in item["rules"]))
    first, others = names[0], names[1:]
    lines = [_caption(document, f"; the best of the other rules each instance ran: {', '.join(others)}"), "",
             f"| instance | seeds | Theorem 1 (R = 1) | kl form | {first} | best other rule | its queries "
             f"| {first} / best | runs right |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for item in document["instances"]:
        bound, rules = item["bound"], item["rules"]
        medians, best = best_other(rules, others)
        right = sum(rule["right"] for rule in rules.values())
        seeds = len(rules[first]["queries"])
        lines.append(f"| {Path(item['source']).name} | {seeds} | {bound:,.1f} | {bound * KL_FORM:,.1f} "
                     f"| {_queries(medians[first], bound)} | {best} | {_queries(medians[best], bound)} "
                     f"| {_against(rules, first, best)} | {right}/{len(rules) * seeds} |")
    return "\n".join(lines)


def pull_counts(runs: list[str], arms: int) -> np.ndarray:
    """(runs, ``arms``) the pulls of every arm in each run, from the ``"ARM:PULLS …"`` lines of :func:`runs`."""
    counts = np.zeros((len(runs), arms))
    for row, line in enumerate(runs):
        for pair in line.split():
            arm, pulls = pair.split(":")
            counts[row, int(arm)] = int(pulls)
    return counts


def render_pulls(document: dict) -> str:
    """Where each rule's queries go (a document measured with ``--pulls``): per instance the arm
    pulled most on average over every rule's runs, and per rule its median queries, the median
    pulls of that arm and of all the others, and the arms it pulled most besides (mean pulls);
    the last row gives the H_CLB design's weights above 0.5 % (Definition 2 at the truth)."""
    lines = [f"`{document['command']}` ({document['date']}; δ = {DELTA}, R = 1; pulls per run of the arm pulled "
             "most and of all the others, medians over the seeds; mean pulls per run of the others pulled most)", ""]
    for item in document["instances"]:
        rules = item["rules"]
        pulls = {name: pull_counts(rule["pulls"], len(item["design"])) for name, rule in rules.items()}
        most = int(np.argmax(sum(counts.mean(axis=0) for counts in pulls.values())))
        lines += [f"{Path(item['source']).name}, {len(rules[next(iter(rules))]['queries'])} seeds, arm {most} "
                  "pulled most", "",
                  f"| rule | median queries | arm {most}, median pulls | other arms, median pulls "
                  "| other arms pulled most (mean pulls) |", "|---|---:|---:|---:|---|"]
        for name, counts in pulls.items():
            others = np.delete(counts, most, axis=1)
            means = counts.mean(axis=0)
            top = [a for a in np.argsort(-means, kind="stable") if a != most][:6]
            lines.append(f"| {name} | {np.median(rules[name]['queries']):,.0f} | {np.median(counts[:, most]):,.1f} "
                         f"| {np.median(others.sum(axis=1)):,.1f} | "
                         + ", ".join(f"{a}: {means[a]:.1f}" for a in top) + " |")
        design = np.asarray(item["design"])
        support = [a for a in np.argsort(-design, kind="stable") if design[a] > 0.005]
        lines += ["", "H_CLB design (weights above 0.5 %): " + ", ".join(f"{a}: {design[a]:.3f}" for a in support), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = results_parser(__doc__)
    parser.add_argument("--rules", default="vertex,maxrew-u,target,vertex-or-target,deficit")
    parser.add_argument("--reference", default=None,
                        help="the rules the others are placed against, comma-separated (default: vertex,maxrew-u)")
    parser.add_argument("--fresh", type=int, nargs="+", default=(), metavar="FIRST_SEED",
                        help="add the Gaussian instances of fresh_sources(FIRST_SEED) for each FIRST_SEED")
    parser.add_argument("--held-out", type=int, nargs="+", default=(), metavar="FRESH_START",
                        help="add the instances of `benchmarks/guaranteed.py --fresh --fresh-start FRESH_START`")
    parser.add_argument("--coordinates", choices=COORDINATES, default="features",
                        help="the coordinates every rule runs in (default: features, those of the results files)")
    parser.add_argument("--pulls", action="store_true",
                        help="record every run's pulls of each arm and print where each rule's queries go "
                             "(render_pulls; --render picks it for such documents)")
    parser.add_argument("--ridges", type=ridge_list, default=[None],
                        help="run every rule with each of these ridges λ of the sampling rules (--lambda), "
                             "comma-separated; the rules are then named 'RULE λ=RIDGE'")
    parser.add_argument("--first", action="store_true",
                        help="with --render: the first rule against the best of the others (render_first)")
    args = parser.parse_args(argv)
    if args.render is not None:
        with_pulls = "design" in json.loads(args.render[0].read_text())["instances"][0]
        render_files(args.render, render_pulls if with_pulls else render_first if args.first else render)
        return
    for rule in args.rules.split(","):
        name, at, fixed = rule.partition("@")
        if name not in COMPILED and name not in PROTOTYPES or at and fixed not in COORDINATES:
            parser.error(f"--rules: unknown rule {rule!r} (rules: {', '.join([*PROTOTYPES, *COMPILED])}, "
                         "each optionally RULE@features or RULE@d-optimal)")
    from guaranteed import fresh_instances  # a sibling script

    sources = list(args.sources) + [source for first in args.fresh for source in fresh_sources(first)]
    sources = list(dict.fromkeys(sources + [source for start in args.held_out for source in fresh_instances(start)]))
    reference = {} if args.reference is None else {"reference": args.reference.split(",")}
    measure_each("binary_rules.py", argv, sources, lambda source: measure(source, args.rules.split(","), args.seeds,
                                                                           args.coordinates, args.pulls, args.ridges),
                 render_pulls if args.pulls else render, args.json, seeds=args.seeds, **reference)


if __name__ == "__main__":
    main()
