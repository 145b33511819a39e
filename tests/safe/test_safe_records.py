"""Every safe run gives the record it gave with the code of commit 6b8fc94, before δ, λ and S
became run options, the problems came to hold their settings and the run functions of
``cbai_cli.kinds.safe.environment`` gave way to ``cbai_cli.run.simulate``: the values in
``records_6b8fc94.json`` beside this file were computed with that commit's code by running this
module as a script (``PYTHONPATH=. python tests/safe/test_safe_records.py``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cbai_cli.kinds.cbai.families import family
from cbai_cli.compare.records import RECORD_KEYS
from cbai_cli.kinds import from_mapping, get
from cbai_cli.run.simulate import RunRequest, prepare, run_many, run_once

REFERENCE = Path(__file__).with_name("records_6b8fc94.json")

BALL_2D = {
    "kind": "safe-regret", "name": "ball-2d", "action_set": {"kind": "ball", "radius": 1.0},
    "mu_star": [0.5, -0.4], "B": [[1.0, 0.3], [0.3, 2.0]], "c": 0.3, "T": 400,
    "noise": {"kind": "gaussian", "sigma": 0.05}, "S": 0.8, "L": 1.0, "R": 0.05, "lambda": 0.5, "delta": 0.05,
}
FINITE_2D = {
    **BALL_2D, "name": "finite-2d", "L": 1.5,
    "action_set": {"kind": "finite", "arms": [[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [-0.5, 0.5], [-1.0, -1.0], [0.7, -0.2]]},
}


INSTANCES = {
    "amani-a": lambda: family("amani-a").generate(),
    "amani-b": lambda: family("amani-b").generate(),
    "soare-safe": lambda: family("soare-safe").generate(),
    "soare-safe-d4": lambda: family("soare-safe").generate(d=4, eta0=-0.3),
    "ball-2d": lambda: from_mapping(BALL_2D),
    "finite-2d": lambda: from_mapping(FINITE_2D),
}


# (instance, algorithm, options, seeds): short horizons and pull caps keep the whole check to seconds.
CASES = [
    ("amani-a", "safe-lucb", {"horizon": 1500}, (0, 1)),
    ("amani-a", "safe-lucb", {"horizon": 1200, "exploration": "300", "dw": "ellipsoid"}, (2,)),
    ("amani-a", "safe-lucb", {"horizon": 3000, "exploration": "heuristic"}, (0,)),
    ("amani-a", "safe-lucb", {"horizon": 800, "exploration": "t23"}, (5,)),
    ("amani-b", "safe-lucb", {"horizon": 1000, "exploration": "0", "intersect": True}, (0,)),
    ("amani-b", "safe-lucb", {"horizon": 1000}, (3,)),
    ("ball-2d", "safe-lucb", {}, (0,)),
    ("finite-2d", "safe-lucb", {"exploration": "50"}, (1,)),
    ("finite-2d", "safe-lucb", {"confidence_set": "ellipsoid", "exploration": "40"}, (0,)),
    ("soare-safe", "lingape", {}, (0, 1)),
    ("soare-safe", "lingape", {"rule": "ratio", "budget": 700}, (4,)),
    ("soare-safe", "safe-lingape", {}, (0,)),
    ("soare-safe", "safe-lingape", {"updates": "dynamic", "budget": 3000}, (1,)),
    ("soare-safe", "safe-lingape", {"rule": "ratio", "budget": 2500}, (2,)),
    ("soare-safe-d4", "safe-lingape", {"budget": 2000}, (0,)),
    ("soare-safe-d4", "lingape", {"budget": 1500}, (3,)),
]


def _plain(value):
    """``value`` with tuples as lists, as JSON reads it back."""
    return json.loads(json.dumps(value))


def _without_wall(run: dict) -> dict:
    return {key: value for key, value in run.items() if key != "wall_s"}


def observed(index: int) -> dict:
    """What case ``index`` gives: the options in effect, notes, record columns, run identity and
    each seed's run (``to_dict`` and the compare record, without wall times); ``run_many`` and
    ``run_once`` agree on every seed."""
    name, algorithm, options, seeds = CASES[index]
    instance = INSTANCES[name]()
    request = RunRequest.of(algorithm, **options)
    prepared = prepare(request, instance)
    kind = get(instance.kind)
    runs = run_many(prepared, seeds)
    assert [_without_wall(run.to_dict()) for run in runs] == [
        _without_wall(run_once(prepared, seed).to_dict()) for seed in seeds]
    return _plain({
        "case": [name, algorithm, options, list(seeds)],
        "options": dict(prepared.options), "notes": list(prepared.notes),
        "record_options": kind.record_options(prepared, RECORD_KEYS), "identity": kind.run_identity(request),
        "runs": [_without_wall(run.to_dict()) for run in runs],
        "records": [_without_wall(kind.result_record(run)) for run in runs],
    })


# The optimal safe action x* of a box is found in closed form (a fractional knapsack) where
# 6b8fc94 asked HiGHS: the two agree to one ulp, so regret measured against x* may differ in
# its last digits. Every other value, the actions played included, must be equal.
_AGAINST_X_STAR = frozenset({"regret", "regret_curve"})


def _same(a, b, close: bool = False) -> bool:
    """Equal, with NaN equal to NaN (a run without phase 2 has no x* fraction); with ``close``,
    floats within a relative 1e-13."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        if close:
            return math.isclose(a, b, rel_tol=1e-13, abs_tol=0.0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key], close or key in _AGAINST_X_STAR) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, close) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


@pytest.fixture(scope="module")
def reference() -> list[dict]:
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_a_safe_run_gives_the_record_of_commit_6b8fc94(reference, index):
    made, expected = observed(index), reference[index]
    assert made["case"] == expected["case"]
    for key in expected:
        assert _same(made[key], expected[key]), key


if __name__ == "__main__":
    REFERENCE.write_text(json.dumps([observed(index) for index in range(len(CASES))], indent=1) + "\n")
