"""Third-party algorithms, regimes and kinds, each one module and one entry point: the example
plugin in examples/plugin installs with pip and runs from ``cbai solve`` and ``cbai compare``;
a kind written in one module with an algorithm of its own runs through ``cbai solve`` and joins
the contract tests by itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cbai_cli.contracts import plugins
from cbai_cli.algorithms import registry
from cbai_cli.contracts.errors import OptionError

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "plugin"
INSTANCE = ROOT / "instances" / "regret-1d.yaml"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    """The plugin installed by pip into a folder of its own (not into the test environment)."""
    target = tmp_path_factory.mktemp("plugin")
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                                str(target), str(PLUGIN)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    return target


def cbai(plugin_path: Path, *args: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "cbai_cli", *args], capture_output=True, text=True, env=environment,
                          cwd=ROOT)


def test_the_plugin_is_listed_with_its_capabilities(plugin_path):
    result = cbai(plugin_path, "algorithms", "--json")
    assert result.returncode == 0, result.stderr
    (entry,) = [entry for entry in json.loads(result.stdout)["algorithms"] if entry["name"] == "round-robin"]
    assert entry["kinds"] == ["cbai"] and entry["style"] == "adaptive"
    assert entry["regimes"] == ["theory", "det", "tuned", "ols", "best-of"]  # the plugin's own regime too


def test_the_plugin_solves_through_cbai_solve(plugin_path):
    result = cbai(plugin_path, "solve", str(INSTANCE), "--algo", "round-robin", "--regime", "det", "--runs", "3", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["algorithm"] == "round-robin" and document["regime"] == "det"
    assert all(run["correct"] and run["stopped"] == "solved" for run in document["runs"])


def test_the_plugin_runs_in_compare_worker_processes(plugin_path):
    result = cbai(plugin_path, "compare", "regret-1d", "--algos", "round-robin:det,g-acol:det", "--seeds", "3",
                  "--jobs", "2", "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    records = json.loads(result.stdout)["records"]
    assert sorted({record["algorithm"] for record in records}) == ["g-acol", "round-robin"]
    assert all(record["correct"] for record in records)


class Installed:
    """Installed entry points: ``points`` in the algorithms' group, none elsewhere."""

    def __init__(self, points) -> None:
        self.points = points

    def select(self, group):
        return self.points if group == registry.ENTRY_POINT_GROUP else []


def test_a_broken_plugin_is_a_one_line_error(monkeypatch):
    class Broken:
        name, value = "broken", "nowhere:ENTRY"

        def load(self):
            raise ImportError("No module named 'nowhere'")

    monkeypatch.setattr(plugins, "_READ", set())
    monkeypatch.setattr(plugins, "_installed", lambda: Installed([Broken()]))
    with pytest.raises(OptionError, match="algorithm plugin 'broken'"):
        registry.load_plugins()


def test_a_plugin_that_is_not_an_entry_is_rejected(monkeypatch):
    class Wrong:
        name, value = "wrong", "somewhere:THING"

        def load(self):
            return object()

    monkeypatch.setattr(plugins, "_READ", set())
    monkeypatch.setattr(plugins, "_installed", lambda: Installed([Wrong()]))
    with pytest.raises(OptionError, match="not an AlgorithmEntry"):
        registry.load_plugins()


def test_a_plugin_regime_is_accepted_by_every_adaptive_algorithm(plugin_path):
    result = cbai(plugin_path, "algorithms", "--json")
    assert result.returncode == 0, result.stderr
    listed = {entry["name"]: entry["regimes"] for entry in json.loads(result.stdout)["algorithms"]}
    assert "best-of" in listed["round-robin"] and "best-of" in listed["g-acol"] and "best-of" not in listed["acol"]
    result = cbai(plugin_path, "solve", str(INSTANCE), "--algo", "g-acol", "--regime", "best-of", "--runs", "2",
                  "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["regime"] == "best-of"
    assert all(run["correct"] and run["stopped"] == "solved" for run in document["runs"])


def test_the_plugin_regime_is_never_wider_than_either_form_at_half_delta():
    sys.path.insert(0, str(PLUGIN))
    try:
        from cbai_round_robin.regime import BestOfRegime
    finally:
        sys.path.remove(str(PLUGIN))
    from cbai_cli.numerics.confidence import ConfidenceSettings, radius_determinant, radius_horizon
    from cbai_cli.numerics.linalg import DesignState

    settings = ConfidenceSettings(delta=0.1, subgaussian=0.5, ridge=2.0, norm_bound=1.5)
    state = DesignState(np.eye(3), ridge=2.0)
    for pulls in range(40):
        state.update(pulls % 3, 0.3)
        radius = BestOfRegime(settings).radius(state)
        horizon = radius_horizon(state.n_samples, 3, 2.0, 0.5, 1.5, 1.0, 0.05)
        determinant = radius_determinant(state.logdet, 3, 2.0, 0.5, 1.5, 0.05)
        assert radius == min(horizon, determinant)
    assert not BestOfRegime(settings).compiled()  # no kernel code: its runs take the per-step loop


TOY_KIND = '''
from dataclasses import dataclass

from cbai_cli.kinds import KindEntry
from cbai_cli.kinds.base import InstanceKind

ENTRY = KindEntry("toy", "toykind:ToyKind")


@dataclass(frozen=True)
class ToyInstance:
    name: str
    kind: str = "toy"


class ToyKind(InstanceKind):
    name = "toy"
    summary = "a file format and nothing else"

    def parse(self, mapping, source):
        return ToyInstance(str(mapping.get("name", "toy")))
'''


@pytest.fixture(scope="module")
def toy_kind_path(tmp_path_factory) -> Path:
    """A kind registered through the ``cbai.kinds`` entry points of a distribution that a
    folder on the path holds (no pip)."""
    folder = tmp_path_factory.mktemp("toy")
    (folder / "toykind.py").write_text(TOY_KIND)
    info = folder / "toykind-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toykind\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbai.kinds]\ntoy = toykind:ENTRY\n")
    (folder / "toy.yaml").write_text("schema_version: 1\nkind: toy\nname: a-toy\n")
    return folder


def test_a_plugin_kind_is_read_and_says_in_one_line_what_it_lacks(toy_kind_path, tmp_path):
    toy = str(toy_kind_path / "toy.yaml")
    for args, said in ((["bound", toy], "cbai bound computes nothing for toy instances"),
                       (["solve", toy], "toy"),
                       (["session", "start", toy, "-o", str(tmp_path / "study.db")], "sessions run cbai instances")):
        result = cbai(toy_kind_path, *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and said in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_plugin_option_reaches_its_algorithm_from_solve_and_compare(plugin_path, tmp_path):
    assert "--first-arm" in cbai(plugin_path, "solve", "--help").stdout
    for first in (0, 3):
        trace = tmp_path / f"first-{first}.csv"
        result = cbai(plugin_path, "solve", str(INSTANCE), "--algo", "round-robin", "--regime", "det", "--first-arm",
                      str(first), "--budget", "4", "--trace", str(trace))
        assert result.returncode in (0, 1), result.stderr
        arms = [int(line.split(",")[1]) for line in trace.read_text().splitlines()[1:]]
        assert arms == [first, first + 1, first + 2, first + 3]
    result = cbai(plugin_path, "compare", "regret-1d", "--algos", "round-robin:det:first-arm=2", "--seeds", "1",
                  "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    (record,) = json.loads(result.stdout)["records"]
    assert record["algorithm_options"]["first_arm"] == 2
    result = cbai(plugin_path, "solve", str(INSTANCE), "--algo", "round-robin", "--first-arm", "-1")
    assert result.returncode == 2 and "--first-arm must be ≥ 0" in result.stderr


def test_a_plugin_option_cannot_take_a_name_or_flag_of_cbai():
    from cbai_cli.algorithms.registry import AlgorithmEntry, register
    from cbai_cli.contracts.options import OPTIONS, Option

    for clash in (Option("delta", "--delta-plugin", float, "clash by name"),
                  Option("my_delta", "--delta", float, "clash by flag")):
        entry = AlgorithmEntry("clashing", "nowhere", "Nothing", "a clash", ("cbai",), "adaptive",
                               options=("delta", clash.name), regime_style="adaptive", declares=(clash,))
        with pytest.raises(ValueError, match="clashes with the option"):
            register(entry)
        assert "clashing" not in registry.entries() and "my_delta" not in OPTIONS


COIN_KIND = '''"""A whole new kind in one module, with an algorithm of its own: coins with hidden biases,
flipped in turn; the answer is the coin that came up heads least often."""
from dataclasses import dataclass

import numpy as np

from cbai_cli.algorithms.registry import AlgorithmEntry, Configured
from cbai_cli.contracts.protocol import Answer, Query
from cbai_cli.kinds import KindEntry
from cbai_cli.kinds.base import InstanceKind

FLIPS = 30


@dataclass(frozen=True)
class Coins:
    name: str
    biases: tuple
    kind: str = "coins"

    @property
    def n_arms(self):
        return len(self.biases)

    @property
    def content_hash(self):
        return repr(self.biases)


class Flips:
    def __init__(self, biases, rng):
        self.biases, self.rng = np.asarray(biases), rng

    def answer(self, query):
        return Answer(self.rng.binomial(query.counts, self.biases[query.arms]).astype(float))


class RoundRobin:
    def __init__(self, coins, flips, rng):
        self.heads, self.flips, self.t = np.zeros(coins), flips, 0

    @property
    def done(self):
        return self.t >= self.flips

    def ask(self):
        return Query.pull(self.t % len(self.heads))

    def tell(self, query, answer):
        self.heads[query.arms] += answer.constraint
        self.t += 1

    def recommendation(self):
        return int(np.argmin(self.heads))


@dataclass(frozen=True)
class Flipped:
    seed: int
    iterations: int
    recommended: int
    stopped: str

    def record(self):
        return {"kind": "coins", "seed": self.seed, "iterations": self.iterations, "recommended": self.recommended,
                "correct": None, "violation": None, "stopped": self.stopped, "wall_s": 0.0}

    to_dict = record


@dataclass(frozen=True)
class Outcome:
    results: tuple
    hit_budget: bool = False

    def to_json(self):
        return {"runs": [result.to_dict() for result in self.results]}

    def render(self, out):
        out.print(f"lightest coin: {[result.recommended for result in self.results]}")


class CoinsKind(InstanceKind):
    name = "coins"
    summary = "coins with hidden biases"

    def parse(self, mapping, source):
        return Coins(str(mapping.get("name", "coins")), tuple(float(b) for b in mapping["biases"]))

    def example(self):
        return Coins("three", (0.2, 0.5, 0.8))

    def configure(self, spec, regime, request, instance, *, solve_oracle):
        budget = request.get("budget")
        return Configured(view=instance.n_arms, config=FLIPS, budget=budget, options={"budget": budget})

    def environment(self, instance, rng):
        return Flips(instance.biases, rng)

    def score(self, prepared, seed, learner, environment, observer, loop):
        return Flipped(seed, loop.used, learner.recommendation(), loop.stopped)

    def solve(self, prepared, results, trace_rows=(), bound=None, progress=None):
        return Outcome(tuple(results))

    def render_solve(self, outcome, out):
        outcome.render(out)


KIND = KindEntry("coins", "coinkind:CoinsKind")
ALGORITHM = AlgorithmEntry("coin-round-robin", "coinkind", "RoundRobin", "each coin in turn, 30 flips", ("coins",),
                           "adaptive", ("budget",))
'''


@pytest.fixture(scope="module")
def coin_kind_path(tmp_path_factory) -> Path:
    """A new kind and its algorithm, one module registered through entry points (no pip)."""
    folder = tmp_path_factory.mktemp("coins")
    (folder / "coinkind.py").write_text(COIN_KIND)
    info = folder / "coinkind-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: coinkind\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbai.kinds]\ncoins = coinkind:KIND\n\n"
                                           "[cbai.algorithms]\ncoin-round-robin = coinkind:ALGORITHM\n")
    (folder / "coins.yaml").write_text("kind: coins\nname: four\nbiases: [0.9, 0.1, 0.5, 0.7]\n")
    return folder


def test_a_new_kind_in_one_module_runs_through_solve(coin_kind_path):
    result = cbai(coin_kind_path, "solve", str(coin_kind_path / "coins.yaml"), "--runs", "3", "--json")
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]
    assert [run["iterations"] for run in runs] == [30, 30, 30] and {run["recommended"] for run in runs} == {1}


def test_a_new_kind_joins_the_contract_tests_by_itself(coin_kind_path):
    """The contract tests of every registered algorithm run the new kind's algorithm on the
    kind's own example, without a line of them changed."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(coin_kind_path), str(ROOT)])}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                             str(ROOT / "tests" / "algorithms" / "test_contract.py"), "-k", "coin"],
                            capture_output=True, text=True, env=environment, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "6 passed" in result.stdout, result.stdout[-500:]  # the six contract tests that apply to it
