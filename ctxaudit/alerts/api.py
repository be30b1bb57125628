"""GET /api/v1/alerts: alerts of the key's project for ops tooling (read scope)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Router, Schema

from ctxaudit.alerts.models import Alert, AlertEvent
from ctxaudit.projects.auth import ApiKeyAuth

router = Router(tags=["alerts"])


class AlertOut(Schema):
    id: int
    status: str
    severity: str
    kind: str
    rule_id: str | None
    count: int
    first_seen: datetime
    last_seen: datetime
    events: list[int]  # ids of every event that fed the alert, newest first (GET /api/v1/events/<id>)


@router.get(
    "/alerts", auth=ApiKeyAuth("read"), response=list[AlertOut], summary="Alerts of this key's project"
)
def alerts_list(
    request: HttpRequest,
    status: Literal["open", "acknowledged", "resolved"] | None = None,
    severity: Literal["low", "medium", "high", "critical"] | None = None,
) -> list[dict[str, Any]]:
    qs = Alert.objects.filter(project=request.project).order_by("-last_seen", "-id")  # type: ignore[attr-defined]
    if status:
        qs = qs.filter(status=status)
    if severity:
        qs = qs.filter(severity=severity)
    alerts = list(qs[:500])
    events: dict[int, list[int]] = {a.pk: [] for a in alerts}
    for alert_id, event_id in (
        AlertEvent.objects.filter(alert__in=alerts)
        .order_by("-event__occurred_at", "-id")
        .values_list("alert_id", "event_id")
    ):
        events[alert_id].append(event_id)
    return [
        {
            "id": a.pk,
            "status": a.status,
            "severity": a.severity,
            "kind": a.kind,
            "rule_id": a.rule_id or None,
            "count": a.count,
            "first_seen": a.first_seen,
            "last_seen": a.last_seen,
            "events": events[a.pk],
        }
        for a in alerts
    ]
