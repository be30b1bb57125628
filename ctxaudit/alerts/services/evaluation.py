"""Evaluation of a checked event: which alerts it raises or feeds (alerts_for_event, alert_raise)."""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import connections, router, transaction
from django.db.models import Q

from ctxaudit.alerts import kinds
from ctxaudit.alerts.models import (
    Alert,
    AlertActivity,
    AlertEvaluation,
    AlertEvent,
    AlertPolicy,
    Channel,
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
    # event.rules is NULL only before a check extracted them; the session's rows hold those anyway.
    rules.update(
        {r["id"]: (r.get("severity", "high"), r.get("text", "")) for r in event.rules or () if "id" in r}
    )
    return rules


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
    # The contexts are the bulk of the row and no alert reads them.
    event = (
        Event.objects.select_related("project", "session")
        .defer("before", "after")
        .filter(pk=event_id)
        .first()
    )
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
    if not groups:
        return []
    checked_texts = None
    raises = []
    for (rule_id, kind), items in groups.items():
        severity = kinds.max_severity(*(s for _, s in items))
        rule_text = rules.get(rule_id, ("", ""))[1] if rule_id else ""
        if rule_id and not rule_text:
            if checked_texts is None:
                checked_texts = _checked_texts(event)
            rule_text = checked_texts.get(rule_id, "")
        raises.append(
            _Raise(
                kind=kind,
                rule_id=rule_id,
                severity=severity,
                message=items[0][0].message,
                rule_text=rule_text,
                title=alert_title(
                    kind=kind, rule_id=rule_id, rule_text=rule_text, evidence=items[0][0].evidence
                ),
            )
        )
    return [a for a in _alerts_raise(project=event.project, event=event, raises=raises) if a is not None]


def _checked_texts(event: Event) -> dict[str, str]:
    """{rule_id: the rule text the engine checked} (the first non-empty outcome text per rule),
    for rules extracted from the context, which have no declared text; one query per event."""
    out: dict[str, str] = {}
    for rule_id, text in (
        RuleOutcome.objects.filter(event=event).exclude(text="").order_by("pk").values_list("rule_id", "text")
    ):
        out.setdefault(rule_id, text)
    return out


@dataclass(frozen=True, slots=True)
class _Raise:
    kind: str
    rule_id: str
    severity: str
    message: str
    rule_text: str = ""
    title: str = ""


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
    raise_ = _Raise(
        kind=kind, rule_id=rule_id, severity=severity, message=message, rule_text=rule_text, title=title
    )
    return _alerts_raise(project=project, event=event, raises=[raise_])[0]


_ALERT_UPDATE_FIELDS = (
    "count",
    "session_count",
    "first_seen",
    "last_seen",
    "severity",
    "rule_text",
    "title",
    "status",
    "is_regression",
    "resolved_at",
)


def _alert_pks(project: Project, fingerprints: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """(rule id, kind) → pk of the project's alerts with these fingerprints. One plain query for a
    superset (every pairing of the rule ids and kinds), narrowed here."""
    return {
        (rule_id, kind): pk
        for pk, rule_id, kind in Alert.objects.filter(
            project=project, rule_id__in={r for r, _ in fingerprints}, kind__in={k for _, k in fingerprints}
        ).values_list("pk", "rule_id", "kind")
        if (rule_id, kind) in fingerprints
    }


@transaction.atomic
def _alerts_raise(*, project: Project, event: Event, raises: list[_Raise]) -> list[Alert | None]:
    """alert_raise for each of `raises` (distinct fingerprints), with a fixed number of queries
    whatever their number once the alerts exist (an event of a 50-rule check feeds ~35: issue 13).
    Returns, per raise, the alert or None when the event was already linked to it."""
    seen = event.occurred_at
    pks = _alert_pks(project, {(r.rule_id, r.kind) for r in raises})
    missing = {(r.rule_id, r.kind): r for r in raises if (r.rule_id, r.kind) not in pks}
    if missing:
        # One INSERT for every new fingerprint; one a concurrent evaluation created first is left
        # alone (the unique fingerprint), and both evaluations read the same rows back.
        Alert.objects.bulk_create(
            [
                Alert(
                    project=project,
                    rule_id=r.rule_id,
                    kind=r.kind,
                    title=r.title or alert_title(kind=r.kind, rule_id=r.rule_id, rule_text=r.rule_text),
                    severity=r.severity,
                    first_seen=seen,
                    last_seen=seen,
                    rule_text=r.rule_text,
                )
                for r in missing.values()
            ],
            ignore_conflicts=True,
        )
        pks.update(_alert_pks(project, set(missing)))
    # Locked in id order, so two evaluations feeding the same alerts cannot deadlock.
    alerts = {
        (a.rule_id, a.kind): a
        for a in Alert.objects.select_for_update().filter(pk__in=list(pks.values())).order_by("pk")
    }
    linked = set(
        AlertEvent.objects.filter(alert__in=list(alerts.values()), event=event).values_list(
            "alert_id", flat=True
        )
    )
    todo = [(r, alerts[(r.rule_id, r.kind)]) for r in raises if alerts[(r.rule_id, r.kind)].pk not in linked]
    if not todo:
        return [None] * len(raises)
    AlertEvent.objects.bulk_create(
        [AlertEvent(alert=alert, event=event, severity=r.severity, message=r.message) for r, alert in todo]
    )
    # Alerts this session fed before: their session count stays.
    in_session = set(
        AlertEvent.objects.filter(alert__in=[a for _, a in todo], event__session_id=event.session_id)
        .exclude(event=event)
        .values_list("alert_id", flat=True)
    )
    # never fed: this evaluation, holding their locks, is the first to open them (a concurrent one
    # that created a row first, or feeds it after, finds it fed)
    opening = {alert.pk for _, alert in todo if alert.count == 0}
    activities = []
    notify = []
    for r, alert in todo:
        # Cumulative counts, not a recount of the links: the retention purge deletes old events
        # (and their AlertEvent rows), and the alert must keep its summary (issue 7).
        alert.count += 1
        if alert.pk not in in_session:
            alert.session_count += 1
        alert.first_seen = min(alert.first_seen, seen)
        alert.last_seen = max(alert.last_seen, seen)
        alert.severity = kinds.max_severity(alert.severity, r.severity)
        if r.rule_text:
            alert.rule_text = r.rule_text
        title = r.title or alert_title(kind=r.kind, rule_id=r.rule_id, rule_text=r.rule_text)
        # An alert raised before titles were readable gets the new one; a rule text seen earlier stays in it.
        alert.title = (
            title
            if r.rule_text or not alert.rule_text
            else alert_title(kind=r.kind, rule_id=r.rule_id, rule_text=alert.rule_text)
        )
        reason = None
        if alert.pk in opening:
            reason = "opened"
            activities.append(AlertActivity(alert=alert, kind=AlertActivity.Kind.OPENED, event=event))
        elif alert.status == Alert.Status.RESOLVED:
            reason = "regression"
            alert.status = Alert.Status.OPEN
            alert.is_regression = True
            alert.resolved_at = None
            activities.append(
                AlertActivity(
                    alert=alert,
                    kind=AlertActivity.Kind.REGRESSION,
                    event=event,
                    text="a resolved alert fired again",
                )
            )
        if reason and not alert.is_muted:
            notify.append((alert, reason))
    AlertActivity.objects.bulk_create(activities)
    _save_fields([a for _, a in todo], _ALERT_UPDATE_FIELDS)
    channels = list(Channel.objects.filter(project_id=project.pk, enabled=True)) if notify else []
    for alert, reason in notify:
        deliveries_create(alert=alert, event=event, reason=reason, channels=channels)
    fed = {alert.pk for _, alert in todo}
    return [alerts[(r.rule_id, r.kind)] if alerts[(r.rule_id, r.kind)].pk in fed else None for r in raises]


def _save_fields(alerts: list[Alert], fields: tuple[str, ...]) -> None:
    """UPDATE `fields` of each alert, one statement run for all of them (executemany).
    Django's bulk_update builds a CASE per field and row, which cost more than the rest of the
    evaluation for ~35 alerts; each value is prepared for the database as save() prepares it."""
    db = router.db_for_write(Alert)
    conn = connections[db]
    qn = conn.ops.quote_name
    cols = [f for f in Alert._meta.concrete_fields if f.name in fields]
    # Only quoted model metadata is formatted in; every value is a parameter.
    sets = ", ".join(f"{qn(str(f.column))} = %s" for f in cols)
    sql = f"UPDATE {qn(Alert._meta.db_table)} SET {sets} WHERE {qn(str(Alert._meta.pk.column))} = %s"  # noqa: S608
    rows = [[f.get_db_prep_save(getattr(a, f.attname), conn) for f in cols] + [a.pk] for a in alerts]
    with conn.cursor() as cursor:
        cursor.executemany(sql, rows)
