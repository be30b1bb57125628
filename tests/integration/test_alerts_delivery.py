"""Alert notifications through a real Celery worker and Redis: a webhook answered 500 then 200
is retried after its backoff and delivered once (issue 4)."""

from __future__ import annotations

import json
import time

import pytest

from ctxaudit.alerts.models import Alert, Channel, Delivery
from ctxaudit.projects.models import Project
from tests.alerts.conftest import Receiver
from tests.factories import api_key_for, event_payload

pytestmark = [pytest.mark.integration]


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def test_it_retries_a_webhook_with_backoff_and_delivers_it_once(client, workers, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CTXAUDIT_ALERT_RETRY_BASE_SECONDS", "1")  # the worker's first retry after 1 s
    monkeypatch.setenv("CTXAUDIT_ALLOW_PRIVATE_WEBHOOKS", "true")  # the receiver listens on 127.0.0.1
    key = api_key_for("acme")
    with Receiver() as receiver:
        receiver.fail_first_per_notification = True
        Channel.objects.create(project=Project.objects.get(name="acme"), kind="webhook", target=receiver.url)
        workers.start()
        body = event_payload(
            rules=[{"id": "R1", "text": "只能查询订单，禁止新增、修改、删除订单。", "severity": "critical"}]
        )
        r = client.post(
            "/api/v1/events",
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        assert r.status_code == 202
        missing = Delivery.objects.filter(alert__kind="rule_missing", alert__rule_id="R1")
        _wait(lambda: missing.filter(status="sent").exists(), 90, "the webhook delivered")
        time.sleep(1.5)  # room for a (wrong) duplicate send to show up
        delivery = missing.get()
        attempts = list(delivery.attempt_log.values_list("status_code", "at"))
        assert [code for code, _ in attempts] == [500, 200]
        gap = (attempts[1][1] - attempts[0][1]).total_seconds()
        assert gap >= 0.9  # the countdown, not an immediate retry
        mine = [
            q for q in receiver.requests if q["headers"]["X-Ctxaudit-Notification-Id"] == str(delivery.pk)
        ]
        assert len(mine) == 2  # the 500 and the retry, nothing more
        assert mine[0]["body"] == mine[1]["body"]
        assert Alert.objects.get(kind="rule_missing", rule_id="R1").severity == "critical"
    with capsys.disabled():
        print(
            f"\n[alerts] webhook 500 then 200 through a real worker: 2 attempts, retried after {gap:.2f}s, delivered once"
        )
