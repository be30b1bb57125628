"""The machine-facing API, /api/v1/ (OpenAPI schema at /api/v1/openapi.json, docs at /api/v1/docs)."""

from __future__ import annotations

import re
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja import NinjaAPI, Query, Status
from ninja.errors import AuthenticationError, HttpError, ValidationError

from ctxaudit.engine.formats import ContextFormatError
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.schemas import ErrorOut, EventAccepted, EventIn, EventOut
from ctxaudit.ingest.services import IdempotencyConflict, event_ingest
from ctxaudit.projects.audit import log_content_access
from ctxaudit.projects.auth import ApiKeyAuth, RateLimited

api = NinjaAPI(title="ctxaudit API", version="1", urls_namespace="api")


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


@api.exception_handler(ValidationError)
def _validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    first = exc.errors[0] if exc.errors else {}
    field = _field_of(first.get("loc", ()))
    msg = first.get("msg", "invalid")
    if field in ("before", "after") and len({_field_of(e.get("loc", ())) for e in exc.errors}) == 1:
        msg = 'must be a list of messages, an object like {"system", "messages"}, or a string'
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
                {"field": _field_of(e.get("loc", ())), "problem": e.get("msg")} for e in exc.errors[:20]
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
    if exc.status_code == 400 and "parse request body" in str(exc):
        body = {"error": "body is not valid JSON", "field": "body"}
    elif exc.status_code == 400 and "Idempotency-Key" in str(exc):
        body["field"] = "Idempotency-Key"
    elif exc.status_code == 403:
        body["field"] = "Authorization"
    return api.create_response(request, body, status=exc.status_code)


def event_urls(request: HttpRequest, event_id: int) -> dict[str, str]:
    """The event's API URL and its dashboard page, absolute."""
    return {
        "url": request.build_absolute_uri(f"/api/v1/events/{event_id}"),
        "ui_url": request.build_absolute_uri(reverse("ui:event-detail", args=[event_id])),
    }


def event_to_out(event: Event) -> dict[str, Any]:
    """GET /api/v1/events/<id> body (README "API")."""
    report = event.report or {}
    return {
        "id": event.pk,
        "status": event.status,
        "verdict": event.verdict,
        "session_id": event.session.external_id,
        "sequence": event.sequence,
        "strategy": event.strategy,
        "tokens": {"before": event.tokens_before, "after": event.tokens_after},
        "rules": [
            {
                k: r.get(k)
                for k in ("id", "text", "state", "strength", "role_before", "role_after", "evidence")
            }
            for r in report.get("rules", [])
        ],
        "findings": [
            {k: f.get(k) for k in ("kind", "severity", "rule_id", "message", "evidence")}
            for f in report.get("findings", [])
        ],
        "error": event.error or None,
    }


@api.post(
    "/events",
    auth=ApiKeyAuth("ingest"),
    response={
        202: EventAccepted,
        200: EventAccepted,
        400: ErrorOut,
        401: ErrorOut,
        403: ErrorOut,
        413: ErrorOut,
        422: ErrorOut,
        429: ErrorOut,
    },
    summary="Ingest one compression event",
)
def events_create(request: HttpRequest, payload: EventIn) -> Status[dict[str, Any]]:
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (0 < len(key) <= 200):
        raise HttpError(400, "Idempotency-Key must be 1-200 characters")
    try:
        event, created = event_ingest(project=request.project, spec=payload, idempotency_key=key)  # type: ignore[attr-defined]
    except ContextFormatError as exc:
        return Status(400, {"error": str(exc), "field": exc.field})
    except IdempotencyConflict as exc:
        return Status(422, {"error": str(exc), "field": "Idempotency-Key"})
    body = {
        "id": event.pk,
        "status": event.status,
        **event_urls(request, event.pk),
    }
    return Status(202 if created else 200, body)


@api.get(
    "/events",
    auth=ApiKeyAuth("read"),
    response={200: dict[str, Any], 400: ErrorOut},
    summary="Events of this project, newest first",
)
def events_list(
    request: HttpRequest,
    session_id: str | None = None,
    status: Literal["pending", "checked", "error"] | None = None,
    verdict: Literal["pass", "fail"] | None = None,
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0),
) -> Status[dict[str, Any]]:
    qs = (
        Event.objects.filter(project=request.project)
        .select_related("session")
        .order_by("-occurred_at", "-id")
    )  # type: ignore[attr-defined]
    if session_id is not None:
        qs = qs.filter(session__external_id=session_id)
    if status is not None:
        qs = qs.filter(status=status)
    if verdict is not None:
        qs = qs.filter(verdict=verdict)
    page = qs[offset : offset + limit]
    return Status(
        200,
        {
            "count": qs.count(),
            "events": [
                {
                    "id": e.pk,
                    "status": e.status,
                    "verdict": e.verdict,
                    "session_id": e.session.external_id,
                    "sequence": e.sequence,
                    "strategy": e.strategy,
                    "occurred_at": e.occurred_at.isoformat(),
                    **event_urls(request, e.pk),
                }
                for e in page
            ],
        },
    )


@api.get(
    "/events/{event_id}",
    auth=ApiKeyAuth("read"),
    response={200: EventOut, 404: ErrorOut},
    summary="One event with its check results",
)
def events_detail(request: HttpRequest, event_id: int) -> Status[dict[str, Any]]:
    event = Event.objects.select_related("session").filter(pk=event_id, project=request.project).first()  # type: ignore[attr-defined]
    if event is None:
        return Status(404, {"error": f"no event {event_id} in this project"})
    log_content_access(request, event, "api_read")
    return Status(200, event_to_out(event))


# POST /api/v1/gate (synchronous check; ctxaudit/regression/api.py).
from ctxaudit.regression.api import router as gate_router  # noqa: E402 - after `api` exists

api.add_router("", gate_router)

# GET /api/v1/alerts (ctxaudit/alerts/api.py).
from ctxaudit.alerts.api import router as alerts_router  # noqa: E402 - after `api` exists

api.add_router("", alerts_router)

# GET /api/v1/sessions/<session_id>/timeline (ctxaudit/timelines/api.py).
from ctxaudit.timelines.api import router as timelines_router  # noqa: E402 - routers register after the api exists

api.add_router("", timelines_router)
