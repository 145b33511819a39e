"""What every page of the server shares: the document around its body, the style, and
the Content-Security-Policy that lets only the page's own script run.

Pages are self-contained (inline style and script, no font or library from elsewhere),
so they work on a network without the internet.
"""

from __future__ import annotations

import json
import secrets
from html import escape
from typing import Any

STYLE = """
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:18px;line-height:1.4;
color:#1d1d1f;background:#f5f5f7}
main{max-width:44rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .3rem}
button{font:inherit;font-size:1.15rem;min-height:3.2rem;padding:.6rem 1rem;border-radius:.6rem;
border:1px solid #8e8e93;background:#fff;color:inherit;cursor:pointer;width:100%;text-align:left}
button:hover:not(:disabled){background:#eef4ff}
button:disabled{opacity:.5;cursor:default}
button.primary{background:#0a60d8;border-color:#0a60d8;color:#fff}
kbd{display:inline-block;min-width:1.6em;padding:0 .35em;margin-right:.5em;border:1px solid #aaa;
border-radius:.3em;background:#f0f0f0;color:#333;font-family:ui-monospace,monospace;font-size:.85em;
text-align:center}
button.primary kbd{background:#fff}
input{font:inherit;font-size:1.25rem;width:100%;padding:.6rem;border-radius:.5rem;border:1px solid #8e8e93}
.stack{display:grid;grid-template-columns:1fr;gap:.6rem}
.row{display:grid;grid-template-columns:1fr 1fr;gap:.6rem;margin-top:1.2rem}
.label{font-weight:600;font-size:1.2rem;margin:.2rem 0}
.media{display:block;max-width:100%;max-height:55vh;margin:.5rem auto;border-radius:.4rem}
.muted{color:#6e6e73;font-size:.9rem}
.who{display:flex;justify-content:space-between;color:#6e6e73;font-size:.9rem}
#message{min-height:1.5em;color:#0a60d8}
#message.error{color:#b00020}
table{border-collapse:collapse;width:100%;font-size:.95rem;background:#fff}
th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.wide{max-width:64rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:.6rem}
.card{background:#fff;border-radius:.6rem;padding:.6rem .8rem}
.card b{display:block;font-size:1.4rem}
.plot{background:#fff;border-radius:.6rem;padding:.5rem}
.plot svg{display:block;width:100%;height:auto}
.state-feasible{color:#1b7f3b}.state-infeasible{color:#b00020}.state-dominated{color:#6e6e73}
[hidden]{display:none!important}
"""


def nonce() -> str:
    """A fresh nonce for one page's Content-Security-Policy."""
    return secrets.token_urlsafe(16)


def content_security_policy(script_nonce: str) -> str:
    """Only this page's own script and style run; requests, pictures and forms stay on
    this server; no other site may frame the page."""
    return (f"default-src 'none'; script-src 'nonce-{script_nonce}'; style-src 'nonce-{script_nonce}'; "
            "img-src 'self'; media-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def document(title: str, body: str, script_nonce: str, *, script: str = "", refresh: float | None = None,
             wide: bool = False) -> str:
    """A whole page: ``body`` (HTML) in the shared layout, ``script`` run at its end."""
    head = ['<meta charset="utf-8">', '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">', f"<title>{escape(title)}</title>",
            f'<style nonce="{script_nonce}">{STYLE}</style>']
    if refresh is not None:
        head.append(f'<meta http-equiv="refresh" content="{refresh:g}">')
    tail = f'<script nonce="{script_nonce}">{script}</script>' if script else ""
    return (f'<!doctype html><html lang="en"><head>{"".join(head)}</head>'
            f'<body><main class="{"wide" if wide else ""}">{body}</main>{tail}</body></html>')


def json_for_script(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element (no ``</script>``, no
    ``<!--``)."""
    return (json.dumps(value, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))
