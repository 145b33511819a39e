"""``cbai algorithms``: the registry listed as JSON, as a table or as Markdown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class Listing:
    """``cbai algorithms``: every registered entry, as JSON, as a table or as Markdown."""

    def to_json(self) -> dict[str, Any]:
        """``{"algorithms": [...]}``, one description per entry."""
        from cbai_cli.algorithms.registry import entries

        return {"algorithms": [entry.describe() for entry in entries().values()]}

    def render(self, out: Console) -> None:
        """One row per registered algorithm, then the authors' aliases."""
        from cbai_cli.algorithms.registry import ALIASES, entries

        table = Table(title="Algorithms (options: cbai algorithms --json, or cbai solve --help)", header_style="bold")
        for column in ("name", "instance kinds", "style", "regimes (default first)", "description"):
            table.add_column(column, no_wrap=column in ("name", "instance kinds"))
        for entry in entries().values():
            table.add_row(entry.name, ", ".join(entry.kinds), entry.style, ", ".join(entry.regimes) or "—", entry.summary)
        out.print(table)
        aliases = ", ".join(f"{name} → {alias.target} ({alias.regime})" for name, alias in ALIASES.items())
        out.print(f"Aliases from the authors' code: {aliases}")

    def to_markdown(self) -> str:
        """Every algorithm (kinds, style, regimes with the default first, summary), then the
        regimes (:func:`cbai_cli.numerics.confidence.regimes_markdown`): the README's tables."""
        from cbai_cli.algorithms.registry import entries
        from cbai_cli.numerics.confidence import regimes_markdown

        rows = ["| name | instance kinds | style | regimes (default first) | what it does |", "| --- | --- | --- | --- | --- |"]
        rows += [f"| `{entry.name}` | {', '.join(entry.kinds)} | {entry.style} | {', '.join(entry.regimes) or '—'} | "
                 f"{entry.summary} |" for entry in entries().values()]
        return "\n".join(rows) + "\n\n" + regimes_markdown()
