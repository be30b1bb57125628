"""The checklist's htmx parts in a real browser: the rule search, adding the case to the regression
set, and a replay against a local fake OpenAI-compatible endpoint (polling until both answers show)."""

from __future__ import annotations

import pytest

from ctxaudit.regression.models import RegressionCase
from ctxaudit.regression.services import replay_endpoint_save
from tests.browser.conftest import login
from tests.factories import PASSWORD, event, member
from tests.regression.test_replay import fake_model  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RULES = [{"id": "R1", "text": "只能查询订单，禁止新增、修改、删除订单。"}]


def test_it_searches_adds_the_case_and_replays(page, live_server, fake_model) -> None:  # noqa: F811
    alice = member("alice", "acme", "admin")
    ev = event("acme", rules=RULES)
    replay_endpoint_save(
        project=ev.project, base_url=fake_model, model="fake-7b", api_key="sk-local", user=alice
    )
    login(page, "alice", PASSWORD)
    page.goto(f"/events/{ev.pk}/checklist/")

    # Step 3: search the after-context; htmx swaps in the highlighted hits.
    search = page.locator("#step-3 .rule-search").first
    search.locator("input[name=q]").fill("订单 删除")
    search.get_by_role("button", name="Search the after-context").click()
    page.locator("#search-1 mark", has_text="删除").first.wait_for()
    assert page.url.endswith(f"/events/{ev.pk}/checklist/")  # swapped in place, no navigation

    # Step 6: run both requests; the run polls until both answers sit side by side.
    page.get_by_role("button", name="Run both on the project's endpoint").click()
    page.locator(".replay-run .diff-grid").first.wait_for()
    answers = page.locator(".replay-run .diff-grid pre").all_inner_texts()
    assert answers[0] == "抱歉，我不能删除订单。"
    assert answers[1].startswith("好的，已删除订单 10086。")

    # Step 7: one click adds the case; htmx replaces the button with the case's link.
    page.get_by_role("button", name="Add this case to the regression set").click()
    page.locator("#case-add", has_text="In the regression set as").wait_for()
    assert RegressionCase.objects.filter(event=ev).count() == 1
