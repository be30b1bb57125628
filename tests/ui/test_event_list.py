from __future__ import annotations

import datetime as dt
import re

import pytest

from ctxaudit.ingest.models import Event
from tests.factories import PASSWORD, event

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x" hx-trigger="load">'


def _checked(django_capture_on_commit_callbacks, project_name="acme", **overrides):
    with django_capture_on_commit_callbacks(execute=True):
        return event(project_name, **overrides)


def test_it_works(client, alice, django_capture_on_commit_callbacks) -> None:
    old = _checked(django_capture_on_commit_callbacks, session_id="s-old", occurred_at="2026-01-01T00:00:00Z")
    new = _checked(django_capture_on_commit_callbacks, session_id="s-new", occurred_at="2026-02-01T00:00:00Z")
    client.login(username="alice", password=PASSWORD)
    r = client.get("/")
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" in body
    assert body.index(f"/events/{new.pk}/") < body.index(f"/events/{old.pk}/")  # newest first
    # findings counted per event (the default payload loses a rule: at least one finding)
    assert new.findings.count() > 0
    assert f">{new.findings.count()} findings</span>" in body


def test_it_checks_ownership(client, alice, charlie, django_capture_on_commit_callbacks) -> None:
    theirs = _checked(django_capture_on_commit_callbacks, "other", session_id="charlies-session")
    client.login(username="alice", password=PASSWORD)
    body = client.get("/").content.decode()
    assert "charlies-session" not in body
    assert f"/events/{theirs.pk}/" not in body
    assert client.get("/?project=other").content.decode().count("/events/") == 0
    assert client.get(f"/?project={theirs.project_id}").content.decode().count("/events/") == 0


def test_it_filters(client, alice, django_capture_on_commit_callbacks) -> None:
    a = _checked(django_capture_on_commit_callbacks, session_id="alpha-1", strategy="truncation")
    b = _checked(django_capture_on_commit_callbacks, session_id="beta-2", strategy="summary")
    Event.objects.filter(pk=b.pk).update(verdict="pass")
    client.login(username="alice", password=PASSWORD)
    body = client.get("/?session=alpha").content.decode()
    assert f"/events/{a.pk}/" in body and f"/events/{b.pk}/" not in body
    body = client.get("/?strategy=summary").content.decode()
    assert f"/events/{b.pk}/" in body and f"/events/{a.pk}/" not in body
    body = client.get("/?verdict=pass").content.decode()
    assert f"/events/{b.pk}/" in body and f"/events/{a.pk}/" not in body
    body = client.get("/?project=acme&verdict=fail").content.decode()
    assert f"/events/{a.pk}/" in body and f"/events/{b.pk}/" not in body
    # QA: "?project=<id>" silently showed nothing; ids work as well as names, and stay scoped.
    body = client.get(f"/?project={a.project_id}").content.decode()
    assert f"/events/{a.pk}/" in body and f"/events/{b.pk}/" in body


def test_it_paginates(client, alice, django_capture_on_commit_callbacks) -> None:
    first = _checked(django_capture_on_commit_callbacks, session_id="s", sequence=0)
    ids = list(Event.objects.values_list("pk", flat=True))
    base = Event.objects.get(pk=first.pk)
    for _ in range(55):  # cheap copies: the list only needs rows
        base.pk = None
        base.occurred_at = base.occurred_at + dt.timedelta(seconds=1)
        base.save()
    client.login(username="alice", password=PASSWORD)
    body = client.get("/?session=s").content.decode()
    assert "page 1 of 2" in body
    # "older ›" carries the filter and the last row's position (keyset), not a page number
    assert re.search(r'href="\?session=s&amp;after=[^"]+&amp;n=2"', body)
    body2 = client.get("/?session=s&page=2").content.decode()
    assert f"/events/{ids[0]}/" in body2  # the oldest is on the last page


def test_it_renders_partial_for_htmx(client, alice, django_capture_on_commit_callbacks) -> None:
    ev = _checked(django_capture_on_commit_callbacks)
    client.login(username="alice", password=PASSWORD)
    r = client.get("/?verdict=fail", HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" not in body
    assert body.lstrip().startswith("{#") is False and 'id="event-rows"' in body
    assert f"/events/{ev.pk}/" in body
    assert "HX-Request" in r["Vary"]
    # the back button (htmx history restore) gets the whole page
    r = client.get("/?verdict=fail", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert "<html" in r.content.decode()


def test_it_pushes_filter_state_to_the_url(client, alice) -> None:
    client.login(username="alice", password=PASSWORD)
    body = client.get("/").content.decode()
    assert 'hx-push-url="true"' in body
    assert 'hx-target="#event-rows"' in body


def test_it_escapes_context_text(client, alice, django_capture_on_commit_callbacks) -> None:
    _checked(django_capture_on_commit_callbacks, session_id=HOSTILE, rules=[{"id": "R1", "text": HOSTILE}])
    client.login(username="alice", password=PASSWORD)
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        body = client.get("/", **headers).content.decode()
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
        assert "<script>alert" not in body
        assert '<div hx-get="/x"' not in body
        assert "<tbody hx-disable>" in body
