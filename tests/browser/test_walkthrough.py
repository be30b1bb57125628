"""A reviewer's walk through the dashboard in a real browser (Chromium via Playwright)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.browser.conftest import login
from tests.factories import PASSWORD, api_key_for, event_payload, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


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


def test_it_shows_a_posted_event_with_its_missing_rule(page, live_server) -> None:
    member("alice", "acme", "admin")
    key = api_key_for("acme")
    accepted = _post_event(live_server.url, key, event_payload(rules=[{"id": "R1", "text": "禁止新增、修改、删除订单。"}]))

    login(page, "alice", PASSWORD)
    page.goto(accepted["ui_url"].replace(live_server.url, ""))
    assert page.get_by_text("Before", exact=True).first.is_visible()
    assert page.get_by_text("After", exact=True).first.is_visible()
    assert page.locator(".badge-missing").first.is_visible()
