"""In a real browser (Chromium via Playwright): the hostile corpus, ingested through the API, fires
no request and opens no dialog on any page that shows it (htmx is loaded and active)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.browser.conftest import login
from tests.factories import PASSWORD, api_key_for, member
from tests.security.hostile import HX_TARGET, hostile_event_payload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_fires_nothing_from_hostile_text(page, live_server) -> None:
    member("alice", "acme", "admin")
    req = urllib.request.Request(  # noqa: S310 - our own live server over http
        f"{live_server.url}/api/v1/events",
        data=json.dumps(hostile_event_payload()).encode(),
        headers={"Authorization": f"Bearer {api_key_for('acme')}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - our own live server
        accepted = json.loads(resp.read())
    from ctxaudit.alerts.models import Alert
    from ctxaudit.ingest.models import Event

    event = Event.objects.get(pk=accepted["id"])
    assert event.status == "checked"

    requests: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, "alice", PASSWORD)

    paths = [
        "/",
        f"/events/{event.pk}/",
        f"/events/{event.pk}/?full=1",
        f"/events/{event.pk}/checklist/",
        f"/sessions/{event.session_id}/",
        "/alerts/",
        f"/projects/{event.project_id}/audit-log/",
    ] + [f"/alerts/{a.pk}/" for a in Alert.objects.filter(project=event.project)]
    for path in paths:
        page.goto(path)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("typeof window.htmx") == "object", f"htmx is not active on {path}"
        page.wait_for_timeout(300)  # hx-trigger="load" would have fired by now

    fired = [u for u in requests if HX_TARGET in u or "javascript:" in u]
    assert not fired, fired
    assert not dialogs, dialogs
    # htmx ran on the pages (the event list filters), so silence is not a sign htmx was absent.
    assert any("/static/django_htmx/htmx" in u for u in requests)
