"""δ-correctness with yes/no answers, measured: the adaptive algorithms with the ``ols``
regime err in at most δ of 1,000 seeded runs on a small hard instance whose answers are
±1 (``noise: {kind: binary}``, docs/binary.md), within the binomial margin of
tests/algorithms/test_guarantee.py (at most 130 errors at δ = 0.1: a δ-correct algorithm
fails with probability below 0.1 %).

Why it holds for any sampling rule: the stop and the answer are the elimination of the
``ols`` intervals, which hold at all times with probability 1 − δ whatever decided the
pulls (docs/ols.md, Theorem: x_s is F_{s−1}-measurable), and a ±1 answer is 1-sub-Gaussian
about its mean whatever the mean (Hoeffding's lemma), so R = 1 is honest. A sampling rule
only decides when the run stops.

The instance: the two arms of the Gaussian test (unit length, 60° apart, rewards 2 and 1,
τ = 0), φ = g·(1, −√3) so that arm 0 (more rewarding) has mean +g (infeasible) and arm 1
(the answer) −g; g = 0.3 keeps the answers near even, where their variance 1 − g² = 0.91
is close to the R² = 1 the intervals assume, and the runs short.

Measured (seeds 0–999, δ = 0.1, ``ols`` in its default coordinates, the arms' D-optimal ones):
no case errs in any run; the medians are 221 answers (track-and-stop, maxrew-u) to 309
(greedy-maxvar), the longest run 1,035. The test of the
test: with the ``ols`` intervals scaled by 0.3 (``POWER``) track-and-stop errs in 313 runs, far
above the 130 allowed; by 0.5, in 40 (it passes), so the test catches intervals about three
times too narrow, a wrong elimination or answer, or a run that does not stop, not intervals
a little too narrow.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cbai_cli.algorithms.registry import entries
from cbai_cli.kinds.cbai.instance import Instance
from cbai_cli.kinds.cbai.noise import BinaryNoise
from cbai_cli.numerics.confidence import REGIMES
from cbai_cli.run.simulate import RunRequest, prepare, run_many
from tests.algorithms.test_guarantee import ALLOWED_ERRORS, DELTA, RUNS, scaled_regime

GAP = 0.3
BUDGET = 100_000
#: the scale of the too-narrow intervals of the test of the test (at 0.1 the runs stop after
#: two answers, which shows no more than that the stop reads the intervals)
POWER = 0.3


def hard_binary_instance(gap: float = GAP) -> Instance:
    """Arms (1, 0) and (cos 60°, sin 60°), rewards 2 and 1, τ = 0, yes/no answers with means
    +gap (arm 0, infeasible) and −gap (arm 1, the answer)."""
    arms = np.array([[1.0, 0.0], [math.cos(math.pi / 3), math.sin(math.pi / 3)]])
    constraint = np.linalg.solve(arms, np.array([gap, -gap]))
    return Instance(name=f"two-arms-60deg-binary-gap{gap:g}", arms=arms, constraint=constraint,
                    reward_values=np.array([2.0, 1.0]), threshold=0.0, noise=BinaryNoise(),
                    constraint_norm_bound=float(np.linalg.norm(constraint)))


def ols_cases() -> list[str]:
    """Every ``cbai`` algorithm that always stops and accepts the ``ols`` regime."""
    return [name for name, entry in entries().items()
            if "cbai" in entry.kinds and entry.guaranteed_stop and "ols" in entry.regimes]


def errors(algorithm: str, regime: str) -> int:
    """Wrong answers in ``RUNS`` runs (seeds 0 …) at δ = ``DELTA``; every run must stop by itself."""
    prepared = prepare(RunRequest.of(algorithm, regime, delta=DELTA, budget=BUDGET), hard_binary_instance())
    results = run_many(prepared, range(RUNS))
    assert all(result.stopped == "solved" for result in results)
    return sum(not result.correct for result in results)


def test_the_hard_binary_instance_has_means_plus_and_minus_gap_and_answer_arm_1():
    instance = hard_binary_instance()
    assert instance.gaps == pytest.approx([GAP, -GAP]) and instance.best_arm == 1
    assert instance.noise.kind == "binary"


def test_the_default_and_maxrew_u_are_among_the_cases():
    assert {"track-and-stop", "maxrew-u", "g-acol"} <= set(ols_cases())


@pytest.mark.parametrize("algorithm", ols_cases())
def test_yes_no_answers_err_in_at_most_delta_of_runs_within_the_binomial_margin(algorithm):
    assert errors(algorithm, "ols") <= ALLOWED_ERRORS


def test_ols_intervals_scaled_down_fail_the_test_on_yes_no_answers(monkeypatch):
    scaled = scaled_regime("ols", POWER)
    monkeypatch.setitem(REGIMES, scaled.name, scaled)
    assert errors("track-and-stop", scaled.name) > ALLOWED_ERRORS
