"""Every route of ``cbai session serve``, declared once, and the OpenAPI document made from it.

:data:`ROUTES` says, for each route, its method and path, its parameters, the schema of
its JSON body and of each response, and the error statuses it may answer with. The
application (:mod:`cbai_cli.serve.app`) routes and checks requests from this table and
:func:`openapi` writes it out as an OpenAPI 3.1 document, so the two cannot disagree.
Each route's ``operation`` names the function of :mod:`cbai_cli.serve.api` that answers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: A rater's id: a letter or digit first (so that no id reads as a spreadsheet formula in
#: the CSV log), then letters, digits, spaces and ``. _ @ -``; at most 64 characters.
RATER_PATTERN = r"^\w[\w .@-]{0,63}$"
RATER = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": RATER_PATTERN,
         "description": "a rater id is a letter or digit, then up to 63 letters, digits, spaces or . _ @ -"}
QUERY_ID = {"type": "integer", "minimum": 1, "maximum": 10**18, "description": "the query's id (from /api/next)"}

ERROR = {"type": "object", "required": ["error"], "additionalProperties": False,
         "properties": {"error": {"type": "string", "description": "what is wrong, in one line"}}}

QUERY = {
    "type": "object",
    "required": ["id", "arm", "label", "question", "answers", "numbers", "media", "media_type", "expires"],
    "properties": {
        "id": {"type": "integer", "description": "the query's id: give it back with the answer"},
        "arm": {"type": "integer", "description": "index of the arm (option) to judge"},
        "label": {"type": "string", "description": "the arm's label"},
        "question": {"type": "string", "description": "what to ask the rater"},
        "answers": {"type": "array", "items": {"type": "string"},
                    "description": "the answer labels, one button each (empty when numbers is true)"},
        "numbers": {"type": "boolean", "description": "whether the answer is a number typed by the rater"},
        "media": {"type": ["string", "null"], "description": "path of the arm's picture, video or sound (fetched "
                  "with the same token), or null"},
        "media_type": {"type": ["string", "null"], "description": "its media type (image/svg+xml, video/mp4, …), "
                       "or null"},
        "expires": {"type": ["number", "null"], "description": "unix time when the rater's lease on the query "
                    "ends (an answer after it is still kept), or null"},
    },
}
NEXT = {"type": "object", "required": ["done", "query"], "additionalProperties": False,
        "properties": {"done": {"type": "boolean", "description": "whether the study has stopped"},
                       "query": {**QUERY, "type": ["object", "null"],
                                 "description": "the query to answer; null when done, or when none is free now "
                                 "(ask again in a few seconds)"}}}
ANSWER_BODY = {
    "type": "object", "required": ["id", "rater", "answer"], "additionalProperties": False,
    "properties": {
        "id": QUERY_ID,
        "rater": RATER,
        "answer": {"type": ["string", "number"], "maxLength": 1000,
                   "description": "one of the query's answer labels, or a number when it asks for numbers"},
        "key": {"type": "string", "minLength": 1, "maxLength": 200,
                "description": "the client's idempotency key: an answer sent again with the same key is "
                "recorded once"},
    },
}
RECORDED = {"type": "object", "required": ["recorded", "surplus", "done"], "additionalProperties": False,
            "properties": {"recorded": {"type": "boolean", "enum": [True]},
                           "surplus": {"type": "boolean", "description": "the answer came after its query was "
                                       "complete: kept, but not told to the algorithm"},
                           "done": {"type": "boolean"}}}
SKIP_BODY = {"type": "object", "required": ["id", "rater"], "additionalProperties": False,
             "properties": {"id": QUERY_ID, "rater": RATER}}
SKIPPED = {"type": "object", "required": ["skipped"], "additionalProperties": False,
           "properties": {"skipped": {"type": "boolean", "enum": [True]}}}
UNDO_BODY = {"type": "object", "required": ["rater"], "additionalProperties": False, "properties": {"rater": RATER}}
UNDONE = {"type": "object", "required": ["undone", "query"], "additionalProperties": False,
          "properties": {"undone": {"type": "boolean", "enum": [True]},
                         "query": {**QUERY, "type": ["object", "null"],
                                   "description": "the query whose answer or skip was taken back, to be shown "
                                   "again; null when the study stopped meanwhile"}}}
NULLABLE_NUMBER = {"type": ["number", "null"]}
STATUS = {
    "type": "object",
    "required": ["algorithm", "delta", "answered", "pending", "done", "recommended", "guaranteed", "arms"],
    "properties": {
        "algorithm": {"type": "string"},
        "regime": {"type": ["string", "null"]},
        "options": {"type": "object", "description": "the algorithm's options the study runs with, by name"},
        "delta": {"type": "number", "description": "the error probability δ of the guarantee"},
        "answered": {"type": "integer", "description": "answers recorded"},
        "pending": {"type": "integer", "description": "queries handed out and not complete"},
        "done": {"type": "boolean"},
        "stopped": {"type": ["string", "null"], "description": "why the study stopped (solved, budget), or null"},
        "recommended": {"type": ["integer", "null"], "description": "the arm recommended (null: no feasible arm)"},
        "guaranteed": {"type": "boolean", "description": "whether the recommendation is correct with "
                       "probability ≥ 1 − δ"},
        "arms": {"type": "array", "items": {
            "type": "object", "required": ["arm", "lower", "upper", "state"],
            "properties": {"arm": {"type": "integer"}, "lower": NULLABLE_NUMBER, "upper": NULLABLE_NUMBER,
                           "state": {"type": "string",
                                     "enum": ["feasible", "uncertain", "dominated", "infeasible"]}}}},
        "surplus": {"type": "integer"},
        "skipped": {"type": "integer"},
        "raters": {"type": "object", "additionalProperties": {"type": "integer"},
                   "description": "answers per rater"},
        "leases": {"type": "array", "items": {"type": "object", "required": ["id", "rater", "expires"]}},
        "estimate": {"type": ["object", "null"], "description": "the estimate of the answers still needed"},
        "threshold": NULLABLE_NUMBER,
    },
}
RECORD = {
    "type": "object",
    "required": ["seq", "kind", "id", "arm", "rater", "answer", "value", "surplus", "undone", "time"],
    "properties": {
        "seq": {"type": "integer"}, "kind": {"type": "string", "enum": ["answer", "skip", "undo"]},
        "id": {"type": "integer"}, "arm": {"type": ["integer", "null"]}, "label": {"type": ["string", "null"]},
        "rater": {"type": ["string", "null"]}, "answer": {"type": ["string", "number", "null"]},
        "value": NULLABLE_NUMBER, "surplus": {"type": ["boolean", "null"]}, "undone": {"type": ["boolean", "null"]},
        "time": {"type": ["string", "number"]},
    },
}
LOG = {"type": "object", "required": ["records"], "additionalProperties": False,
       "properties": {"records": {"type": "array", "items": RECORD}}}
OPENAPI = {"type": "object", "required": ["openapi", "info", "paths"]}


@dataclass(frozen=True)
class Param:
    """A query or path parameter."""

    name: str
    where: str  # "query" or "path"
    schema: dict[str, Any]
    description: str
    required: bool = False


@dataclass(frozen=True)
class Reply:
    """A success response: its media type and, for JSON, its schema."""

    description: str
    media: str = "application/json"
    schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Route:
    """One route: ``operation`` names its function in :mod:`cbai_cli.serve.api`; ``errors``
    are the statuses (besides 401) it may answer with, each with an :data:`ERROR` body."""

    method: str
    path: str
    operation: str
    summary: str
    reply: Reply
    params: tuple[Param, ...] = ()
    body: dict[str, Any] | None = None
    errors: dict[int, str] = field(default_factory=dict)
    page: bool = False  # a page or a file for people, rather than the JSON API


STUDY_FAILED = "the study file failed (locked, full disk, removed)"
BAD_BODY = "malformed JSON, or a field missing or of the wrong type"

ROUTES: tuple[Route, ...] = (
    Route("GET", "/", "rater_page", "The rater page: one question at a time, answered by keyboard or buttons.",
          Reply("the page", "text/html"),
          params=(Param("rater", "query", RATER, "the rater's id (otherwise the page asks for it once)"),),
          errors={400: "a malformed rater id"}, page=True),
    Route("GET", "/dashboard", "dashboard", "The owner's dashboard; it reloads itself every few seconds.",
          Reply("the page", "text/html"), errors={503: STUDY_FAILED}, page=True),
    Route("GET", "/media/{arm}", "media", "An arm's picture (a driver arm's trajectory) or media file.",
          Reply("the picture or file", "image/*"),
          params=(Param("arm", "path", {"type": "integer", "minimum": 0}, "the arm's index", required=True),),
          errors={400: "an arm that is not a whole number", 404: "no such arm, or the arm has no media"},
          page=True),
    Route("GET", "/openapi.json", "openapi", "This document.", Reply("the OpenAPI 3.1 document", schema=OPENAPI)),
    Route("GET", "/api/next", "next_query", "The rater's query: their own pending one first, else a new or "
          "free one (leased to them for the server's --lease seconds).", Reply("the query, or none", schema=NEXT),
          params=(Param("rater", "query", RATER, "the rater's id", required=True),),
          errors={400: "no rater, or a malformed one", 503: STUDY_FAILED}),
    Route("POST", "/api/answer", "answer", "Record one answer; an answer after its query is complete is kept as "
          "surplus, never refused.", Reply("recorded", schema=RECORDED), body=ANSWER_BODY,
          errors={400: BAD_BODY, 404: "no query of that id", 422: "an answer the study's noise model cannot produce",
                  503: STUDY_FAILED}),
    Route("POST", "/api/skip", "skip", "The rater cannot judge this query: hand it to someone else.",
          Reply("skipped", schema=SKIPPED), body=SKIP_BODY,
          errors={400: BAD_BODY, 404: "no query of that id", 503: STUDY_FAILED}),
    Route("POST", "/api/undo", "undo", "Take back the rater's last answer or skip, within the server's "
          "--undo-seconds.", Reply("taken back; the query is theirs again", schema=UNDONE), body=UNDO_BODY,
          errors={400: BAD_BODY, 409: "nothing of this rater's to take back (none, or its grace period is over)",
                  503: STUDY_FAILED}),
    Route("GET", "/api/status", "status", "Where the study stands: counts, the recommendation, every arm's "
          "interval and state.", Reply("the status", schema=STATUS), errors={503: STUDY_FAILED}),
    Route("GET", "/api/log", "log", "Every answer, skip and undo in the order recorded.",
          Reply("the records (CSV with format=csv)", schema=LOG),
          params=(Param("format", "query", {"type": "string", "enum": ["json", "csv"]}, "json (default) or csv"),),
          errors={400: "an unknown format", 503: STUDY_FAILED}),
)

#: Answered by the application itself for any route.
COMMON_ERRORS = {401: "no token, or a wrong one (give ?token=T or the header Authorization: Bearer T)",
                 404: "no such route", 405: "a method the route does not take", 413: "a body over the size limit"}


def openapi(version: str, routes: tuple[Route, ...] = ROUTES) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``routes``."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        operation: dict[str, Any] = {"operationId": route.operation, "summary": route.summary}
        if route.params:
            operation["parameters"] = [{"name": param.name, "in": param.where, "required": param.required,
                                        "description": param.description, "schema": param.schema}
                                       for param in route.params]
        if route.body is not None:
            operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": route.body}}}
        content: dict[str, Any] = {route.reply.media: {"schema": route.reply.schema} if route.reply.schema else {}}
        if route.operation == "log":
            content["text/csv"] = {}
        responses: dict[str, Any] = {"200": {"description": route.reply.description, "content": content}}
        for status, description in sorted({401: COMMON_ERRORS[401], **route.errors}.items()):
            responses[str(status)] = {"description": description,
                                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        operation["responses"] = responses
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "cbai session serve", "version": version,
                 "description": "Ask raters the queries of a cbai study and record their answers. Every request "
                 "carries the server's token. Errors are {\"error\": \"one line\"}."},
        "paths": paths,
        "components": {"schemas": {"Error": ERROR},
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"},
                                           "token": {"type": "apiKey", "in": "query", "name": "token"}}},
        "security": [{"bearer": []}, {"token": []}],
    }
