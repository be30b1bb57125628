"""Slack (incoming webhook) and PagerDuty (Events API v2) channels, against a local receiver."""

from __future__ import annotations

import json

import pytest

from ctxaudit.alerts.models import Alert, Channel
from ctxaudit.alerts.services import alert_resolve, alerts_for_event, channel_create
from tests.alerts.conftest import checked_event

pytestmark = pytest.mark.django_db

ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF"


def _raise(capture, findings, rules=None):
    ev = checked_event(findings=findings, rules=rules)
    with capture(execute=True):
        alerts_for_event(ev.pk)
    return Alert.objects.get()


def test_slack_gets_a_readable_message_with_the_lost_rule_and_no_live_markup(
    alice, receiver, django_capture_on_commit_callbacks
) -> None:
    project = alice.memberships.get().project
    Channel.objects.create(project=project, kind="slack", name="#agents", target=receiver.url)
    alert = _raise(
        django_capture_on_commit_callbacks,
        [("rule_missing", "high", "R1", "Rule R1 is missing.")],
        rules=[
            {
                "id": "R1",
                "text": "Never delete orders <!channel> <https://evil.example|click>",
                "severity": "high",
            }
        ],
    )
    (req,) = receiver.requests
    msg = json.loads(req["body"])
    text = json.dumps(msg, ensure_ascii=False)
    assert msg["text"].startswith("[ctxaudit] high opened: ")
    assert "<!channel>" not in text and "<https://evil.example|click>" not in text
    assert "&lt;!channel&gt;" in text
    assert any(
        b["text"]["text"] == f"<{alert_url(alert)}|Open the alert in ctxaudit>"
        for b in msg["blocks"]
        if b["type"] == "section"
    )
    assert any("Rule lost: >R1" in b["text"]["text"] for b in msg["blocks"] if b["type"] == "section")


def alert_url(alert: Alert) -> str:
    from django.conf import settings

    return f"{settings.CTXAUDIT_BASE_URL.rstrip('/')}/alerts/{alert.pk}/"


def test_pagerduty_triggers_then_resolves_one_incident_keyed_by_the_alert_fingerprint(
    alice, receiver, settings, django_capture_on_commit_callbacks
) -> None:
    settings.CTXAUDIT_PAGERDUTY_EVENTS_URL = receiver.url
    project = alice.memberships.get().project
    Channel.objects.create(project=project, kind="pagerduty", name="on-call", target=ROUTING_KEY)
    alert = _raise(
        django_capture_on_commit_callbacks, [("rule_missing", "critical", "R1", "Rule R1 is missing.")]
    )
    with django_capture_on_commit_callbacks(execute=True):
        alert_resolve(alert=alert, user=alice)
    trigger, resolve = (json.loads(r["body"]) for r in receiver.requests)
    assert trigger["routing_key"] == ROUTING_KEY
    assert (trigger["event_action"], trigger["dedup_key"]) == ("trigger", alert.fingerprint)
    assert trigger["payload"]["severity"] == "critical"
    assert trigger["payload"]["summary"] == alert.title
    assert trigger["links"] == [{"href": alert_url(alert), "text": "Alert in ctxaudit"}]
    assert resolve == {"routing_key": ROUTING_KEY, "event_action": "resolve", "dedup_key": alert.fingerprint}


def test_resolving_notifies_only_pagerduty(
    alice, receiver, settings, django_capture_on_commit_callbacks
) -> None:
    settings.CTXAUDIT_PAGERDUTY_EVENTS_URL = receiver.url
    project = alice.memberships.get().project
    Channel.objects.create(project=project, kind="webhook", target=receiver.url)
    alert = _raise(django_capture_on_commit_callbacks, [("rule_missing", "high", "R1", "gone")])
    with django_capture_on_commit_callbacks(execute=True):
        alert_resolve(alert=alert, user=alice)
    assert [json.loads(r["body"])["type"] for r in receiver.requests] == ["alert.opened"]


@pytest.mark.parametrize(
    ("kind", "target", "problem"),
    [
        ("pagerduty", "not a key!", "routing key"),
        ("slack", "http://hooks.slack.com/services/T0/B0/x", "https://"),
        ("carrier-pigeon", "x", "kind must be one of"),
    ],
)
def test_channel_targets_are_checked_per_kind(alice, kind, target, problem) -> None:
    with pytest.raises(ValueError, match=problem):
        channel_create(project=alice.memberships.get().project, kind=kind, name="", target=target)


def test_a_pagerduty_channel_is_created_from_its_routing_key(alice) -> None:
    ch = channel_create(
        project=alice.memberships.get().project, kind="pagerduty", name="on-call", target=ROUTING_KEY
    )
    assert (ch.kind, ch.target) == ("pagerduty", ROUTING_KEY)
