"""/sessions/ pages first (issue 13): ordered by each session's latest event (Session.last_event_at,
written with every event), counts made for the page's sessions only, the same number of queries
for 3 sessions or 120."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ctxaudit.alerts.models import Alert
from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event, Session
from ctxaudit.ingest.services import events_purge_expired, sessions_recount_latest
from ctxaudit.projects.models import Membership, Project
from tests.factories import PASSWORD, event, event_payload

pytestmark = pytest.mark.django_db


def _shown(body: str) -> list[str]:
    return re.findall(r'<a href="/sessions/\d+/"><code>([^<]*)</code></a>', body)


def _row(body: str, sid: str) -> str:
    return body[body.index(f"<code>{sid}</code>") :].split("</tr>")[0]


def _bulk_sessions(project: Project, n: int, *, events_each: int = 2) -> list[str]:
    """n sessions with `events_each` events each, session i's latest event i hours ago; their
    last_event_at set as the service sets it. Returns the ids, most recent activity first."""
    now = timezone.now()
    sessions = Session.objects.bulk_create(
        [Session(project=project, external_id=f"bulk-{i:03d}") for i in range(n)]
    )
    Event.objects.bulk_create(
        [
            Event(
                project=project,
                session=s,
                sequence=k,
                occurred_at=now - dt.timedelta(hours=i, minutes=10 * k),
                before=[],
                after=[],
                status="checked",
                verdict="fail" if k == 0 else "pass",
            )
            for i, s in enumerate(sessions)
            for k in range(events_each)
        ]
    )
    sessions_recount_latest(s.pk for s in sessions)
    return [s.external_id for s in sessions]


def test_a_session_moves_up_when_it_compresses_again_and_never_back(client, alice) -> None:
    event("acme", **event_payload(session_id="s-old", sequence=1, occurred_at="2026-11-01T10:00:00Z"))
    event("acme", **event_payload(session_id="s-new", sequence=1, occurred_at="2026-11-20T10:00:00Z"))
    client.force_login(alice)
    assert _shown(client.get("/sessions/").content.decode()) == ["s-new", "s-old"]
    event("acme", **event_payload(session_id="s-old", sequence=2, occurred_at="2026-11-25T09:30:00Z"))
    body = client.get("/sessions/").content.decode()
    assert _shown(body) == ["s-old", "s-new"]
    # A late-arriving earlier compression does not move its session's last activity back.
    event("acme", **event_payload(session_id="s-old", sequence=3, occurred_at="2026-11-02T00:00:00Z"))
    body = client.get("/sessions/").content.decode()
    assert _shown(body) == ["s-old", "s-new"]
    row = _row(body, "s-old")
    assert "2026-11-25 09:30" in row and "<td>3</td>" in row


def test_each_row_counts_its_own_compressions_failures_and_decays(client, alice, project) -> None:
    ids = _bulk_sessions(project, 3, events_each=3)
    second = Session.objects.get(external_id=ids[1])
    for e in Event.objects.filter(session=second)[:2]:
        Finding.objects.create(event=e, kind="rule_decay", severity="high", message="decayed")
    Finding.objects.create(
        event=Event.objects.filter(session=second).first(), kind="rule_missing", severity="high", message="m"
    )
    client.force_login(alice)
    body = client.get("/sessions/").content.decode()
    assert _shown(body) == ids
    row = _row(body, ids[1])
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    # (from the session id on) project, compressions, failed, decay findings, last compression
    assert cells[1:4] == ["3", '<span class="badge badge-fail">1</span>', "2"]
    assert re.findall(r"<td[^>]*>(.*?)</td>", _row(body, ids[0]), re.S)[1:4] == [
        "3",
        '<span class="badge badge-fail">1</span>',
        "0",
    ]


def test_a_session_without_events_comes_last(client, alice, project) -> None:
    ids = _bulk_sessions(project, 2)
    Session.objects.create(project=project, external_id="empty-one")
    client.force_login(alice)
    body = client.get("/sessions/").content.decode()
    assert _shown(body) == [*ids, "empty-one"]
    assert re.findall(r"<td[^>]*>(.*?)</td>", _row(body, "empty-one"), re.S)[1:5] == ["0", "0", "0", "–"]


def test_pages_walk_every_session_once_with_the_same_queries(client, alice, project) -> None:
    client.force_login(alice)
    _bulk_sessions(project, 3)
    with CaptureQueriesContext(connection) as small:
        assert client.get("/sessions/").status_code == 200
    Session.objects.all().delete()
    ids = _bulk_sessions(project, 120)
    seen: list[str] = []
    for n in (1, 2, 3):
        with CaptureQueriesContext(connection) as big:
            body = client.get(f"/sessions/?page={n}").content.decode()
        assert len(big.captured_queries) == len(small.captured_queries), n
        seen += _shown(body)
        assert f"page {n} of 3" in body
    assert seen == ids
    assert (
        _shown(client.get("/sessions/?page=99").content.decode()) == ids[100:]
    )  # past the end: the last page


def test_the_filter_by_part_of_the_id_keeps_the_order(client, alice, project) -> None:
    ids = _bulk_sessions(project, 120)
    client.force_login(alice)
    assert _shown(client.get("/sessions/?q=-11").content.decode()) == [i for i in ids if "-11" in i]
    assert _shown(client.get("/sessions/?q=nothing").content.decode()) == []


def test_a_purge_leaves_each_session_its_latest_remaining_event(alice, project) -> None:
    project.retention_days = 30
    project.save()
    event("acme", **event_payload(session_id="s-p", sequence=1, occurred_at="2026-10-01T08:00:00Z"))
    late = event("acme", **event_payload(session_id="s-p", sequence=2, occurred_at="2026-10-05T08:00:00Z"))
    # The later compression was received long ago (its occurred_at says later): the purge takes it.
    Event.objects.filter(pk=late.pk).update(received_at=timezone.now() - dt.timedelta(days=90))
    events_purge_expired()
    session = Session.objects.get(external_id="s-p")
    assert session.last_event_at == dt.datetime(2026, 10, 1, 8, 0, tzinfo=dt.UTC)


def test_the_session_list_reads_the_users_projects_once_for_filter_scope_and_nav(
    client, alice, charlie, project
) -> None:
    second = Project.objects.create(name="beta")
    Membership.objects.create(user=alice, project=second, role="reviewer")
    outsider = Project.objects.get(name="other")
    for p, sid in ((project, "s-acme"), (second, "s-beta"), (outsider, "s-other")):
        Session.objects.create(project=p, external_id=sid)
    Alert.objects.create(project=second, kind="rule_missing", rule_id="R1", title="t", severity="high")
    Alert.objects.create(project=outsider, kind="rule_missing", rule_id="R1", title="t", severity="critical")
    client.login(username="alice", password=PASSWORD)
    with CaptureQueriesContext(connection) as q:
        body = client.get("/sessions/").content.decode()
    # session, user, the projects (with the nav's open alerts), the count, the rows
    assert len(q.captured_queries) == 5
    assert sorted(_shown(body)) == ["s-acme", "s-beta"]
    nav = re.search(r'<a id="alert-summary".*?</a>', body, re.S)
    assert nav and re.findall(r'badge-(\w+)">(\d+)', nav.group(0)) == [("high", "1")]
    assert _shown(client.get("/sessions/?project=beta").content.decode()) == ["s-beta"]
    assert _shown(client.get("/sessions/?project=other").content.decode()) == []
