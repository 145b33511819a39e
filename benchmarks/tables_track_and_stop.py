"""The generated tables of docs/track-and-stop.md, each from its results file."""

from __future__ import annotations


from results_tables import column, guaranteed_sections, markdown, read, recorded, tables

#: The three draws of ``benchmarks/guaranteed.py --fresh`` and their outputs; the irrelevant-dims
#: instances are the same in every draw, so only the first draw's are shown.
DRAWS = (("first", "guaranteed_fresh1.md"), ("held-out", "guaranteed_fresh21.md"), ("new", "guaranteed_fresh41.md"))


#: The columns of guaranteed.py's tables shown for each instance of the draws.
FRESH_COLUMNS = ("median queries [q25, q75]", "ratio to bound", "ratio to kl bound", "correct")


def fresh() -> str:
    """"Instances nobody tuned on": the default on every instance of the three draws."""
    rows = []
    for draw, name in DRAWS:
        for heading, table in guaranteed_sections(read(name)):
            if draw != DRAWS[0][0] and heading["instance"].startswith("irrelevant-dims"):
                continue
            rows += [(draw, heading["instance"], heading["bound"], *(column(table, row, header) for header in FRESH_COLUMNS))
                     for row in table.rows]
    return markdown(("draw", "instance (σ = 1)", "Theorem 1 bound", *FRESH_COLUMNS),
                    "|---|---|---:|" + "---:|" * len(FRESH_COLUMNS), rows)


def worst() -> str:
    """"Instances nobody tuned on": the worst held-out instances over 1,000 seeds."""
    return recorded("worst_held_out_1000.md")


def floor(name: str = "ols_floor.md") -> str:
    """"The floor of these intervals": every run of benchmarks/ols_floor.py in the results file ``name``, one table."""
    found = tables(read(name))
    return markdown(("instance", "bound", "track-and-stop (200 seeds)", "H_CLB design", "best fixed allocation",
                     "same, scale known (log λ/L²)"), found[0].alignment, [row for table in found for row in table.rows])


#: The parameters of a source that name a column of the κ table, and how.
SHORT = {"d": "d={}", "seed": "s{}"}


def short(source: str) -> str:
    """A column name for the source ``source``: its generator, d and seed
    (``random:d=5,n=20,seed=4,sigma=1`` → ``random d=5 s4``)."""
    generator, _, given = source.partition(":")
    values = dict(pair.split("=", 1) for pair in given.split(",") if pair)
    return " ".join([generator, *(label.format(values[key]) for key, label in SHORT.items() if key in values)])


def optimism() -> str:
    """"Why the answer is optimistic": median queries / bound of ``ols_versions.py --optimism``
    (answer_optimism.md), one row per κ of the answer rule, one column per instance."""
    table = tables(read("answer_optimism.md"))[0]
    sources = list(dict.fromkeys(row[1] for row in table.rows))
    medians = {(row[0], row[1]): row[3] for row in table.rows}
    rows = [(kappa, *(medians[kappa, source] for source in sources)) for kappa in dict.fromkeys(row[0] for row in table.rows)]
    return markdown(("κ", *map(short, sources)), "|---|" + "---:|" * len(sources), rows)


BLOCKS = {"fresh": fresh, "worst": worst, "floor": floor, "optimism": optimism}
