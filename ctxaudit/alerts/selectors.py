"""Reads for the alert pages and the API."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, OuterRef, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Coalesce, NullIf
from django.utils import timezone

from ctxaudit.alerts.access import alerts_for_user
from ctxaudit.alerts.kinds import SEVERITIES, severity_rank
from ctxaudit.alerts.models import Alert
from ctxaudit.audits.models import RuleOutcome

# Filter values of the list page; "active" (open + acknowledged) is the default view.
STATUS_FILTERS = ("active", "open", "acknowledged", "resolved", "all")


def with_rule_text(qs: QuerySet[Alert]) -> QuerySet[Alert]:
    """Annotate `shown_rule_text`: the alert's stored rule text, else the text the engine checked
    for that rule id in one of the alert's events (rules extracted from the context, e.g. X-1134543f,
    carry no declared text)."""
    checked = (
        RuleOutcome.objects.filter(event__alert_events__alert=OuterRef("pk"), rule_id=OuterRef("rule_id"))
        .exclude(text="")
        .order_by("-event_id")
    )
    return qs.annotate(
        shown_rule_text=Coalesce(
            NullIf("rule_text", Value("")),
            Subquery(checked.values("text")[:1]),
            Value(""),
            output_field=TextField(),
        )
    )


def alerts_filtered(qs: QuerySet[Alert], f: dict[str, str], user: User | AnonymousUser) -> QuerySet[Alert]:
    status = f.get("status") or "active"
    if status == "active":
        qs = qs.filter(status__in=[Alert.Status.OPEN, Alert.Status.ACKNOWLEDGED])
    elif status in Alert.Status.values:
        qs = qs.filter(status=status)
    if f.get("severity") in SEVERITIES:
        qs = qs.filter(severity=f["severity"])
    if f.get("project"):
        qs = qs.filter(project__name=f["project"])
    if f.get("rule"):
        qs = qs.filter(rule_id__icontains=f["rule"])
    if f.get("kind"):
        qs = qs.filter(kind=f["kind"])
    assignee = f.get("assignee") or ""
    if assignee == "me" and user.is_authenticated:
        qs = qs.filter(assignee=user)
    elif assignee == "none":
        qs = qs.filter(assignee__isnull=True)
    elif assignee:
        qs = qs.filter(assignee__username=assignee)
    return qs


def open_alerts_by_severity(user: User | AnonymousUser) -> list[dict[str, Any]]:
    """[{"severity", "count"}] of open, unmuted alerts, most severe first, zero counts included."""
    rows = dict(
        alerts_for_user(user)
        .filter(status=Alert.Status.OPEN)
        .exclude(muted_until__gt=timezone.now())
        .values_list("severity")
        .annotate(n=Count("id"))
        .values_list("severity", "n")
    )
    return [
        {"severity": s, "count": rows.get(s, 0)} for s in sorted(SEVERITIES, key=severity_rank, reverse=True)
    ]
