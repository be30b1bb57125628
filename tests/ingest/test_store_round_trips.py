"""Storing an event costs few round trips (issue 13 "Ingest with a broker (store only)"): on
PostgreSQL the session upsert, the event and its rules in force are one statement."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ctxaudit.ingest.models import Event, Session, SessionRule
from tests.factories import event_payload

RULES = [
    {"id": "R1", "text": "Never delete orders."},
    {"id": "R2", "text": "Never refund twice.", "severity": "low"},
]


def _post(client, api_key: str, body: dict, **headers) -> tuple[int, dict]:
    r = client.post(
        "/api/v1/events",
        data=body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_key}",
        **headers,
    )
    return r.status_code, r.json()


@pytest.mark.django_db
def test_an_event_with_rules_is_stored_with_its_session_and_rules_in_force(client, project, api_key) -> None:
    _post(client, api_key, event_payload(session_id="warm"))  # the key's last_used_at write
    with CaptureQueriesContext(connection) as q:
        status, body = _post(client, api_key, event_payload(session_id="run-1", rules=RULES))
    assert status == 202
    writes = [x["sql"] for x in q.captured_queries if not x["sql"].startswith("SELECT")]
    if connection.vendor == "postgresql":
        # the key lookup, then one statement: no BEGIN/COMMIT, no separate INSERTs (the test's
        # own transaction adds a savepoint around it, which a request in autocommit does not)
        sqls = [x["sql"] for x in q.captured_queries if "SAVEPOINT" not in x["sql"]]
        assert len(sqls) == 2, [s[:80] for s in sqls]
        assert sqls[1].startswith("WITH")
    else:
        assert len(writes) <= 5, writes
    ev = Event.objects.get(pk=body["id"])
    assert ev.session.external_id == "run-1" and ev.strategy_family == "summary"
    assert ev.rules == [
        {"id": "R1", "text": "Never delete orders.", "severity": "high", "source": "event"},
        {"id": "R2", "text": "Never refund twice.", "severity": "low", "source": "event"},
    ]
    assert list(
        SessionRule.objects.filter(session=ev.session)
        .order_by("id")
        .values_list("rule_id", "severity", "first_event")
    ) == [("R1", "high", ev.pk), ("R2", "low", ev.pk)]
    # a second event of the session keeps the rules' first event and the one session row
    status, body2 = _post(client, api_key, event_payload(session_id="run-1", sequence=2, rules=RULES))
    assert status == 202
    assert Session.objects.filter(external_id="run-1").count() == 1
    assert set(SessionRule.objects.filter(session=ev.session).values_list("first_event", flat=True)) == {
        ev.pk
    }
    assert Event.objects.get(pk=body2["id"]).session_id == ev.session_id


@pytest.mark.django_db
def test_a_replay_with_the_idempotency_key_stores_nothing_new(client, project, api_key) -> None:
    status, first = _post(client, api_key, event_payload(session_id="run-2"), HTTP_IDEMPOTENCY_KEY="k-1")
    assert status == 202
    status, again = _post(client, api_key, event_payload(session_id="run-2"), HTTP_IDEMPOTENCY_KEY="k-1")
    assert (status, again["id"]) == (200, first["id"])
    status, clash = _post(client, api_key, event_payload(session_id="run-3"), HTTP_IDEMPOTENCY_KEY="k-1")
    assert status == 422 and clash["field"] == "Idempotency-Key"
    assert not Session.objects.filter(external_id="run-3").exists()
    assert Event.objects.count() == 1


@pytest.mark.django_db
def test_a_post_without_rules_gets_the_rule_set_the_project_has_now(client, project, api_key) -> None:
    from ctxaudit.projects.rulesets import RuleSpec, rule_set_replace

    status, body = _post(client, api_key, event_payload(session_id="run-4"))
    assert status == 202
    assert Event.objects.get(pk=body["id"]).rules_source == "extracted"
    rule_set_replace(
        project=project,
        rules=[RuleSpec(id="P1", text="Never share card numbers.", severity="critical")],
        source="test",
        actor="test",
    )
    with CaptureQueriesContext(connection) as q:
        status, body = _post(client, api_key, event_payload(session_id="run-4", sequence=2))
    assert status == 202
    ev = Event.objects.get(pk=body["id"])
    assert ev.rules_source == "project"
    assert [(r["id"], r["text"], r["severity"], r["rule_set_version"]) for r in ev.rules] == [
        ("P1", "Never share card numbers.", "critical", 1)
    ]
    assert list(SessionRule.objects.filter(session=ev.session).values_list("rule_id", "first_event")) == [
        ("P1", ev.pk)
    ]
    # the key lookup saw the rule set, then its rules were read
    assert sum("projects_projectrule" in x["sql"] for x in q.captured_queries) == 2
