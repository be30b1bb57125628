from __future__ import annotations

import io
import json

import pytest

from ctxaudit.engine.cli import main as cli_main
from ctxaudit.regression.models import RegressionCase
from tests.factories import ORDER_SYSTEM

pytestmark = pytest.mark.django_db

RULES = [
    {"id": "R1", "text": "只能查询订单，禁止新增、修改、删除订单。"},
    {"id": "R2", "text": "禁止输出用户手机号、身份证号等敏感字段。"},
]
KEPT = [
    {"role": "system", "content": ORDER_SYSTEM},
    {"role": "user", "content": "【历史摘要】用户查询了订单 10086。"},
]


def test_it_adds_an_incident_in_one_click(client, bob, checked) -> None:
    ev = checked(rules=RULES)
    client.force_login(bob)
    r = client.post(f"/events/{ev.pk}/regression-case/")
    assert r.status_code == 302 and r["Location"].endswith(f"/events/{ev.pk}/checklist/#step-7")
    case = RegressionCase.objects.get()
    assert case.case_id == f"event-{ev.pk}" and case.project == ev.project and case.created_by == bob
    assert case.rules == [
        {"id": "R1", "text": RULES[0]["text"], "severity": "high"},
        {"id": "R2", "text": RULES[1]["text"], "severity": "high"},
    ]
    assert case.expected["rules"] == {r["id"]: r["state"] for r in ev.report["rules"]}
    assert case.expected["rules"]["R1"] == "missing"
    assert case.expected["verdict"] == "fail"
    assert case.before[0] == {"role": "system", "content": ORDER_SYSTEM}
    # A second click answers the same case.
    client.post(f"/events/{ev.pk}/regression-case/", HTTP_HX_REQUEST="true")
    assert RegressionCase.objects.count() == 1
    body = client.get(f"/projects/{ev.project_id}/regression/").content.decode()
    assert f"event-{ev.pk}" in body and "R1: missing" in body
    assert "In the regression set as" in client.get(f"/events/{ev.pk}/checklist/").content.decode()


def test_it_renders_partial_for_htmx(client, alice, checked) -> None:
    ev = checked()
    client.force_login(alice)
    r = client.post(f"/events/{ev.pk}/regression-case/", HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert "<html" not in body and 'id="case-add"' in body and f"event-{ev.pk}" in body


def test_it_edits_the_expected_verdict(client, alice, checked) -> None:
    ev = checked()
    client.force_login(alice)
    client.post(f"/events/{ev.pk}/regression-case/")
    case = RegressionCase.objects.get()
    r = client.post(
        f"/regression-cases/{case.pk}/",
        {"verdict": "pass", "description": "the fixed compressor must keep R1"},
    )
    assert r.status_code == 302
    case.refresh_from_db()
    assert case.expected["verdict"] == "pass" and case.description == "the fixed compressor must keep R1"
    assert case.expected["rules"]  # rule states stay as recorded
    assert client.post(f"/regression-cases/{case.pk}/", {"verdict": "maybe"}).status_code == 400


def test_it_checks_ownership(client, alice, charlie, checked) -> None:
    ev = checked()
    client.force_login(alice)
    client.post(f"/events/{ev.pk}/regression-case/")
    case = RegressionCase.objects.get()
    client.force_login(charlie)
    assert client.get(f"/projects/{ev.project_id}/regression/").status_code == 404
    assert client.get(f"/projects/{ev.project_id}/regression.jsonl").status_code == 404
    assert client.post(f"/regression-cases/{case.pk}/", {"verdict": "pass"}).status_code == 404
    assert client.post(f"/regression-cases/{case.pk}/delete/").status_code == 404
    assert RegressionCase.objects.get().expected["verdict"] == "fail"


def test_it_lets_only_reviewers_change_the_set(client, alice, dave, checked) -> None:
    ev = checked()
    client.force_login(alice)
    client.post(f"/events/{ev.pk}/regression-case/")
    case = RegressionCase.objects.get()
    client.force_login(dave)
    assert client.get(f"/projects/{ev.project_id}/regression/").status_code == 200
    assert client.post(f"/regression-cases/{case.pk}/", {"verdict": "pass"}).status_code == 403
    assert client.post(f"/regression-cases/{case.pk}/delete/").status_code == 403
    client.force_login(alice)
    assert client.post(f"/regression-cases/{case.pk}/delete/").status_code == 302
    assert not RegressionCase.objects.exists()


def _cli(path) -> tuple[int, str]:
    out = io.StringIO()
    return cli_main(["check", str(path)], stdout=out, stderr=out), out.getvalue()


def test_it_exports_jsonl_that_the_cli_runs(client, alice, checked, tmp_path) -> None:
    lost = checked(session_id="lost", rules=RULES)
    kept = checked(session_id="kept", rules=RULES, after=KEPT)
    client.force_login(alice)
    client.post(f"/events/{lost.pk}/regression-case/")
    client.post(f"/events/{kept.pk}/regression-case/")
    r = client.get(f"/projects/{lost.project_id}/regression.jsonl")
    assert r.status_code == 200 and r["Content-Type"].startswith("application/x-ndjson")
    lines = r.content.decode().splitlines()
    cases = [json.loads(line) for line in lines]
    assert [c["id"] for c in cases] == [f"event-{lost.pk}", f"event-{kept.pk}"]
    assert set(cases[0]) == {
        "id",
        "source",
        "strategy",
        "description",
        "rules",
        "before",
        "after",
        "expected",
    }

    path = tmp_path / "set.jsonl"
    path.write_bytes(r.content)
    code, out = _cli(path)
    assert code == 1  # the lost rules fail the gate
    assert f"FAIL event-{lost.pk} " in out and f"FAIL event-{kept.pk} " not in out
    # --expect: the engine still says what it said when the cases were recorded.
    out_io = io.StringIO()
    assert cli_main(["check", "--expect", str(path)], stdout=out_io, stderr=out_io) == 0, out_io.getvalue()
    # The passing case alone passes the gate.
    (tmp_path / "kept.jsonl").write_text(lines[1] + "\n", encoding="utf-8")
    assert _cli(tmp_path / "kept.jsonl")[0] == 0


def test_it_escapes_context_text(client, alice, checked) -> None:
    hostile = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'
    ev = checked(session_id=hostile, rules=[{"id": "R1", "text": hostile}])
    client.force_login(alice)
    client.post(f"/events/{ev.pk}/regression-case/")
    RegressionCase.objects.update(description=hostile)
    body = client.get(f"/projects/{ev.project_id}/regression/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>alert" not in body and '<div hx-get="/x"' not in body


def test_the_index_lists_the_users_projects(client, alice, charlie, checked) -> None:
    client.force_login(alice)
    r = client.get("/regression/")
    assert (
        r.status_code == 302
        and r["Location"] == f"/projects/{alice.memberships.get().project_id}/regression/"
    )


def test_it_runs_the_gate_on_the_set_on_demand(client, alice, checked) -> None:
    lost = checked(session_id="lost", rules=RULES)
    kept = checked(session_id="kept", rules=RULES, after=KEPT)
    client.force_login(alice)
    client.post(f"/events/{lost.pk}/regression-case/")
    client.post(f"/events/{kept.pk}/regression-case/")
    body = client.get(f"/projects/{lost.project_id}/regression/").content.decode()
    assert "run the gate on every case" in body and "rule R1 is missing" not in body
    body = client.get(f"/projects/{lost.project_id}/regression/?run=1").content.decode()
    lost_row = body.split(f"<code>event-{lost.pk}</code>")[1].split("</tr>")[0]
    kept_row = body.split(f"<code>event-{kept.pk}</code>")[1].split("</tr>")[0]
    assert "rule R1 is missing" in lost_row and 'badge-fail">fail</span>\n      <details' in lost_row
    assert "<summary>why</summary>" not in kept_row


def test_it_serves_the_set_to_ci_with_a_read_key(client, alice, charlie, checked, tmp_path) -> None:
    from tests.factories import api_key_for

    ev = checked(rules=RULES)
    client.force_login(alice)
    client.post(f"/events/{ev.pk}/regression-case/")
    other = checked("other", rules=RULES)
    client.force_login(charlie)
    client.post(f"/events/{other.pk}/regression-case/")
    key = api_key_for("acme", scopes=("read",))
    r = client.get("/api/v1/regression-set", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert r.status_code == 200 and r["Content-Type"].startswith("application/x-ndjson")
    cases = [json.loads(line) for line in r.content.decode().splitlines()]
    assert [c["id"] for c in cases] == [f"event-{ev.pk}"]  # only this key's project
    # CI: put the fixed compressor's output in `after`, then gate it.
    cases[0]["after"] = KEPT
    (tmp_path / "set.jsonl").write_text(json.dumps(cases[0], ensure_ascii=False) + "\n", encoding="utf-8")
    assert _cli(tmp_path / "set.jsonl")[0] == 0
    assert client.get("/api/v1/regression-set").status_code == 401
    ingest_only = api_key_for("acme", scopes=("ingest",))
    assert client.get("/api/v1/regression-set", HTTP_AUTHORIZATION=f"Bearer {ingest_only}").status_code == 403
