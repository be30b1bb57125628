"""The event diff and list in a real browser: collapsed runs expand through htmx (also when they
hold hostile text, which stays inert), and the list filters in place with the state in the URL."""

from __future__ import annotations

import pytest

from tests.browser.conftest import login
from tests.factories import PASSWORD, event, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE = '<script>alert(1)</script><div hx-get="/hostile-probe" hx-trigger="load">x</div><img src=x onerror="alert(2)">'


def test_it_expands_collapsed_runs_and_keeps_hostile_text_inert(page, live_server) -> None:
    member("alice", "acme", "admin")
    turns = [
        {"role": "user", "content": f"turn {i}\n" + "\n".join(f"line {k}" for k in range(30))}
        for i in range(10)
    ]
    turns[5] = {"role": "tool", "content": HOSTILE + "\n" + "\n".join(f"row {k}" for k in range(30))}
    ev = event(
        "acme",
        before=[
            {"role": "system", "content": "Never delete orders."},
            *turns,
            {"role": "user", "content": "old tail"},
        ],
        after=[
            {"role": "system", "content": "Be careful deleting orders."},
            *turns,
            {"role": "user", "content": "new tail"},
        ],
    )
    probes: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda r: probes.append(r.url) if "hostile-probe" in r.url else None)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, "alice", PASSWORD)
    page.goto(f"/events/{ev.pk}/")

    more = page.locator(".collapsed-messages a", has_text="unchanged messages").first
    more.click()
    page.locator(".cell", has_text="<script>alert(1)</script>").first.wait_for()
    assert page.url.endswith(f"/events/{ev.pk}/")  # swapped in place
    assert page.locator(".collapsed-messages a", has_text="unchanged messages").count() == 0

    assert page.locator(".l", has_text="line 15").count() == 0  # the middle of every message is collapsed
    page.locator(".collapsed-lines a", has_text="unchanged lines").first.click()
    page.locator(".l", has_text="line 15").first.wait_for()
    page.wait_for_timeout(300)
    assert probes == []
    assert dialogs == []


def test_it_filters_the_list_in_place(page, live_server) -> None:
    member("alice", "acme", "admin")
    event("acme", session_id="alpha-session", strategy="truncation")
    event("acme", session_id="beta-session", strategy="summary")
    login(page, "alice", PASSWORD)
    page.goto("/")
    page.evaluate("window.__stayed = true")
    page.select_option("select[name=strategy]", "truncation")
    page.locator("table.events tbody tr").filter(has_text="beta-session").wait_for(state="detached")
    assert page.locator("table.events tbody tr", has_text="alpha-session").count() == 1
    assert page.evaluate("window.__stayed") is True  # no full page load
    assert page.evaluate("location.search") == "?strategy=truncation"  # empty filters left out
