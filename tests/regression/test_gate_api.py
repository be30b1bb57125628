from __future__ import annotations

import json

import pytest

from ctxaudit.ingest.models import Event
from tests.factories import ORDER_SYSTEM, api_key_for, event_payload

pytestmark = pytest.mark.django_db


def gate(client, key, body, **headers):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(
        "/api/v1/gate",
        data=data,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
        **headers,
    )


def test_it_answers_the_verdict_and_the_lost_rules(client, api_key) -> None:
    r = gate(client, api_key, event_payload())
    assert r.status_code == 200
    body = r.json()
    assert set(body) >= {"id", "verdict", "rules", "findings", "ui_url"}
    assert body["verdict"] == "fail"
    lost = {x["text"]: x["state"] for x in body["rules"]}
    assert lost["只能查询订单，禁止新增、修改、删除订单。"] == "missing"
    assert any(f["kind"] == "rule_missing" for f in body["findings"])
    assert body["ui_url"].endswith(f"/events/{body['id']}/")


def test_it_stores_the_event_for_the_dashboard(client, api_key, project) -> None:
    body = gate(client, api_key, event_payload(session_id="gate-1")).json()
    event = Event.objects.get(pk=body["id"])
    assert event.project == project
    assert event.session.external_id == "gate-1"
    assert event.status == "checked"
    assert event.verdict == "fail"
    assert event.findings.filter(kind="rule_missing").exists()


def test_it_passes_a_compression_that_keeps_the_rules(client, api_key) -> None:
    kept = [
        {"role": "system", "content": ORDER_SYSTEM},
        {"role": "user", "content": "【历史摘要】用户查询了订单 10086。"},
    ]
    body = gate(client, api_key, event_payload(after=kept)).json()
    assert body["verdict"] == "pass"
    assert body["rules"] == []


def test_it_works_when_the_on_commit_check_also_runs(
    client, api_key, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        body = gate(client, api_key, event_payload()).json()
    event = Event.objects.get(pk=body["id"])
    assert body["verdict"] == event.verdict == "fail"
    assert event.findings.filter(kind="rule_missing").count() == sum(
        1 for f in body["findings"] if f["kind"] == "rule_missing"
    )


def test_it_answers_the_same_event_for_a_retry(client, api_key) -> None:
    first = gate(client, api_key, event_payload(), HTTP_IDEMPOTENCY_KEY="g-1").json()
    second = gate(client, api_key, event_payload(), HTTP_IDEMPOTENCY_KEY="g-1").json()
    assert first["id"] == second["id"]
    assert Event.objects.count() == 1


def test_it_fails_closed_when_the_check_errors(client, api_key, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("engine bug")

    monkeypatch.setattr("ctxaudit.audits.services.run_checks", broken)
    body = gate(client, api_key, event_payload()).json()
    assert body["verdict"] == "fail"
    assert body["status"] == "error"
    assert "engine bug" in body["error"]


def test_it_requires_a_key(client) -> None:
    assert gate(client, "cta_nope_nope", event_payload()).status_code == 401
    assert client.post("/api/v1/gate", data="{}", content_type="application/json").status_code == 401


def test_it_requires_the_ingest_scope(client, project) -> None:
    read_only = api_key_for(project.name, scopes=("read",))
    assert gate(client, read_only, event_payload()).status_code == 403
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({k: v for k, v in event_payload().items() if k != "before"}, "before"),
        (event_payload(after=[{"role": "wizard", "content": "x"}]), "after[0].role"),
        (b"{not json", "body"),
    ],
)
def test_it_names_the_bad_field(client, api_key, body, field) -> None:
    r = gate(client, api_key, body)
    assert r.status_code == 400
    assert r.json()["field"] == field
    assert not Event.objects.exists()


def test_it_is_in_the_openapi_schema(client) -> None:
    assert "/api/v1/gate" in client.get("/api/v1/openapi.json").json()["paths"]
