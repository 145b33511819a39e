"""Every shipped instance equals what its documented command regenerates."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cbai_cli.kinds.cbai.families import family, make_noise
from cbai_cli.kinds import load

ROOT = Path(__file__).resolve().parents[1] / "instances"
COMMANDS = re.findall(r"`(cbai generate [^`]+)`", (ROOT / "README.md").read_text())


def test_every_instance_file_is_documented():
    documented = {shlex.split(command)[-1].split("/")[-1] for command in COMMANDS}
    shipped = {path.name for path in ROOT.iterdir() if path.suffix in (".yaml", ".npz")}
    assert documented == shipped


@pytest.mark.parametrize("command", COMMANDS)
def test_instance_matches_its_command(command):
    words = shlex.split(command)[2:]
    name, options = words[0], words[1:]
    output = Path(options[options.index("-o") + 1])
    params = {options[i][2:]: options[i + 1] for i in range(0, len(options), 2) if options[i] != "-o"}
    chosen = family(name)
    # Safe families carry their papers' noise in the instance; only CBAI families take a noise model.
    noise = make_noise(None, None, chosen.default_sigma) if chosen.takes_noise else None
    assert load(ROOT / output.name) == chosen.generate(noise, **params)


# Content hashes of the shipped files as computed before files without the truth
# existed: compare stores key their records on them, so they must never change.
SHIPPED_HASHES = {
    "amani-a.yaml": "1d61a8f76c83487d",
    "amani-b.yaml": "6b3ec67ddc0d011c",
    "irrelevant-dims-d10-eps0.05.yaml": "7e0740442939e92c",
    "random-d5-n20-seed0.yaml": "3c65f06bc15087d9",
    "regret-1d.yaml": "7f615c15b81b72d2",
    "soare-safe.yaml": "019c530e29c415e0",
    "unit-sphere-d30-n30-seed0.npz": "02d534791d19ec3e",
}


@pytest.mark.parametrize("name", sorted(SHIPPED_HASHES))
def test_content_hash_of_shipped_instance_is_unchanged(name):
    assert load(ROOT / name).content_hash == SHIPPED_HASHES[name]
