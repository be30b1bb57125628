"""An event checked while the broker is down is linked to its alert at once (issue 13 "Faults")."""

from __future__ import annotations

import pytest
from kombu.exceptions import OperationalError

from ctxaudit.alerts.models import Alert, AlertEvent
from ctxaudit.alerts.tasks import alerts_evaluate_task
from ctxaudit.audits.services import event_check
from ctxaudit.ingest.models import Event
from tests.factories import event

pytestmark = pytest.mark.django_db

ORDER_RULE = {"id": "R1", "text": "只能查询订单，禁止新增、修改、删除订单。", "severity": "critical"}


def test_it_evaluates_in_process_when_the_broker_refuses_the_task(
    alice, monkeypatch, caplog, django_capture_on_commit_callbacks
) -> None:
    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    ev = event("acme", rules=[ORDER_RULE])  # on_commit does not run here: the event stays pending
    assert ev.status == "pending"
    monkeypatch.setattr(alerts_evaluate_task, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        event_check(event_id=ev.pk)
    assert Event.objects.get(pk=ev.pk).status == "checked"
    alert = Alert.objects.get(kind="rule_missing", rule_id="R1")
    assert list(AlertEvent.objects.filter(alert=alert).values_list("event_id", flat=True)) == [ev.pk]
    assert "evaluating it in this process" in caplog.text


def test_it_enqueues_when_the_broker_takes_the_task(
    alice, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(alerts_evaluate_task, "delay", sent.append)
    ev = event("acme", rules=[ORDER_RULE])
    with django_capture_on_commit_callbacks(execute=True):
        event_check(event_id=ev.pk)
    assert sent == [ev.pk]
    assert not Alert.objects.exists()  # the worker will evaluate it, not this process
