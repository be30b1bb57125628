"""The machine-facing API hub, /api/v1/: one NinjaAPI that each app contributes its router to.

It sits on the top floor (beside urls.py) so that no app imports another app's API. The error
handlers live here because they shape every router's answers: a JSON body naming the field.
OpenAPI schema at /api/v1/openapi.json, docs at /api/v1/docs.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from ctxaudit.alerts.api import router as alerts_router
from ctxaudit.ingest.api import router as events_router
from ctxaudit.ingest.nesting import JsonParser, TooDeep
from ctxaudit.projects.api import router as rules_router
from ctxaudit.projects.auth import RateLimited
from ctxaudit.regression.api import router as gate_router
from ctxaudit.timelines.api import router as timelines_router

# JsonParser: a body nested too deep for json.loads gets "nested deeper than …", not "not valid JSON".
api = NinjaAPI(
    title="ctxaudit API",
    version="1",
    urls_namespace="api",
    parser=JsonParser(),
    # Swagger renders this on the docs page: the way back for a person who opened it from the UI.
    description="[← Back to the ctxaudit dashboard](/) · Keys: `manage.py create_api_key`.",
)

# Order is the OpenAPI document's order: events, gate, alerts, timelines.
api.add_router("", events_router)
api.add_router("", gate_router)
api.add_router("", alerts_router)
api.add_router("", timelines_router)
api.add_router("", rules_router)


# Pydantic names union branches in error locations ("before.list[any]"); users name fields.
_UNION_BRANCH = re.compile(r"^(list|dict|str|int|float|bool|function-.*|json-or-python.*)(\[.*\])?$")


def _field_of(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [
        p for p in loc if p not in ("body", "payload") and not (isinstance(p, str) and _UNION_BRANCH.match(p))
    ]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "body"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _sent_value(request: HttpRequest, loc: tuple[Any, ...] | list[Any]) -> Any:
    """The value the client sent at pydantic location `loc` (ninja drops it from the error)."""
    try:
        node: Any = json.loads(request.body)
    except ValueError:
        return None
    for part in loc:
        if part in ("body", "payload") or (isinstance(part, str) and _UNION_BRANCH.match(part)):
            continue
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _problem(request: HttpRequest, error: dict[str, Any]) -> tuple[str, str]:
    """(field, problem) of one pydantic error, in users' words."""
    field = _field_of(error.get("loc", ()))
    kind = error.get("type")
    if kind == "too_deep":
        return str(error.get("ctx", {}).get("path") or field), str(error.get("msg"))
    sent = _sent_value(request, error.get("loc", ())) if kind == "string_unicode" else None
    if isinstance(sent, str):
        m = _SURROGATE.search(sent)
        if m:
            # Content keeps a U+FFFD in its place; an identifier must be exact, so it is refused.
            return field, (
                f"contains a lone surrogate U+{ord(m.group()):04X} at character {m.start()}, which is "
                "not valid Unicode; identifiers are kept exactly, so send valid UTF-8 (or a complete "
                "surrogate pair in a JSON \\u escape)"
            )
    return field, str(error.get("msg", "invalid"))


@api.exception_handler(ValidationError)
def _validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    first = exc.errors[0] if exc.errors else {}
    field, msg = _problem(request, first)
    if field in ("before", "after") and len({_field_of(e.get("loc", ())) for e in exc.errors}) == 1:
        shape = 'a list of messages, an object like {"system", "messages"}, or a string'
        # A context left out is "required", not "not a list" (it was never sent).
        msg = f"is required: {shape}" if first.get("type") == "missing" else f"must be {shape}"
    if field == "body" and first.get("type") == "missing" and not request.body:
        chunked = "chunked" in request.headers.get("Transfer-Encoding", "").lower()
        hint = "; chunked uploads are not supported, send Content-Length" if chunked else ""
        return api.create_response(
            request, {"error": f"the request body is empty{hint}", "field": "body"}, status=400
        )
    if first.get("type") == "json_invalid" or field == "body" and "JSON" in msg:
        return api.create_response(request, {"error": "body is not valid JSON", "field": "body"}, status=400)
    return api.create_response(
        request,
        {
            "error": f"{field}: {msg}",
            "field": field,
            "errors": [
                {"field": f, "problem": p} for f, p in (_problem(request, e) for e in exc.errors[:20])
            ],
        },
        status=400,
    )


@api.exception_handler(AuthenticationError)
def _auth_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return api.create_response(
        request, {"error": "missing or invalid API key", "field": "Authorization"}, status=401
    )


@api.exception_handler(RateLimited)
def _rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = api.create_response(request, {"error": str(exc)}, status=429)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    body: dict[str, Any] = {"error": str(exc)}
    if isinstance(exc.__cause__, TooDeep):
        body = {"error": str(exc.__cause__), "field": exc.__cause__.field}
    elif exc.status_code == 400 and "parse request body" in str(exc):
        body = {"error": "body is not valid JSON", "field": "body"}
    elif exc.status_code == 400 and "Idempotency-Key" in str(exc):
        body["field"] = "Idempotency-Key"
    elif exc.status_code == 403:
        body["field"] = "Authorization"
    return api.create_response(request, body, status=exc.status_code)
