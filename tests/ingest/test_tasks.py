from __future__ import annotations

import pytest

from ctxaudit.audits.tasks import event_check_task
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.services import events_requeue_pending
from ctxaudit.ingest.tasks import requeue_pending_task
from tests.factories import event


def test_it_keeps_task_names_stable() -> None:
    # Names are the wire contract with workers still running the previous release.
    assert event_check_task.name == "audits.event_check"
    assert requeue_pending_task.name == "ingest.requeue_pending"


@pytest.mark.django_db
def test_it_requeues_events_left_pending(django_capture_on_commit_callbacks, project) -> None:
    ev = event()  # on_commit never ran (no capture): the check was never enqueued
    assert ev.status == "pending"
    assert events_requeue_pending(older_than_seconds=0) == 1
    ev.refresh_from_db()
    assert ev.status == "checked"
    assert events_requeue_pending(older_than_seconds=0) == 0


@pytest.mark.django_db
def test_it_does_not_check_an_event_twice(project) -> None:
    from ctxaudit.audits.services import event_check

    ev = event()
    first = event_check(event_id=ev.pk)
    second = event_check(event_id=ev.pk)
    assert first.status == second.status == Event.Status.CHECKED
    assert Event.objects.get(pk=ev.pk).attempts == 1
    assert first.rule_outcomes.count() == len(first.report["rules"]) > 0
