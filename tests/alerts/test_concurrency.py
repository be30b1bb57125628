"""Two workers evaluating events with the same fingerprint at once make one alert (PostgreSQL:
SQLite serialises writers, so the race only exists on a real server)."""

from __future__ import annotations

import os
import threading

import pytest
from django.db import connection

from ctxaudit.alerts.models import Alert
from ctxaudit.alerts.services import alerts_for_event
from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event, Session
from ctxaudit.projects.models import Project

pytestmark = [pytest.mark.integration]


def _checked_event(project: Project, n: int) -> int:
    session, _ = Session.objects.get_or_create(project=project, external_id=f"s-{n}")
    ev = Event.objects.create(
        project=project, session=session, sequence=1, before=[], after=[], status=Event.Status.CHECKED
    )
    Finding.objects.create(event=ev, kind="rule_missing", severity="high", rule_id="R1", message="R1 gone")
    return ev.pk


def test_it_groups_concurrent_evaluations_into_one_alert(transactional_db) -> None:
    if connection.vendor != "postgresql":
        if os.environ.get("CTXAUDIT_REQUIRE_FULL_STACK") == "1":
            pytest.fail("needs PostgreSQL under CI")
        pytest.skip("DATABASE_URL is not PostgreSQL")
    project = Project.objects.create(name="race")
    ids = [_checked_event(project, n) for n in range(8)]
    barrier = threading.Barrier(len(ids))
    errors: list[BaseException] = []

    def run(pk: int) -> None:
        try:
            barrier.wait(5)
            alerts_for_event(pk)
        except BaseException as e:  # reported below, in the test's thread
            errors.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(pk,)) for pk in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    alert = Alert.objects.get(project=project)
    assert (alert.count, alert.session_count) == (8, 8)
    assert alert.activities.filter(kind="opened").count() == 1
