"""Layout at a 1,400 px desktop viewport: long foreign text wraps, tables and charts fit the page."""

from __future__ import annotations

import pytest

from ctxaudit.alerts.services import alerts_for_event
from ctxaudit.audits.models import RuleOutcome
from ctxaudit.projects.models import Project
from ctxaudit.timelines.services import session_decay_sync
from tests.alerts.conftest import checked_event
from tests.browser.conftest import login
from tests.factories import PASSWORD, member
from tests.timelines.build import build_session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_RULE = "禁止" + "删除订单并且不通知客户" * 40 + " " + "x" * 300  # long, with a 300-character "word"
LONG_FINDING = (
    "Rule X-1134543f weakened: " + "/srv/data/" + "a" * 400 + " " + "被压缩为：删除订单需谨慎。" * 20
)


def _width(page) -> int:  # type: ignore[no-untyped-def]
    return page.evaluate("document.documentElement.scrollWidth")


def test_it_wraps_long_rule_text_and_findings_on_alert_pages(page) -> None:
    member("alice", "acme", "admin")
    ev = checked_event(findings=[("rule_missing", "high", "X-1134543f", LONG_FINDING)])
    RuleOutcome.objects.create(event=ev, rule_id="X-1134543f", text=LONG_RULE, state="missing", strength=0.0)
    (alert,) = alerts_for_event(ev.pk)
    login(page, "alice", PASSWORD)
    page.goto(f"/alerts/{alert.pk}/")
    assert _width(page) <= 1400
    assert page.locator(".alert-facts pre.ctx").first.bounding_box()["width"] < 1400
    page.goto("/alerts/")
    assert _width(page) <= 1400
    assert "删除订单并且不通知客户" in page.locator("td.alert-rule").first.inner_text()


def test_it_keeps_every_decay_column_on_the_page(page) -> None:
    member("alice", "acme", "admin")
    project = Project.objects.get(name="acme")
    session, events = build_session(project, {"R1": [1.0, 0.6, 0.0]}, external_id="run-1")
    RuleOutcome.objects.filter(event__session=session).update(text="见 https://wiki.example.com/" + "a" * 150)
    session_decay_sync(event_id=events[0].id)
    page.set_viewport_size({"width": 1024, "height": 900})  # a laptop window
    login(page, "alice", PASSWORD)
    page.goto("/decay/")
    table = page.locator("table.decay-by-rule")
    last = table.locator("thead th").last
    assert last.inner_text().strip().lower() == "decay findings"
    box, container = last.bounding_box(), page.locator("main").bounding_box()
    assert box["x"] + box["width"] <= container["x"] + container["width"] + 1
    assert _width(page) <= 1024


def test_it_draws_timelines_across_the_page_with_labels_inside(page) -> None:
    member("alice", "acme", "admin")
    project = Project.objects.get(name="acme")
    # First weakened and first missing on the last two of three compressions: labels near the right edge.
    session, events = build_session(project, {"R1": [1.0, 0.6, 0.0]}, external_id="run-2")
    session_decay_sync(event_id=events[0].id)
    login(page, "alice", PASSWORD)
    page.goto(f"/sessions/{session.pk}/")
    svg = page.locator("svg.timeline-chart").first
    chart = svg.bounding_box()
    assert chart["width"] >= 1000  # the available width, not ~180 px
    labels = svg.locator("text.mark-label")
    assert labels.all_text_contents() == ["first weakened", "first missing"]
    boxes = [labels.nth(i).bounding_box() for i in range(2)]
    for b in boxes:
        assert chart["x"] <= b["x"] and b["x"] + b["width"] <= chart["x"] + chart["width"]
    # The two labels do not overlap.
    a, b = boxes
    assert (
        a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
        or a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
    )
    assert _width(page) <= 1400
