"""The compare page in a real browser: a member uploads a baseline and a candidate run and sees the
regression first (screenshot in artifacts/screenshots/compare.png)."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import ARTIFACTS, login
from tests.engine.test_compare import line
from tests.factories import PASSWORD, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_member_uploads_two_runs_and_sees_the_regression_first(page, tmp_path) -> None:
    alice = member("alice", "acme", "reviewer")
    project = alice.memberships.get().project
    base = tmp_path / "baseline.json"
    cand = tmp_path / "candidate.json"
    base.write_text(
        "\n".join(
            json.dumps(x)
            for x in [line("steady", "pass", {"R1": "retained"}), line("lost", "pass", {"R1": "retained"})]
        )
    )
    cand.write_text(
        "\n".join(
            json.dumps(x)
            for x in [line("steady", "pass", {"R1": "retained"}), line("lost", "fail", {"R1": "missing"})]
        )
    )
    login(page, "alice", PASSWORD)
    page.goto(f"/projects/{project.pk}/regression/")
    page.get_by_role("link", name="Compare two runs").click()
    page.set_input_files("input[name=baseline]", str(base))
    page.set_input_files("input[name=candidate]", str(cand))
    page.get_by_role("button", name="Compare").click()
    page.get_by_role("heading", name="Regressions found").wait_for()
    rows = page.locator("table.compare-cases tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).get_attribute("class") == "compare-regressed"
    assert "lost" in rows.nth(0).inner_text() and "retained → missing" in rows.nth(0).inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "compare.png"), full_page=True)
