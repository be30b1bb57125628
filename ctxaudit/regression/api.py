"""POST /api/v1/gate: check one compression event synchronously, for agents that must stop
before they go on (seed §4.6: fail closed). Registered on the API hub (ctxaudit/api.py)."""

from __future__ import annotations

import json
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja import Router, Status
from ninja.errors import HttpError
from pydantic import BaseModel

from ctxaudit.engine.formats import ContextFormatError
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.schemas import ErrorOut, EventIn, FindingOut
from ctxaudit.ingest.services import IdempotencyConflict
from ctxaudit.projects.auth import ApiKeyAuth
from ctxaudit.regression.models import RegressionCase
from ctxaudit.regression.services import gate_check, regression_case_to_sample

router = Router(tags=["gate"])


class GateRuleOut(BaseModel):
    id: str
    text: str
    state: str
    demoted: bool = False
    role_before: str | None = None
    role_after: str | None = None
    lost: list[str] = []


class GateOut(BaseModel):
    id: int
    verdict: Literal["pass", "fail", "no_rules"]
    status: str
    rules: list[GateRuleOut]
    findings: list[FindingOut]
    ui_url: str
    error: str | None = None


def gate_body(event: Event, ui_url: str) -> dict[str, Any]:
    """The gate's answer: only the rules that block (missing, weakened, demoted), every finding.
    A check that errored answers "fail": the gate never lets through what it could not check.
    "no_rules" (no rule in force, nothing else failed) is answered as such and does not block."""
    report = event.report or {}
    blocking = [
        {k: r.get(k) for k in ("id", "text", "state", "demoted", "role_before", "role_after")}
        | {"lost": r.get("lost") or []}
        for r in report.get("rules", [])
        if r.get("state") in ("missing", "weakened") or r.get("demoted")
    ]
    findings = [
        {k: f.get(k) for k in ("kind", "severity", "rule_id", "message", "evidence")}
        for f in report.get("findings", [])
    ]
    checked = event.status == Event.Status.CHECKED
    return {
        "id": event.pk,
        "verdict": event.verdict if checked and event.verdict in ("pass", "no_rules") else "fail",
        "status": event.status,
        "rules": blocking,
        "findings": findings,
        "ui_url": ui_url,
        "error": event.error or None,
    }


@router.post(
    "/gate",
    auth=ApiKeyAuth("ingest"),
    response={
        200: GateOut,
        400: ErrorOut,
        401: ErrorOut,
        403: ErrorOut,
        413: ErrorOut,
        422: ErrorOut,
        429: ErrorOut,
    },
    summary="Check one compression event now and answer the verdict",
    description="Same body as POST /events. The event is stored and checked in the request; the answer "
    'lists the missing, weakened or demoted rules. Fails closed: a check error answers verdict "fail".',
)
def gate(request: HttpRequest, payload: EventIn) -> Status[dict[str, Any]]:
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (0 < len(key) <= 200):
        raise HttpError(400, "Idempotency-Key must be 1-200 characters")
    try:
        event = gate_check(project=request.project, spec=payload, idempotency_key=key)  # type: ignore[attr-defined]
    except ContextFormatError as exc:
        return Status(400, {"error": str(exc), "field": exc.field})
    except IdempotencyConflict as exc:
        return Status(422, {"error": str(exc), "field": "Idempotency-Key"})
    ui_url = request.build_absolute_uri(reverse("ui:event-detail", args=[event.pk]))
    return Status(200, gate_body(event, ui_url))


@router.get(
    "/regression-set",
    auth=ApiKeyAuth("read"),
    response={200: None, 401: ErrorOut, 403: ErrorOut},
    summary="The project's regression set as JSONL (samples format), for `ctxaudit check` in CI",
    description="One case per line: {id, source, strategy, description, rules, before, after, expected}. "
    "A CI job replaces each case's `after` with its compressor's output for `before`, then runs `ctxaudit check`.",
)
def regression_set_export(request: HttpRequest) -> HttpResponse:
    cases = RegressionCase.objects.filter(project=request.project).order_by("created_at", "id")  # type: ignore[attr-defined]
    body = "".join(json.dumps(regression_case_to_sample(c), ensure_ascii=False) + "\n" for c in cases)
    return HttpResponse(body, content_type="application/x-ndjson; charset=utf-8")
