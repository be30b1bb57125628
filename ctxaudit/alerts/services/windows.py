"""Windowed policies: the share of a project's compressions in a recent window that fail, or lose
a rule, measured against a warning and an alert level (the monitors of Langfuse and LangSmith).

Evaluated after every checked event (alerts_for_event) and by the alerts.evaluate_windows beat
task, so a window that goes quiet still recovers. Each evaluation is one aggregate query over
the project's events in the window (index ingest_event (project, -occurred_at)).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from ctxaudit.alerts import kinds
from ctxaudit.alerts.models import Alert, AlertActivity, AlertEvent, Channel, WindowMonitor
from ctxaudit.alerts.services.notifications import deliveries_create
from ctxaudit.alerts.titles import window_title
from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event
from ctxaudit.projects.models import Project

logger = logging.getLogger(__name__)

LOSS_KINDS = (kinds.RULE_MISSING, kinds.RULE_WEAKENED)
LEVEL_RANK: dict[str, int] = {"ok": 0, "warning": 1, "alert": 2}
MAX_WINDOW_MINUTES = 7 * 24 * 60  # a week: longer windows are trends, not monitors
FIELDS = ("metric", "rule_id", "min_severity", "window_minutes", "min_compressions", "warning", "alert")


@dataclass(frozen=True)
class WindowCounts:
    """Checked compressions in the window (total) and how many of them count against the monitor."""

    total: int
    hits: int

    @property
    def share(self) -> float:
        return self.hits / self.total if self.total else 0.0


def _window_events(monitor: WindowMonitor, now: datetime) -> QuerySet[Event]:
    start = now - timedelta(minutes=monitor.window_minutes)
    return Event.objects.filter(
        project_id=monitor.project_id,
        status=Event.Status.CHECKED,
        occurred_at__gt=start,
        occurred_at__lte=now,
    )


def _hit(monitor: WindowMonitor) -> Q | Exists:
    """What makes a compression count: a fail verdict, or a rule_missing/rule_weakened finding
    (about monitor.rule_id when set) whose severity reaches monitor.min_severity."""
    if monitor.metric == WindowMonitor.Metric.FAILING_EVENTS:
        return Q(verdict="fail")
    allowed = [
        s for s in kinds.SEVERITIES if kinds.severity_rank(s) >= kinds.severity_rank(monitor.min_severity)
    ]
    losses = Finding.objects.filter(event=OuterRef("pk"), kind__in=LOSS_KINDS, severity__in=allowed)
    if monitor.rule_id:
        losses = losses.filter(rule_id=monitor.rule_id)
    return Exists(losses)


def window_counts(monitor: WindowMonitor, now: datetime | None = None) -> WindowCounts:
    """Counts over (now - window_minutes, now] by the events' occurred_at: one aggregate query."""
    agg = _window_events(monitor, now or timezone.now()).aggregate(
        total=Count("pk"), hits=Count("pk", filter=_hit(monitor))
    )
    return WindowCounts(total=agg["total"] or 0, hits=agg["hits"] or 0)


def _target_level(monitor: WindowMonitor, counts: WindowCounts) -> str:
    """Too few compressions in the window (min_compressions) is no evidence of trouble: level ok."""
    if counts.total < max(monitor.min_compressions, 1):
        return WindowMonitor.Level.OK
    if counts.share >= monitor.alert_threshold:
        return WindowMonitor.Level.ALERT
    if counts.share >= monitor.warning_threshold:
        return WindowMonitor.Level.WARNING
    return WindowMonitor.Level.OK


def window_alert_kind(monitor: WindowMonitor) -> str:
    return (
        kinds.WINDOW_FAILING_SHARE
        if monitor.metric == WindowMonitor.Metric.FAILING_EVENTS
        else kinds.WINDOW_RULE_LOSSES
    )


def _alert_of(monitor: WindowMonitor) -> Alert | None:
    return Alert.objects.filter(
        project_id=monitor.project_id, rule_id=monitor.rule_id, kind=window_alert_kind(monitor)
    ).first()


def monitor_evaluate(
    monitor: WindowMonitor, *, now: datetime | None = None, event: Event | None = None
) -> Alert | None:
    """Measure the monitor's window at `now` and move its level: raise the alert when the share
    reaches the warning level (severity medium), escalate it at the alert level (high; critical
    for a monitor of critical rules), resolve it once the share stayed under the warning level
    for a full window. event: the checked event that triggered the evaluation, if any.
    Returns the alert when it was raised, escalated or reopened now, else None."""
    now = now or timezone.now()
    counts = window_counts(monitor, now)
    target = _target_level(monitor, counts)
    with transaction.atomic():
        m = WindowMonitor.objects.select_for_update().get(pk=monitor.pk)
        m.last_share = counts.share if counts.total else None
        m.last_total = counts.total
        m.last_evaluated_at = now
        raised = None
        if target != WindowMonitor.Level.OK:
            m.below_since = None
            # Only a rise in level notifies: a share that stays high does not page again, and
            # an alert a person resolved while the share stays at its level stays resolved.
            if LEVEL_RANK[target] > LEVEL_RANK[m.level]:
                raised = _raise(m, target, counts, now, event)
                m.level = target
        elif m.level != WindowMonitor.Level.OK:
            m.below_since = m.below_since or now
            if now - m.below_since >= timedelta(minutes=m.window_minutes):
                _resolve(m, counts)
                m.level = WindowMonitor.Level.OK
                m.below_since = None
        m.save()
    return raised


def _trigger_event(monitor: WindowMonitor, now: datetime, event: Event | None) -> Event | None:
    """The event named in the notification: the triggering one when it counts, else the newest
    compression in the window that does (a beat evaluation has no event of its own)."""
    hits = _window_events(monitor, now).filter(_hit(monitor))
    if event is not None and hits.filter(pk=event.pk).exists():
        return event
    return hits.select_related("session").order_by("-occurred_at", "-pk").first()


def _raise(m: WindowMonitor, level: str, counts: WindowCounts, now: datetime, event: Event | None) -> Alert:
    kind = window_alert_kind(m)
    severity = "medium"
    if level == WindowMonitor.Level.ALERT:
        severity = "critical" if m.min_severity == "critical" and kind == kinds.WINDOW_RULE_LOSSES else "high"
    title = window_title(
        metric=m.metric,
        share=counts.share,
        window_minutes=m.window_minutes,
        warning=m.warning_threshold,
        alert=m.alert_threshold,
        rule_id=m.rule_id,
        min_severity=m.min_severity,
    )
    detail = f"{counts.hits} of {counts.total} compressions in the window; level {level}"
    try:
        with transaction.atomic():
            _, created = Alert.objects.get_or_create(
                project_id=m.project_id,
                rule_id=m.rule_id,
                kind=kind,
                defaults={"title": title, "severity": severity, "first_seen": now, "last_seen": now},
            )
    except IntegrityError:  # a concurrent evaluation created it first
        created = False
    alert = Alert.objects.select_for_update().get(project_id=m.project_id, rule_id=m.rule_id, kind=kind)
    trigger = _trigger_event(m, now, event)
    if created:
        reason, activity = "opened", AlertActivity.Kind.OPENED
    elif alert.status == Alert.Status.RESOLVED:
        reason, activity = "regression", AlertActivity.Kind.REGRESSION
        alert.status = Alert.Status.OPEN
        alert.is_regression = True
        alert.resolved_at = None
    else:
        reason, activity = "escalated", AlertActivity.Kind.ESCALATED
    alert.severity = severity  # the level now, not the worst ever: a warning after recovery is medium
    alert.title = title
    alert.count += 1
    alert.last_seen = now
    alert.save()
    AlertActivity.objects.create(alert=alert, kind=activity, event=trigger, text=detail)
    if trigger is not None:
        AlertEvent.objects.get_or_create(
            alert=alert, event=trigger, defaults={"severity": severity, "message": f"{title} ({detail})"}
        )
    if not alert.is_muted:
        deliveries_create(alert=alert, event=trigger, reason=reason)
    return alert


def _resolve(m: WindowMonitor, counts: WindowCounts) -> None:
    alert = _alert_of(m)
    if alert is None or alert.status == Alert.Status.RESOLVED:
        return
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    alert.status = Alert.Status.RESOLVED
    alert.resolved_at = timezone.now()
    alert.is_regression = False
    alert.save(update_fields=["status", "resolved_at", "is_regression"])
    AlertActivity.objects.create(
        alert=alert,
        kind=AlertActivity.Kind.RESOLVED,
        text=f"under the warning level for a full window ({counts.hits} of {counts.total} compressions)",
    )
    if not alert.is_muted:
        # As a person's resolve does (lifecycle.alert_resolve): PagerDuty keeps an incident open until told.
        deliveries_create(alert=alert, event=None, reason="resolved", kinds=(Channel.Kind.PAGERDUTY,))


def windows_for_project(project: Project, *, event: Event | None = None) -> list[Alert]:
    """Evaluate every enabled monitor of the project (after a checked event). Returns the alerts
    raised or escalated now."""
    out = []
    for monitor in WindowMonitor.objects.filter(project=project, enabled=True):
        alert = monitor_evaluate(monitor, event=event)
        if alert is not None:
            out.append(alert)
    return out


def windows_evaluate_all() -> int:
    """The beat sweep: evaluate every enabled monitor of projects whose alerts are on, so a
    window recovers (or a backlog checked late fires) without new traffic. Returns how many."""
    monitors = WindowMonitor.objects.filter(enabled=True).exclude(project__alert_policy__enabled=False)
    n = 0
    for monitor in monitors:
        monitor_evaluate(monitor)
        n += 1
    return n


def _fraction(raw: Any, field: str) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{field}: a number between 0 and 1 is needed") from None
    if not 0 < value <= 1:
        raise ValueError(f"{field}: a fraction above 0 and at most 1 is needed (0.2 for 20%)")
    return value


def _whole(raw: Any, field: str, low: int, high: int) -> int:
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{field}: a whole number is needed") from None
    if not low <= value <= high:
        raise ValueError(f"{field}: must be between {low} and {high}")
    return value


def window_monitor_save(
    *, project: Project, values: dict[str, Any], monitor: WindowMonitor | None = None
) -> WindowMonitor:
    """Create (monitor None) or change a windowed policy. values: metric (failing_events |
    rule_losses), rule_id (rule_losses only; "" = any rule), min_severity, window_minutes
    (1..10080), min_compressions (1..100000), warning, alert (fractions, 0 < warning <= alert <= 1),
    enabled. Raises ValueError naming the first bad field. A changed monitor restarts at level ok
    only when its metric or rule changed (another alert fingerprint)."""
    metric = str(values.get("metric", ""))
    if metric not in WindowMonitor.Metric.values:
        raise ValueError(f"metric: one of {', '.join(WindowMonitor.Metric.values)}")
    rule_id = " ".join(str(values.get("rule_id", "") or "").split())[:100]
    if metric == WindowMonitor.Metric.FAILING_EVENTS:
        rule_id = ""
    min_severity = str(values.get("min_severity") or "low")
    if min_severity not in kinds.SEVERITIES:
        raise ValueError(f"min_severity: one of {', '.join(kinds.SEVERITIES)}")
    window = _whole(values.get("window_minutes"), "window_minutes", 1, MAX_WINDOW_MINUTES)
    min_compressions = _whole(values.get("min_compressions"), "min_compressions", 1, 100_000)
    warning = _fraction(values.get("warning"), "warning")
    alert = _fraction(values.get("alert"), "alert")
    if warning > alert:
        raise ValueError("warning: the warning level must not be above the alert level")
    same = WindowMonitor.objects.filter(project=project, metric=metric, rule_id=rule_id)
    if monitor is not None:
        same = same.exclude(pk=monitor.pk)
    if same.exists():
        raise ValueError("rule_id: this project already has a windowed policy for that metric and rule")
    m = monitor or WindowMonitor(project=project)
    if monitor is not None and (monitor.metric, monitor.rule_id) != (metric, rule_id):
        m.level, m.below_since = WindowMonitor.Level.OK, None
    m.metric, m.rule_id, m.min_severity = metric, rule_id, min_severity
    m.window_minutes, m.min_compressions = window, min_compressions
    m.warning_threshold, m.alert_threshold = warning, alert
    m.enabled = bool(values.get("enabled", True))
    m.save()
    return m


def window_monitor_delete(*, monitor: WindowMonitor) -> None:
    """Remove a windowed policy; its alert stays (with its history) for the record."""
    monitor.delete()
