"""How the benchmark scripts hand over their results: markdown printed and written to ``--out``,
JSON results documents, the per-step ask/tell loop they time, and the coordinates their runs
take."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any
from pathlib import Path


def emit(lines: Sequence[str], out: Path | None) -> str:
    """Print ``lines`` as one markdown text and write it to ``out`` when given; the text."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out is not None:
        out.write_text(text)
    return text


def joined(documents: Sequence[dict]) -> dict:
    """Results documents as one, for one ``--render``: the first's fields, every command
    (joined for the table's caption) and every instance, in the order given."""
    return {**documents[0], "command": "`, `".join(document["command"] for document in documents),
            "instances": [item for document in documents for item in document["instances"]]}


def overlaid(documents: Sequence[dict]) -> dict:
    """Results documents as one in which a later document's runs of a rule on a source replace the
    earlier runs of that rule there, for a table of rules of which some were re-run after their
    code changed: the first's fields and instances in its order, every command and date (joined
    for the caption). A later source the first lacks, or a replacement over other seeds, is an
    error rather than a row dropped or a rule compared on other runs."""
    instances = [{**item, "rules": dict(item["rules"])} for item in documents[0]["instances"]]
    by_source = {item["source"]: item for item in instances}
    for later in documents[1:]:
        for item in later["instances"]:
            if item["source"] not in by_source:
                raise ValueError(f"{item['source']} is not an instance of {documents[0]['command']}")
            rules = by_source[item["source"]]["rules"]
            for name, runs in item["rules"].items():
                if name in rules and len(runs["queries"]) != len(rules[name]["queries"]):
                    raise ValueError(f"{item['source']} {name}: {len(runs['queries'])} seeds replace "
                                     f"{len(rules[name]['queries'])}")
                rules[name] = runs
    dates = ", ".join(dict.fromkeys(document["date"] for document in documents))
    return {**joined(documents), "date": dates, "instances": instances}


def queries_cell(queries: Sequence[int], right: int, bound: float, kl_bound: float) -> str:
    """``1,049 (5.83× / 4.66×), 200/200``: the median of ``queries``, its ratios to Theorem 1 and
    to its kl form, and the runs right of all."""
    import numpy as np

    median = float(np.median(queries))
    return f"{median:,.0f} ({median / bound:.2f}× / {median / kl_bound:.2f}×), {right}/{len(queries)}"


def theorem_bounds(instance, delta: float) -> dict:
    """The Theorem 1 bound of ``instance`` at R = σ (R = 1 for yes/no answers) and its kl form,
    as a results row's ``bound`` and ``kl_bound``."""
    from cbai_cli.kinds.cbai.bounds import compute_bounds

    bounds = compute_bounds(instance, delta=delta)
    noise = bounds.noise_variance if bounds.noise_variance is not None else 1.0
    return {"bound": bounds.lower_bound * noise, "kl_bound": bounds.lower_bound_kl * noise}


def seeds_record(prepared, seeds: int) -> dict:
    """The queries of seeds 0 … ``seeds``−1 of ``prepared`` (:func:`cbai_cli.run.simulate.run_many`)
    and how many of those runs were right."""
    from cbai_cli.run.simulate import run_many

    results = run_many(prepared, range(seeds))
    return {"queries": [result.iterations for result in results],
            "right": sum(bool(result.correct) for result in results)}


def document(script: str, argv: Sequence[str] | None, **fields) -> dict:
    """A results document of ``script`` (its name under benchmarks/): the command as run (``argv``,
    or the process's arguments when None), today's date and ``fields``."""
    arguments = sys.argv[1:] if argv is None else argv
    return {"command": f"python benchmarks/{script} " + " ".join(arguments), "date": time.strftime("%Y-%m-%d"),
            **fields}


def write_document(results: dict, out: Path | None) -> None:
    """Write the results document ``results`` to ``out`` when given (indented JSON)."""
    if out is not None:
        out.write_text(json.dumps(results, indent=1) + "\n")


def results_parser(doc: str, sources: str = "sources") -> argparse.ArgumentParser:
    """The arguments every results-document script takes: its ``sources`` (instance files or specs),
    ``--seeds`` (200), ``--json`` and ``--render``; ``doc`` is the script's docstring."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(sources, nargs="*")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None, help="write the results document here")
    parser.add_argument("--render", type=Path, nargs="+", default=None,
                        help="print the tables of results documents (their instances in the order given)")
    return parser


def render_files(paths: Sequence[Path], render: Callable[[dict], str]) -> None:
    """Print ``render`` of the results documents at ``paths``, joined (a script's ``--render``)."""
    print(render(joined([json.loads(path.read_text()) for path in paths])))


def measure_each(script: str, argv: Sequence[str] | None, sources: Sequence, measure: Callable[[Any], dict],
                 render: Callable[[dict], str], out: Path | None, **fields) -> dict:
    """A results document of ``script`` with one instance per source (an instance file or spec, or what
    ``measure`` takes), ``measure(source)`` each, written to
    ``out`` after each (a long run keeps what it has measured) and printed through ``render``."""
    results = document(script, argv, **fields, instances=[])
    for source in sources:
        results["instances"].append(measure(source))
        write_document(results, out)
    print(render(results))
    return results


def ask_tell(learner, environment, limit: int) -> int:
    """Run ``learner`` against ``environment`` one ask and one tell at a time until it is done
    or has made ``limit`` pulls; the pulls made."""
    made = 0
    while made < limit and not learner.done:
        query = learner.ask()
        learner.tell(query, environment.answer(query))
        made += 1
    return made


def in_features(regime: str | None) -> dict:
    """The options of a run with ``regime`` that keep it in the features' coordinates
    (``coordinates="features"`` under ``ols``, whose runs otherwise take the arms' D-optimal
    coordinates; docs/ols.md, "The prior's shape"): the timing scripts and the comparisons of
    variants measured their results files there. Empty for the other regimes, which always run
    in the features, and under a checkout without the option, whose runs all do."""
    try:
        from cbai_cli.contracts.options import OPTIONS
    except ImportError:  # a checkout from before the options table: no coordinates to choose
        return {}
    return {"coordinates": "features"} if regime == "ols" and "coordinates" in OPTIONS else {}
