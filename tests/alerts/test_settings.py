from __future__ import annotations

import json

import pytest

from ctxaudit.alerts.models import AlertCondition, AlertEvaluation, Channel
from ctxaudit.alerts.services import alert_policy_for_project, alerts_for_event, evaluations_requeue
from ctxaudit.ingest.models import Event
from tests.alerts.conftest import checked_event
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x">'


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_it_shows_the_policy_and_channels(client, alice, project) -> None:
    Channel.objects.create(
        project=project, kind="webhook", name=HOSTILE, target="https://hooks.example.com/x"
    )
    body = login(client, alice).get(f"/alerts/projects/{project.pk}/").content.decode()
    assert "rule_missing" in body and "claim_promoted" in body
    assert Channel.objects.get().secret in body
    assert "&lt;script&gt;" in body and "<script>alert" not in body


def test_it_hides_secrets_and_forms_from_reviewers(client, bob, project) -> None:
    ch = Channel.objects.create(project=project, kind="webhook", target="https://hooks.example.com/x")
    c = login(client, bob)
    body = c.get(f"/alerts/projects/{project.pk}/").content.decode()
    assert ch.secret not in body
    assert "Add channel" not in body
    assert (
        c.post(
            f"/alerts/projects/{project.pk}/channels/", {"kind": "email", "target": "a@example.com"}
        ).status_code
        == 403
    )
    assert c.post(f"/alerts/projects/{project.pk}/policy/", {"enabled": "on"}).status_code == 403
    assert c.post(f"/alerts/channels/{ch.pk}/toggle/").status_code == 403


def test_it_checks_ownership(client, charlie, project) -> None:
    ch = Channel.objects.create(project=project, kind="webhook", target="https://hooks.example.com/x")
    c = login(client, charlie)
    assert c.get(f"/alerts/projects/{project.pk}/").status_code == 404
    assert (
        c.post(
            f"/alerts/projects/{project.pk}/channels/", {"kind": "email", "target": "a@example.com"}
        ).status_code
        == 404
    )
    assert c.post(f"/alerts/channels/{ch.pk}/toggle/").status_code == 404


def test_it_adds_and_toggles_channels(client, olga, project, public_dns) -> None:
    c = login(client, olga)
    assert (
        c.post(
            f"/alerts/projects/{project.pk}/channels/",
            {"kind": "webhook", "name": "pager", "target": "https://hooks.example.com/ctx"},
        ).status_code
        == 302
    )
    assert (
        c.post(
            f"/alerts/projects/{project.pk}/channels/",
            {"kind": "email", "target": "ops@example.com , sre@example.com"},
        ).status_code
        == 302
    )
    hook, email = Channel.objects.order_by("id")
    assert (hook.kind, hook.target, len(hook.secret) > 30) == (
        "webhook",
        "https://hooks.example.com/ctx",
        True,
    )
    assert email.target == "ops@example.com, sre@example.com"
    assert c.post(f"/alerts/channels/{hook.pk}/toggle/").status_code == 302
    hook.refresh_from_db()
    assert not hook.enabled


@pytest.mark.parametrize(
    ("kind", "target", "error"),
    [
        ("webhook", "file:///etc/passwd", "http:// or https://"),
        ("email", "not-an-address", "not an email address"),
        ("sms", "123", "kind"),
    ],
)
def test_it_rejects_bad_channels(client, olga, project, kind, target, error) -> None:
    r = login(client, olga).post(f"/alerts/projects/{project.pk}/channels/", {"kind": kind, "target": target})
    assert r.status_code == 400
    assert error in r.content.decode()
    assert not Channel.objects.exists()


def test_it_edits_the_policy(client, olga, project) -> None:
    policy = alert_policy_for_project(project)
    data = {"enabled": "on"}
    for cnd in policy.conditions.all():
        p = f"cond-{cnd.pk}-"
        data.update(
            {
                p + "min_severity": cnd.min_severity,
                p + "min_per_event": cnd.min_per_event,
                p + "min_compressions": cnd.min_compressions,
            }
        )
        if cnd.kind != "rule_weakened":
            data[p + "enabled"] = "on"
    missing = policy.conditions.get(kind="rule_missing")
    data[f"cond-{missing.pk}-min_severity"] = "critical"
    assert login(client, olga).post(f"/alerts/projects/{project.pk}/policy/", data).status_code == 302
    assert AlertCondition.objects.get(pk=missing.pk).min_severity == "critical"
    assert not policy.conditions.get(kind="rule_weakened").enabled
    assert alerts_for_event(checked_event(findings=[("rule_missing", "high", "R1", "gone")]).pk) == []


def test_it_rejects_a_bad_threshold(client, olga, project) -> None:
    cnd = alert_policy_for_project(project).conditions.get(kind="rule_missing")
    r = login(client, olga).post(
        f"/alerts/projects/{project.pk}/policy/", {f"cond-{cnd.pk}-min_per_event": "many"}
    )
    assert r.status_code == 400
    assert "whole numbers" in r.content.decode()


def test_it_requeues_evaluations_lost_on_the_way(alice, time_machine) -> None:
    from django.utils import timezone

    ev = checked_event(findings=[("rule_missing", "high", "R1", "gone")])
    Event.objects.filter(pk=ev.pk).update(checked_at=timezone.now())
    time_machine.move_to(timezone.now() + timezone.timedelta(minutes=10))
    assert evaluations_requeue() == 1  # the task runs eagerly in the embedded default
    assert AlertEvaluation.objects.filter(event=ev).exists()
    assert ev.alerts.count() == 1
    assert evaluations_requeue() == 0


def test_it_sends_a_signed_test_notification(client, olga, bob, project, receiver) -> None:
    from tests.alerts.test_deliveries import verify

    ch = Channel.objects.create(project=project, kind="webhook", name="pager", target=receiver.url)
    assert login(client, bob).post(f"/alerts/channels/{ch.pk}/test/").status_code == 403
    r = login(client, olga).post(f"/alerts/channels/{ch.pk}/test/", follow=True)
    # the browser ends on the settings page (GET), so a refresh does not send the test again
    assert r.redirect_chain == [(f"/alerts/projects/{project.pk}/", 302)]
    assert "Test notification to pager: ok: HTTP 200" in r.content.decode()
    (req,) = receiver.requests
    assert verify(ch.secret, req["headers"], req["body"])
    assert json.loads(req["body"])["type"] == "test"
    assert "Test notification" not in client.get(f"/alerts/projects/{project.pk}/").content.decode()
    assert len(receiver.requests) == 1
    receiver.statuses = [500]
    assert "failed: HTTP 500" in client.post(f"/alerts/channels/{ch.pk}/test/", follow=True).content.decode()


def test_a_refused_channel_keeps_what_was_typed(client, olga, project) -> None:
    r = login(client, olga).post(
        f"/alerts/projects/{project.pk}/channels/",
        {"kind": "webhook", "name": "night shift", "target": "http://127.0.0.1:9/hook"},
    )
    assert r.status_code == 400
    page = r.content.decode()
    assert 'value="night shift"' in page
    assert 'value="http://127.0.0.1:9/hook"' in page
    assert '<option value="webhook" selected>' in page
