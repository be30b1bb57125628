from __future__ import annotations

import json

import pytest
import time_machine

from ctxaudit.regression.models import ChecklistStep
from tests.factories import ORDER_SYSTEM

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'
RULES = [
    {"id": "R1", "text": "只能查询订单，禁止新增、修改、删除订单。"},
    {"id": "R2", "text": "禁止输出用户手机号、身份证号等敏感字段。"},
]


def test_it_works(client, alice, checked) -> None:
    ev = checked(rules=RULES)
    client.force_login(alice)
    r = client.get(f"/events/{ev.pk}/checklist/")
    assert r.status_code == 200
    body = r.content.decode()
    for n in range(1, 8):
        assert f'id="step-{n}"' in body
    assert "找一份触发压缩的完整会话记录" in body and "将其加入规则保留测试集" in body
    assert f"/events/{ev.pk}/session.json" in body  # step 1
    assert f'href="/sessions/{ev.session_id}/"' in body  # the session timeline
    assert f'href="/events/{ev.pk}/"' in body and f"/events/{ev.pk}/export.json?side=both" in body  # step 2
    assert (
        'value="查询 订单 新增 修改 删除"' in body
    )  # step 3: the search box, pre-filled with the rule's key terms
    assert "the system message was among the compression candidates" in body  # step 4: rewritten
    assert f"/events/{ev.pk}/replay.json" in body  # step 6
    assert "nothing leaves this machine" in body
    assert "Add this case to the regression set" in body  # step 7
    assert '<strong id="checklist-progress">0/7</strong>' in body
    assert (
        "symptom 1: " in body and "§" not in body
    )  # rule_missing → its symptom row, no seed section numbers


def test_it_checks_ownership(client, charlie, alice, checked) -> None:
    ev = checked()
    client.force_login(charlie)
    for url in ("checklist/", "checklist/search/?rule=R1&q=x", "export.json", "session.json", "replay.json"):
        assert client.get(f"/events/{ev.pk}/{url}").status_code == 404, url
    for url in ("checklist/steps/1/", "replay/", "regression-case/"):
        assert client.post(f"/events/{ev.pk}/{url}", {"status": "done"}).status_code == 404, url
    assert not ChecklistStep.objects.exists()


def test_it_requires_login(client, alice, checked) -> None:
    ev = checked()
    r = client.get(f"/events/{ev.pk}/checklist/")
    assert r.status_code == 302 and "/login/" in r["Location"]


def test_it_lets_a_reviewer_mark_a_step_and_keeps_who_and_when(client, bob, checked) -> None:
    ev = checked()
    client.force_login(bob)
    with time_machine.travel("2026-11-29 15:04:00+00:00", tick=False):
        r = client.post(
            f"/events/{ev.pk}/checklist/steps/3/",
            {"status": "done", "note": "R1 gone: no 删除 in the summary"},
        )
    assert r.status_code == 302
    mark = ChecklistStep.objects.get(event=ev, step=3)
    assert (mark.status, mark.updated_by, mark.note) == ("done", bob, "R1 gone: no 删除 in the summary")
    assert mark.updated_at.isoformat() == "2026-11-29T15:04:00+00:00"
    body = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    assert "by bob at" in body and "2026-11-29 15:04 UTC" in body
    assert "R1 gone: no 删除 in the summary" in body
    assert '<strong id="checklist-progress">1/7</strong>' in body

    client.post(f"/events/{ev.pk}/checklist/steps/4/", {"status": "na", "note": ""})
    client.post(f"/events/{ev.pk}/checklist/steps/3/", {"status": "open", "note": "reopened"})
    assert ChecklistStep.objects.get(event=ev, step=3).status == "open"
    assert ChecklistStep.objects.filter(event=ev).count() == 2


def test_it_shows_progress_in_the_incident_list(client, alice, checked) -> None:
    ev = checked()
    client.force_login(alice)
    for step in (1, 2, 7):
        client.post(f"/events/{ev.pk}/checklist/steps/{step}/", {"status": "done"})
    body = client.get("/").content.decode()
    assert f'href="/events/{ev.pk}/checklist/"' in body
    assert ">3/7</a>" in body


def test_it_requires_the_reviewer_role(client, dave, checked) -> None:
    ev = checked()
    client.force_login(dave)
    assert client.get(f"/events/{ev.pk}/checklist/").status_code == 200  # ops can read
    assert client.post(f"/events/{ev.pk}/checklist/steps/1/", {"status": "done"}).status_code == 403
    assert client.post(f"/events/{ev.pk}/regression-case/").status_code == 403
    assert not ChecklistStep.objects.exists()


def test_it_rejects_bad_marks(client, alice, checked) -> None:
    ev = checked()
    client.force_login(alice)
    assert client.get(f"/events/{ev.pk}/checklist/steps/1/").status_code == 405
    assert client.post(f"/events/{ev.pk}/checklist/steps/8/", {"status": "done"}).status_code == 404
    assert client.post(f"/events/{ev.pk}/checklist/steps/1/", {"status": "finished"}).status_code == 400


def test_it_renders_partial_for_htmx(client, alice, checked) -> None:
    ev = checked()
    client.force_login(alice)
    r = client.post(
        f"/events/{ev.pk}/checklist/steps/2/", {"status": "done", "note": "diffed"}, HTTP_HX_REQUEST="true"
    )
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" not in body
    assert 'id="step-status-2"' in body and "by alice" in body
    assert '<strong id="checklist-progress" hx-swap-oob="true">1/7</strong>' in body


def test_it_highlights_search_hits_and_escapes_them(client, alice, checked) -> None:
    ev = checked(
        session_id=HOSTILE,
        rules=[{"id": "R1", "text": "禁止删除订单"}, {"id": "R2", "text": HOSTILE}],
        before=[
            {"role": "system", "content": "禁止删除订单。" + HOSTILE},
            {"role": "user", "content": HOSTILE},
        ],
        after=[{"role": "user", "content": "【历史摘要】用户要求删除订单。" + HOSTILE}],
    )
    client.force_login(alice)
    r = client.get(
        f"/events/{ev.pk}/checklist/search/", {"rule": "R1", "q": "删除订单 script"}, HTTP_HX_REQUEST="true"
    )
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" not in body
    assert "<mark>删除订单</mark>" in body
    assert "&lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt;" in body
    assert "<script>alert" not in body and '<div hx-get="/x"' not in body
    assert body.lstrip().startswith('<div class="search-result" hx-disable>')
    # A term absent from the after-context is named.
    body = client.get(f"/events/{ev.pk}/checklist/search/", {"rule": "R1", "q": "禁止"}).content.decode()
    assert "not in the after-context: 禁止" in body
    assert client.get(f"/events/{ev.pk}/checklist/search/", {"rule": "R9", "q": "x"}).status_code == 404


def test_it_escapes_context_text(client, alice, checked) -> None:
    ev = checked(
        session_id=HOSTILE,
        rules=[{"id": "R1", "text": HOSTILE}],
        before=[{"role": "system", "content": HOSTILE}, {"role": "user", "content": HOSTILE}],
        after=[{"role": "system", "content": "summary " + HOSTILE}],
    )
    client.force_login(alice)
    client.post(f"/events/{ev.pk}/checklist/steps/1/", {"status": "done", "note": HOSTILE})
    body = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>alert" not in body
    assert '<div hx-get="/x"' not in body


def test_it_downloads_the_session_and_both_sides(client, alice, checked) -> None:
    first = checked(session_id="s-dl", sequence=1)
    second = checked(session_id="s-dl", sequence=2)
    client.force_login(alice)
    r = client.get(f"/events/{second.pk}/session.json")
    assert r["Content-Disposition"].startswith("attachment;")
    data = json.loads(r.content)
    assert data["session_id"] == "s-dl"
    assert [e["id"] for e in data["events"]] == [first.pk, second.pk]
    assert data["events"][0]["before"][0]["content"] == ORDER_SYSTEM
    both = json.loads(client.get(f"/events/{second.pk}/export.json?side=both").content)
    assert both["before"] == second.before and both["after"] == second.after
    assert json.loads(client.get(f"/events/{second.pk}/export.json?side=after").content) == second.after


def test_it_shows_the_drift_evidence(client, alice, checked) -> None:
    ev = checked(
        rules=[{"id": "R1", "text": "禁止删除任何订单"}],
        before=[{"role": "system", "content": "禁止删除任何订单。"}, {"role": "user", "content": "hi"}],
        after=[{"role": "system", "content": "删除订单需谨慎。"}],
    )
    # What the drift check reports for §3.4's example, whatever today's engine says about it.
    ev.report = {
        **ev.report,
        "rules": [
            {
                "id": "R1",
                "text": "禁止删除任何订单",
                "state": "weakened",
                "strength": 0.3,
                "role_before": "system",
                "role_after": "system",
                "demoted": False,
                "lost": ["force: prohibition → caution", "quantifier: 任何 dropped"],
                "evidence": [
                    {"side": "after", "message_index": 0, "start": 0, "end": 8, "quote": "删除订单需谨慎。"}
                ],
            }
        ],
    }
    ev.save()
    client.force_login(alice)
    body = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    step5 = body.split('id="step-5"')[1].split('id="step-6"')[0]
    assert "before: 禁止删除任何订单" in step5
    assert "after: <q>删除订单需谨慎。</q>" in step5
    assert "force: prohibition → caution; quantifier: 任何 dropped" in step5


def test_it_answers_no_when_the_system_message_is_kept(client, alice, checked) -> None:
    kept = [
        {"role": "system", "content": ORDER_SYSTEM},
        {"role": "user", "content": "【历史摘要】用户查询了订单。"},
    ]
    ev = checked(after=kept)
    client.force_login(alice)
    body = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    assert "every system message is still there, verbatim" in body
    assert "kept verbatim" in body


DRIFT_AFTER = [
    {"role": "system", "content": "你是订单助手。删除订单需谨慎；注意保护用户隐私；写操作最好确认一下。"},
    {"role": "user", "content": "【历史摘要】用户查询了订单 10086，已发货。"},
]


def test_it_finds_a_weakened_rule_in_the_after_context(client, alice, checked) -> None:
    """seed-drift (seed 000 §3.4): "禁止…删除订单" became "删除订单需谨慎". The engine calls R1 weakened,
    so step 3's pre-filled search must find where the rule's words still stand."""
    ev = checked(rules=RULES[:1], after=DRIFT_AFTER)
    assert ev.rule_outcomes.get(rule_id="R1").state == "weakened"
    client.force_login(alice)
    body = client.get(f"/events/{ev.pk}/checklist/").content.decode()
    step3 = body.split('id="step-3"', 1)[1].split('id="step-4"', 1)[0]
    assert "None of these terms appears" not in step3
    assert "<mark>删除</mark><mark>订单</mark>需谨慎" in step3  # the softened clause, highlighted
    assert "<code>删除</code> ×1" in step3
    assert "not in the after-context: 新增, 修改" in step3  # the write actions it no longer names


def test_adding_the_case_to_the_regression_set_ticks_step_7(client, bob, checked) -> None:
    event = checked()
    client.force_login(bob)
    r = client.post(f"/events/{event.pk}/regression-case/")
    assert r.status_code == 302
    step = ChecklistStep.objects.get(event=event, step=7)
    assert (step.status, step.updated_by) == ("done", bob)
    assert step.note == f"Added to the regression set as event-{event.pk}."
    page = client.get(f"/events/{event.pk}/checklist/").content.decode()
    assert "Added to the regression set as" in page


def test_a_reviewer_note_on_step_7_is_not_overwritten(client, bob, checked) -> None:
    event = checked()
    client.force_login(bob)
    client.post(f"/events/{event.pk}/checklist/steps/7/", {"status": "na", "note": "fixed upstream"})
    client.post(f"/events/{event.pk}/regression-case/")
    step = ChecklistStep.objects.get(event=event, step=7)
    assert (step.status, step.note) == ("na", "fixed upstream")


def test_the_checklist_is_written_to_the_audit_log(client, alice, checked) -> None:
    from ctxaudit.projects.models import AuditLogEntry

    event = checked()
    client.force_login(alice)
    client.get(f"/events/{event.pk}/checklist/")
    client.get(f"/events/{event.pk}/checklist/search/", {"q": "订单"})
    entries = AuditLogEntry.objects.filter(object_id=str(event.pk), action="view", user=alice)
    assert entries.count() == 2


def test_adding_the_case_from_the_checklist_with_htmx_reloads_it(client, bob, checked) -> None:
    event = checked()
    client.force_login(bob)
    r = client.post(f"/events/{event.pk}/regression-case/", HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and r["HX-Refresh"] == "true"
    assert ChecklistStep.objects.get(event=event, step=7).status == "done"
