"""Real transcripts (samples/real) with several compactions in one session show their timelines."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db.models import Count

from ctxaudit.ingest.models import Session
from ctxaudit.timelines.selectors import session_timeline
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_it_shows_the_timeline_of_a_real_multi_compaction_session(
    shared_dir, project, client, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "import_transcripts",
            str(shared_dir / "samples" / "real"),
            project=project.name,
            stdout=io.StringIO(),
        )
    multi = list(
        Session.objects.filter(project=project)
        .annotate(n=Count("events"))
        .filter(n__gte=2)
        .select_related("project")
    )
    assert multi, "samples/real holds a transcript with two compactions in one session"
    for session in multi:
        tl = session_timeline(session)
        assert len(tl.events) == session.n
        assert all(e.status == "checked" for e in tl.events)
        assert [e.sequence for e in tl.events] == sorted(e.sequence for e in tl.events)
        assert tl.rules, "the user's standing instructions are the rules in force"
        for rule in tl.rules:
            assert rule.points and all(
                p.strength is not None and 0.0 <= p.strength <= 1.0 for p in rule.points
            )
            # A rule's series runs from its first appearance to the session's last compression.
            assert rule.points[-1].event.id == tl.events[-1].id

        client.login(username="alice", password=PASSWORD)
        html = client.get(f"/sessions/{session.pk}/").content.decode()
        assert html.count('<svg class="timeline-chart"') == min(len(tl.rules), 10)
        for e in tl.events:
            assert f'href="/events/{e.id}/"' in html
