"""Rules extracted by the check, not the request (issue 13 "Ingest with a broker (store only)").

An event sent without rules to a project without a rule set has its rules extracted from its
`before` context. A store-only POST (a broker deployment: store, enqueue, 202) no longer runs the
extractor; the check does. What a user sees must not change: the same 202 answer, the same rules
on pages, exports and regression cases before the check, the same rules in force for a session's
later events even when a broker's workers check them out of order.
"""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ctxaudit.audits.services import event_check
from ctxaudit.ingest.event_rules import event_own_rules
from ctxaudit.ingest.models import Event, Session, SessionRule
from ctxaudit.regression.services import regression_case_from_event
from tests.factories import event, event_payload

APPROVAL = "Never delete orders without a manager approval ticket."
REFUND = "Never refund more than 100 EUR."


def _post(client, api_key: str, body: dict) -> dict:
    r = client.post(
        "/api/v1/events", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {api_key}"
    )
    assert r.status_code == 202, r.content
    return r.json()


def _two_rule_body(seq: int, system: str, session: str = "run-7") -> dict:
    return event_payload(
        session_id=session,
        sequence=seq,
        before=[
            {"role": "system", "content": system},
            {"role": "user", "content": "Delete order 10086 and refund 250 EUR."},
        ],
        after=[
            {"role": "system", "content": "You are the order assistant."},
            {"role": "user", "content": "[Summary] The user wants order 10086 deleted and 250 EUR back."},
        ],
    )


SYSTEM_BOTH = f"You are the order assistant.\nRules:\n- {APPROVAL}\n- {REFUND}"


@pytest.mark.django_db
def test_a_store_only_post_answers_as_before_and_its_check_extracts_the_rules(
    client, project, api_key
) -> None:
    # no on_commit capture: the enqueued check never runs, as with a broker whose worker is busy
    body = _post(client, api_key, _two_rule_body(1, SYSTEM_BOTH))
    assert set(body) == {"id", "status", "url", "ui_url"} and body["status"] == "pending"
    ev = Event.objects.get(pk=body["id"])
    assert ev.rules_source == "extracted"
    assert not SessionRule.objects.filter(session=ev.session).exists()
    # before the check, pages and exports read the rules the check will extract
    pending_rules = event_own_rules(ev)
    assert [r["text"] for r in pending_rules] == [APPROVAL, REFUND]
    assert {r["source"] for r in pending_rules} == {"system"}

    checked = event_check(event_id=ev.pk)
    assert checked is not None and checked.status == "checked"
    stored = Event.objects.get(pk=ev.pk)
    assert stored.rules == pending_rules
    assert [r["id"] for r in stored.report["rules"]] == [r["id"] for r in pending_rules]
    assert sorted(SessionRule.objects.filter(session=ev.session).values_list("text", flat=True)) == [
        APPROVAL,
        REFUND,
    ]


@pytest.mark.django_db
def test_a_later_event_checked_first_still_has_the_earlier_events_rules_in_force(project) -> None:
    first = event(**_two_rule_body(1, SYSTEM_BOTH))
    # the second compression's context lost the approval rule entirely
    second = event(**_two_rule_body(2, f"You are the order assistant.\nRules:\n- {REFUND}"))
    assert first.rules is None and second.rules is None  # neither checked yet

    checked = event_check(event_id=second.pk)  # a broker's worker took the later one first
    states = {r["text"]: r["state"] for r in checked.report["rules"]}
    assert states[APPROVAL] == "missing"
    assert set(states) == {APPROVAL, REFUND}
    # the first event's rules were stored on the way, and its own check uses them
    first.refresh_from_db()
    assert [r["text"] for r in first.rules] == [APPROVAL, REFUND]
    ids_first = [r["id"] for r in first.rules]
    again = event_check(event_id=first.pk)
    assert [r["id"] for r in again.report["rules"]] == ids_first
    # one id per rule text across the session
    assert SessionRule.objects.filter(session=first.session).count() == 2
    refund_ids = {r["id"] for r in checked.report["rules"] if r["text"] == REFUND}
    assert refund_ids == {r["id"] for r in first.rules if r["text"] == REFUND}


@pytest.mark.django_db
def test_a_regression_case_from_a_pending_event_keeps_its_extracted_rules(project, alice) -> None:
    ev = event(**_two_rule_body(1, SYSTEM_BOTH))
    assert ev.status == "pending"
    case, created = regression_case_from_event(event=ev, user=alice)
    assert created
    assert [r["text"] for r in case.rules] == [APPROVAL, REFUND]
    assert [r["severity"] for r in case.rules] == ["high", "high"]


@pytest.mark.django_db
def test_the_session_download_of_a_pending_event_lists_its_rules(client, alice, project) -> None:
    ev = event(**_two_rule_body(1, SYSTEM_BOTH))
    client.force_login(alice)
    r = client.get(reverse("regression:session-export", args=[ev.pk]))
    assert r.status_code == 200
    (row,) = json.loads(r.content)["events"]
    assert [x["text"] for x in row["rules"]] == [APPROVAL, REFUND]


@pytest.mark.django_db
def test_a_store_only_post_without_rules_costs_a_fixed_handful_of_queries(client, project, api_key) -> None:
    _post(client, api_key, _two_rule_body(1, SYSTEM_BOTH, session="warm"))  # the key's last_used_at write
    with CaptureQueriesContext(connection) as q:
        _post(client, api_key, _two_rule_body(1, SYSTEM_BOTH, session="new-session"))
    sqls = [x["sql"] for x in q.captured_queries if "SAVEPOINT" not in x["sql"]]  # the test's transaction
    # the key lookup (which also says the project has no rule set), then the session upsert and
    # the event: one statement on PostgreSQL, two INSERTs on SQLite (in a BEGIN … COMMIT, which
    # the test's own transaction turns into a savepoint)
    assert len(sqls) == (2 if connection.vendor == "postgresql" else 3), sqls
    assert not any("ingest_sessionrule" in s for s in sqls)
    assert sum("projects_projectrule" in s for s in sqls) == 1
    with CaptureQueriesContext(connection) as q:
        _post(client, api_key, _two_rule_body(2, SYSTEM_BOTH, session="new-session"))
    assert len([x for x in q.captured_queries if "SAVEPOINT" not in x["sql"]]) == len(sqls)
    assert Session.objects.filter(external_id="new-session").count() == 1
