"""Every shipped instance equals what its documented command regenerates."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cbai_cli.generators import family, make_noise
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
