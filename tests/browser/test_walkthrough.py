"""A reviewer's walk through the dashboard in a real browser (Chromium via Playwright):
post an event through the API, open it, see the diff and the lost rule highlighted, acknowledge
the alert it raised, walk a checklist step, and prove hostile context text fires nothing."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from ctxaudit.alerts.models import Alert
from tests.browser.conftest import login
from tests.factories import PASSWORD, api_key_for, event_payload, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RULE = {"id": "R1", "text": "禁止新增、修改、删除订单。", "severity": "critical"}
HOSTILE = '<script>alert(1)</script><div hx-get="/hostile-probe" hx-trigger="load">x</div><img src=x onerror="alert(2)">'


def _post_event(base_url: str, key: str, body: dict) -> dict:
    req = urllib.request.Request(
        f"{base_url}/api/v1/events",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - our own live server
        assert resp.status == 202
        return json.loads(resp.read())


def test_it_walks_an_incident_from_api_to_checklist(page, live_server) -> None:
    member("alice", "acme", "admin")
    accepted = _post_event(live_server.url, api_key_for("acme"), event_payload(rules=[RULE]))
    event_path = accepted["ui_url"].replace(live_server.url, "")

    login(page, "alice", PASSWORD)
    page.goto(event_path)
    # Side by side: both columns, the system message on each side.
    assert page.get_by_text("Before compression").first.is_visible()
    assert page.get_by_text("After compression").first.is_visible()
    # The rule is missing, and its text is highlighted where it was, in the before column.
    assert page.locator(".badge-missing").first.is_visible()
    lost = page.locator(".l .hl-was-missing").first
    assert "删除订单" in lost.inner_text()
    # Clicking the rule's "before" link scrolls to its highlight.
    page.locator("a[href^='#']", has_text="before").first.click()
    assert re.search(r"#.+", page.url)

    # The missing critical rule raised an alert: acknowledge it.
    alert = Alert.objects.get(project__name="acme", rule_id="R1")
    page.goto(f"/alerts/{alert.pk}/")
    page.get_by_role("button", name="Acknowledge").click()
    page.wait_for_load_state()
    alert.refresh_from_db()
    assert alert.status == "acknowledged"
    assert page.get_by_text("acknowledged").first.is_visible()

    # Walk checklist step 1: mark it done with a note; htmx swaps the step and the progress.
    page.goto(f"/events/{accepted['id']}/checklist/")
    step = page.locator("#step-status-1")
    step.locator("input[name=status][value=done]").check()
    step.locator("input[name=note]").fill("session record read")
    step.get_by_role("button", name="Save").click()
    page.locator("#step-status-1 .note", has_text="session record read").wait_for()
    assert page.locator("#checklist-progress").inner_text().startswith("1/")


def test_it_renders_hostile_context_inert(page, live_server) -> None:
    member("alice", "acme", "admin")
    body = event_payload(
        session_id=HOSTILE,
        rules=[{"id": "R1", "text": HOSTILE}],
        after=[{"role": "system", "content": HOSTILE}, {"role": "user", "content": HOSTILE}],
    )
    accepted = _post_event(live_server.url, api_key_for("acme"), body)
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    login(page, "alice", PASSWORD)
    for path in (
        "/",
        accepted["ui_url"].replace(live_server.url, ""),
        f"/events/{accepted['id']}/checklist/",
        "/alerts/",
    ):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        # The hostile markup shows as text.
        assert page.get_by_text("<script>alert(1)</script>", exact=False).count() >= 1 or path == "/alerts/"
    assert dialogs == []
    assert not [u for u in requests if "hostile-probe" in u or u.endswith("/x")]
