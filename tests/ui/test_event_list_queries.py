"""The event list reads a page in a fixed handful of queries at any depth, and what it spares
(the nav's alert counts, the rows' count, project names) still says what it said (issue 13)."""

from __future__ import annotations

import datetime as dt
import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ctxaudit.alerts.models import Alert
from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.ingest.models import Event, Session
from ctxaudit.projects.models import Membership, Project
from ctxaudit.regression.models import ChecklistStep
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def _bulk(project: Project, n: int, *, sid: str = "bulk", start_days: int = 30) -> list[Event]:
    session = Session.objects.create(project=project, external_id=sid)
    start = timezone.now() - dt.timedelta(days=start_days)
    Event.objects.bulk_create(
        [
            Event(
                project=project,
                session=session,
                sequence=i,
                occurred_at=start + dt.timedelta(minutes=i),
                before=[],
                after=[],
                status="checked",
                verdict="fail" if i % 2 else "pass",
            )
            for i in range(n)
        ]
    )
    return sorted(Event.objects.filter(session=session), key=lambda e: (e.occurred_at, e.pk), reverse=True)


def _link(body: str, label: str) -> str:
    m = re.search(r'<a href="\?([^"]*)"[^>]*>' + re.escape(label), body)
    assert m, f"no {label!r} link"
    return "/?" + html.unescape(m.group(1))


def _ids(body: str) -> list[int]:
    return [int(x) for x in re.findall(r'<td class="when"><a href="/events/(\d+)/"', body)]


def _queries(client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as q:
        r = client.get(url)
    assert r.status_code == 200, url
    return len(q.captured_queries), r.content.decode()


def test_every_page_of_a_long_list_takes_the_same_five_queries(client, alice, project) -> None:
    events = _bulk(project, 260)
    for e in events[::7]:
        Finding.objects.create(event=e, kind="rule_missing", severity="high", rule_id="R1", message="lost")
        RuleOutcome.objects.create(
            event=e, rule_id="R1", text="Never share keys.", state="missing", strength=0.0
        )
    ChecklistStep.objects.create(event=events[200], step=1, status=ChecklistStep.Status.DONE)
    client.login(username="alice", password=PASSWORD)
    n_first, first = _queries(client, "/")
    # session, user, the projects (with the nav's open alerts), the rows (with their count),
    # their lost rules, findings and checklist progress
    assert n_first == 5
    n2, second = _queries(client, _link(first, "older ›"))
    n3, third = _queries(client, _link(second, "older ›"))
    n4, fourth = _queries(client, _link(third, "older ›"))
    n_back, back = _queries(client, _link(fourth, "‹ newer"))
    n_old, oldest = _queries(client, "/?page=last")
    n_num, numbered = _queries(client, "/?page=4")
    n_filtered, _ = _queries(client, "/?verdict=fail&severity=high")
    assert [n2, n3, n4, n_back, n_old, n_num, n_filtered] == [5] * 7
    assert _ids(fourth) == [e.pk for e in events[150:200]] and "page 4 of 6" in fourth
    assert _ids(back) == [e.pk for e in events[100:150]] and "page 3 of 6" in back
    assert _ids(oldest) == [e.pk for e in events[250:]] and "page 6 of 6" in oldest
    assert _ids(numbered) == [e.pk for e in events[150:200]]
    assert "260 events" in first
    # the checklist progress of a row on page 5 comes with the page's findings
    fifth = client.get(_link(fourth, "older ›")).content.decode()
    assert f'href="/events/{events[200].pk}/checklist/" title="troubleshooting checklist">1/7</a>' in fifth


def test_a_page_number_past_the_end_shows_the_oldest_page(client, alice, project) -> None:
    events = _bulk(project, 120)
    client.login(username="alice", password=PASSWORD)
    body = client.get("/?page=9").content.decode()
    assert _ids(body) == [e.pk for e in events[100:]]
    assert "page 3 of 3" in body and "120 events" in body


def test_a_cursor_past_the_end_shows_no_rows_but_the_count(client, alice, project) -> None:
    _bulk(project, 60)
    client.login(username="alice", password=PASSWORD)
    body = client.get("/?after=2001-01-01T00:00:00%2B00:00_1").content.decode()
    assert _ids(body) == []
    assert "60 events" in body


def test_rows_name_their_project_and_the_project_filter_takes_a_name_or_an_id(
    client, alice, charlie, project
) -> None:
    second = Project.objects.create(name="<b>beta</b>")
    Membership.objects.create(user=alice, project=second, role="reviewer")
    mine = _bulk(project, 3, sid="s-acme")
    theirs = _bulk(second, 2, sid="s-beta", start_days=20)
    outsider = Project.objects.get(name="other")
    _bulk(outsider, 2, sid="s-other", start_days=10)
    client.login(username="alice", password=PASSWORD)
    body = client.get("/").content.decode()
    assert _ids(body) == [e.pk for e in theirs + mine]
    assert "<td>&lt;b&gt;beta&lt;/b&gt;</td>" in body and f"<td>{project.name}</td>" in body
    assert _ids(client.get(f"/?project={second.pk}").content.decode()) == [e.pk for e in theirs]
    assert _ids(client.get("/?project=%3Cb%3Ebeta%3C/b%3E").content.decode()) == [e.pk for e in theirs]
    assert _ids(client.get(f"/?project={outsider.pk}").content.decode()) == []
    assert _ids(client.get("/?project=other").content.decode()) == []


def test_the_nav_on_the_list_counts_the_open_unmuted_alerts_of_the_users_projects(
    client, alice, charlie, project
) -> None:
    second = Project.objects.create(name="beta")
    Membership.objects.create(user=alice, project=second, role="reviewer")
    outsider = Project.objects.get(name="other")
    later = timezone.now() + dt.timedelta(hours=2)
    earlier = timezone.now() - dt.timedelta(hours=2)
    for i, (p, sev, status, muted) in enumerate(
        [
            (project, "critical", "open", None),
            (second, "critical", "open", earlier),  # its mute is over: counted
            (project, "high", "open", later),  # muted: not counted
            (project, "high", "acknowledged", None),
            (second, "medium", "open", None),
            (project, "low", "resolved", None),
            (outsider, "critical", "open", None),
        ]
    ):
        Alert.objects.create(
            project=p,
            kind="rule_missing",
            rule_id=f"R{i}",
            title="t",
            severity=sev,
            status=status,
            muted_until=muted,
        )
    _bulk(project, 2)
    client.login(username="alice", password=PASSWORD)
    nav = re.search(r'<a id="alert-summary".*?</a>', client.get("/").content.decode(), re.S)
    assert nav
    badges = re.findall(r'<span class="badge badge-(\w+)">(\d+) \w+</span>', nav.group(0))
    assert badges == [("critical", "2"), ("medium", "1")]
    summary = client.get("/alerts/summary/", HTTP_HX_REQUEST="true").content.decode()
    assert re.findall(r'<span class="badge badge-(\w+)">(\d+) \w+</span>', summary) == badges
