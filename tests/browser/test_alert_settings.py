"""Alert settings in a real browser: an ops member adds a windowed policy and a PagerDuty channel
(screenshot in artifacts/screenshots/alert-settings.png)."""

from __future__ import annotations

import pytest

from ctxaudit.alerts.models import Channel, WindowMonitor
from tests.browser.conftest import ARTIFACTS, login
from tests.factories import PASSWORD, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF"


def test_an_ops_member_adds_a_windowed_policy_and_a_pagerduty_channel(page) -> None:
    olga = member("olga", "acme", "ops")
    project = olga.memberships.get().project
    login(page, "olga", PASSWORD)
    page.goto(f"/alerts/projects/{project.pk}/")
    add = page.locator("form", has=page.get_by_role("button", name="Add windowed policy"))
    add.locator("input[name=warning_percent]").fill("15")
    add.locator("input[name=alert_percent]").fill("30")
    with page.expect_navigation():
        add.get_by_role("button", name="Add windowed policy").click()
    monitor = WindowMonitor.objects.get(project=project)
    assert (round(monitor.warning_threshold, 2), round(monitor.alert_threshold, 2)) == (0.15, 0.30)
    channel_form = page.locator("form", has=page.get_by_role("button", name="Add channel"))
    channel_form.locator("select[name=kind]").select_option("pagerduty")
    channel_form.locator("input[name=name]").fill("on-call")
    channel_form.locator("input[name=target]").fill(ROUTING_KEY)
    with page.expect_navigation():
        channel_form.get_by_role("button", name="Add channel").click()
    assert "PagerDuty" in page.locator("section.channels").inner_text()
    assert Channel.objects.get(project=project).kind == "pagerduty"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "alert-settings.png"), full_page=True)
