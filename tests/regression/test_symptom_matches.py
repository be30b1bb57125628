"""The symptom guide says which finding put each incident under a row, and leaves out events that
passed (a faithful compression with one piece of low-severity advice) unless asked."""

from __future__ import annotations

import re

import pytest

from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event

pytestmark = pytest.mark.django_db


def _row(body: str, n: int) -> str:
    return body.split(f'id="symptom-{n}"')[1].split("</tr>")[0]


@pytest.fixture
def two(checked):
    failing = checked(session_id="s-fail")  # the default payload loses the order rules
    passing = checked(session_id="s-pass")
    Finding.objects.filter(event=passing).delete()
    Finding.objects.create(
        event=passing,
        kind="summary_unmarked",
        severity="low",
        message="建议：消息 #1是历史摘要… / Advice: message #1 is a history summary without a marker",
    )
    Event.objects.filter(pk=passing.pk).update(verdict="pass")
    return failing, passing


def test_each_incident_shows_its_matching_finding(client, alice, two) -> None:
    failing, _ = two
    client.force_login(alice)
    row1 = _row(client.get("/symptoms/").content.decode(), 1)
    item = re.search(rf"<li>(?:(?!</li>).)*?/events/{failing.pk}/checklist/.*?</li>", row1, re.S).group(0)
    assert "<code>rule_missing</code>" in item
    worst = failing.findings.filter(kind__in=["rule_missing", "rule_demoted", "system_truncated"]).order_by(
        "id"
    )
    assert worst.exists()
    assert re.search(r'<span class="badge badge-(high|critical)">', item)
    assert "is missing after compression" in item  # the English half of the message


def test_passing_events_are_left_out_unless_asked(client, alice, two) -> None:
    _, passing = two
    client.force_login(alice)
    body = client.get("/symptoms/").content.decode()
    row2 = _row(body, 2)
    assert f"/events/{passing.pk}/checklist/" not in row2
    assert "1 passing event with only these findings left out" in row2
    asked = _row(client.get("/symptoms/?passing=1").content.decode(), 2)
    assert f"/events/{passing.pk}/checklist/" in asked
    assert "<code>summary_unmarked</code>" in asked and "Advice: message #1 is a history summary" in asked
    page = client.get("/symptoms/incidents/?row=2").content.decode()
    assert f"/events/{passing.pk}/" not in page and "1 passing event left out" in page
    page = client.get("/symptoms/incidents/?row=2&passing=1").content.decode()
    assert f'href="/events/{passing.pk}/"' in page and '<td class="match">' in page
