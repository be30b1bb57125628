from __future__ import annotations

import pytest
from django.utils.html import escape

from ctxaudit.audits.models import Finding
from ctxaudit.regression.guide import SYMPTOMS, symptom_for_kind
from ctxaudit.ui.templatetags.checklist import symptom_url

pytestmark = pytest.mark.django_db


def test_it_shows_the_table_in_chinese_and_english(client, alice) -> None:
    client.force_login(alice)
    body = client.get("/symptoms/").content.decode()
    assert len(SYMPTOMS) == 6
    for s in SYMPTOMS:
        assert f'id="symptom-{s.row}"' in body
        assert s.symptom_zh in body and escape(s.fix_en) in body
    assert "对话轮次变多后，模型不再拒绝危险操作" in body
    assert 'href="#symptom-1"><code>rule_missing</code>' in body


def test_it_lists_matching_incidents_of_the_users_projects(client, alice, charlie, checked) -> None:
    mine = checked("acme")
    theirs = checked("other")
    assert mine.findings.filter(kind="rule_missing").exists()
    client.force_login(alice)
    body = client.get("/symptoms/").content.decode()
    row1 = body.split('id="symptom-1"')[1].split('id="symptom-2"')[0]
    assert f'href="/events/{mine.pk}/checklist/"' in row1
    assert f"/events/{theirs.pk}/checklist/" not in body


def test_it_maps_unknown_kinds_gracefully(client, alice, checked) -> None:
    ev = checked()
    Finding.objects.create(event=ev, kind="brand_new_kind", severity="low", message="new check")
    assert symptom_for_kind("brand_new_kind") is None
    assert symptom_url("brand_new_kind") == "/symptoms/#other"
    assert symptom_url("claim_promoted") == "/symptoms/#symptom-2"
    client.force_login(alice)
    body = client.get("/symptoms/").content.decode()
    other = body.split('id="other"')[1]
    assert "brand_new_kind" in other and f"/events/{ev.pk}/checklist/" in other
    page = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    assert "no symptom row covers this kind yet" in page


def test_it_requires_login(client) -> None:
    assert client.get("/symptoms/").status_code == 302


def test_the_event_page_links_kinds_and_the_checklist(client, alice, checked) -> None:
    ev = checked()
    client.force_login(alice)
    body = client.get(f"/events/{ev.pk}/").content.decode()
    assert (
        'href="/symptoms/#symptom-1" title="symptom guide: what this finding usually means and how to fix it"><code class="kind">rule_missing</code>'
        in body
    )
    assert f'href="/events/{ev.pk}/checklist/"' in body and ">0/7</a>" in body


def test_it_escapes_context_text(client, alice, checked) -> None:
    hostile = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'
    checked(session_id=hostile)
    client.force_login(alice)
    body = client.get("/symptoms/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>alert" not in body and '<div hx-get="/x"' not in body


def test_it_links_from_the_newest_20_to_every_incident_of_a_row(client, alice, charlie, monkeypatch) -> None:
    import re

    from ctxaudit.ui import regression as views
    from tests.alerts.conftest import checked_event

    events = [
        checked_event(findings=[("rule_missing", "high", "R1", "Rule R1 is missing")], session_id=f"s-{i}")
        for i in range(23)
    ]
    client.force_login(alice)
    row1 = client.get("/symptoms/").content.decode().split('id="symptom-1"')[1].split('id="symptom-2"')[0]
    assert "the newest 20 shown" in row1
    (href,) = re.findall(r'href="([^"]*)">all 23 incidents →', row1)
    assert href == "/symptoms/incidents/?row=1"
    monkeypatch.setattr(views, "INCIDENTS_PAGE_SIZE", 10)
    seen = []
    for n in (1, 2, 3):
        page = client.get(f"{href}&page={n}").content.decode()
        assert "23 incidents in your projects" in page and f"page {n} of 3" in page
        seen += [int(x) for x in re.findall(r'href="/events/(\d+)/">event', page)]
    assert seen == sorted((e.pk for e in events), reverse=True)  # every one, newest first, once
    assert client.get("/symptoms/incidents/?row=99").status_code == 404
    client.force_login(charlie)  # another tenant sees none of them
    assert "0 incidents" in client.get(href).content.decode()
