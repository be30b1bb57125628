"""The page never looks safer than it is: a demoted rule is never green (chip, bar, diff mark,
timeline point), the closest text to a missing rule is not marked as the rule, the legend names
every mark; and the wording says what happened ("grew by 118%", "is required", no doubled names)."""

from __future__ import annotations

import re

import pytest

from ctxaudit.projects.models import AuditLogEntry
from ctxaudit.ui.event_items import token_table
from tests.factories import PASSWORD, api_key_for, event

pytestmark = pytest.mark.django_db

RULE = "禁止删除任何业务数据，必须经过管理员二次确认。"
SYSTEM = f"你是运营助手。\n{RULE}"
HISTORY = [
    {"role": "user", "content": "查一下昨天的订单量"},
    {"role": "assistant", "content": "昨天共 1280 单。"},
]


def _checked(capture, after: list[dict], session: str = "s-1"):
    with capture(execute=True):
        ev = event(
            session_id=session,
            before=[{"role": "system", "content": SYSTEM}, *HISTORY],
            after=after,
            rules=[{"id": "R1", "text": RULE, "severity": "critical"}],
        )
    ev.refresh_from_db()
    return ev


@pytest.fixture
def demoted(alice, django_capture_on_commit_callbacks):
    after = [{"role": "system", "content": "你是运营助手。"}, {"role": "user", "content": RULE}, *HISTORY]
    return _checked(django_capture_on_commit_callbacks, after)


def _rules_row(body: str) -> str:
    return re.search(r'<table class="rules">.*?<tbody>(.*?)</tbody>', body, re.S).group(1)


def test_a_demoted_rule_is_never_green_on_the_event_page(client, demoted) -> None:
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{demoted.pk}/").content.decode()
    row = _rules_row(body)
    assert 'class="state-demoted"' in row
    assert '<span class="badge badge-demoted"' in row and "badge-retained" not in row
    assert 'class="meter-demoted"' in row and "meter-retained" not in row
    # In the diff, the rule's text after compression is marked demoted, not kept.
    assert re.search(r'class="[^"]*hl-rule hl-demoted', body)
    assert not re.search(r'class="[^"]*hl-rule hl-retained[^"]*k-rule-0', body)


def test_the_api_keeps_state_and_demoted_apart(client, demoted) -> None:
    key = api_key_for("acme", scopes=("read",))
    (rule,) = client.get(f"/api/v1/events/{demoted.pk}", HTTP_AUTHORIZATION=f"Bearer {key}").json()["rules"]
    assert rule["state"] == "retained" and rule["demoted"] is True


def test_a_demoted_point_on_the_timeline_says_demoted(client, demoted) -> None:
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/sessions/{demoted.session_id}/").content.decode()
    assert '<use href="#mk-demoted"' in body and "mk mk-demoted" in body
    assert "◆ demoted (text kept, outside the system role)" in body  # table view
    assert '<span class="badge badge-demoted">demoted</span>' in body  # "Now" column
    assert "1 rule demoted" in body and "no rule decaying" in body
    key = api_key_for("acme", scopes=("read",))
    r = client.get(
        f"/api/v1/sessions/{demoted.session.external_id}/timeline", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    (point,) = r.json()["rules"][0]["points"]
    assert point["state"] == "retained" and point["demoted"] is True


def test_the_closest_text_to_a_missing_rule_is_not_marked_as_the_rule(
    client, alice, django_capture_on_commit_callbacks
) -> None:
    after = [{"role": "system", "content": "你是运营助手。\n业务数据的删除由管理员处理。"}, *HISTORY]
    ev = _checked(django_capture_on_commit_callbacks, after)
    assert ev.report["rules"][0]["state"] == "missing"
    client.login(username="alice", password=PASSWORD)
    body = client.get(f"/events/{ev.pk}/").content.decode()
    # The after-side evidence is the closest text only: marked as such, never as the rule (lost).
    closest = re.findall(r'<span class="([^"]*)"[^>]*title="closest text to rule R1[^"]*"', body)
    assert closest and all("hl-closest" in c and "hl-missing" not in c for c in closest)
    assert "业务数据的删除由管理员处理" in body
    assert not re.search(r'class="hl-rule hl-missing[^"]*"', body)
    assert "hl-was-missing" in body  # where the rule was, before compression
    legend = re.search(r'<p class="legend small">(.*?)</p>', body, re.S).group(1)
    for entry in ("rule kept", "rule weakened", "rule demoted", "rule lost", "closest text to a lost rule"):
        assert entry in legend
    assert 'class="hl hl-rule hl-weakened"' in legend


def test_token_wording_says_grew_when_the_context_grew() -> None:
    grew = token_table({"tokens": {"before": 100, "after": 218, "ratio": 2.18}})
    assert grew["change_text"] == "grew by 118%"
    shrank = token_table({"tokens": {"before": 1000, "after": 380, "ratio": 0.38}})
    assert shrank["change_text"] == "62% removed"


def test_a_missing_after_is_reported_as_required(client) -> None:
    key = api_key_for("acme")
    r = client.post(
        "/api/v1/events",
        {"session_id": "s", "before": [{"role": "user", "content": "hi"}]},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert r.status_code == 400
    assert r.json()["field"] == "after"
    assert r.json()["error"].startswith("after: is required")
    wrong = client.post(
        "/api/v1/events",
        {"session_id": "s", "before": [], "after": 5},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert wrong.json()["error"].startswith("after: must be a list of messages")


def test_the_audit_log_names_an_event_once(client, alice, demoted) -> None:
    client.login(username="alice", password=PASSWORD)
    client.get(f"/events/{demoted.pk}/")
    entry = AuditLogEntry.objects.get()
    body = client.get(f"/projects/{entry.project_id}/audit-log/").content.decode()
    assert f"event {demoted.pk} · session s-1" in body
    assert f"event {demoted.pk} · event {demoted.pk}" not in body
