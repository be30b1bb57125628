"""Alert lifecycle, the user actions: acknowledge, resolve, reopen, assign, comment, mute."""

from __future__ import annotations

import logging
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from ctxaudit.alerts.models import (
    Alert,
    AlertActivity,
    Channel,
)
from ctxaudit.alerts.services.notifications import deliveries_create

logger = logging.getLogger(__name__)


class AlertTransitionError(ValueError):
    """The requested status change does not apply to the alert's current status."""


def _log(alert: Alert, user: User | None, kind: str, text: str = "") -> AlertActivity:
    return AlertActivity.objects.create(alert=alert, user=user, kind=kind, text=text)


@transaction.atomic
def alert_acknowledge(*, alert: Alert, user: User) -> Alert:
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
def alert_resolve(*, alert: Alert, user: User) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.status == Alert.Status.RESOLVED:
        return alert
    alert.status = Alert.Status.RESOLVED
    alert.resolved_at = timezone.now()
    alert.is_regression = False
    alert.save(update_fields=["status", "resolved_at", "is_regression"])
    _log(alert, user, AlertActivity.Kind.RESOLVED)
    if not alert.is_muted:
        # PagerDuty keeps an incident open until told: resolve it under the same dedup key.
        deliveries_create(alert=alert, event=None, reason="resolved", kinds=(Channel.Kind.PAGERDUTY,))
    return alert


@transaction.atomic
def alert_reopen(*, alert: Alert, user: User) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.status == Alert.Status.OPEN:
        return alert
    alert.status = Alert.Status.OPEN
    alert.resolved_at = None
    alert.save(update_fields=["status", "resolved_at"])
    _log(alert, user, AlertActivity.Kind.REOPENED)
    return alert


def alerts_bulk_acknowledge(*, alerts: list[Alert], user: User) -> int:
    """Acknowledge the open ones among `alerts`; others are left as they are. Returns how many changed."""
    n = 0
    for alert in alerts:
        if alert.status == Alert.Status.OPEN:
            alert_acknowledge(alert=alert, user=user)
            n += 1
    return n


@transaction.atomic
def alert_assign(*, alert: Alert, user: User, assignee: User | None) -> Alert:
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.assignee_id == (assignee.pk if assignee else None):
        return alert
    alert.assignee = assignee
    alert.save(update_fields=["assignee"])
    if assignee is None:
        _log(alert, user, AlertActivity.Kind.UNASSIGNED)
    else:
        _log(alert, user, AlertActivity.Kind.ASSIGNED, f"assigned to {assignee.get_username()}")
    return alert


def alert_comment(*, alert: Alert, user: User, text: str) -> AlertActivity:
    text = text.strip()
    if not text:
        raise ValueError("a comment needs text")
    return _log(alert, user, AlertActivity.Kind.COMMENT, text[:5000])


@transaction.atomic
def alert_mute(*, alert: Alert, user: User, until: datetime | None) -> Alert:
    """Snooze/mute until `until` (no notifications meanwhile); None unmutes."""
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    alert.muted_until = until
    alert.save(update_fields=["muted_until"])
    if until is None:
        _log(alert, user, AlertActivity.Kind.UNMUTED)
    else:
        _log(alert, user, AlertActivity.Kind.MUTED, f"muted until {until.strftime('%Y-%m-%d %H:%M UTC')}")
    return alert
