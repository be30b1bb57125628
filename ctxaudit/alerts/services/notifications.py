"""Notifications: deliveries of an alert to its channels, attempts with retries, requeue sweeps."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from ctxaudit.alerts.models import (
    Alert,
    Channel,
    Delivery,
    DeliveryAttempt,
)
from ctxaudit.ingest.models import Event

logger = logging.getLogger(__name__)


# A delivery claimed longer ago than this (a worker died mid-send) may be claimed again.
# The receiver still dedupes on the notification id, so a rare second send is harmless.
DELIVERY_LEASE_SECONDS = 300


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
        "fingerprint": alert.fingerprint,
    }


def deliveries_create(
    *,
    alert: Alert,
    event: Event | None,
    reason: str,
    kinds: tuple[str, ...] | None = None,
    channels: Sequence[Channel] | None = None,
) -> list[Delivery]:
    """One Delivery per enabled channel of the alert's project (of `kinds`, default all), each
    sent after commit. channels: the project's enabled channels, when the caller notifies for many
    alerts at once and has read them already (one query, not one per alert)."""
    created = []
    if channels is None:
        found = Channel.objects.filter(project_id=alert.project_id, enabled=True)
        channels = list(found if kinds is None else found.filter(kind__in=kinds))
    elif kinds is not None:
        channels = [c for c in channels if c.kind in kinds]
    for channel in channels:
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
            transaction.on_commit(partial(delivery_enqueue, str(d.pk)))
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
