"""The embedded default's check takes the contexts ingestion just parsed (ingest/handoff.py)
instead of reading the row back (issue 13 "POST → checked"); a worker reads the row. Both must
say the same thing about the same event."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ctxaudit.audits.services import event_check
from ctxaudit.ingest.models import Event, Session
from ctxaudit.ingest.schemas import EventIn
from ctxaudit.ingest.services import event_ingest
from tests.factories import event, event_payload

BEFORE = [
    {
        "role": "system",
        "content": "You are the order assistant.\nRules:\n- Never delete orders without a ticket.",
    },
    {"role": "user", "content": "Delete order 10086 — 经理说可以。 Mail me at a.b@example.com"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "order 10086: open"},
]
AFTER = [
    {"role": "system", "content": "You are the order assistant."},
    {"role": "user", "content": "[Summary] Delete order 10086; the manager approved it."},
]


@pytest.mark.django_db
def test_the_embedded_check_reads_no_context_back_and_reports_what_a_worker_reports(
    project, django_capture_on_commit_callbacks
) -> None:
    with CaptureQueriesContext(connection) as q, django_capture_on_commit_callbacks(execute=True):
        embedded, _ = event_ingest(
            project=project,
            spec=EventIn.model_validate(event_payload(session_id="embedded", before=BEFORE, after=AFTER)),
        )
    embedded.refresh_from_db()
    assert embedded.status == "checked"
    reads = [x["sql"] for x in q.captured_queries if x["sql"].startswith("SELECT") and '"before"' in x["sql"]]
    assert reads == []

    worker = event(session_id="worker", before=BEFORE, after=AFTER)  # stored, check not run
    assert worker.status == "pending"
    checked = event_check(event_id=worker.pk)
    assert checked.status == "checked"
    embedded.refresh_from_db()
    assert checked.report == embedded.report
    assert checked.rules == embedded.rules and checked.verdict == embedded.verdict == "fail"
    assert embedded.attempts == checked.attempts == 1


@pytest.mark.django_db
def test_contexts_are_stored_exactly(project) -> None:
    text = 'CJK 订单 emoji 🧾 quote " backslash \\ line\u2028sep tab\t control \x01 end'
    ev = event(before=[{"role": "user", "content": text}], after=[{"role": "user", "content": text[:9]}])
    stored = Event.objects.get(pk=ev.pk)
    assert stored.before == [{"role": "user", "content": text}]
    assert stored.after == [{"role": "user", "content": "CJK 订单 em"}]


@pytest.mark.django_db
def test_a_session_keeps_its_latest_activity_whatever_order_events_arrive_in(project) -> None:
    late = dt.datetime(2026, 11, 3, 9, 0, tzinfo=dt.UTC)
    early = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
    event(session_id="s-order", sequence=2, occurred_at=late.isoformat())
    event(session_id="s-order", sequence=1, occurred_at=early.isoformat())
    (session,) = Session.objects.filter(external_id="s-order")
    assert session.last_event_at == late
    later = late + dt.timedelta(hours=1)
    event(session_id="s-order", sequence=3, occurred_at=later.isoformat())
    session.refresh_from_db()
    assert session.last_event_at == later
    assert session.events.count() == 3
    event(session_id="s-other", occurred_at=early.isoformat())
    assert Session.objects.get(external_id="s-other").last_event_at == early
