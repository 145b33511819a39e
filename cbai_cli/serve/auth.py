"""The access token of a served study: who may see the pages and call the API.

Every request carries the token, as ``?token=T`` (links, pictures, the page's own
requests) or as the header ``Authorization: Bearer T`` (API clients); it is compared in
constant time, so the time of a refusal does not tell how much of a guess was right.
"""

from __future__ import annotations

import hmac
import re
import secrets
from urllib.parse import parse_qs

from cbai_cli.contracts.errors import OptionError

#: A token goes into links as it is: URL-safe characters only.
TOKEN_PATTERN = r"[A-Za-z0-9_~.-]{8,256}"


def new_token() -> str:
    """A random token of 32 bytes (43 URL-safe characters)."""
    return secrets.token_urlsafe(32)


def checked_token(token: str | None) -> str:
    """``--token`` as given, or a new one; one line when it cannot go into a link or is too
    short to keep anyone out."""
    if token is None:
        return new_token()
    if re.fullmatch(TOKEN_PATTERN, token) is None:
        raise OptionError("--token must be 8 to 256 characters among letters, digits and _ ~ . - (it goes into "
                          "links as it is); leave it out to get a random one", "token")
    return token


def given_token(query_string: bytes, headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token a request carries: the Bearer header first, else ``?token=``; None without one."""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                return credentials.strip()
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("token")
    return values[-1] if values else None


def allowed(given: str | None, token: str) -> bool:
    """Whether ``given`` is the token; the comparison takes the same time wherever the two differ."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode("utf-8"))
