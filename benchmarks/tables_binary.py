"""The generated tables of docs/binary.md: the ``--render`` output of benchmarks/binary_factor.py
and benchmarks/binary_own_mean.py for their results documents."""

from __future__ import annotations

import json

import binary_factor
import binary_own_mean
from results_tables import RESULTS


def document(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


def factor() -> str:
    """"Where the factor goes": both documents, seed 7's instance first (as ``--render`` joins them)."""
    documents = [document("binary_factor_seed7.json"), document("binary_factor_seeds12_5.json")]
    return binary_factor.render({**documents[0], "command": "`, `".join(item["command"] for item in documents),
                                 "instances": [item for each in documents for item in each["instances"]]})


BLOCKS = {"factor": factor, "own-mean": lambda: binary_own_mean.render(document("binary_own_mean.json"))}
