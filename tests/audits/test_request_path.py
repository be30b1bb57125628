"""The check's reads and writes on the request path (issue 13 "Speed on the request path")."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ctxaudit.audits.services import event_check, rules_in_force
from ctxaudit.ingest.models import Event
from tests.factories import event


def _rules(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"id": i, "text": t} for i, t in pairs]


@pytest.mark.django_db
def test_rules_in_force_reads_no_earlier_context(project) -> None:
    first = event(sequence=1, rules=_rules(("A", "Never delete orders."), ("B", "Always log every change.")))
    second = event(sequence=2, rules=_rules(("B", "Always log every change."), ("C", "Never refund twice.")))
    later_first = event(sequence=0, session_id="s-1", rules=_rules(("Z", "Never share card numbers.")))
    with CaptureQueriesContext(connection) as q:
        rules = rules_in_force(second)
    assert [r.id for r in rules] == ["B", "C", "A", "Z"]
    # sequence 0 sorts before 1: Z was in force before `first`, so it is in force for it too
    assert [r.id for r in rules_in_force(first)] == ["A", "B", "Z"]
    assert [r.id for r in rules_in_force(later_first)] == ["Z"]
    assert len(q.captured_queries) == 1
    sql = q.captured_queries[0]["sql"]
    # the earlier events' contexts and reports are not selected (they were decoded once per rule)
    assert '"before"' not in sql and '"report"' not in sql


@pytest.mark.django_db
def test_a_check_writes_results_without_rewriting_the_contexts(
    project, django_capture_on_commit_callbacks
) -> None:
    ev = Event.objects.get(pk=event().pk)
    Event.objects.filter(pk=ev.pk).update(status=Event.Status.PENDING, report=None, verdict=None)
    with CaptureQueriesContext(connection) as q:
        checked = event_check(event_id=ev.pk)
    assert checked is not None and checked.status == "checked" and checked.report["rules"]
    updates = [
        x["sql"] for x in q.captured_queries if x["sql"].startswith("UPDATE") and "ingest_event" in x["sql"]
    ]
    assert len(updates) == 2  # attempts + 1, then the results
    assert all('"before" =' not in u and '"after" =' not in u for u in updates), updates
    stored = Event.objects.get(pk=ev.pk)
    assert (stored.status, stored.verdict, stored.attempts) == ("checked", checked.verdict, 1)
    assert stored.before == ev.before and stored.report == checked.report
    # the event's contexts were read from the database once
    reads = [
        x["sql"]
        for x in q.captured_queries
        if x["sql"].startswith("SELECT") and '"ingest_event"."before"' in x["sql"]
    ]
    assert len(reads) == 1


@pytest.mark.django_db
def test_a_checked_event_is_returned_as_it_is(project, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        ev = event()
    ev.refresh_from_db()
    again = event_check(event_id=ev.pk)
    assert again is not None and again.status == "checked" and again.report == ev.report
    assert Event.objects.get(pk=ev.pk).attempts == 1
    assert event_check(event_id=10**9) is None


def test_warm_up_runs_the_engine_once_without_raising() -> None:
    from ctxaudit.engine.warmup import warm_up

    assert 0 < warm_up() < 30
