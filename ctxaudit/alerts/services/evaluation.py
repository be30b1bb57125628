"""Evaluation of a checked event: which alerts it raises or feeds (alerts_for_event, alert_raise)."""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Q

from ctxaudit.alerts import kinds
from ctxaudit.alerts.models import (
    Alert,
    AlertActivity,
    AlertEvaluation,
    AlertEvent,
    AlertPolicy,
)
from ctxaudit.alerts.services.notifications import deliveries_create
from ctxaudit.alerts.services.policy import alert_policy_for_project
from ctxaudit.alerts.services.windows import windows_for_project
from ctxaudit.alerts.titles import alert_title
from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.ingest.models import Event, SessionRule
from ctxaudit.projects.models import Project

logger = logging.getLogger(__name__)


def _rules_of(event: Event) -> dict[str, tuple[str, str]]:
    """{rule_id: (severity, text)} of the rules in force for the event (its own win over the session's)."""
    rules = {
        sr.rule_id: (sr.severity, sr.text) for sr in SessionRule.objects.filter(session_id=event.session_id)
    }
    rules.update({r["id"]: (r.get("severity", "high"), r.get("text", "")) for r in event.rules if "id" in r})
    return rules


def _checked_text(event: Event, rule_id: str) -> str:
    """The rule text the engine checked (rules it extracted from the context have no declared text)."""
    return (
        RuleOutcome.objects.filter(event=event, rule_id=rule_id)
        .exclude(text="")
        .values_list("text", flat=True)
        .first()
        or ""
    )


def _order_key(sequence: int | None, occurred_at: datetime, pk: int) -> tuple[int, datetime, int]:
    return (sequence if sequence is not None else 2**31, occurred_at, pk)


def decay_compressions(event: Event, rule_id: str) -> int:
    """How many compressions of the event's session, up to this one, weakened or dropped `rule_id`:
    the larger of our own count and the `data.compressions` the timelines wrote with the finding."""
    declared = [
        f.get("data", {}).get("compressions") or 0
        for f in (event.report or {}).get("findings", [])
        if f.get("kind") == kinds.RULE_DECAY and f.get("rule_id") == rule_id
    ]
    hit = set(
        RuleOutcome.objects.filter(event__session_id=event.session_id, rule_id=rule_id)
        .filter(~Q(state="retained") | Q(strength__lt=1.0))
        .values_list("event_id", flat=True)
    )
    hit |= set(
        Finding.objects.filter(
            event__session_id=event.session_id,
            rule_id=rule_id,
            kind__in=(kinds.RULE_WEAKENED, kinds.RULE_MISSING, kinds.RULE_DECAY),
        ).values_list("event_id", flat=True)
    )
    here = _order_key(event.sequence, event.occurred_at, event.pk)
    rows = Event.objects.filter(pk__in=hit).values_list("pk", "sequence", "occurred_at")
    counted = sum(1 for pk, seq, at in rows if _order_key(seq, at, pk) <= here)
    return max([counted, *(int(d) for d in declared if isinstance(d, int | float))])


def alerts_evaluate_enqueue(event_id: int) -> None:
    """Enqueue the alert evaluation of a checked event (alerts.evaluate); when the broker cannot
    take it (Redis stopped), evaluate here and now instead, so an event checked during an outage
    is linked to its alert at once, not when the alerts.requeue_evaluations sweep finds it (every
    5 minutes, for events checked over 5 minutes ago). alerts_for_event is idempotent, so a
    message that did get through as well is harmless."""
    from ctxaudit.alerts.tasks import alerts_evaluate_task

    try:
        alerts_evaluate_task.delay(event_id)
    except Exception as exc:  # broker down: kombu OperationalError, redis ConnectionError, ...
        logger.warning(
            "could not enqueue alert evaluation of event %s (%s: %s); evaluating it in this process",
            event_id,
            type(exc).__name__,
            exc,
        )
        alerts_for_event(event_id)


def alerts_for_event(event_id: int) -> list[Alert]:
    """Raise or update the alerts a checked event calls for under its project's policy.

    Idempotent: an (alert, event) pair is linked once, so running it again for the same event
    changes no count and sends nothing. The project's windowed policies (services.windows) are
    measured too: they change only when their window's share changes level.
    Returns the alerts the event newly fed, raised or escalated.
    """
    event = Event.objects.select_related("project", "session").filter(pk=event_id).first()
    if event is None or event.status != Event.Status.CHECKED:
        return []
    AlertEvaluation.objects.get_or_create(event=event)
    policy = alert_policy_for_project(event.project)
    if not policy.enabled:
        return []
    return _finding_alerts(event, policy) + windows_for_project(event.project, event=event)


def _finding_alerts(event: Event, policy: AlertPolicy) -> list[Alert]:
    """The alerts the event's own findings raise under the policy's conditions."""
    conditions = {c.kind: c for c in policy.conditions.filter(enabled=True)}
    findings = list(Finding.objects.filter(event=event, kind__in=list(conditions)).order_by("id"))
    if not findings:
        return []
    rules = _rules_of(event)
    groups: dict[tuple[str, str], list[tuple[Finding, str]]] = defaultdict(list)
    for kind, cond in conditions.items():
        qualifying = []
        for f in findings:
            if f.kind != kind:
                continue
            sev = f.severity
            if kind in kinds.RULE_SEVERITY_KINDS and f.rule_id:
                sev = kinds.max_severity(sev, rules.get(f.rule_id, ("", ""))[0])
            if kinds.severity_rank(sev) < kinds.severity_rank(cond.min_severity):
                continue
            if (
                kind == kinds.RULE_DECAY
                and cond.min_compressions
                and f.rule_id
                and decay_compressions(event, f.rule_id) < cond.min_compressions
            ):
                continue
            qualifying.append((f, sev))
        # "two or more weakened rules in one event": count distinct rules, not duplicate findings.
        distinct = {f.rule_id or f"finding-{f.pk}" for f, _ in qualifying}
        if len(distinct) < max(cond.min_per_event, 1):
            continue
        for f, sev in qualifying:
            groups[(f.rule_id or "", kind)].append((f, sev))
    fed = []
    for (rule_id, kind), items in groups.items():
        severity = kinds.max_severity(*(s for _, s in items))
        rule_text = (rules.get(rule_id, ("", ""))[1] or _checked_text(event, rule_id)) if rule_id else ""
        alert = alert_raise(
            project=event.project,
            event=event,
            kind=kind,
            rule_id=rule_id,
            severity=severity,
            message=items[0][0].message,
            rule_text=rule_text,
            title=alert_title(kind=kind, rule_id=rule_id, rule_text=rule_text, evidence=items[0][0].evidence),
        )
        if alert is not None:
            fed.append(alert)
    return fed


@transaction.atomic
def alert_raise(
    *,
    project: Project,
    event: Event,
    kind: str,
    rule_id: str,
    severity: str,
    message: str,
    rule_text: str = "",
    title: str = "",
) -> Alert | None:
    """Link `event` to the alert with fingerprint (project, rule_id, kind), creating or reopening it.

    title: what a person reads in lists and notifications (alerts.titles.alert_title); by default
    built from kind and rule. message: the finding's own message, kept on the link.
    Returns the alert, or None when the event was already linked (nothing changed).
    A resolved alert that fires again is reopened and marked as a regression.
    """
    seen = event.occurred_at
    title = title or alert_title(kind=kind, rule_id=rule_id, rule_text=rule_text)
    try:
        with transaction.atomic():
            _, created = Alert.objects.get_or_create(
                project=project,
                rule_id=rule_id,
                kind=kind,
                defaults={
                    "title": title,
                    "severity": severity,
                    "first_seen": seen,
                    "last_seen": seen,
                    "rule_text": rule_text,
                },
            )
    except IntegrityError:  # a concurrent evaluation created it first
        created = False
    alert = Alert.objects.select_for_update().get(project=project, rule_id=rule_id, kind=kind)
    _, linked = AlertEvent.objects.get_or_create(
        alert=alert, event=event, defaults={"severity": severity, "message": message}
    )
    if not linked:
        return None
    # Cumulative counts, not a recount of the links: the retention purge deletes old events (and
    # their AlertEvent rows), and the alert must keep its summary (issue 7).
    alert.count += 1
    if (
        not AlertEvent.objects.filter(alert=alert, event__session_id=event.session_id)
        .exclude(event=event)
        .exists()
    ):
        alert.session_count += 1
    alert.first_seen = min(alert.first_seen, seen)
    alert.last_seen = max(alert.last_seen, seen)
    alert.severity = kinds.max_severity(alert.severity, severity)
    if rule_text:
        alert.rule_text = rule_text
    # An alert raised before titles were readable gets the new one; a rule text seen earlier stays in it.
    alert.title = (
        title
        if rule_text or not alert.rule_text
        else alert_title(kind=kind, rule_id=rule_id, rule_text=alert.rule_text)
    )
    reason = None
    if created:
        reason = "opened"
        AlertActivity.objects.create(alert=alert, kind=AlertActivity.Kind.OPENED, event=event)
    elif alert.status == Alert.Status.RESOLVED:
        reason = "regression"
        alert.status = Alert.Status.OPEN
        alert.is_regression = True
        alert.resolved_at = None
        AlertActivity.objects.create(
            alert=alert, kind=AlertActivity.Kind.REGRESSION, event=event, text="a resolved alert fired again"
        )
    alert.save()
    if reason and not alert.is_muted:
        deliveries_create(alert=alert, event=event, reason=reason)
    return alert
