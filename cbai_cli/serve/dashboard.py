"""The owner's dashboard: where the study stands, as one page that reloads itself.

Shown: the recommendation and whether it is guaranteed at δ; counts of answers, surplus
answers (late ones, kept but not told to the algorithm), skips and pending queries; the
estimate of answers still needed ("—" when there is none); answers per rater; the leases
of pending queries (rater, time left); the arms by state with their labels and
intervals; and the plot of every arm's interval against τ (:mod:`cbai_cli.serve.plot`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote

from cbai_cli.io.render import method_text
from cbai_cli.serve.html import document

STATES = ("feasible", "uncertain", "dominated", "infeasible")
STATE_TITLES = {"feasible": "Feasible (certainly)", "uncertain": "Uncertain", "dominated": "Dominated (lower reward)",
                "infeasible": "Infeasible (certainly)"}


@dataclass(frozen=True)
class Snapshot:
    """What the dashboard shows, read from the study on its thread.

    Attributes:
        name: the study's name (its file name).
        status: :meth:`Status.to_json` of the study.
        labels: every arm's label.
        plot: the SVG of the intervals.
        token: the server's token, for the page's links.
        now: the unix time the snapshot was taken (leases are shown as time left).
    """

    name: str
    status: dict[str, Any]
    labels: tuple[str, ...]
    plot: str
    token: str
    now: float


def estimate_text(estimate: dict[str, Any] | None) -> str:
    """The estimate of answers still needed (:class:`cbai_cli.session.estimate.Estimate`
    as JSON), as shown: "—" when there is none."""
    if not estimate or not isinstance(estimate.get("remaining"), int):
        return "—"
    total = estimate.get("total")
    return f"{estimate['remaining']:,}" + (f" (of ~{total:,})" if isinstance(total, int) else "")


def _interval(arm: dict[str, Any]) -> str:
    """``[lower, upper]`` of an arm; JSON's null (an infinite bound) as ∞."""
    lower = "−∞" if arm.get("lower") is None else f"{arm['lower']:.3g}".replace("-", "−")
    upper = "∞" if arm.get("upper") is None else f"{arm['upper']:.3g}".replace("-", "−")
    return f"[{lower}, {upper}]"


def dashboard_page(snapshot: Snapshot, script_nonce: str, refresh: float) -> str:
    """The dashboard's HTML."""
    status, labels = snapshot.status, snapshot.labels
    token = quote(snapshot.token, safe="")

    def label(arm: int | None) -> str:
        return escape(labels[arm]) if arm is not None and 0 <= arm < len(labels) else "—"

    recommended = status.get("recommended")
    if recommended is None:
        answer = "no feasible arm" if status.get("done") else "none yet (no arm is known to be feasible)"
    else:
        answer = f"{label(recommended)} <span class=\"muted\">(arm {recommended})</span>"
    delta = status.get("delta")
    if status.get("guaranteed"):
        promise = f"guaranteed: correct with probability ≥ {1 - delta:g} (δ = {delta:g})"
    elif status.get("done"):
        promise = f"not guaranteed at δ = {delta:g} (the study stopped: {escape(str(status.get('stopped')))})"
    else:
        promise = f"not guaranteed yet: the current best guess (the guarantee is at δ = {delta:g})"
    state = f"done ({escape(str(status.get('stopped')))})" if status.get("done") else "running"
    method = method_text(str(status.get("algorithm")), status.get("regime"), status.get("options") or {})
    cards = [("answers", f"{status.get('answered', 0):,}"), ("surplus", f"{status.get('surplus', 0):,}"),
             ("skipped", f"{status.get('skipped', 0):,}"), ("pending queries", f"{status.get('pending', 0):,}"),
             ("answers still needed", estimate_text(status.get("estimate"))),
             ("raters", f"{len(status.get('raters') or {}):,}")]
    parts = [f"<h1>{escape(snapshot.name)} — dashboard</h1>",
             f'<p class="muted">{escape(method)} · {state} · this page reloads '
             f"every {refresh:g} s</p>",
             f'<div class="card"><span class="muted">Recommended arm</span><b id="recommended">{answer}</b>'
             f'<span id="guarantee">{promise}</span></div>',
             '<h2>Answers</h2><div class="cards">'
             + "".join(f'<div class="card"><b>{value}</b><span class="muted">{escape(name)}</span></div>'
                       for name, value in cards) + "</div>",
             "<h2>Intervals of φᵀx against τ</h2>", f'<div class="plot">{snapshot.plot}</div>']
    parts += _raters(status.get("raters") or {})
    parts += _leases(status.get("leases") or [], snapshot.now)
    parts += _arms(status.get("arms") or [], labels)
    parts.append(f'<h2>Links</h2><p><a href="/?token={token}">rater page</a> · '
                 f'<a href="/api/status?token={token}">status (JSON)</a> · '
                 f'<a href="/api/log?format=csv&amp;token={token}">log (CSV)</a> · '
                 f'<a href="/openapi.json?token={token}">API (OpenAPI)</a></p>')
    return document(f"{snapshot.name} — dashboard", "".join(parts), script_nonce, refresh=refresh, wide=True)


def _raters(raters: dict[str, int]) -> list[str]:
    if not raters:
        return ["<h2>Raters</h2><p class=\"muted\">No answers yet.</p>"]
    rows = "".join(f"<tr><td>{escape(str(rater))}</td><td class=\"num\">{count:,}</td></tr>"
                   for rater, count in sorted(raters.items(), key=lambda item: (-item[1], str(item[0]))))
    return [f'<h2>Raters</h2><table id="raters"><tr><th>rater</th><th class="num">answers</th></tr>{rows}</table>']


def _leases(leases: list[dict[str, Any]], now: float) -> list[str]:
    if not leases:
        return ["<h2>Leases</h2><p class=\"muted\">No query is leased to a rater now.</p>"]
    rows = []
    for lease in leases:
        expires = lease.get("expires")
        left = "—" if expires is None else f"{max(0, round(expires - now))} s (until " \
            f"{time.strftime('%H:%M:%S', time.localtime(expires))})"
        rows.append(f"<tr><td class=\"num\">{lease.get('id')}</td><td>{escape(str(lease.get('rater')))}</td>"
                    f"<td>{left}</td></tr>")
    return ['<h2>Leases</h2><table id="leases"><tr><th class="num">query</th><th>rater</th><th>time left</th></tr>'
            + "".join(rows) + "</table>"]


def _arms(arms: list[dict[str, Any]], labels: tuple[str, ...]) -> list[str]:
    parts = ["<h2>Arms by state</h2>"]
    for state in STATES:
        members = [arm for arm in arms if arm.get("state") == state]
        if not members:
            continue
        rows = "".join(f"<tr><td class=\"num\">{arm['arm']}</td><td>{escape(labels[arm['arm']])}</td>"
                       f"<td class=\"num\">{_interval(arm)}</td></tr>" for arm in members)
        parts.append(f'<h3 class="state-{state}">{STATE_TITLES[state]}: {len(members)}</h3>'
                     f'<table class="arms" data-state="{state}"><tr><th class="num">arm</th><th>label</th>'
                     f'<th class="num">interval of φᵀx</th></tr>{rows}</table>')
    return parts
