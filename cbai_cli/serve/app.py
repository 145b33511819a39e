"""The Starlette application of a served study, made from the route table.

For each route of :data:`~cbai_cli.serve.routes.ROUTES`: its parameters are read and
checked against their schemas, its JSON body (at most :data:`BODY_LIMIT` bytes) is parsed
and checked, and its function of :mod:`cbai_cli.serve.api` runs in the thread pool (the
session's calls block on SQLite). Every request first passes the token gate
(:mod:`cbai_cli.serve.auth`). Whatever goes wrong ends as ``{"error": "one line"}`` with a
4xx status (5xx when the study file fails, 500 for a bug, whose traceback goes to stderr),
never as a traceback to the client.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route as StarletteRoute

from cbai_cli.serve import api
from cbai_cli.serve.auth import allowed, given_token
from cbai_cli.serve.routes import COMMON_ERRORS, ROUTES, Route
from cbai_cli.serve.schema import SchemaError, check, coerce
from cbai_cli.serve.served import Served

#: The largest request body read: an answer is a few hundred bytes.
BODY_LIMIT = 64 * 1024
#: On every response: no caching (answers and queries change), no sniffing, no referrer
#: (links carry the token).
COMMON_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status, headers={**COMMON_HEADERS, **(headers or {})})


class TokenGate:
    """ASGI middleware: a request without the token, or with a wrong one, gets 401."""

    def __init__(self, app, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and not allowed(given_token(scope.get("query_string", b""), scope["headers"]),
                                                   self.token):
            response = error_response(401, "this server needs its token: add ?token=T to the link, or send the "
                                      "header Authorization: Bearer T", {"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _TooLarge(Exception):
    pass


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > BODY_LIMIT:
        raise _TooLarge
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > BODY_LIMIT:
            raise _TooLarge
    return bytes(data)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_body(data: bytes, schema: dict[str, Any]) -> Any:
    """The JSON document of a request body, checked against ``schema``; one
    :class:`SchemaError` line otherwise (NaN and Infinity are not JSON)."""
    if not data.strip():
        raise SchemaError("the body is empty; send a JSON object")
    try:
        value = json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise SchemaError(f"the body is not JSON: {reason[:120]}") from None
    check(schema, value)
    return value


def _params(route: Route, request: Request) -> dict[str, Any]:
    params = {}
    for param in route.params:
        source = request.path_params if param.where == "path" else request.query_params
        raw = source.get(param.name)
        if raw is None:
            if param.required:
                raise SchemaError(f"the {param.where} parameter {param.name!r} is missing ({param.description})")
            continue
        params[param.name] = coerce(param.schema, str(raw), param.name)
    return params


def _response(result: Any) -> Response:
    if isinstance(result, api.FileContent):
        return FileResponse(result.path, media_type=result.media_type, headers={**COMMON_HEADERS, **result.headers})
    if isinstance(result, api.Content):
        return Response(result.body, media_type=result.media_type, headers={**COMMON_HEADERS, **result.headers})
    return JSONResponse(result, headers=COMMON_HEADERS)


def _endpoint(route: Route, served: Served):
    function = getattr(api, route.operation)

    async def endpoint(request: Request) -> Response:
        try:
            params = _params(route, request)
            body = parse_body(await _read_body(request), route.body) if route.body is not None else None
            result = await run_in_threadpool(function, served, params, body)
            return _response(result)
        except _TooLarge:
            return error_response(413, f"the body is over {BODY_LIMIT:,} bytes; an answer is a few hundred")
        except Exception as error:
            status = api.status_of(error)
            if status == 500:
                traceback.print_exc(file=sys.stderr)
                return error_response(500, f"the server failed ({type(error).__name__}); see its output")
            return error_response(status, " ".join(str(error).split()) or type(error).__name__)

    endpoint.__name__ = route.operation
    return endpoint


async def _http_error(request: Request, error: HTTPException) -> JSONResponse:
    """Starlette's own refusals: no such route (404), a method the route does not take (405)."""
    if error.status_code == 405:
        message = f"{request.method} is not a method of {request.url.path} ({error.headers.get('Allow', '')})" \
            if error.headers else f"{request.method} is not a method of {request.url.path}"
    elif error.status_code == 404:
        message = f"no route {request.url.path}; see /openapi.json"
    else:
        message = COMMON_ERRORS.get(error.status_code, str(error.detail))
    return error_response(error.status_code, message, dict(error.headers or {}))


def build_app(served: Served) -> Starlette:
    """The application serving ``served``: every route of the table behind the token gate."""
    routes = [StarletteRoute(route.path, _endpoint(route, served), methods=[route.method]) for route in ROUTES]
    return Starlette(routes=routes, middleware=[Middleware(TokenGate, token=served.token)],
                     exception_handlers={HTTPException: _http_error})
