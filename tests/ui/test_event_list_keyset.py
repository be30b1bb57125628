"""The event list pages by keyset with a constant number of queries (issue 13: at 100,000
events the home page counted findings over every event and skipped rows with OFFSET)."""

from __future__ import annotations

import datetime as dt
import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ctxaudit.audits.models import Finding
from ctxaudit.ingest.models import Event, Session
from ctxaudit.ingest.selectors import COUNT_CAP
from ctxaudit.projects.models import Project
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def _bulk(project: Project, n: int, *, findings: int = 0) -> list[Event]:
    """n checked events, one a minute, the newest first in the returned list."""
    session = Session.objects.create(project=project, external_id=f"bulk-{n}")
    start = timezone.now() - dt.timedelta(days=30)
    events = Event.objects.bulk_create(
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
    Finding.objects.bulk_create(
        [
            Finding(event=e, kind="rule_missing", severity="high", rule_id="R1", message="m", evidence=[])
            for e in events
            for _ in range(findings)
        ]
    )
    return sorted(Event.objects.filter(project=project), key=lambda e: (e.occurred_at, e.pk), reverse=True)


def _ids(body: str) -> list[int]:
    return [int(x) for x in dict.fromkeys(re.findall(r'href="/events/(\d+)/"', body))]


def _link(body: str, label: str) -> str:
    m = re.search(r'<a href="\?([^"]*)"[^>]*>' + re.escape(label), body)
    assert m, f"no {label!r} link"
    return "/?" + html.unescape(m.group(1))


def test_the_list_makes_the_same_queries_for_3_or_120_events(client, alice, project) -> None:
    client.login(username="alice", password=PASSWORD)
    _bulk(project, 3, findings=2)
    with CaptureQueriesContext(connection) as small:
        assert client.get("/").status_code == 200
    _bulk(project, 117, findings=2)
    for url in ("/", "/?page=2", "/?verdict=fail", "/?page=last"):
        with CaptureQueriesContext(connection) as big:
            assert client.get(url).status_code == 200
        assert len(big.captured_queries) == len(small.captured_queries), url


def test_older_and_newer_links_walk_the_list_by_keyset(client, alice, project) -> None:
    events = _bulk(project, 120, findings=1)
    client.login(username="alice", password=PASSWORD)
    first = client.get("/").content.decode()
    assert _ids(first) == [e.pk for e in events[:50]]
    assert "page 1 of 3" in first and "120 events" in first
    older = _link(first, "older ›")
    assert "after=" in older and "page=" not in older
    second = client.get(older).content.decode()
    assert _ids(second) == [e.pk for e in events[50:100]]
    assert "page 2 of 3" in second
    third = client.get(_link(second, "older ›")).content.decode()
    assert _ids(third) == [e.pk for e in events[100:]]
    assert "page 3 of 3" in third and "older ›</a>" not in third
    back = client.get(_link(third, "‹ newer")).content.decode()
    assert _ids(back) == [e.pk for e in events[50:100]] and "page 2 of 3" in back
    oldest = client.get(_link(first, "oldest »")).content.decode()
    assert _ids(oldest) == [e.pk for e in events[100:]]
    # each row counts its own findings
    assert "1 finding" in first


def test_a_list_too_long_to_count_still_pages_to_its_oldest_event(client, alice, project) -> None:
    events = _bulk(project, COUNT_CAP + 30)
    client.login(username="alice", password=PASSWORD)
    first = client.get("/").content.decode()
    assert (
        f"More than {COUNT_CAP} events" in first
        and "page 1" in first
        and " of " not in first.split("page 1")[1][:5]
    )
    oldest = client.get(_link(first, "oldest »")).content.decode()
    assert _ids(oldest)[-1] == events[-1].pk and len(_ids(oldest)) == 50
    assert "oldest page" in oldest


def test_a_bad_cursor_is_the_first_page(client, alice, project) -> None:
    events = _bulk(project, 60)
    client.login(username="alice", password=PASSWORD)
    for bad in ("x", "2026-01-01_", "nope_12", "2026-13-01T00:00:00+00:00_5", "2026-01-01T00:00:00_5"):
        r = client.get("/", {"after": bad})
        assert r.status_code == 200 and _ids(r.content.decode()) == [e.pk for e in events[:50]]
