from __future__ import annotations

import hashlib
import hmac
import json
import time

import pytest
from django.core import mail

from ctxaudit.alerts.models import Alert, Channel, Delivery
from ctxaudit.alerts.services import alert_resolve, alerts_for_event, delivery_attempt, retry_countdown
from ctxaudit.alerts.tasks import alerts_deliver_task
from tests.alerts.conftest import checked_event

pytestmark = pytest.mark.django_db

MISSING_R1 = ("rule_missing", "high", "R1", "Rule R1 is missing after compression.")


def verify(secret: str, headers: dict[str, str], body: bytes, tolerance: int = 300) -> bool:
    """The receiver's check, as documented in README "Alerts → Verifying webhooks"."""
    ts = headers["X-Ctxaudit-Timestamp"]
    expected = "v1=" + hmac.new(secret.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return abs(time.time() - int(ts)) <= tolerance and hmac.compare_digest(
        expected, headers["X-Ctxaudit-Signature"]
    )


@pytest.fixture
def webhook(alice, receiver) -> Channel:
    return Channel.objects.create(
        project=alice.memberships.get().project, kind="webhook", name="ops hook", target=receiver.url
    )


def raise_alert(django_capture_on_commit_callbacks, **kw) -> None:
    ev = checked_event(findings=[MISSING_R1], **kw)
    with django_capture_on_commit_callbacks(execute=True):
        alerts_for_event(ev.pk)


def test_it_sends_a_signed_webhook_a_receiver_can_verify(
    webhook, receiver, django_capture_on_commit_callbacks
) -> None:
    raise_alert(django_capture_on_commit_callbacks)
    (req,) = receiver.requests
    assert verify(webhook.secret, req["headers"], req["body"])
    assert not verify("another-secret", req["headers"], req["body"])
    body = json.loads(req["body"])
    delivery = Delivery.objects.get()
    assert body["notification_id"] == req["headers"]["X-Ctxaudit-Notification-Id"] == str(delivery.pk)
    assert body["type"] == "alert.opened"
    assert body["alert"]["kind"] == "rule_missing"
    assert body["alert"]["rule_id"] == "R1"
    assert body["alert"]["url"].endswith(f"/alerts/{Alert.objects.get().pk}/")
    assert body["event"]["url"].endswith(f"/events/{body['event']['id']}/")
    assert delivery.status == "sent"
    assert [(a.status_code, a.ok) for a in delivery.attempt_log.all()] == [(200, True)]


def test_it_retries_a_500_once_and_delivers_once(
    webhook, receiver, django_capture_on_commit_callbacks
) -> None:
    receiver.statuses = [500, 200]
    raise_alert(django_capture_on_commit_callbacks)  # the eager task retries at once, no real backoff
    assert len(receiver.requests) == 2
    ids = {r["headers"]["X-Ctxaudit-Notification-Id"] for r in receiver.requests}
    assert len(ids) == 1  # the same notification, so the receiver can dedupe
    assert receiver.requests[0]["body"] == receiver.requests[1]["body"]
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("sent", 2)
    assert [(a.number, a.status_code, a.result) for a in delivery.attempt_log.all()] == [
        (1, 500, "HTTP 500"),
        (2, 200, "HTTP 200"),
    ]
    # A duplicated task (e.g. redelivered after a worker restart) sends nothing more.
    alerts_deliver_task.apply(args=[str(delivery.pk)])
    assert delivery_attempt(delivery_id=str(delivery.pk)) == "skipped"
    assert len(receiver.requests) == 2


def test_it_retries_with_exponential_backoff(
    webhook, receiver, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    """Drive the task's retry path by hand: each transient failure asks Celery for the next countdown."""
    receiver.statuses = [503, 503, 503]
    asked: list[int] = []

    class Retry(Exception):
        pass

    def fake_retry(*, countdown: int, **kw) -> Retry:
        asked.append(countdown)
        return Retry()

    monkeypatch.setattr(alerts_deliver_task, "retry", fake_retry)
    ev = checked_event(findings=[MISSING_R1])
    alerts_for_event(ev.pk)  # on_commit not run: the delivery waits, as if queued
    delivery = Delivery.objects.get()
    for n in range(3):
        alerts_deliver_task.push_request(retries=n)
        try:
            with pytest.raises(Retry):
                alerts_deliver_task.run(str(delivery.pk))
        finally:
            alerts_deliver_task.pop_request()
    assert asked == [10, 20, 40]
    assert [retry_countdown(n) for n in range(6)] == [10, 20, 40, 80, 160, 320]
    assert retry_countdown(20) == 3600
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("retrying", 3)


def test_it_gives_up_after_the_last_retry(webhook, receiver) -> None:
    receiver.statuses = [500]
    alerts_for_event(checked_event(findings=[MISSING_R1]).pk)
    d = Delivery.objects.get()
    assert delivery_attempt(delivery_id=str(d.pk), last_try=True) == "failed"
    d.refresh_from_db()
    assert d.status == "failed"


def test_it_does_not_retry_a_client_error(webhook, receiver, django_capture_on_commit_callbacks) -> None:
    receiver.statuses = [410]
    raise_alert(django_capture_on_commit_callbacks)
    assert len(receiver.requests) == 1
    d = Delivery.objects.get()
    assert (d.status, d.attempt_log.get().result) == ("failed", "HTTP 410")


def test_it_retries_when_the_receiver_is_down(alice, django_capture_on_commit_callbacks, settings) -> None:
    from tests.alerts.conftest import Receiver

    settings.CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS = True

    with Receiver() as r:
        url = r.url
    Channel.objects.create(project=alice.memberships.get().project, kind="webhook", target=url)
    ev = checked_event(findings=[MISSING_R1])
    alerts_for_event(ev.pk)
    d = Delivery.objects.get()
    assert delivery_attempt(delivery_id=str(d.pk)) == "retry"
    assert d.attempt_log.get().result.startswith("connection failed")


def test_it_sends_email_through_django_backends(alice, django_capture_on_commit_callbacks) -> None:
    Channel.objects.create(
        project=alice.memberships.get().project, kind="email", target="ops@example.com, sre@example.com"
    )
    raise_alert(
        django_capture_on_commit_callbacks,
        rules=[{"id": "R1", "text": "<b>禁止删除订单</b>", "severity": "high"}],
    )
    (msg,) = mail.outbox
    assert msg.to == ["ops@example.com", "sre@example.com"]
    assert "rule_missing" in msg.subject and "R1" in msg.subject
    assert "Rule text: <b>禁止删除订单</b>" in msg.body  # plain text, never HTML
    assert msg.extra_headers["X-Ctxaudit-Notification-Id"] == str(Delivery.objects.get().pk)
    assert Delivery.objects.get().status == "sent"


def test_it_notifies_a_regression(webhook, receiver, alice, django_capture_on_commit_callbacks) -> None:
    raise_alert(django_capture_on_commit_callbacks, sequence=1)
    alert_resolve(alert=Alert.objects.get(), user=alice)
    raise_alert(django_capture_on_commit_callbacks, sequence=2)
    types = [json.loads(r["body"])["type"] for r in receiver.requests]
    assert types == ["alert.opened", "alert.regression"]
    assert json.loads(receiver.requests[1]["body"])["alert"]["is_regression"] is True


def test_it_only_notifies_the_alerts_project(
    webhook, receiver, charlie, django_capture_on_commit_callbacks
) -> None:
    ev = checked_event("other", findings=[MISSING_R1])
    with django_capture_on_commit_callbacks(execute=True):
        alerts_for_event(ev.pk)
    assert receiver.requests == []


def test_it_shows_the_delivery_log_on_the_alert(
    client, alice, webhook, receiver, django_capture_on_commit_callbacks
) -> None:
    from tests.factories import PASSWORD

    receiver.statuses = [500, 200]
    raise_alert(django_capture_on_commit_callbacks)
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/alerts/{Alert.objects.get().pk}/").content.decode()
    assert str(Delivery.objects.get().pk) in body
    assert "HTTP 500" in body and "HTTP 200" in body
