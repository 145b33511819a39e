"""The generated tables of docs/binary.md: the ``--render`` output of benchmarks/binary_factor.py,
benchmarks/binary_delta.py, benchmarks/binary_own_mean.py and benchmarks/binary_rules.py for their
results documents; and README's yes/no table (:func:`headline_drivers`)."""

from __future__ import annotations

import binary_delta
import binary_factor
import binary_own_mean
import binary_rules
import report
import tables_track_and_stop
from results_tables import document, joined, overlaid


#: "The default against cbai's other guaranteed rules": every rule's runs, then the default's again
#: with the longer rollout bursts (``report.overlaid``).
DEFAULT_RUNS = ("binary_rules_default.json", "binary_rules_default_rollout.json")
#: "Frank–Wolfe vertex or target": each table's results documents.
RULES = {"rules-driver": ("binary_rules_driver.json",), "rules-fresh": ("binary_rules_fresh141.json",),
         "rules-worst": ("binary_rules_worst.json", "binary_rules_long.json", "binary_rules_long_s44.json"),
         "rules-held-out": ("binary_rules_held_out_200.json",), "rules-furthest": ("binary_rules_held_out_mru.json",),
         "rules-issue": ("binary_rules_issue504.json",),
         "rules-unforced": ("binary_rules_unforced.json", "binary_rules_unforced_504.json"),
         "rules-hysteresis": ("binary_rules_hysteresis_a.json", "binary_rules_hysteresis_b.json"),
         "rules-own-design": ("binary_rules_own_design_a.json", "binary_rules_own_design_b.json"),
         "rules-own-design-200": ("binary_rules_own_design_s1.json", "binary_rules_own_design_s4_s26.json"),
         "rules-rollout-screen": ("binary_rules_rollout_screen_a.json", "binary_rules_rollout_screen_b.json",
                                  "binary_rules_rollout_screen_c.json"),
         "rules-rollout": ("binary_rules_rollout_a.json", "binary_rules_rollout_b.json"),
         "rules-rollout-s4": ("binary_rules_rollout_s4_1000.json",)}

def screen() -> dict:
    """The screen of binary_rules_held_out.json (seeds 0–19) cut to its instances where `vertex-or-target`
    needs other queries than `vertex` in some run (on the others the two give the same queries, run by run)."""
    found = document("binary_rules_held_out.json")
    return {**found, "instances": [item for item in found["instances"]
                                   if item["rules"]["vertex-or-target"]["queries"] != item["rules"]["vertex"]["queries"]]}


def own_design_screen() -> dict:
    """The held-out screen of `hysteresis-own-design` (seeds 0–19; two documents that share four
    instances, kept once) cut to the instances where it needs other queries than the default
    (`track-and-stop`) in some run."""
    found = joined("binary_rules_own_design_held_out_1.json", "binary_rules_own_design_held_out_21.json")
    distinct = {item["source"]: item for item in found["instances"]}
    return differing({**found, "instances": list(distinct.values())}, "hysteresis-own-design")


def differing(document_: dict, rule: str) -> dict:
    """``document_`` cut to its instances where ``rule`` needs other queries than the default
    (`track-and-stop`) in some run."""
    return {**document_, "instances": [item for item in document_["instances"]
                                       if item["rules"][rule]["queries"] != item["rules"]["track-and-stop"]["queries"]]}


def deficit_s22() -> dict:
    """unit-sphere d=5 seed 22 with `vertex` and `maxrew-u` of binary_rules_held_out_200.json and `deficit`
    and `target` of binary_rules_s22_deficit.json: both ran seeds 0–199, so the paired means pair each seed's runs."""
    held_out, extra = document("binary_rules_held_out_200.json"), document("binary_rules_s22_deficit.json")
    added = extra["instances"][0]
    item = next(item for item in held_out["instances"] if item["source"] == added["source"])
    rules = {name: item["rules"][name] for name in binary_rules.REFERENCE} | added["rules"]
    return {**report.joined([held_out, extra]), "instances": [{**item, "rules": rules}]}


def options_of(rule: str) -> str:
    """A compiled rule of benchmarks/binary_rules.py (``RULE`` or ``RULE@COORDINATES``) as the
    ``cbai`` options that run it with ``ols``."""
    name, _, coordinates = rule.partition("@")
    algorithm, options = binary_rules.COMPILED[name]
    return ("`" + " ".join([f"--algo {algorithm}", *(f"--{key} {value}" for key, value in options.items()),
                            *([f"--coordinates {coordinates}"] if coordinates else [])]) + "`")


def headline_drivers() -> str:
    """README's yes/no table: for each driver of the rules-default block, the default's median
    queries (the document's first rule), their ratios to Theorem 1 and to its kl form, the best
    other rule (least median) with its ratio, and the default's runs right."""
    found = overlaid(*DEFAULT_RUNS)
    rows = ["| instance (yes/no answers) | Theorem 1 bound | median queries | ratio | ratio to kl form "
            "| best other guaranteed rule | its ratio | right |",
            "|---|---:|---:|---:|---:|---|---:|---:|"]
    for item in found["instances"]:
        if not item["source"].startswith("driver-"):
            continue
        bound, default, *others = item["bound"], *item["rules"]
        (medians, best), runs = binary_rules.best_other(item["rules"], others), item["rules"][default]
        seed = item["source"].removeprefix("driver-n200-seed").removesuffix(".yaml")
        rows.append(f"| `cbai driver-arms --n 200 --seed {seed}` | {bound:,.1f} | {medians[default]:,.0f} "
                    f"| {medians[default] / bound:.2f}× | {medians[default] / (bound * binary_rules.KL_FORM):.2f}× "
                    f"| {options_of(best)} | {medians[best] / bound:.2f}× | {runs['right']}/{len(runs['queries'])} |")
    counts = {len(item["rules"]) - 1 for item in found["instances"] if item["source"].startswith("driver-")}
    return "\n".join(rows) + (f"\n\nThe default (`--algo track-and-stop`) against {'/'.join(map(str, sorted(counts)))} "
                               "other guaranteed rules, 200 seeds, δ = 0.05, R = 1: "
                               "[docs/binary.md](docs/binary.md#the-default-against-cbais-other-guaranteed-rules)")


BLOCKS = {"factor": lambda: binary_factor.render(joined("binary_factor_seed7.json", "binary_factor_seeds12_5.json")),
          "own-mean": lambda: binary_own_mean.render(document("binary_own_mean.json")),
          "delta": lambda: binary_delta.render(document("binary_delta.json")),
          "floor-driver": lambda: tables_track_and_stop.floor("ols_floor_driver.md"),
          **{name: (lambda names=names: binary_rules.render(joined(*names))) for name, names in RULES.items()},
          "rules-default": lambda: binary_rules.render_first(overlaid(*DEFAULT_RUNS)),
          "rules-default-held-out": lambda: binary_rules.render_first(overlaid("binary_rules_default_held_out.json",
                                                                             "binary_rules_default_held_out_rollout.json")),
          "rules-default-1000": lambda: binary_rules.render_first(report.joined([
              overlaid("binary_rules_default_held_out_1000.json", "binary_rules_default_held_out_1000_rollout.json"),
              overlaid("binary_rules_default_s4_1000.json", "binary_rules_default_s4_1000_rollout.json"),
              document("binary_rules_default_long_1000.json")])),
          "rules-s185-pulls": lambda: binary_rules.render_pulls(document("binary_rules_s185_pulls.json")),
          "rules-ridges": lambda: binary_rules.render(joined("binary_rules_ridges_a.json", "binary_rules_ridges_b.json")),
          "rules-screen": lambda: binary_rules.render(screen()),
          "rules-s22": lambda: binary_rules.render(deficit_s22()),
          "rules-own-design-screen": lambda: binary_rules.render(own_design_screen()),
          "rules-rollout-held-out": lambda: binary_rules.render(
              differing(document("binary_rules_rollout_held_out.json"), "rollout-burst"))}
