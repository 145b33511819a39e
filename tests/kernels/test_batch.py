"""Whole runs in the compiled step: the same runs as the per-step ask/tell loop, for any
batch size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cbai_cli.run import simulate
from cbai_cli.kinds.cbai.families import family
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.numerics.kernels.batch import run_compiled
from cbai_cli.numerics.confidence import OLSRegime
from cbai_cli.numerics.kernels.state import EPOCH, SINCE
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise
from cbai_cli.run.simulate import RunRequest, compilable, drive, prepare, run_many, run_once, run_streams

RANDOM_RULES = ("adaptive-uniform", "g-acol-uniform", "maxrew-f")  # they read the algorithm's stream
RULES = ("g-acol", "greedy-maxvar", "maxrew-u", "track-and-stop", *RANDOM_RULES)
COMPILED = [(name, regime) for name in RULES for regime in ("theory", "det", "tuned")]
#: The four instances of README "Guaranteed methods against the lower bound" (honest noise R = σ).
PAPER_INSTANCES = {"irrelevant-dims-sigma1": ("irrelevant-dims", {"d": 10, "eps": 0.05}, 1.0),
                   "unit-sphere": ("unit-sphere", {"d": 10, "n": 20, "seed": 0}, 1.0),
                   "regret-1d": ("regret-1d", {}, 1.0),
                   "irrelevant-dims-sigma0.05": ("irrelevant-dims", {"d": 10, "eps": 0.05}, 0.05)}


class Silent:
    """An observer that watches nothing: it keeps drive on its per-step loop."""

    def asked(self, query, learner) -> None:
        pass

    def told(self, query, answer, learner, used) -> None:
        pass


def prepared_run(instance, name, regime, budget=400):
    options = {"beta": 0.25} if regime == "tuned" else {}
    return prepare(RunRequest.of(name, regime, budget=budget, **options), instance)


def started(prepared, seed):
    noise_rng, algorithm_rng, _ = run_streams(seed)
    return prepared.make_algorithm(algorithm_rng), prepared.kind.environment(prepared.instance, noise_rng)


def final_state(learner) -> list:
    """Every array of the run's state row (the ridge design, the elimination state, the
    forced pulls; for ols also every array of the fit's and the intervals' row), and the answer."""
    state, b = learner.run
    rows = [array[b] for array in state.arrays()] + [learner.recommendation()]
    if hasattr(learner.intervals, "fit"):  # the ols regime's fit and mixture intervals
        span, row = learner.intervals.fit.state
        rows += [array[row] for array in span.arrays()]
    return rows


def assert_same_state(first, second) -> None:
    for a, b in zip(final_state(first), final_state(second)):
        np.testing.assert_array_equal(a, b)


def assert_compiled_equals_the_loop(prepared, seeds) -> list:
    """Each seed's run compiled and through the ask/tell loop: the same counts and the same
    final state; returns each run's two environments (compiled, loop) for further checks."""
    environments = []
    for seed in seeds:
        compiled, environment = started(prepared, seed)
        assert compilable(compiled, environment)
        fast = drive(compiled, environment, prepared.budget)
        stepped, loop_environment = started(prepared, seed)
        slow = drive(stepped, loop_environment, prepared.budget, Silent())
        assert (fast.used, fast.rounds, fast.solved) == (slow.used, slow.rounds, slow.solved)
        assert_same_state(compiled, stepped)
        environments.append((environment, loop_environment))
    return environments


@pytest.mark.parametrize("name, regime", COMPILED)
def test_compiled_drive_equals_the_ask_tell_loop(irrelevant_dims, name, regime):
    assert_compiled_equals_the_loop(prepared_run(irrelevant_dims, name, regime), range(3))


def test_a_run_long_enough_to_refresh_equals_the_ask_tell_loop(irrelevant_dims):
    prepared = prepared_run(irrelevant_dims, "greedy-maxvar", "theory", budget=700)  # a refresh every 200 pulls
    compiled, environment = started(prepared, 1)
    fast = drive(compiled, environment, prepared.budget)
    stepped, environment = started(prepared, 1)
    slow = drive(stepped, environment, prepared.budget, Silent())
    assert fast.used == slow.used == 700
    assert_same_state(compiled, stepped)


@pytest.mark.parametrize("size", [2, 5])
def test_a_batch_of_runs_equals_the_runs_one_by_one(irrelevant_dims, size):
    prepared = prepared_run(irrelevant_dims, "g-acol", "det", budget=500)
    together = [started(prepared, seed) for seed in range(size)]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget)
    for seed, (learner, _) in enumerate(together):
        alone, environment = started(prepared, seed)
        assert run_compiled([alone], [environment], prepared.budget) == [outcomes[seed]]
        assert_same_state(learner, alone)


@pytest.mark.parametrize("regime", ["theory", "ols"])
@pytest.mark.parametrize("name", RANDOM_RULES)
@pytest.mark.parametrize("size", [1, 4])
def test_a_batch_of_random_rule_runs_equals_the_ask_tell_runs(size, name, regime):
    instance = family("unit-sphere").generate(GaussianNoise(0.3), d=4, n=12, seed=1)
    prepared = prepare(RunRequest.of(name, regime, budget=900), instance)  # past a chunk of 256 uniforms
    seeds = [6, 1, 4, 9][:size]
    together = [started(prepared, seed) for seed in seeds]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget)
    for seed, (used, solved), (learner, _) in zip(seeds, outcomes, together):
        stepped, environment = started(prepared, seed)
        slow = drive(stepped, environment, prepared.budget, Silent())
        assert (used, solved) == (slow.used, slow.solved)
        assert_same_state(learner, stepped)


def test_a_chunk_of_uniforms_is_the_doubles_drawn_one_by_one():
    chunked, one_by_one = run_streams(3)[1], run_streams(3)[1]
    np.testing.assert_array_equal(chunked.random(256), [one_by_one.random() for _ in range(256)])


@pytest.mark.parametrize("sigma", [1.0, 0.05])
def test_adaptive_uniform_pulls_the_arms_of_its_own_stream_whatever_the_noise(irrelevant_dims, sigma):
    from cbai_cli.numerics.kernels.select import uniform_index

    prepared = prepare(RunRequest.of("adaptive-uniform", "ols", budget=600), replace(irrelevant_dims,
                                                                                     noise=GaussianNoise(sigma)))
    learner, environment = started(prepared, 5)
    outcome = drive(learner, environment, prepared.budget)  # compiled; the ols fit counts the pulls
    k = irrelevant_dims.arms.shape[0]
    expected = [uniform_index(u, k) for u in run_streams(5)[1].random(outcome.used)]
    assert outcome.used > 10
    np.testing.assert_array_equal(learner.intervals.fit.counts, np.bincount(expected, minlength=k))


class Pulls(Silent):
    """Records the arm of every query and whether U was still every arm when it was asked."""

    def __init__(self) -> None:
        self.pulls = []

    def asked(self, query, learner) -> None:
        self.pulls.append((int(query.arms[0]), bool(learner.state.uncertain.all())))


def test_g_acol_uniform_choices_before_the_first_elimination_do_not_depend_on_the_noise(irrelevant_dims):
    from cbai_cli.numerics.kernels.select import uniform_index

    firsts = []
    for sigma in (1.0, 0.2):  # the same intervals (R = 1), observations of another scale
        prepared = prepare(RunRequest.of("g-acol-uniform", "det", budget=3000, subgaussian=1.0),
                           replace(irrelevant_dims, noise=GaussianNoise(sigma)))
        learner, environment = started(prepared, 2)
        observer = Pulls()
        drive(learner, environment, prepared.budget, observer)
        firsts.append([arm for arm, everything in observer.pulls if everything])
    shorter = min(firsts, key=len)
    assert len(shorter) > 20 and len(firsts[0]) != len(firsts[1])  # the noise moved the first elimination
    assert firsts[0][:len(shorter)] == firsts[1][:len(shorter)]
    k = irrelevant_dims.arms.shape[0]
    assert shorter == [uniform_index(u, k) for u in run_streams(2)[1].random(len(shorter))]


@pytest.mark.parametrize("regime", ["theory", "ols"])
@pytest.mark.parametrize("name", RULES)
def test_binary_answers_compiled_equal_the_ask_tell_loop(name, regime):
    # yes/no answers drawn in the step from the run's own generator: the same answers, the same
    # state, and the generator left where the loop leaves it
    instance = family("unit-sphere").generate(BinaryNoise(), d=4, n=12, seed=3)
    prepared = prepare(RunRequest.of(name, regime, budget=600), instance)
    for environment, loop_environment in assert_compiled_equals_the_loop(prepared, range(2)):
        assert environment.rng.bit_generator.state == loop_environment.rng.bit_generator.state


def test_a_batch_of_binary_runs_equals_the_runs_one_by_one():
    instance = family("unit-sphere").generate(BinaryNoise(), d=4, n=12, seed=3)
    prepared = prepare(RunRequest.of("g-acol", "det", budget=300), instance)
    together = [started(prepared, seed) for seed in range(3)]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget)
    for seed, (learner, _) in enumerate(together):
        alone, environment = started(prepared, seed)
        assert run_compiled([alone], [environment], prepared.budget) == [outcomes[seed]]
        assert_same_state(learner, alone)


@pytest.mark.parametrize("name", ["g-acol", "greedy-maxvar"])
def test_the_fused_pass_of_large_arm_sets_equals_the_ask_tell_loop(name):
    rng = np.random.default_rng(7)
    arms = rng.standard_normal((600, 6))
    instance = Instance(name="wide", arms=arms, reward=rng.standard_normal(6), constraint=0.01 * rng.standard_normal(6),
                        threshold=0.0, noise=GaussianNoise(1.0))
    prepared = prepare(RunRequest.of(name, "tuned", beta=100.0, budget=80), instance)  # nothing decided
    runs = []
    for observer in (None, Silent()):
        learner, environment = started(prepared, 2)
        # the path of arm matrices too large for the cache, on a small one: blocks of 64 rows
        learner.design._streaming, learner.design.block = True, 64
        runs.append((learner, drive(learner, environment, prepared.budget, observer)))
    (fast_learner, fast), (slow_learner, slow) = runs
    assert fast.used == slow.used == 80
    assert_same_state(fast_learner, slow_learner)


@pytest.mark.parametrize(("name", "options"), [("track-and-stop", {"step": "vertex-or-target"}), ("track-and-stop", {}),
                                               ("g-acol", {})])
@pytest.mark.parametrize("split", [False, True])
def test_ols_runs_on_a_matrix_that_streams_equal_the_ask_tell_loop(name, options, split):
    """The design's update and the fit's step in one pass (``absorb_and_rank_one``), with
    Track-and-Stop's vertex from the update's products, on an arm matrix whose passes stream
    (K·d ≥ 2¹⁸, d ≥ 32), serial and with every pass split across threads."""
    rng = np.random.default_rng(11)
    arms = rng.standard_normal((8200, 32))
    instance = Instance(name="streaming", arms=arms, reward=rng.standard_normal(32),
                        constraint=0.01 * rng.standard_normal(32), threshold=0.0, noise=GaussianNoise(1.0))
    prepared = prepare(RunRequest.of(name, "ols", budget=150, **options), instance)
    compiled, environment = started(prepared, 4)
    ((used, _),) = run_compiled([compiled], [environment], prepared.budget, 0 if split else None)
    stepped, environment = started(prepared, 4)
    slow = drive(stepped, environment, prepared.budget, Silent())
    assert used == slow.used == 150
    assert_same_state(compiled, stepped)


@pytest.mark.parametrize("name, regime", [("g-acol", "theory"), ("maxrew-u", "det"), ("adaptive-uniform", "theory"),
                                          ("acol", "static"), ("track-and-stop", "ols")])
def test_run_many_gives_the_results_of_run_once(irrelevant_dims, name, regime, monkeypatch):
    monkeypatch.setattr(simulate, "BATCH_RUNS", 3)  # four seeds: a batch of three and one of one
    prepared = prepare(RunRequest.of(name, regime, budget=600), irrelevant_dims)
    seeds = [3, 0, 8, 5]
    together = run_many(prepared, seeds, key=(4,))
    alone = [run_once(prepared, seed, key=(4,)) for seed in seeds]
    assert [replace(result, wall_s=0.0) for result in together] == [replace(result, wall_s=0.0) for result in alone]


def same_run(prepared, seed) -> tuple:
    """The compiled run and the ask/tell run of ``seed``: (learner, outcome) each."""
    runs = []
    for observer in (None, Silent()):
        learner, environment = started(prepared, seed)
        runs.append((learner, drive(learner, environment, prepared.budget, observer)))
    return tuple(runs)


@pytest.mark.parametrize("name", RULES)
@pytest.mark.parametrize("instance", PAPER_INSTANCES)
def test_ols_runs_compiled_equal_the_ask_tell_loop_on_the_paper_instances(name, instance):
    family_name, params, sigma = PAPER_INSTANCES[instance]
    prepared = prepare(RunRequest.of(name, "ols", budget=3000),
                       family(family_name).generate(GaussianNoise(sigma), **params))
    for seed in range(2):
        learner, _ = started(prepared, seed)
        assert compilable(learner, _)
        (fast_learner, fast), (slow_learner, slow) = same_run(prepared, seed)
        assert (fast.used, fast.rounds, fast.solved) == (slow.used, slow.rounds, slow.solved)
        assert_same_state(fast_learner, slow_learner)


class FitEvents(Silent):
    """An observer of an ols run's fit, from its state row around each pull: the
    recomputations (the updates since the last one restart at 0) by kind — the span grew (a
    pulled arm outside it), the periodic one (every 200 updates at d = 5), the roundoff
    test's —, the new epochs of the growth test (without a recomputation), and whether a pull
    outside the span extended it (its roundoff estimates kept) rather than recomputing."""

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.extended = False

    def asked(self, query, learner) -> None:
        state, b = learner.intervals.fit.state
        self.before = (int(state.counters[b, SINCE]), int(state.counters[b, EPOCH]),
                       not state.inside[b, query.arms].all())

    def told(self, query, answer, learner, used) -> None:
        state, b = learner.intervals.fit.state
        since, epoch, outside = self.before
        if state.counters[b, SINCE] == 0:
            self.kinds.add("outside" if outside else "periodic" if since + 1 >= 200 else "roundoff")
            self.extended |= outside and bool(state.roundoff[b].any())
        elif state.counters[b, EPOCH] > epoch:
            self.kinds.add("epoch")


class Interpreted(OLSRegime):
    """``ols`` with intervals that the compiled step does not compute: its runs take each
    pull by the design's update, the fit's and the intervals' in turn."""

    def intervals(self, *args, **kwargs):
        return super().intervals(*args, **kwargs)


def awkward_instance(seed: int, scale: float = 1.0) -> Instance:
    """Twelve random arms in R⁵ with a nearly parallel pair and a short arm (the designs
    where a rank-one step loses digits), σ = 1; φ times ``scale`` (smaller gaps, longer runs)."""
    rng = np.random.default_rng(seed)
    arms = rng.standard_normal((12, 5))
    arms[1] = arms[0] + 1e-4 * rng.standard_normal(5)
    arms[2] = 0.0
    arms[2, 0] = 1e-3
    return Instance(name="awkward", arms=arms, reward=rng.standard_normal(5),
                    constraint=scale * rng.standard_normal(5), threshold=0.0, noise=GaussianNoise(1.0))


@pytest.mark.parametrize("extend", [False, True])  # small arm matrices recompute; extensions forced on them
@pytest.mark.parametrize("instance_seed, scale", [(3, 0.5), (2, 0.3)])  # runs with every kind of recomputation
def test_track_and_stop_ols_compiled_meets_every_recomputation_as_the_pieces_in_turn(monkeypatch, extend,
                                                                                     instance_seed, scale):
    """The compiled run (each pull one observe_fit) equals the same run whose pulls go into
    the design, the fit and the intervals by their own updates in turn, through every kind of
    recomputation of the fit."""
    from cbai_cli.numerics import ols

    if extend:
        monkeypatch.setattr(ols, "EXTEND_ENTRIES", 0)
    prepared = prepare(RunRequest.of("track-and-stop", "ols", budget=500, step="vertex-or-target"),
                       awkward_instance(instance_seed, scale))
    learner, environment = started(prepared, instance_seed)
    fast = drive(learner, environment, prepared.budget)
    stepped, environment = started(prepared, instance_seed)
    stepped.regime = Interpreted(stepped.regime.settings)
    events = FitEvents()
    slow = drive(stepped, environment, prepared.budget, events)
    assert stepped._fit is None
    assert events.kinds >= {"outside", "periodic", "roundoff", "epoch"}
    assert events.extended == extend
    assert fast.used == slow.used and fast.solved == slow.solved and learner.forced_pulls > 0
    assert_same_state(learner, stepped)


@pytest.mark.parametrize("name", ["track-and-stop", "g-acol"])
def test_a_batch_of_ols_runs_equals_the_runs_one_by_one(name):
    prepared = prepare(RunRequest.of(name, "ols", budget=500), awkward_instance(3))
    seeds = [3, 0, 9, 1]
    together = [started(prepared, seed) for seed in seeds]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget)
    for seed, outcome, (learner, _) in zip(seeds, outcomes, together):
        alone, environment = started(prepared, seed)
        assert run_compiled([alone], [environment], prepared.budget) == [outcome]
        assert_same_state(learner, alone)


@pytest.mark.parametrize("regime", ["theory", "det", "ols"])
def test_a_rule_with_a_python_select_gets_the_compiled_update(irrelevant_dims, regime, monkeypatch):
    """A rule whose select is Python (a plugin's: here G-ACOL's own rule called from a
    subclass) runs on the ask/tell loop, and its tell is the compiled update of a pull, not
    the design's (and under ols the fit's and the intervals') update one by one: the same
    run, state and answer as G-ACOL compiled (the theory run goes past an exact refresh of
    the design, after 200 pulls)."""
    from cbai_cli.algorithms.g_acol import GACOL
    from cbai_cli.numerics.linalg import DesignState
    from cbai_cli.numerics.ols import LeastSquaresSpan, MixtureIntervals

    class Plugin(GACOL):
        def select(self) -> int:
            return super().select()

    prepared = prepared_run(irrelevant_dims, "g-acol", regime, budget=450)
    noise_rng, algorithm_rng, _ = run_streams(2)
    plugin = Plugin(prepared.configured.view, prepared.config, algorithm_rng)
    environment = prepared.kind.environment(prepared.instance, noise_rng)
    assert not compilable(plugin, environment)
    updates = []
    for owner, name in ((DesignState, "update"), (LeastSquaresSpan, "update"), (MixtureIntervals, "observe")):
        monkeypatch.setattr(owner, name, lambda *args, **kwargs: updates.append(args))
    slow = drive(plugin, environment, prepared.budget)
    compiled, environment = started(prepared, 2)
    fast = drive(compiled, environment, prepared.budget)
    assert not updates
    assert (fast.used, fast.solved) == (slow.used, slow.solved)
    assert_same_state(plugin, compiled)


def test_a_query_of_several_arms_under_ols_is_its_pulls_in_turn(irrelevant_dims):
    """Under ols a query of several arms, some pulled more than once, is each pull's compiled
    update with the elimination after the last: the same state as the design's, the fit's and
    the intervals' own updates in turn (those of a regime whose intervals are not compiled)."""
    from cbai_cli.contracts.protocol import Query

    prepared = prepared_run(irrelevant_dims, "g-acol", "ols")
    fast, environment = started(prepared, 0)
    slow, _ = started(prepared, 0)
    slow.regime = Interpreted(slow.regime.settings)
    rng = np.random.default_rng(0)
    for _ in range(40):
        arms = np.sort(rng.choice(prepared.instance.n_arms, size=3, replace=False))
        query = Query.pulls(arms, rng.integers(1, 4, size=3))
        answer = environment.answer(query)
        fast.tell(query, answer)
        slow.tell(query, answer)
    assert fast._fit is not None and slow._fit is None
    assert_same_state(fast, slow)


def test_a_track_and_stop_with_its_own_select_stays_on_the_python_loop(irrelevant_dims):
    from cbai_cli.algorithms.track_and_stop import TrackAndStop

    class Lazy(TrackAndStop):
        def select(self) -> int:
            return 0

    prepared = prepared_run(irrelevant_dims, "track-and-stop", "ols")
    noise_rng, algorithm_rng, _ = run_streams(0)
    learner = Lazy(prepared.configured.view, prepared.config, algorithm_rng)
    assert not compilable(learner, prepared.kind.environment(prepared.instance, noise_rng))
