"""Bad input in every field, not only in contexts (issue 13): PII and bidi controls in
identifiers and metadata keys, lone surrogates, deep nesting, NUL in query strings and forms."""

from __future__ import annotations

import json

import pytest

from ctxaudit.engine.pii import pseudonym
from ctxaudit.ingest.models import Event, Session
from ctxaudit.ingest.sanitize import pii_key_for
from tests.factories import PASSWORD, event_payload

pytestmark = pytest.mark.django_db

RAW_SESSION = "alice@example.com-run1"


def _post(client, key: str, body, **headers):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(
        "/api/v1/events",
        data=data,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
        **headers,
    )


def _tag(project, kind: str, value: str) -> str:
    return pseudonym(kind, value, pii_key_for(project.pk))


def _pii_body():
    return event_payload(
        session_id=RAW_SESSION,
        model="gpt-4o for bob@example.org",
        rules=[{"id": "notify-13812345678", "text": "Only write to alice@example.com."}],
        metadata={"carol@example.net": "owner", "nested": {"sk-abcdefghijklmnopqrstuvwx12": 1}},
    )


def test_it_redacts_pii_in_session_id_model_rule_ids_and_metadata_keys(client, project, api_key) -> None:
    r = _post(client, api_key, _pii_body())
    assert r.status_code == 202
    ev = Event.objects.select_related("session").get(pk=r.json()["id"])
    alice = _tag(project, "email", "alice@example.com")
    assert ev.session.external_id == f"{alice}-run1"
    assert ev.model == f"gpt-4o for {_tag(project, 'email', 'bob@example.org')}"
    assert [x["id"] for x in ev.rules] == [f"notify-{_tag(project, 'phone', '13812345678')}"]
    # the same keyed tag as in free text: the rule text names the same address
    assert ev.rules[0]["text"] == f"Only write to {alice}."
    assert sorted(ev.metadata) == sorted([_tag(project, "email", "carol@example.net"), "nested"])
    assert list(ev.metadata["nested"]) == [_tag(project, "secret", "sk-abcdefghijklmnopqrstuvwx12")]
    stored = json.dumps(
        [ev.session.external_id, ev.model, ev.rules, ev.metadata, ev.report, list(ev.rule_outcomes.values())],
        default=str,
    )
    for raw in ("alice@example.com", "bob@example.org", "13812345678", "carol@example.net", "sk-abcdef"):
        assert raw not in stored


def test_the_raw_session_id_still_finds_its_session(client, project, api_key) -> None:
    first = _post(client, api_key, _pii_body()).json()["id"]
    second = _post(client, api_key, {**_pii_body(), "sequence": 2}).json()["id"]
    assert Session.objects.filter(project=project).count() == 1  # both events in one session
    r = client.get(
        "/api/v1/sessions/alice%40example.com-run1/timeline", HTTP_AUTHORIZATION=f"Bearer {api_key}"
    )
    assert r.status_code == 200
    assert [e["id"] for e in r.json()["events"]] == [first, second]
    assert r.json()["session_id"] == f"{_tag(project, 'email', 'alice@example.com')}-run1"
    listed = client.get(
        "/api/v1/events", {"session_id": RAW_SESSION}, HTTP_AUTHORIZATION=f"Bearer {api_key}"
    ).json()
    assert listed["count"] == 2


def test_an_idempotent_retry_with_pii_in_the_ids_answers_the_same_event(client, api_key) -> None:
    a = _post(client, api_key, _pii_body(), HTTP_IDEMPOTENCY_KEY="k-1")
    b = _post(client, api_key, _pii_body(), HTTP_IDEMPOTENCY_KEY="k-1")
    assert (a.status_code, b.status_code) == (202, 200)
    assert a.json()["id"] == b.json()["id"]


def test_without_redaction_ids_are_kept_and_still_found(client, project, api_key) -> None:
    project.redact_pii = False
    project.save()
    assert _post(client, api_key, _pii_body()).status_code == 202
    assert Session.objects.get(project=project).external_id == RAW_SESSION
    r = client.get(
        "/api/v1/sessions/alice%40example.com-run1/timeline", HTTP_AUTHORIZATION=f"Bearer {api_key}"
    )
    assert r.status_code == 200


def test_bidi_controls_in_identifiers_are_shown_not_obeyed(client, alice, project, api_key) -> None:
    body = event_payload(
        session_id="s-\u202egnp.exe",
        model="m\u2066odel",
        rules=[{"id": "R\u202e1", "text": "Never delete orders."}],
        metadata={"k\u202eey": "v"},
    )
    r = _post(client, api_key, body)
    assert r.status_code == 202
    ev = Event.objects.select_related("session").get(pk=r.json()["id"])
    assert ev.session.external_id == "s-⟦U+202E⟧gnp.exe"
    assert ev.model == "m⟦U+2066⟧odel"
    assert ev.rules[0]["id"] == "R⟦U+202E⟧1"
    assert list(ev.metadata) == ["k⟦U+202E⟧ey"]
    client.login(username="alice", password=PASSWORD)
    for url in (f"/events/{ev.pk}/", "/", f"/sessions/{ev.session.pk}/"):
        page = client.get(url).content.decode()
        assert "\u202e" not in page and "\u2066" not in page, url
        assert "s-⟦U+202E⟧gnp.exe" in page, url


def test_a_lone_surrogate_in_session_id_is_named(client, api_key) -> None:
    body = json.dumps(event_payload(session_id="PLACEHOLDER")).replace("PLACEHOLDER", "abc\\ud800")
    r = _post(client, api_key, body)
    assert r.status_code == 400
    out = r.json()
    assert out["field"] == "session_id"
    assert "lone surrogate U+D800 at character 3" in out["error"]


def test_a_lone_surrogate_in_content_is_stored_as_a_replacement_character(client, api_key) -> None:
    body = json.dumps(event_payload(after="PLACEHOLDER")).replace("PLACEHOLDER", "x\\udc00y")
    r = _post(client, api_key, body)
    assert r.status_code == 202
    assert "x\ufffdy" in json.dumps(Event.objects.get(pk=r.json()["id"]).after, ensure_ascii=False)


def _nested(levels: int):
    root: dict = {}
    node = root
    for _ in range(levels - 1):
        node["a"] = {}
        node = node["a"]
    return root


def test_nesting_past_the_limit_is_refused_naming_the_field(client, api_key) -> None:
    r = _post(client, api_key, event_payload(metadata=_nested(150)))
    assert r.status_code == 400
    out = r.json()
    assert out["field"] == "metadata" + ".a" * 100
    assert "nested deeper than 100 levels" in out["error"]


def test_a_thousand_levels_are_refused_as_too_deep_not_as_invalid_json(client, api_key) -> None:
    body = json.dumps(event_payload(metadata={"x": 1})).replace('{"x": 1}', "[" * 1000 + "]" * 1000)
    r = _post(client, api_key, body)
    assert r.status_code == 400
    out = r.json()
    assert out["field"] == "metadata" + "[0]" * 100
    assert "nested deeper than 100 levels" in out["error"]
    assert "not valid JSON" not in out["error"]


def test_deep_nesting_with_an_idempotency_key_is_a_400_too(client, api_key) -> None:
    r = _post(
        client,
        api_key,
        event_payload(before=[{"role": "user", "content": _nested(300)}]),
        HTTP_IDEMPOTENCY_KEY="d",
    )
    assert r.status_code == 400
    assert r.json()["field"].startswith("before[0].content.a.a")


def test_identifiers_that_grow_past_their_column_are_cut_with_a_hash(client, project, api_key) -> None:
    raw = ("a@b.co " * 30)[:200]
    ids = [_post(client, api_key, event_payload(session_id=raw, sequence=i)).json()["id"] for i in (1, 2)]
    sessions = {Event.objects.get(pk=i).session_id for i in ids}
    assert len(sessions) == 1
    sid = Session.objects.get(pk=sessions.pop()).external_id
    assert len(sid) == 200 and "@" not in sid and "…" in sid


@pytest.mark.parametrize(
    "url",
    [
        "/?session=%00",
        "/?session=a%00b",
        "/alerts/?rule=%00",
        "/decay/?model=%00",
        "/?page=%00",
        "/symptoms/?q=x%00",
    ],
)
def test_nul_in_a_query_string_answers_400_with_a_message(client, alice, url) -> None:
    client.login(username="alice", password=PASSWORD)
    r = client.get(url)
    assert r.status_code == 400
    assert "NUL" in r.content.decode()


def test_nul_in_an_api_query_string_names_the_parameter(client, api_key) -> None:
    r = client.get("/api/v1/events?session_id=%00", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert r.status_code == 400
    assert r.json()["field"] == "session_id"
    r = client.get("/api/v1/sessions/a%00b/timeline", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert (r.status_code, r.json()["field"]) == (400, "path")


def test_nul_in_a_form_answers_400(client, alice) -> None:
    client.login(username="alice", password=PASSWORD)
    r = client.post(
        "/alerts/1/comments/", data="text=hi%00there", content_type="application/x-www-form-urlencoded"
    )
    assert r.status_code == 400
    assert "form field 'text'" in r.content.decode()


@pytest.mark.parametrize(
    ("field", "payload", "where"),
    [
        ("session_id", {"session_id": "run\u0000x"}, 3),
        ("model", {"model": "gpt\u0000-5"}, 3),
        ("rules[0].id", {"rules": [{"id": "R\u00001", "text": "Never delete orders."}]}, 1),
    ],
)
def test_a_nul_in_an_identifier_is_refused_naming_the_field(client, api_key, field, payload, where) -> None:
    before = Event.objects.count()
    r = _post(client, api_key, json.dumps(event_payload(**payload)))
    assert r.status_code == 400
    out = r.json()
    assert out["field"] == field
    assert f"NUL character (U+0000) at character {where}" in out["error"]
    assert Event.objects.count() == before


def test_a_nul_in_content_is_stored_as_a_replacement_character(client, api_key) -> None:
    r = _post(client, api_key, json.dumps(event_payload(after="x\u0000y")))
    assert r.status_code == 202
    assert "x\ufffdy" in json.dumps(Event.objects.get(pk=r.json()["id"]).after, ensure_ascii=False)


def test_a_boolean_sequence_is_refused(client, api_key) -> None:
    r = _post(client, api_key, json.dumps(event_payload(sequence=True)))
    assert r.status_code == 400
    assert r.json()["field"] == "sequence"
