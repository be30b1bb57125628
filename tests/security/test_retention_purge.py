"""Retention: events older than Project.retention_days are purged with their findings; alerts keep a summary."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.ingest.models import Event, Session
from ctxaudit.ingest.services import events_purge_expired
from ctxaudit.ingest.tasks import purge_expired_task
from ctxaudit.projects.models import AuditLogEntry, Project
from tests.factories import event as ingest

pytestmark = pytest.mark.django_db


@pytest.fixture
def event(django_capture_on_commit_callbacks):
    """Ingest and run the check (and what follows it: alerts) as the eager default does."""

    def _event(project_name: str, **overrides) -> Event:
        with django_capture_on_commit_callbacks(execute=True):
            ev = ingest(project_name, **overrides)
        ev.refresh_from_db()
        return ev

    return _event


def _age(ev: Event, days: int) -> None:
    Event.objects.filter(pk=ev.pk).update(received_at=timezone.now() - timedelta(days=days))


def test_it_purges_old_events_with_their_findings(project, event) -> None:
    Project.objects.filter(pk=project.pk).update(retention_days=30)
    old = event("acme", session_id="old-session")
    fresh = event("acme", session_id="fresh-session")
    assert Finding.objects.filter(event=old).exists()
    _age(old, 31)
    _age(fresh, 29)
    assert events_purge_expired() == {"events": 1, "sessions": 1}
    assert list(Event.objects.values_list("pk", flat=True)) == [fresh.pk]
    assert not Finding.objects.filter(event_id=old.pk).exists()
    assert not RuleOutcome.objects.filter(event_id=old.pk).exists()
    assert not Session.objects.filter(external_id="old-session").exists()


def test_it_counts_age_from_receipt_not_from_the_clients_clock(project, event) -> None:
    Project.objects.filter(pk=project.pk).update(retention_days=30)
    ev = event("acme", occurred_at="2020-01-01T00:00:00Z")
    assert events_purge_expired() == {"events": 0, "sessions": 0}
    assert Event.objects.filter(pk=ev.pk).exists()


def test_it_keeps_events_forever_with_zero_days_and_per_project(project, charlie, event) -> None:
    Project.objects.filter(pk=project.pk).update(retention_days=0)
    Project.objects.filter(name="other").update(retention_days=7)
    mine = event("acme")
    theirs = event("other")
    _age(mine, 4000)
    _age(theirs, 8)
    events_purge_expired()
    assert list(Event.objects.values_list("pk", flat=True)) == [mine.pk]


def test_it_keeps_a_session_that_still_has_events(project, event) -> None:
    Project.objects.filter(pk=project.pk).update(retention_days=30)
    old = event("acme", session_id="s", sequence=1)
    event("acme", session_id="s", sequence=2)
    _age(old, 40)
    assert events_purge_expired() == {"events": 1, "sessions": 0}
    assert Session.objects.get(external_id="s").events.count() == 1


def test_it_keeps_alerts_and_their_summary(project, event) -> None:
    from ctxaudit.alerts.models import Alert

    Project.objects.filter(pk=project.pk).update(retention_days=30)
    first = event("acme", session_id="a")
    second = event("acme", session_id="b")
    alerts = {
        a.pk: (a.count, a.session_count, a.first_seen, a.last_seen)
        for a in Alert.objects.filter(project=project)
    }
    assert alerts, "the failing order-assistant events raise alerts"
    _age(first, 31)
    _age(second, 31)
    events_purge_expired()
    assert not Event.objects.exists()
    after = {
        a.pk: (a.count, a.session_count, a.first_seen, a.last_seen)
        for a in Alert.objects.filter(project=project)
    }
    assert after == alerts
    # a later event adds to the kept count instead of recounting what is left
    event("acme", session_id="c")
    grown = {a.pk: a.count for a in Alert.objects.filter(project=project)}
    assert all(grown[pk] == alerts[pk][0] + 1 for pk in alerts if pk in grown)


def test_it_keeps_the_audit_log(client, alice, project, event) -> None:
    Project.objects.filter(pk=project.pk).update(retention_days=1)
    ev = event("acme")
    client.force_login(alice)
    client.get(f"/events/{ev.pk}/")
    _age(ev, 2)
    events_purge_expired()
    assert AuditLogEntry.objects.filter(object_id=str(ev.pk), action="view").exists()


def test_it_runs_from_the_beat_schedule(project, event) -> None:
    assert (
        settings.CELERY_BEAT_SCHEDULE["ingest.purge_expired"]["task"]
        == purge_expired_task.name
        == "ingest.purge_expired"
    )
    Project.objects.filter(pk=project.pk).update(retention_days=1)
    ev = event("acme")
    _age(ev, 3)
    purge_expired_task.apply()
    assert not Event.objects.filter(pk=ev.pk).exists()
