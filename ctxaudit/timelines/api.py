"""GET /api/v1/sessions/<session_id>/timeline: a session's rule decay timeline as JSON."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import Router, Status
from pydantic import BaseModel

from ctxaudit.ingest.models import Session
from ctxaudit.ingest.sanitize import stored_identifiers
from ctxaudit.ingest.schemas import ErrorOut
from ctxaudit.projects.auth import ApiKeyAuth
from ctxaudit.timelines.selectors import SessionTimeline, session_timeline

router = Router(tags=["timelines"])

# Plain pydantic models, not ninja.Schema: Schema's Django-object getter costs ~40 µs per point,
# and a 500 × 50 session has 25,000 points.


class TimelineEventOut(BaseModel):
    id: int
    sequence: int | None


class TimelinePointOut(BaseModel):
    sequence: int | None
    event_id: int
    state: str  # retained | weakened | missing; pending | error while the event is not checked
    strength: float | None  # 1.0 verbatim … 0.0 missing; null while the event is not checked
    demoted: bool = False  # the rule left the system role at this compression (apart from `state`)


class EventRefOut(BaseModel):
    sequence: int | None
    event_id: int


class DecayOut(BaseModel):
    sequence: int | None
    event_id: int
    strengths: list[float]


class TimelineRuleOut(BaseModel):
    id: str
    text: str
    points: list[TimelinePointOut]
    first_weakened: EventRefOut | None
    first_missing: EventRefOut | None
    decays: list[DecayOut]


class TimelineOut(BaseModel):
    session_id: str
    decay_compressions: int
    events: list[TimelineEventOut]
    rules: list[TimelineRuleOut]


def timeline_to_out(tl: SessionTimeline) -> dict[str, Any]:
    """The JSON body (README "API"): the issue's fields, plus first weakening/loss and decay runs."""

    def ref(p: Any) -> dict[str, Any] | None:
        return {"sequence": p.event.sequence, "event_id": p.event.id} if p is not None else None

    return {
        "session_id": tl.session.external_id,
        "decay_compressions": tl.decay_compressions,
        "events": [{"id": e.id, "sequence": e.sequence} for e in tl.events],
        "rules": [
            {
                "id": r.rule_id,
                "text": r.text,
                "points": [
                    {
                        "sequence": p.event.sequence,
                        "event_id": p.event.id,
                        "state": p.state,
                        "strength": round(p.strength, 3) if p.strength is not None else None,
                        "demoted": p.demoted,
                    }
                    for p in r.points
                ],
                "first_weakened": ref(r.first_weakened),
                "first_missing": ref(r.first_missing),
                "decays": [
                    {
                        "sequence": r.points[run.end].event.sequence,
                        "event_id": r.points[run.end].event.id,
                        "strengths": [round(v, 3) for v in run.values],
                    }
                    for run in r.decays
                ],
            }
            for r in tl.rules
        ],
    }


@router.get(
    "/sessions/{path:session_id}/timeline",
    auth=ApiKeyAuth("read"),
    response={200: TimelineOut, 404: ErrorOut},
    summary="A session's rule decay timeline",
)
def session_timeline_detail(request: HttpRequest, session_id: str) -> Status[dict[str, Any]] | HttpResponse:
    """Every compression event of the session in order, and each rule's strength across them.

    `session_id` is the id the agent sent (URL-encode it); only the key's project is searched.
    PII in it was redacted when the event was stored: the raw id is redacted the same way here.
    """
    project = request.project  # type: ignore[attr-defined]
    session = (
        Session.objects.select_related("project")
        .filter(project=project, external_id__in=stored_identifiers(project, session_id))
        .first()
    )
    if session is None:
        return Status(404, {"error": "no such session in this project"})
    # A JsonResponse goes out as it is: ninja's response validation would cost more than the whole
    # query for 25,000 points. TimelineOut still documents the body (OpenAPI) and a test checks it.
    return JsonResponse(timeline_to_out(session_timeline(session)))
