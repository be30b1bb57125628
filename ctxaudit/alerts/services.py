"""Writes for alerts: policy defaults, evaluation of a checked event, lifecycle, deliveries."""

from __future__ import annotations

import logging
import time
import uuid
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from ctxaudit.alerts import kinds
from ctxaudit.alerts.models import (
    Alert,
    AlertActivity,
    AlertCondition,
    AlertEvaluation,
    AlertEvent,
    AlertPolicy,
    Channel,
    Delivery,
    DeliveryAttempt,
)
from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.core import netguard
from ctxaudit.ingest.models import Event, SessionRule
from ctxaudit.projects.models import Project

logger = logging.getLogger(__name__)

# A delivery claimed longer ago than this (a worker died mid-send) may be claimed again.
# The receiver still dedupes on the notification id, so a rare second send is harmless.
DELIVERY_LEASE_SECONDS = 300


class AlertTransitionError(ValueError):
    """The requested status change does not apply to the alert's current status."""


# --- policy ----------------------------------------------------------------------------------


def alert_policy_for_project(project: Project) -> AlertPolicy:
    """The project's policy, created on first use with kinds.DEFAULT_CONDITIONS. A kind added to
    the defaults later joins existing policies too (with its default switch); nothing is removed."""
    policy, _ = AlertPolicy.objects.get_or_create(project=project)
    have = set(policy.conditions.values_list("kind", flat=True))
    missing = [c for c in kinds.DEFAULT_CONDITIONS if c["kind"] not in have]
    if missing:
        AlertCondition.objects.bulk_create(
            [
                AlertCondition(
                    policy=policy,
                    kind=c["kind"],
                    min_severity=c["min_severity"],
                    min_per_event=c["min_per_event"],
                    # None in the defaults: follow the project's decay setting.
                    min_compressions=project.decay_compressions
                    if c.get("min_compressions", 0) is None
                    else c.get("min_compressions", 0),
                    enabled=c.get("enabled", True),
                )
                for c in missing
            ],
            ignore_conflicts=True,
        )
    return policy


def alert_policy_update(
    *, policy: AlertPolicy, user: AbstractBaseUser, enabled: bool, conditions: dict[int, dict[str, Any]]
) -> AlertPolicy:
    """Set the policy's switch and its conditions' thresholds ({condition id: {field: value}}).
    Raises ValueError naming the first bad value."""
    by_id = {c.pk: c for c in policy.conditions.all()}
    for cid, values in conditions.items():
        cond = by_id.get(cid)
        if cond is None:
            raise ValueError(f"no condition {cid} in this policy")
        if values["min_severity"] not in kinds.SEVERITIES:
            raise ValueError(f"{cond.kind}: severity must be one of {', '.join(kinds.SEVERITIES)}")
        for field in ("min_per_event", "min_compressions"):
            if not 0 <= values[field] <= 1000:
                raise ValueError(f"{cond.kind}: {field} must be between 0 and 1000")
    with transaction.atomic():
        policy.enabled = enabled
        policy.save(update_fields=["enabled"])
        for cid, values in conditions.items():
            AlertCondition.objects.filter(pk=cid, policy=policy).update(**values)
    logger.info("alert policy of project %s changed by %s", policy.project_id, user.pk)
    return policy


def channel_create(*, project: Project, kind: str, name: str, target: str) -> Channel:
    """A webhook (http/https URL) or email (comma-separated addresses) channel. Raises ValueError."""
    from django.core.exceptions import ValidationError
    from django.core.validators import URLValidator, validate_email

    target = target.strip()
    if kind == Channel.Kind.WEBHOOK:
        try:
            URLValidator(schemes=["http", "https"])(target)
        except ValidationError:
            raise ValueError("the webhook URL must be an http:// or https:// URL") from None
        try:
            netguard.check_url(target)
        except netguard.UnsafeURL as e:
            raise ValueError(f"the webhook URL is refused: {e}") from None
    elif kind == Channel.Kind.EMAIL:
        addresses = [a.strip() for a in target.split(",") if a.strip()]
        if not addresses:
            raise ValueError("give at least one email address")
        for a in addresses:
            try:
                validate_email(a)
            except ValidationError:
                raise ValueError(f"not an email address: {a}") from None
        target = ", ".join(addresses)
    else:
        raise ValueError("kind must be webhook or email")
    return Channel.objects.create(project=project, kind=kind, name=name.strip()[:100], target=target)


def channel_test(*, channel: Channel) -> str:
    """Send a signed test notification now (not logged as a delivery); returns the result in words."""
    from ctxaudit.alerts.transports import TRANSPORTS

    nid = uuid.uuid4()
    payload = {
        "notification_id": str(nid),
        "type": "test",
        "created_at": timezone.now().isoformat(),
        "alert": {
            "id": 0,
            "project": channel.project.name,
            "status": "open",
            "is_regression": False,
            "severity": "low",
            "kind": "test",
            "rule_id": None,
            "rule_text": "",
            "title": "Test notification from ctxaudit: no alert fired.",
            "count": 0,
            "session_count": 0,
            "first_seen": timezone.now().isoformat(),
            "last_seen": timezone.now().isoformat(),
            "url": settings.CTXAUDIT_BASE_URL.rstrip("/")
            + reverse("alerts:settings", args=[channel.project_id]),
        },
        "event": None,
    }
    res = TRANSPORTS[Channel.Kind(channel.kind)](
        channel, Delivery(id=nid, channel=channel, reason="test", payload=payload)
    )
    return ("ok: " if res.ok else "failed: ") + res.result


def channel_set_enabled(*, channel: Channel, enabled: bool) -> Channel:
    channel.enabled = enabled
    channel.save(update_fields=["enabled"])
    return channel


# --- evaluation ------------------------------------------------------------------------------


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


def alerts_for_event(event_id: int) -> list[Alert]:
    """Raise or update the alerts a checked event calls for under its project's policy.

    Idempotent: an (alert, event) pair is linked once, so running it again for the same event
    changes no count and sends nothing. Returns the alerts the event newly fed.
    """
    event = Event.objects.select_related("project", "session").filter(pk=event_id).first()
    if event is None or event.status != Event.Status.CHECKED:
        return []
    AlertEvaluation.objects.get_or_create(event=event)
    policy = alert_policy_for_project(event.project)
    if not policy.enabled:
        return []
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
        alert = alert_raise(
            project=event.project,
            event=event,
            kind=kind,
            rule_id=rule_id,
            severity=severity,
            message=items[0][0].message,
            rule_text=(rules.get(rule_id, ("", ""))[1] or _checked_text(event, rule_id)) if rule_id else "",
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
) -> Alert | None:
    """Link `event` to the alert with fingerprint (project, rule_id, kind), creating or reopening it.

    Returns the alert, or None when the event was already linked (nothing changed).
    A resolved alert that fires again is reopened and marked as a regression.
    """
    seen = event.occurred_at
    try:
        with transaction.atomic():
            _, created = Alert.objects.get_or_create(
                project=project,
                rule_id=rule_id,
                kind=kind,
                defaults={
                    "title": message,
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


# --- lifecycle (user actions) ----------------------------------------------------------------


def _log(alert: Alert, user: AbstractBaseUser | None, kind: str, text: str = "") -> AlertActivity:
    return AlertActivity.objects.create(alert=alert, user=user, kind=kind, text=text)


@transaction.atomic
def alert_acknowledge(*, alert: Alert, user: AbstractBaseUser) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.status == Alert.Status.ACKNOWLEDGED:
        return alert
    if alert.status != Alert.Status.OPEN:
        raise AlertTransitionError(f"a {alert.status} alert cannot be acknowledged")
    alert.status = Alert.Status.ACKNOWLEDGED
    alert.save(update_fields=["status"])
    _log(alert, user, AlertActivity.Kind.ACKNOWLEDGED)
    return alert


@transaction.atomic
def alert_resolve(*, alert: Alert, user: AbstractBaseUser) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.status == Alert.Status.RESOLVED:
        return alert
    alert.status = Alert.Status.RESOLVED
    alert.resolved_at = timezone.now()
    alert.is_regression = False
    alert.save(update_fields=["status", "resolved_at", "is_regression"])
    _log(alert, user, AlertActivity.Kind.RESOLVED)
    return alert


@transaction.atomic
def alert_reopen(*, alert: Alert, user: AbstractBaseUser) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.status == Alert.Status.OPEN:
        return alert
    alert.status = Alert.Status.OPEN
    alert.resolved_at = None
    alert.save(update_fields=["status", "resolved_at"])
    _log(alert, user, AlertActivity.Kind.REOPENED)
    return alert


def alerts_bulk_acknowledge(*, alerts: list[Alert], user: AbstractBaseUser) -> int:
    """Acknowledge the open ones among `alerts`; others are left as they are. Returns how many changed."""
    n = 0
    for alert in alerts:
        if alert.status == Alert.Status.OPEN:
            alert_acknowledge(alert=alert, user=user)
            n += 1
    return n


@transaction.atomic
def alert_assign(*, alert: Alert, user: AbstractBaseUser, assignee: AbstractBaseUser | None) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.assignee_id == (assignee.pk if assignee else None):
        return alert
    alert.assignee = assignee  # type: ignore[assignment]
    alert.save(update_fields=["assignee"])
    if assignee is None:
        _log(alert, user, AlertActivity.Kind.UNASSIGNED)
    else:
        _log(alert, user, AlertActivity.Kind.ASSIGNED, f"assigned to {assignee.get_username()}")
    return alert


def alert_comment(*, alert: Alert, user: AbstractBaseUser, text: str) -> AlertActivity:
    text = text.strip()
    if not text:
        raise ValueError("a comment needs text")
    return _log(alert, user, AlertActivity.Kind.COMMENT, text[:5000])


@transaction.atomic
def alert_mute(*, alert: Alert, user: AbstractBaseUser, until: datetime | None) -> Alert:
    """Snooze/mute until `until` (no notifications meanwhile); None unmutes."""
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    alert.muted_until = until
    alert.save(update_fields=["muted_until"])
    if until is None:
        _log(alert, user, AlertActivity.Kind.UNMUTED)
    else:
        _log(alert, user, AlertActivity.Kind.MUTED, f"muted until {until.strftime('%Y-%m-%d %H:%M UTC')}")
    return alert


# --- notifications ---------------------------------------------------------------------------


def alert_to_dict(alert: Alert) -> dict[str, Any]:
    return {
        "id": alert.pk,
        "project": alert.project.name,
        "status": alert.status,
        "is_regression": alert.is_regression,
        "severity": alert.severity,
        "kind": alert.kind,
        "rule_id": alert.rule_id or None,
        "rule_text": alert.rule_text,
        "title": alert.title,
        "count": alert.count,
        "session_count": alert.session_count,
        "first_seen": alert.first_seen.isoformat(),
        "last_seen": alert.last_seen.isoformat(),
        "url": settings.CTXAUDIT_BASE_URL.rstrip("/") + reverse("alerts:detail", args=[alert.pk]),
    }


def deliveries_create(*, alert: Alert, event: Event | None, reason: str) -> list[Delivery]:
    """One Delivery per enabled channel of the alert's project, each sent after commit."""
    created = []
    for channel in Channel.objects.filter(project_id=alert.project_id, enabled=True):
        nid = uuid.uuid4()
        payload = {
            "notification_id": str(nid),
            "type": f"alert.{reason}",
            "created_at": timezone.now().isoformat(),
            "alert": alert_to_dict(alert),
            "event": None
            if event is None
            else {
                "id": event.pk,
                "session_id": event.session.external_id,
                "url": settings.CTXAUDIT_BASE_URL.rstrip("/") + reverse("ui:event-detail", args=[event.pk]),
            },
        }
        d, made = Delivery.objects.get_or_create(
            alert=alert, channel=channel, event=event, reason=reason, defaults={"id": nid, "payload": payload}
        )
        if made:
            created.append(d)
            transaction.on_commit(lambda pk=str(d.pk): delivery_enqueue(pk))
    return created


def delivery_enqueue(delivery_id: str) -> None:
    from ctxaudit.alerts.tasks import alerts_deliver_task

    try:
        alerts_deliver_task.delay(delivery_id)
    except Exception:  # broker down: the row is committed and deliveries_requeue picks it up
        logger.exception("could not enqueue delivery %s; the sweep will retry", delivery_id)


def retry_countdown(retries: int) -> int:
    """Seconds before retry number `retries + 1`: base, 2x, 4x ... capped at one hour."""
    return int(min(settings.CTXAUDIT_ALERT_RETRY_BASE_SECONDS * 2**retries, 3600))


def delivery_attempt(*, delivery_id: str, last_try: bool = False) -> str:
    """Send one delivery once. Returns "sent", "retry" (a later attempt may work), "failed" or
    "skipped" (another worker holds it, or it is already sent or failed).

    The conditional UPDATE claims the row before sending, so a duplicated or retried task
    never sends a notification that was already sent.
    """
    from ctxaudit.alerts.transports import TRANSPORTS, SendResult

    now = timezone.now()
    claimable = Q(status__in=[Delivery.Status.PENDING, Delivery.Status.RETRYING]) | Q(
        status=Delivery.Status.SENDING, claimed_at__lt=now - timedelta(seconds=DELIVERY_LEASE_SECONDS)
    )
    claimed = Delivery.objects.filter(claimable, pk=delivery_id).update(
        status=Delivery.Status.SENDING, claimed_at=now, attempts=F("attempts") + 1
    )
    if claimed != 1:
        return "skipped"
    d = Delivery.objects.select_related("channel", "alert").get(pk=delivery_id)
    t0 = time.monotonic()
    if not d.channel.enabled:
        res = SendResult(ok=False, retry=False, result="channel disabled")
    else:
        try:
            res = TRANSPORTS[Channel.Kind(d.channel.kind)](d.channel, d)
        except Exception as e:
            # A bug, not a transient failure: log it on the delivery and fail loudly.
            _finish(
                d,
                SendResult(ok=False, retry=False, result=f"error: {type(e).__name__}: {e}"),
                t0,
                last_try=True,
            )
            raise
    return _finish(d, res, t0, last_try=last_try)


def _finish(d: Delivery, res: Any, t0: float, *, last_try: bool) -> str:
    DeliveryAttempt.objects.create(
        delivery=d,
        number=d.attempts,
        status_code=res.status_code,
        ok=res.ok,
        result=res.result[:1000],
        duration_ms=int((time.monotonic() - t0) * 1000),
    )
    if res.ok:
        Delivery.objects.filter(pk=d.pk).update(status=Delivery.Status.SENT, sent_at=timezone.now())
        return "sent"
    if res.retry and not last_try:
        Delivery.objects.filter(pk=d.pk).update(status=Delivery.Status.RETRYING)
        return "retry"
    Delivery.objects.filter(pk=d.pk).update(status=Delivery.Status.FAILED)
    return "failed"


def deliveries_requeue(*, older_than_seconds: int = 900) -> int:
    """Re-enqueue deliveries whose task was lost (broker down at enqueue, lost retry message)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    ids = list(
        Delivery.objects.filter(
            Q(status=Delivery.Status.PENDING, created_at__lt=cutoff)
            | Q(status__in=[Delivery.Status.RETRYING, Delivery.Status.SENDING], claimed_at__lt=cutoff)
        ).values_list("pk", flat=True)[:500]
    )
    for pk in ids:
        delivery_enqueue(str(pk))
    return len(ids)


def evaluations_requeue(*, older_than_seconds: int = 300, within_hours: int = 24) -> int:
    """Re-enqueue the evaluation of recently checked events that were never evaluated."""
    from ctxaudit.alerts.tasks import alerts_evaluate_task

    now = timezone.now()
    ids = list(
        Event.objects.filter(
            status=Event.Status.CHECKED,
            checked_at__lt=now - timedelta(seconds=older_than_seconds),
            checked_at__gte=now - timedelta(hours=within_hours),
            alert_evaluation__isnull=True,
        ).values_list("pk", flat=True)[:500]
    )
    for pk in ids:
        try:
            alerts_evaluate_task.delay(pk)
        except Exception:  # still no broker: the next sweep tries again
            logger.exception("could not enqueue alert evaluation of event %s", pk)
            break
    return len(ids)
