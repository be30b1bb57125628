"""Where the checks may look for reworded rules by meaning (CTXAUDIT_SEMANTIC): the worker yes,
the gate's answer and a check inside the ingesting request no, unless the setting says `all`."""

from __future__ import annotations

import json

import pytest

import ctxaudit.audits.services as audit_services
from ctxaudit.audits.services import event_check
from ctxaudit.ingest.models import Event
from tests.factories import event, event_payload

pytestmark = pytest.mark.django_db


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The `semantic` argument of every run_checks the service makes."""
    calls: list[bool] = []
    real = audit_services.run_checks

    def spy(pair, **kw):  # type: ignore[no-untyped-def]
        calls.append(bool(kw.get("semantic")))
        return real(pair, **kw)

    monkeypatch.setattr(audit_services, "run_checks", spy)
    return calls


def _pending_again(ev: Event) -> int:
    Event.objects.filter(pk=ev.pk).update(status=Event.Status.PENDING)
    return ev.pk


@pytest.mark.parametrize(("setting", "worker"), [("on", True), ("all", True), ("off", False)])
def test_a_worker_check_uses_embeddings_unless_switched_off(
    monkeypatch: pytest.MonkeyPatch, seen: list[bool], setting: str, worker: bool
) -> None:
    monkeypatch.setenv("CTXAUDIT_SEMANTIC", setting)
    pk = _pending_again(event())
    seen.clear()
    event_check(event_id=pk)  # no handoff from ingestion: a worker reading the row
    assert seen == [worker]


@pytest.mark.parametrize(("setting", "sync"), [("on", False), ("all", True), ("off", False)])
def test_the_in_request_check_and_the_gate_use_them_only_with_all(
    monkeypatch: pytest.MonkeyPatch, seen: list[bool], client, api_key, setting: str, sync: bool
) -> None:
    monkeypatch.setenv("CTXAUDIT_SEMANTIC", setting)
    event()  # the embedded default: ingestion hands the event to a check in the same request
    r = client.post(
        "/api/v1/gate",
        data=json.dumps(event_payload(session_id="gate-1")),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_key}",
    )
    assert r.status_code == 200
    assert seen and all(s is sync for s in seen)


def test_the_event_api_answers_by_meaning_for_a_rule_found_by_meaning(
    monkeypatch: pytest.MonkeyPatch, client, api_key, django_capture_on_commit_callbacks
) -> None:
    # a bug a new user's trial found: the engine's by_meaning never reached GET /api/v1/events/<id>
    monkeypatch.setenv("CTXAUDIT_SEMANTIC", "all")
    body = event_payload(
        session_id="by-meaning-1",
        rules=[{"id": "R1", "text": "Never ship a loaned sculpture without a signed condition report."}],
        before=[
            {
                "role": "system",
                "content": "You are the registrar's assistant.\nNever ship a loaned sculpture without a signed condition report.",
            },
            {"role": "user", "content": "What is on the list today?"},
        ],
        after=[
            {"role": "system", "content": "You are the registrar's assistant."},
            {
                "role": "user",
                "content": "Summary: loan rule — no sculpture goes out on loan unless its condition report is signed.",
            },
        ],
    )
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api_key}"}
    with django_capture_on_commit_callbacks(execute=True):
        posted = client.post("/api/v1/events", data=json.dumps(body), content_type="application/json", **auth)
    assert posted.status_code in (200, 201, 202)
    got = client.get(f"/api/v1/events/{posted.json()['id']}", **auth).json()
    [rule] = got["rules"]
    assert rule["state"] == "retained"
    assert rule["by_meaning"] is not None and rule["by_meaning"] >= 0.85


def test_an_unknown_setting_reads_as_on_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from ctxaudit.engine import embeddings

    monkeypatch.setenv("CTXAUDIT_SEMANTIC", "bogus")
    with caplog.at_level("WARNING", logger="ctxaudit.engine.embeddings"):
        assert embeddings.mode() == "on"
    assert "CTXAUDIT_SEMANTIC='bogus' is not one of on, all, off" in caplog.text
