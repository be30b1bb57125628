"""The event list at scale (issue 13): rows built in Python show what the row template showed,
the session filter gives the same rows whichever plan it takes, and the number of queries does
not grow with the rows or the findings."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event, Session
from ctxaudit.projects.models import Project
from ctxaudit.regression.models import ChecklistStep
from ctxaudit.ui import event_rows
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def _events(project: Project, session_ids: list[str], per_session: int = 2) -> list[Event]:
    """`per_session` checked events per session, a minute apart, sessions in the given order
    (the first session's events oldest); returned newest first."""
    start = timezone.now() - dt.timedelta(days=3)
    made = []
    i = 0
    for sid in session_ids:
        session = Session.objects.create(project=project, external_id=sid)
        for seq in range(per_session):
            made.append(
                Event(
                    project=project,
                    session=session,
                    sequence=seq,
                    occurred_at=start + dt.timedelta(minutes=i),
                    before=[],
                    after=[],
                    status="checked",
                    verdict="pass",
                    tokens_before=1200,
                    tokens_after=300,
                )
            )
            i += 1
    Event.objects.bulk_create(made)
    return sorted(Event.objects.filter(project=project), key=lambda e: (e.occurred_at, e.pk), reverse=True)


def _ids(body: str) -> list[int]:
    return [int(x) for x in re.findall(r'<td class="when"><a href="/events/(\d+)/"', body)]


def _row(body: str, pk: int) -> str:
    m = re.search(rf'<tr class="ev[^"]*">\s*<td class="when"><a href="/events/{pk}/".*?</tr>', body, re.S)
    assert m, pk
    return m.group(0)


def test_a_row_counts_its_findings_and_marks_serious_ones(client, alice, project) -> None:
    quiet, loud = _events(project, ["s-quiet", "s-loud"], per_session=1)[::-1]
    Finding.objects.create(event=quiet, kind="summary_unmarked", severity="low", message="no marker")
    for sev in ("high", "low", "critical"):
        Finding.objects.create(event=loud, kind="summary_elevated", severity=sev, message=f"{sev} one")
    client.login(username="alice", password=PASSWORD)
    body = client.get("/").content.decode()
    q, lo = _row(body, quiet.pk), _row(body, loud.pk)
    assert '<span class="findings-count" title="1 finding, 0 high or critical">1 finding</span>' in q
    assert (
        '<span class="findings-count serious" title="3 findings, 2 high or critical">3 findings</span>' in lo
    )
    assert '<span class="badge badge-critical">critical</span>' in lo
    assert "1200 → 300" in q and '<td class="num">0</td>' in q  # tokens; sequence 0 is shown, not blank


def test_a_row_cuts_a_long_session_id_and_keeps_it_whole_in_its_title(client, alice, project) -> None:
    long_id = "sess-" + "x" * 60 + "<b>"
    (ev,) = _events(project, [long_id], per_session=1)
    client.login(username="alice", password=PASSWORD)
    row = _row(client.get("/").content.decode(), ev.pk)
    assert f'title="sess-{"x" * 60}&lt;b&gt;"' in row
    assert f'<a href="/events/{ev.pk}/">sess-{"x" * 42}…</a>' in row  # 47 characters and an ellipsis
    assert f'<a class="timeline-link" href="/sessions/{ev.session_id}/">timeline</a>' in row
    assert "<b>" not in row


def test_a_row_links_its_checklist_with_the_steps_done(client, alice, project) -> None:
    (ev,) = _events(project, ["s-check"], per_session=1)
    ChecklistStep.objects.create(event=ev, step=1, status=ChecklistStep.Status.DONE)
    ChecklistStep.objects.create(event=ev, step=2, status=ChecklistStep.Status.OPEN)
    client.login(username="alice", password=PASSWORD)
    row = _row(client.get("/").content.decode(), ev.pk)
    assert (
        f'<a class="progress" href="/events/{ev.pk}/checklist/" title="troubleshooting checklist">1/7</a>'
        in row
    )


@pytest.mark.parametrize("listed", [10_000, 2])
def test_the_session_filter_shows_the_same_rows_whichever_way_it_is_run(
    client, alice, project, monkeypatch, listed
) -> None:
    # listed=2: more sessions match than are named by id, so the condition is joined.
    monkeypatch.setattr(event_rows, "SESSION_IDS_LISTED", listed)
    events = _events(project, ["alpha-1", "beta-1", "alpha-2", "gamma", "ALPHA-3"], per_session=2)
    sid = {e.pk: e.session.external_id for e in Event.objects.select_related("session")}
    client.login(username="alice", password=PASSWORD)
    assert _ids(client.get("/?session=alpha").content.decode()) == [
        e.pk for e in events if "alpha" in sid[e.pk].lower()
    ]
    assert _ids(client.get("/?session=-1").content.decode()) == [
        e.pk for e in events if sid[e.pk].endswith("-1")
    ]
    assert _ids(client.get("/?session=gamma").content.decode()) == [
        e.pk for e in events if sid[e.pk] == "gamma"
    ]
    assert _ids(client.get("/?session=nothing-like-it").content.decode()) == []
    assert "No events match these filters." in client.get("/?session=nothing-like-it").content.decode()


def test_the_session_filter_never_shows_another_projects_session(client, alice, charlie, project) -> None:
    other = Project.objects.get(name="other")
    _events(other, ["alpha-theirs"], per_session=1)
    mine = _events(project, ["alpha-mine"], per_session=1)
    client.login(username="alice", password=PASSWORD)
    body = client.get("/?session=alpha").content.decode()
    assert _ids(body) == [mine[0].pk] and "alpha-theirs" not in body


def test_the_list_makes_the_same_queries_for_few_or_many_findings_and_sessions(
    client, alice, project
) -> None:
    client.login(username="alice", password=PASSWORD)
    few = _events(project, ["s-a"], per_session=3)
    Finding.objects.create(event=few[0], kind="rule_missing", severity="high", message="m")
    counts = {}
    for url in ("/", "/?session=s-", "/?severity=high", "/?kind=rule_missing&session=s"):
        with CaptureQueriesContext(connection) as q:
            assert client.get(url).status_code == 200
        counts[url] = len(q.captured_queries)
    many = _events(project, [f"s-{i}" for i in range(30)], per_session=4)
    Finding.objects.bulk_create(
        [Finding(event=e, kind="rule_missing", severity="high", message="m") for e in many for _ in range(5)]
    )
    ChecklistStep.objects.bulk_create([ChecklistStep(event=e, step=1, status="done") for e in many[:60]])
    for url, n in counts.items():
        with CaptureQueriesContext(connection) as q:
            assert client.get(url).status_code == 200
        assert len(q.captured_queries) == n, url
    # a session filter costs one query (its sessions), no more
    assert counts["/?session=s-"] == counts["/"] + 1
