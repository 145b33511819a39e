"""libyaml's parser (PyYAML's C loader) and PyYAML's own give the same values, the same
instances and the same one-line errors, and a long YAML file gets a hint to use NPZ."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from cbai_cli.io import files as fileio
from cbai_cli.contracts.errors import InstanceError
from cbai_cli.io.files import YAML_HINT_CHARACTERS, load_yaml, yaml_text
from cbai_cli.kinds import from_mapping

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted([*ROOT.glob("instances/*.yaml"), *ROOT.glob("examples/**/*.yaml"), *ROOT.glob("studies/*.yaml")])

needs_libyaml = pytest.mark.skipif(fileio._CParser is None, reason="PyYAML without libyaml has only its own parser")


def both(text: str) -> tuple:
    """The values of ``text`` by libyaml and by PyYAML's own parser."""
    return load_yaml(text, "t", fast=True), load_yaml(text, "t", fast=False)


@needs_libyaml
@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_shipped_yaml_file_reads_the_same_with_both_parsers(path):
    fast, pure = both(path.read_text(encoding="utf-8"))
    assert fast == pure
    if path.parent.name == "instances":
        assert from_mapping(fast, "t").content_hash == from_mapping(pure, "t").content_hash


@needs_libyaml
@settings(max_examples=25, deadline=None)
@given(st.sampled_from([("irrelevant-dims", {"d": 4, "eps": 0.1}), ("unit-sphere", {"d": 3, "n": 6}),
                        ("random", {"d": 3, "n": 7}), ("regret-1d", {}), ("amani-a", {"T": 100}),
                        ("soare-safe", {"d": 3})]),
       st.integers(0, 2**16), st.booleans())
def test_generated_instances_give_the_same_instance_with_both_parsers(family, seed, binary):
    from cbai_cli.kinds.cbai.families import generate_instance

    name, params = family
    seeded = {"seed": seed} if name in ("unit-sphere", "random") else {}
    noise = {"noise": "binary"} if binary and name == "unit-sphere" else {}  # its φᵀx lie in [−1, 1]
    instance = generate_instance(name, **noise, **params, **seeded)
    fast, pure = both(yaml_text(instance.to_mapping()))
    assert fast == pure
    assert from_mapping(fast, "t").content_hash == from_mapping(pure, "t").content_hash == instance.content_hash


values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@needs_libyaml
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), values, max_size=5))
def test_what_cbai_writes_reads_the_same_with_both_parsers(mapping):
    # not always the mapping written: a string with U+0085 (NEL) reads back with a space there,
    # by both parsers alike (PyYAML's writer leaves NEL unescaped, and YAML reads it as a line break)
    fast, pure = both(yaml_text(mapping))
    assert fast == pure


@needs_libyaml
@pytest.mark.parametrize("text", [
    "a: [1e-3, 2E+10, 1.5e3, -3e2, .5, -.inf, .nan]\nb: e5\nc: 1e\n",
    "a: 010\nb: 1:30\nc: 0b11\nd: 0o10\ne: 0x1F\nf: -1_000\ng: +7\n",
    "a: {yes: feasible, No: infeasible, on: 1, OFF: 2, true: 3}\nb: [yes, off, true, ~, null]\n",
    "base: &b {x: 1, y: [1, 2]}\nother: {<<: *b, x: 2}\nsame: *b\nwhen: 2026-12-04\n",
    "text: |\n  two\n  lines\nfolded: >\n  one\n  line\nquoted: 'it''s'\n",
])
def test_the_strict_rules_hold_for_both_parsers(text):
    fast, pure = both(text)
    # as JSON text, where a NaN equals a NaN
    assert json.dumps(fast, default=str, sort_keys=True) == json.dumps(pure, default=str, sort_keys=True)


@needs_libyaml
@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",
    "a: [1, 2\n",
    "a: &x [*x]\n",
    "a: 2026-13-45\n",
    "a: b: c\n",
    "- 1\n---\n- 2\n",
    "a: !!python/object:os.system x\n",
    "l0: &a [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n" + "".join(
        f"l{i}: &{chr(97 + i)} [{', '.join(['*' + chr(96 + i)] * 10)}]\n" for i in range(1, 8)),
])
def test_an_invalid_text_is_the_same_one_line_with_both_parsers(text):
    messages = []
    for fast in (True, False):
        with pytest.raises(InstanceError) as error:
            load_yaml(text, "t", fast=fast)
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "\n" not in messages[0]


@needs_libyaml
def test_libyaml_checks_the_aliases_of_the_document_itself():
    # ten levels of ten aliases: 10¹⁰ values, refused on the nodes libyaml composed
    text = "l0: &a [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n" + "".join(
        f"l{i}: &{chr(97 + i)} [{', '.join(['*' + chr(96 + i)] * 10)}]\n" for i in range(1, 10))
    with pytest.raises(fileio._AliasProblem, match="its aliases expand it to "):
        fileio.yaml.load(text, Loader=fileio._StrictCLoader)


def test_a_long_yaml_file_gets_a_hint_to_use_npz(tmp_path):
    # a long comment makes the file long without making it slow to read
    regret = (ROOT / "instances" / "regret-1d.yaml").read_text()
    long = tmp_path / "long.yaml"
    long.write_text(regret + "# " + "x" * YAML_HINT_CHARACTERS + "\n")
    run = subprocess.run([sys.executable, "-m", "cbai_cli", "bound", long, "--json"], capture_output=True, text=True,
                         timeout=600, env=os.environ)
    assert run.returncode == 0, run.stderr
    assert run.stderr == (f"cbai: warning: {long}: 5.0 MB of YAML takes seconds to read; the same instance as .npz "
                          "reads at once: cbai generate … -o FILE.npz, or python -c \"from cbai_cli.kinds import load, "
                          "save; save(load('FILE.yaml'), 'FILE.npz')\"\n")
    short = subprocess.run([sys.executable, "-m", "cbai_cli", "bound", ROOT / "instances" / "regret-1d.yaml", "--json"],
                           capture_output=True, text=True, timeout=600)
    assert short.returncode == 0 and short.stderr == ""
    assert json.loads(run.stdout) == json.loads(short.stdout)


def test_long_yaml_on_standard_input_gets_the_hint_too(monkeypatch):
    import io

    from cbai_cli.io.files import read_mapping

    said = []
    monkeypatch.setattr("sys.stdin", io.StringIO("a: 1\n# " + "x" * YAML_HINT_CHARACTERS + "\n"))
    assert read_mapping("-", said.append) == {"a": 1}
    assert len(said) == 1 and said[0].startswith("<stdin>: 5.0 MB of YAML takes seconds to read; ")


def test_yaml_that_reading_could_not_hold_in_memory_is_one_line(tmp_path, monkeypatch):
    from cbai_cli.io.files import read_mapping

    path = tmp_path / "f.yaml"
    path.write_text("a: [1, 2, 3]\n")  # 13 characters: 416 bytes while read
    monkeypatch.setenv("CBAI_MEMORY_LIMIT", str(415))
    with pytest.raises(InstanceError) as caught:
        read_mapping(path)
    assert str(caught.value) == (f"{path}: reading its 13 characters of YAML would hold about 416 bytes, more than the "
                                 "limit of 415 bytes (CBAI_MEMORY_LIMIT raises it); the same instance as .npz holds far less (cbai "
                                 "generate … -o "
                                 "FILE.npz)")
    monkeypatch.setenv("CBAI_MEMORY_LIMIT", str(416))
    assert read_mapping(path) == {"a": [1, 2, 3]}
