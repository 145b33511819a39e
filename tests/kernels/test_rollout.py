"""Track-and-Stop's ``rollout`` step (:mod:`cbai_cli.numerics.kernels.rollout`): the model of y*'s
certificate by hand on two arms, a burst that pays and one that does not, the run's mode, and
whole runs alike interpreted, compiled, batched and through the ask/tell loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cbai_cli.algorithms.track_and_stop import TrackAndStop
from cbai_cli.contracts.protocol import Answer, Query
from cbai_cli.kinds.cbai.families import family
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise
from cbai_cli.numerics.kernels import rollout
from cbai_cli.numerics.kernels.batch import run_compiled
from cbai_cli.numerics.kernels.codes import TRACK_AND_STOP_ROLLOUT
from cbai_cli.numerics.kernels.state import DECIDED_AT, FORCED, MODE_TARGET, MODE_VERTEX, PULLS
from cbai_cli.numerics.ols import ScalePrior
from cbai_cli.run.simulate import RunRequest, drive, prepare

from .test_batch import Silent, assert_compiled_equals_the_loop, assert_same_state, started

VIEWS = ("interpreted", "compiled")
#: One scale λ = 1 of weight 1 (log π = 0), log(1/((1 − κ)δ)) = log 20, R = 1.
ONE_SCALE = (np.array([1.0]), np.array([0.0]), math.log(20.0), 1.0)


def squared_half_width(k: int) -> float:
    """The model's squared half-width over 2R² of y = e1 under W_k = diag(1 + k, 4), λ = 1, by hand:
    yᵀW_k⁻¹y = 1/(1 + k), ‖W_k⁻¹y‖² = 1/(1 + k)², log det(I + W_k) = log(2 + k) + log 5."""
    return (math.log(20.0) + 0.5 * (math.log(2.0 + k) + math.log(5.0))) * (1.0 / (1 + k) + 1.0 / (1 + k) ** 2)


def rotation(angle: float) -> np.ndarray:
    return np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("angle", [0.0, 0.7])
def test_pulls_to_certify_on_a_two_dimensional_gram_by_hand(view, angle):
    # ĝ = 0.5: the limit ĝ²/2 = 0.125 is passed first at k = 46 (0.12464 ≤ 0.125 < 0.12717 at k = 45)
    assert squared_half_width(46) <= 0.125 < squared_half_width(45)
    turn = rotation(angle)
    gram, y = turn @ np.diag([1.0, 4.0]) @ turn.T, turn[:, 0]
    certify = getattr(rollout.pulls_to_certify, view)
    assert certify(gram, y, 0.5, *ONE_SCALE) == 46.0
    # at k = 0 the squared half-width is 8.294…: ĝ = 5 is certified at once, ĝ = 4 is not
    assert certify(gram, y, 5.0, *ONE_SCALE) == 0.0
    assert certify(gram, y, 4.0, *ONE_SCALE) == 1.0
    # past 10⁷ pulls (the squared half-width is still about 1.2·10⁻⁶ there): never
    assert certify(gram, y, 1e-3, *ONE_SCALE) == math.inf


@pytest.mark.parametrize("view", VIEWS)
def test_own_mean_pulls_by_hand(view):
    own = getattr(rollout.own_mean_pulls, view)
    widths, thresholds = np.full((2, 3), np.inf), np.full((2, 3), 3.0)
    widths[0, 1] = 1.0  # arm 1's lower side, the side that must pass τ when its prediction exceeds τ
    assert own(1, 0.7, 0.2, 0.5, 4.0, widths, thresholds) == 4.0 * ((1.0 / 0.5) ** 2 - 1.0)  # 12
    assert own(1, 0.7, 0.2, 2.0, 4.0, widths, thresholds) == 1.0  # certified already: at least one pull
    # upper side of arm 1 (prediction below τ) has no width: 2·(log(1/(κδ·share)) + 1)/ĝ² = 2·4/0.25
    assert own(1, -0.3, 0.2, 0.5, 4.0, widths, thresholds) == 32.0
    assert own(2, 0.7, 0.2, 0.5, 0.0, widths, thresholds) == 32.0


def burst_case(other: list[float], pulls: int = 10) -> tuple:
    """burst_pays's arguments for y* = arm 1 = e1, pulled 10 times, the ridge λ = 0.1 and
    ``other`` arm 0; ĝ = 0.1, no own means, the ``ols`` prior of L² = 9, ``pulls`` the run's n."""
    arms = np.array([other, [1.0, 0.0]])
    counts = np.array([0.0, 10.0])
    inverse = np.linalg.inv(0.1 * np.eye(2) + 10.0 * np.outer(arms[1], arms[1]))
    prior = ScalePrior(9.0)
    no_means = np.full((2, 2), np.inf)
    return (arms, inverse, np.array([0.0, 0.35]), 0.25, 1, counts, no_means, no_means, prior.scales,
            prior.log_weights, math.log(20.0), 1.0, pulls)


@pytest.mark.parametrize("view", VIEWS)
def test_a_burst_of_a_longer_copy_of_the_target_pays(view):
    # a = 3y: each pull of a informs y as nine pulls of y do; a is the vertex, the burst pays
    arguments = burst_case([3.0, 0.0])
    assert getattr(rollout.burst_pays, view)(*arguments)


@pytest.mark.parametrize("view", VIEWS)
def test_a_burst_of_an_arm_that_adds_an_unknown_direction_does_not_pay(view):
    # a = (1, 3) ties with y as the first vertex (aᵀA⁻¹y = yᵀA⁻¹y, index 0 first); with V = 10·yyᵀ
    # its pulls leave yᵀV⁺y at 1/10 (they inform e1 only through e2, which nothing else pulls)
    # and raise log det: no burst certifies y sooner than y itself (n = 2,048: every burst tried)
    arms, inverse, *rest = burst_case([1.0, 3.0], pulls=2048)
    products = arms @ (inverse @ arms[1])
    assert products[0] == products[1]
    assert not getattr(rollout.burst_pays, view)(arms, inverse, *rest)


@pytest.mark.parametrize("view", VIEWS)
def test_only_a_burst_longer_than_128_pays_once_the_run_has_128_pulls(view):
    # a = √1.005·y: m pulls of a inform y as 1.005·m pulls of y, so a burst saves about 0.005·m
    # of y's pulls and costs nothing else. y only takes 1,415 pulls; bursts of 8, 32 and 128 tie
    # with it (they save less than one pull), the next burst, 512, takes 1,413. A burst past 128
    # is tried only while at most 4n: 512 needs n ≥ 128
    arms, inverse, predictions, threshold, target, counts, *rest, _ = burst_case([math.sqrt(1.005), 0.0])
    certify = getattr(rollout.pulls_to_certify, view)
    y, gap, prior = arms[1], predictions[1] - threshold, rest[2:]
    gram, itself = np.diag([10.0, 0.0]), np.outer(y, y)
    assert 1.0 + certify(gram + itself, y, gap, *prior) == 1415.0
    by_burst = {m: m + 1.0 + certify(gram + m * np.outer(arms[0], arms[0]) + itself, y, gap, *prior)
                for m in (8, 32, 128, 512)}
    assert by_burst == {8: 1415.0, 32: 1415.0, 128: 1415.0, 512: 1413.0}
    pays = getattr(rollout.burst_pays, view)
    assert pays(arms, inverse, predictions, threshold, target, counts, *rest, 128)
    assert not pays(arms, inverse, predictions, threshold, target, counts, *rest, 127)


@pytest.mark.parametrize("view", VIEWS)
def test_no_gap_is_no_burst(view):
    arms, inverse, _, *rest = burst_case([3.0, 0.0])
    assert not getattr(rollout.burst_pays, view)(arms, inverse, np.array([0.0, 0.25]), *rest)


def instance_with(noise):
    # a draw whose active target's vertex is another arm from the first pulls on: the mode decides
    return family("random").generate(noise, d=4, n=12, seed=3)


GAUSSIAN = GaussianNoise(0.3)


def rollout_run(noise=GAUSSIAN, budget=None):
    return prepare(RunRequest.of("track-and-stop", "ols", step="rollout", budget=budget), instance_with(noise))


@pytest.mark.parametrize(("regime", "options", "rollout_rule"), [
    ("ols", {}, True), ("ols", {"step": "rollout"}, True), ("ols", {"step": "vertex-or-target"}, False),
    ("det", {}, False)])
def test_the_option_chooses_the_compiled_rule_rollout_by_default_under_ols(regime, options, rollout_rule):
    learner, _ = started(prepare(RunRequest.of("track-and-stop", regime, **options), instance_with(GAUSSIAN)), 0)
    assert (learner.kernel_code == TRACK_AND_STOP_ROLLOUT) == rollout_rule and learner.compiled()


def test_the_mode_is_kept_until_the_pulls_grow_by_a_tenth_or_the_target_changes():
    learner, environment = started(rollout_run(budget=40), 0)
    drive(learner, environment, 40, Silent())  # the ask/tell loop
    run, row = learner.run
    counters = run.counters[row]
    assert counters[FORCED] == 0 and counters[MODE_TARGET] >= 0 and 1 <= counters[DECIDED_AT] <= 40
    target = learner.active_target(learner.relevant(learner.empirical_answer()))
    vertex = learner.frank_wolfe_arm(target)
    assert vertex != target  # the case where the mode decides
    n = counters[PULLS]
    for mode in (0, 1):
        counters[MODE_TARGET], counters[MODE_VERTEX], counters[DECIDED_AT] = target, mode, n
        assert learner.select() == (vertex if mode else target)  # kept: n < 1.1·n
        assert (counters[MODE_TARGET], counters[MODE_VERTEX], counters[DECIDED_AT]) == (target, mode, n)
    counters[MODE_TARGET] = -1  # decided for another target: decided again now, by burst_pays
    decided = learner.select()
    assert (counters[MODE_TARGET], counters[DECIDED_AT]) == (target, n)
    assert counters[MODE_VERTEX] == (decided == vertex)
    last = math.floor(n / rollout.DECISION_GROWTH)  # the latest decision after which n pulls are due again
    assert n >= rollout.DECISION_GROWTH * last and n < rollout.DECISION_GROWTH * (last + 1)
    for decided_at, expected in ((last + 1, "kept"), (last, "decided")):
        counters[MODE_VERTEX], counters[DECIDED_AT] = int(decided != vertex), decided_at
        pulled = learner.select()
        if expected == "kept":
            assert pulled != decided and counters[DECIDED_AT] == decided_at
        else:
            assert pulled == decided and counters[DECIDED_AT] == n


def test_a_query_of_several_pulls_leaves_the_mode_to_the_next_select():
    learner, _ = started(rollout_run(), 0)
    learner.tell(Query.pulls(np.array([0, 1, 2, 3]), np.array([3, 3, 3, 3])), Answer(np.array([0.1, -0.2, 0.3, 0.0])))
    assert 0 <= learner.select() < 12


@pytest.mark.parametrize("noise", [GAUSSIAN, BinaryNoise()], ids=["gaussian", "binary"])
def test_compiled_runs_equal_the_ask_tell_loop(noise):
    assert_compiled_equals_the_loop(rollout_run(noise, budget=400), range(3))


@pytest.mark.parametrize("noise", [GAUSSIAN, BinaryNoise()], ids=["gaussian", "binary"])
def test_interpreted_runs_equal_compiled_runs(noise):
    prepared = rollout_run(noise, budget=300)
    outcomes, learners = {}, {}
    for interpret in (True, False):
        together = [started(prepared, seed) for seed in (6, 1)]
        outcomes[interpret] = run_compiled([learner for learner, _ in together], [env for _, env in together],
                                           prepared.budget, interpret=interpret)
        learners[interpret] = [learner for learner, _ in together]
    assert outcomes[True] == outcomes[False]
    for first, second in zip(learners[True], learners[False]):
        assert_same_state(first, second)


def test_a_batch_of_runs_equals_the_runs_one_by_one():
    prepared = rollout_run(budget=500)
    together = [started(prepared, seed) for seed in range(4)]
    outcomes = run_compiled([learner for learner, _ in together], [env for _, env in together], prepared.budget)
    assert any(learner.run[0].counters[learner.run[1], MODE_TARGET] >= 0 for learner, _ in together)
    for seed, (learner, _) in enumerate(together):
        alone, environment = started(prepared, seed)
        assert run_compiled([alone], [environment], prepared.budget) == [outcomes[seed]]
        assert_same_state(learner, alone)


def test_a_run_continued_from_a_copy_of_its_state_makes_the_same_pulls():
    # the mode lives in the run's state, so a learner restored mid-run (a session's snapshot) goes on alike
    import pickle

    prepared = rollout_run(budget=300)
    learner, environment = started(prepared, 3)
    drive(learner, environment, 150, Silent())
    copy, environment_copy = pickle.loads(pickle.dumps((learner, environment)))
    assert isinstance(copy, TrackAndStop)
    first = drive(learner, environment, 150, Silent())
    second = drive(copy, environment_copy, 150, Silent())
    assert (first.used, first.solved) == (second.used, second.solved)
    assert_same_state(learner, copy)
