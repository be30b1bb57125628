"""Alert policy and channels of a project: defaults, updates, channel create/test/enable."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from ctxaudit.alerts import kinds
from ctxaudit.alerts.models import (
    AlertCondition,
    AlertPolicy,
    Channel,
    Delivery,
)
from ctxaudit.core import netguard
from ctxaudit.projects.models import Project

logger = logging.getLogger(__name__)


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
    *, policy: AlertPolicy, user: User, enabled: bool, conditions: dict[int, dict[str, Any]]
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
    elif kind == Channel.Kind.SLACK:
        try:
            URLValidator(schemes=["https"])(target)
        except ValidationError:
            raise ValueError("the Slack incoming-webhook URL must be an https:// URL") from None
        try:
            netguard.check_url(target)
        except netguard.UnsafeURL as e:
            raise ValueError(f"the Slack URL is refused: {e}") from None
    elif kind == Channel.Kind.PAGERDUTY:
        if not re.fullmatch(r"[A-Za-z0-9]{20,64}", target):
            raise ValueError("the PagerDuty routing key is the integration key: 32 letters and digits")
    else:
        raise ValueError(f"kind must be one of {', '.join(Channel.Kind.values)}")
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
