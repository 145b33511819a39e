"""The ask/tell protocol: a learner driven by hand through ``CheckedLearner``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.contracts.errors import ProtocolError
from cbai_cli.kinds import load
from cbai_cli.contracts.protocol import Answer, CheckedLearner, Query
from cbai_cli.run.simulate import RunRequest, drive, prepare, run_once, start_run

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def prepared():
    return prepare(RunRequest.of("g-acol", "tuned", beta=0.25), load(REPO / "instances" / "regret-1d.yaml"))


def hand_driven(prepared, seed: int = 0) -> tuple[CheckedLearner, object]:
    """A checked learner of run ``seed`` and the simulated environment of that run."""
    learner, environment, _ = start_run(prepared, seed)
    return CheckedLearner(learner), environment


def answer_of(environment, query: Query) -> Answer:
    return environment.answer(query)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e300])
def test_an_answer_that_no_observation_can_sum_to_is_refused(prepared, value):
    learner, _ = hand_driven(prepared)
    query = learner.ask()
    with pytest.raises(ProtocolError, match="must be finite|beyond"):
        learner.tell(query, Answer(np.array([value])))


@pytest.mark.parametrize("values", [[], [0.9, 5.0], [[0.9]]])
def test_an_answer_with_another_number_of_sums_than_the_query_has_arms_is_refused(prepared, values):
    learner, _ = hand_driven(prepared)
    query = learner.ask()
    with pytest.raises(ProtocolError, match="asks for 1 constraint sum"):
        learner.tell(query, Answer(np.array(values)))


@pytest.mark.parametrize("values", [np.array(["0.93"]), np.array([0.9 + 1j]), np.array([True])])
def test_an_answer_that_is_not_real_numbers_is_refused(prepared, values):
    learner, _ = hand_driven(prepared)
    query = learner.ask()
    with pytest.raises(ProtocolError, match="must be real numbers"):
        learner.tell(query, Answer(values))


def test_a_number_answers_a_query_of_one_arm(prepared):
    by_number, _ = hand_driven(prepared)
    by_array, _ = hand_driven(prepared)
    by_number.tell(by_number.ask(), Answer(0.93))
    by_array.tell(by_array.ask(), Answer(np.array([0.93])))
    assert by_number.ask().arm == by_array.ask().arm


def test_an_answer_to_a_query_not_asked_is_refused(prepared):
    learner, _ = hand_driven(prepared)
    query = learner.ask()
    other = Query.pull(int(query.arm) + 1)
    with pytest.raises(ProtocolError, match=r"the answer is for 1× arm \d+, but the query pending is 1× arm"):
        learner.tell(other, Answer(np.array([0.5])))
    with pytest.raises(ProtocolError, match="the answer is for"):
        learner.tell(Query.pulls([query.arm], [-5]), Answer(np.array([0.5])))


def test_the_same_query_built_again_may_be_answered(prepared):
    learner, _ = hand_driven(prepared)
    query = learner.ask()
    learner.tell(Query.pull(query.arm), Answer(np.array([0.5])))


def test_a_tell_before_any_ask_is_refused(prepared):
    learner, _ = hand_driven(prepared)
    with pytest.raises(ProtocolError, match="no query is pending; ask first"):
        learner.tell(Query.pull(0), Answer(np.array([0.5])))


def test_a_refused_answer_leaves_the_learner_as_it_was(prepared):
    # a NaN once stalled the learner for good; refused, the run goes on as if it never came
    learner, environment = hand_driven(prepared, seed=4)
    pulls = 0
    while not learner.done:
        query = learner.ask()
        with pytest.raises(ProtocolError):
            learner.tell(query, Answer(np.array([np.nan])))
        learner.tell(query, answer_of(environment, query))
        pulls += 1
    expected = run_once(prepared, 4)
    assert (pulls, learner.recommendation()) == (expected.iterations, expected.recommended)


def test_a_stopped_learner_refuses_to_ask(prepared):
    learner, environment = hand_driven(prepared)
    while not learner.done:
        query = learner.ask()
        learner.tell(query, answer_of(environment, query))
    with pytest.raises(ProtocolError, match="has stopped"):
        learner.ask()
    with pytest.raises(ProtocolError, match="no query is pending; the learner has stopped"):
        learner.tell(query, Answer(np.array([0.5])))


def test_asking_twice_hands_out_the_same_query_and_keeps_the_run_of_the_seed():
    # adaptive-uniform draws one uniform of its stream per ask: a second ask must not draw
    prepared = prepare(RunRequest.of("adaptive-uniform", "tuned", beta=0.25),
                       load(REPO / "instances" / "regret-1d.yaml"))
    learner, environment = hand_driven(prepared, seed=2)
    pulls = 0
    while not learner.done:
        query = learner.ask()
        assert learner.ask() is query
        learner.tell(query, answer_of(environment, query))
        pulls += 1
    expected = run_once(prepared, 2)
    assert (pulls, learner.recommendation()) == (expected.iterations, expected.recommended)


def test_drive_takes_a_checked_learner_through_the_checked_loop(prepared):
    learner, environment, _ = start_run(prepared, 1)
    outcome = drive(CheckedLearner(learner), environment, None)
    expected = run_once(prepared, 1)
    assert (outcome.used, learner.recommendation()) == (expected.iterations, expected.recommended)


def test_a_learner_that_reads_the_reward_refuses_an_answer_without_it():
    prepared = prepare(RunRequest.of("safe-lingape"), load(REPO / "instances" / "soare-safe.yaml"))
    learner, environment = hand_driven(prepared)
    query = learner.ask()
    answer = environment.answer(query)
    with pytest.raises(ProtocolError, match="reads the reward"):
        learner.tell(query, replace(answer, reward=None))
    learner.tell(query, answer)
