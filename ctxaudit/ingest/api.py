"""The events endpoints of /api/v1/: POST and GET /events (a router; the hub is ctxaudit/api.py)."""

from __future__ import annotations

from typing import Any, Literal, cast

from django.http import HttpRequest
from django.urls import reverse
from ninja import Query, Router, Status
from ninja.errors import HttpError

from ctxaudit.core.http import ApiRequest
from ctxaudit.engine.formats import ContextFormatError
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.sanitize import stored_identifiers
from ctxaudit.ingest.schemas import ErrorOut, EventAccepted, EventIn, EventOut
from ctxaudit.ingest.services import IdempotencyConflict, event_ingest
from ctxaudit.projects.audit import log_content_access
from ctxaudit.projects.auth import ApiKeyAuth

router = Router()


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
        "strategy_family": event.strategy_family,
        "tokens": {"before": event.tokens_before, "after": event.tokens_after},
        "rules": [
            {
                **{
                    k: r.get(k)
                    for k in (
                        "id",
                        "text",
                        "state",
                        "strength",
                        "role_before",
                        "role_after",
                        "evidence",
                        "by_meaning",
                    )
                },
                "demoted": bool(
                    r.get("demoted")
                ),  # apart from state: a retained rule may have left the system role
            }
            for r in report.get("rules", [])
        ],
        "findings": [
            {k: f.get(k) for k in ("kind", "severity", "rule_id", "message", "evidence")}
            for f in report.get("findings", [])
        ],
        "error": event.error or None,
    }


@router.post(
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


@router.get(
    "/events",
    auth=ApiKeyAuth("read"),
    response={200: dict[str, Any], 400: ErrorOut},
    summary="Events of this project, newest first",
)
def events_list(
    request: HttpRequest,
    session_id: str | None = None,
    status: Literal["pending", "checked", "error"] | None = None,
    verdict: Literal["pass", "fail", "no_rules"] | None = None,
    limit: int = Query(50, ge=1, le=500),  # type: ignore[type-arg]
    offset: int = Query(0, ge=0, le=2**31 - 1),  # type: ignore[type-arg]
) -> Status[dict[str, Any]]:
    qs = (
        Event.objects.filter(project=cast(ApiRequest, request).project)
        .select_related("session")
        .order_by("-occurred_at", "-id")
    )
    if session_id is not None:
        qs = qs.filter(session__external_id__in=stored_identifiers(request.project, session_id))  # type: ignore[attr-defined]
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
                    "strategy_family": e.strategy_family,
                    "occurred_at": e.occurred_at.isoformat(),
                    **event_urls(request, e.pk),
                }
                for e in page
            ],
        },
    )


@router.get(
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
