"""The generated tables of docs/binary.md: the ``--render`` output of benchmarks/binary_factor.py,
benchmarks/binary_own_mean.py and benchmarks/binary_rules.py for their results documents."""

from __future__ import annotations

import json

import binary_factor
import binary_own_mean
import binary_rules
import report
from results_tables import RESULTS


def document(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


def joined(*names: str) -> dict:
    """The results documents ``names`` as one, as ``--render`` joins them."""
    return report.joined([document(name) for name in names])


#: "Frank–Wolfe vertex or target": each table's results documents.
RULES = {"rules-driver": ("binary_rules_driver.json",), "rules-fresh": ("binary_rules_fresh141.json",),
         "rules-worst": ("binary_rules_worst.json", "binary_rules_long.json"),
         "rules-held-out": ("binary_rules_held_out_200.json",), "rules-furthest": ("binary_rules_held_out_mru.json",),
         "rules-issue": ("binary_rules_issue504.json",)}

BLOCKS = {"factor": lambda: binary_factor.render(joined("binary_factor_seed7.json", "binary_factor_seeds12_5.json")),
          "own-mean": lambda: binary_own_mean.render(document("binary_own_mean.json")),
          **{name: (lambda names=names: binary_rules.render(joined(*names))) for name, names in RULES.items()}}
