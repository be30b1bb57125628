"""ctxaudit.client.Client against a scripted loopback server and against the real API."""

from __future__ import annotations

import pytest

from ctxaudit.client import ApiError, Client, EventAccepted, GateResult, Unavailable
from ctxaudit.ingest.models import Event
from tests.factories import event_payload
from tests.hooks.fakeserver import dead_url, fake_server

ACCEPTED = {
    "id": 41,
    "status": "pending",
    "url": "http://x/api/v1/events/41",
    "ui_url": "http://x/events/41/",
}
BODY = {"session_id": "s-9", "before": [{"role": "user", "content": "hi"}], "after": "hi"}


def test_it_retries_503_and_429_with_the_same_idempotency_key() -> None:
    waits: list[float] = []
    with fake_server(
        (503, {"error": "busy"}, {}, 0),
        (429, {"error": "slow down"}, {"Retry-After": "2"}, 0),
        (202, ACCEPTED, {}, 0),
    ) as (url, script):
        result = Client(url, "k-1", sleep=waits.append).post_event(BODY)
    assert isinstance(result, EventAccepted)
    assert (result.id, result.status, result.created) == (41, "pending", True)
    keys = {s.headers["Idempotency-Key"] for s in script.seen}
    assert len(script.seen) == 3 and keys == {result.idempotency_key}
    assert waits == [0.5, 2.0]  # backoff, then the server's Retry-After
    assert script.seen[0].headers["Authorization"] == "Bearer k-1"
    assert script.seen[0].body == BODY


def test_a_replayed_key_answers_created_false() -> None:
    with fake_server((200, ACCEPTED, {}, 0)) as (url, script):
        result = Client(url).post_event(BODY, idempotency_key="mine-1")
    assert result.created is False and result.idempotency_key == "mine-1"
    assert script.seen[0].headers["Idempotency-Key"] == "mine-1"
    assert "Authorization" not in script.seen[0].headers


def test_a_4xx_is_not_retried_and_names_the_field() -> None:
    answer = (400, {"error": "before: must be a list", "field": "before"}, {}, 0)
    with fake_server(answer) as (url, script), pytest.raises(ApiError) as info:
        Client(url, "k", sleep=lambda s: None).post_event(BODY)
    assert (info.value.status, info.value.field) == (400, "before")
    assert "must be a list" in str(info.value)
    assert len(script.seen) == 1


def test_a_dead_port_raises_unavailable_after_the_retries() -> None:
    waits: list[float] = []
    with pytest.raises(Unavailable) as info:
        Client(dead_url(), "k", retries=2, sleep=waits.append).post_event(BODY)
    assert info.value.last_status is None
    assert waits == [0.5, 1.0]


def test_a_slow_server_is_given_up_within_the_deadline() -> None:
    import time

    with fake_server((202, ACCEPTED, {}, 3.0)) as (url, _):
        start = time.monotonic()
        with pytest.raises(Unavailable):
            Client(url, timeout=10, retries=3, deadline=0.6).post_event(BODY)
        assert time.monotonic() - start < 1.5


def test_large_bodies_go_gzip_compressed() -> None:
    big = {**BODY, "before": [{"role": "user", "content": "x" * 200_000}]}
    with fake_server((202, ACCEPTED, {}, 0)) as (url, script):
        Client(url).post_event(big)
    assert script.seen[0].headers["Content-Encoding"] == "gzip"
    assert script.seen[0].body["before"][0]["content"] == "x" * 200_000


def test_an_event_needs_session_before_and_after() -> None:
    with pytest.raises(ValueError, match="session_id"):
        Client("http://127.0.0.1:1").post_event(before="a", after="b")
    with pytest.raises(ValueError, match="http"):
        Client("ftp://example.com")


@pytest.mark.django_db(transaction=True)
def test_it_posts_gates_and_reads_against_the_real_api(live_server, api_key) -> None:
    client = Client(live_server.url, api_key)
    rule = {"id": "R1", "text": "禁止新增、修改、删除订单。", "severity": "critical"}
    accepted = client.post_event(event_payload(rules=[rule]), idempotency_key="it-1")
    again = client.post_event(event_payload(rules=[rule]), idempotency_key="it-1")
    assert accepted.created is True and again.created is False and again.id == accepted.id
    assert Event.objects.count() == 1

    gate = client.gate(event_payload(session_id="s-2", rules=[rule]))
    assert isinstance(gate, GateResult)
    assert gate.verdict == "fail" and gate.passed is False
    assert [(r.id, r.state) for r in gate.rules] == [("R1", "missing")]
    assert gate.rules[0].text == rule["text"]

    event = client.get_event(gate.id)
    assert event.checked and event.verdict == "fail" and event.session_id == "s-2"
    assert event.tokens_before and event.tokens_before > 0
    assert any(r.id == "R1" and r.state == "missing" for r in event.rules)

    with pytest.raises(ApiError) as info:
        client.get_event(999_999)
    assert info.value.status == 404
    with pytest.raises(ApiError) as info:
        Client(live_server.url, "wrong-key").post_event(event_payload())
    assert info.value.status == 401


def test_only_pass_and_no_rules_let_a_fail_closed_agent_go_on() -> None:
    verdicts = {
        v: GateResult.from_json({"verdict": v}).blocks for v in ("pass", "no_rules", "fail", "", "new")
    }
    assert verdicts == {"pass": False, "no_rules": False, "fail": True, "": True, "new": True}
    assert GateResult.from_json({"verdict": "no_rules"}).passed is False
