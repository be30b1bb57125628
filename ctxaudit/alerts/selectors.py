"""Reads for the alert pages and the API."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.db.models import (
    Case,
    Count,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.functions import Coalesce, NullIf
from django.utils import timezone

from ctxaudit.alerts.access import alerts_for_user
from ctxaudit.alerts.kinds import SEVERITIES, severity_rank
from ctxaudit.alerts.models import Alert
from ctxaudit.audits.models import RuleOutcome
from ctxaudit.projects.models import Membership, Project

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


# Columns of the list page a person can sort by: key → the fields it orders on (ascending).
# Ties fall back to recency, so "severity" reads "most severe, newest first" when descending.
SORTS: dict[str, tuple[str, ...]] = {
    "severity": ("severity_rank",),
    "status": ("status_rank",),
    "kind": ("kind",),
    "title": ("title",),
    "rule": ("rule_id",),
    "project": ("project__name",),
    "events": ("count",),
    "sessions": ("session_count",),
    "first_seen": ("first_seen",),
    "last_seen": ("last_seen",),
    "assignee": ("assignee__username",),
}
DEFAULT_SORT = "-severity"  # the page's default: most severe first, then most recently seen
_STATUS_ORDER = ("open", "acknowledged", "resolved")


def sort_key(raw: str) -> str:
    """A valid sort value ("severity", "-last_seen", …) from a query parameter; DEFAULT_SORT otherwise."""
    return raw if raw.lstrip("-") in SORTS else DEFAULT_SORT


def alerts_sorted(qs: QuerySet[Alert], sort: str) -> QuerySet[Alert]:
    """Order the list page by `sort` (see SORTS; "-" prefix = descending), then by last seen and
    id, newest first. Severity orders by rank (critical > high > medium > low), not alphabetically.
    The API (GET /api/v1/alerts) keeps its own documented order and does not use this."""
    sort = sort_key(sort)
    desc = sort.startswith("-")
    qs = qs.annotate(
        severity_rank=Case(
            *(When(severity=s, then=Value(severity_rank(s))) for s in SEVERITIES),
            default=Value(0),
            output_field=IntegerField(),
        ),
        status_rank=Case(
            *(When(status=s, then=Value(i)) for i, s in enumerate(_STATUS_ORDER)),
            default=Value(len(_STATUS_ORDER)),
            output_field=IntegerField(),
        ),
    )
    fields = [f"-{f}" if desc else f for f in SORTS[sort.lstrip("-")]]
    return qs.order_by(*fields, "-last_seen", "-id")


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


@dataclass(frozen=True)
class ProjectAlerts:
    """A project the user can see, with its open, unmuted alerts by severity ({severity: n},
    every one of SEVERITIES)."""

    pk: int
    name: str
    open_alerts: dict[str, int]

    @property
    def id(self) -> int:
        return self.pk


def projects_with_open_alerts(user: User | AnonymousUser) -> list[ProjectAlerts]:
    """The projects `user` can see (projects_for_user), by name, each with its open, unmuted
    alerts counted by severity, in one query: what a page that lists the user's projects needs
    for its filter, its scope and the nav's open alerts.

    Written as SQL: built by the ORM (a filtered relation and one filtered count per severity)
    it cost five times what the database took to answer it, on every page that has the nav
    (issue 13). Open and unmuted as open_alerts_by_severity: status open, muted_until unset or
    past."""
    if not user.is_authenticated:
        return []
    project, alert, membership = Project._meta.db_table, Alert._meta.db_table, Membership._meta.db_table
    counts = ", ".join("COUNT(CASE WHEN a.severity = %s THEN 1 END)" for _ in SEVERITIES)
    member = "" if user.is_superuser else f"JOIN {membership} m ON m.project_id = p.id AND m.user_id = %s "
    sql = (
        f"SELECT p.id, p.name, {counts} FROM {project} p {member}"  # noqa: S608 - table names from the models, values are parameters
        f"LEFT JOIN {alert} a ON a.project_id = p.id AND a.status = %s "
        "AND (a.muted_until IS NULL OR a.muted_until <= %s) "
        "GROUP BY p.id, p.name ORDER BY p.name, p.id"
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    params = [*SEVERITIES, *([] if user.is_superuser else [user.pk]), Alert.Status.OPEN.value, now]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [ProjectAlerts(pk, name, dict(zip(SEVERITIES, ns, strict=True))) for pk, name, *ns in rows]


def open_alert_counts(projects: Iterable[ProjectAlerts]) -> list[dict[str, Any]]:
    """open_alerts_by_severity's list, summed over projects of projects_with_open_alerts."""
    listed = list(projects)
    return [
        {"severity": s, "count": sum(p.open_alerts[s] for p in listed)}
        for s in sorted(SEVERITIES, key=severity_rank, reverse=True)
    ]


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
