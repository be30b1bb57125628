"""Playwright driving Debian's Chromium (/usr/bin/chromium) against pytest-django's live server.

Playwright's own browser download does not work on these machines, so we launch the system
Chromium. Tests skip when Chromium or playwright is missing, except with CTXAUDIT_REQUIRE_FULL_STACK=1
(.ci/run installs both and sets it). Failure screenshots go to artifacts/screenshots/ (CTXAUDIT_ARTIFACTS_DIR overrides).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.prereqs import require

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("CTXAUDIT_ARTIFACTS_DIR", REPO / "artifacts")) / "screenshots"
CHROMIUM = os.environ.get("CTXAUDIT_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def chromium_browser(monkeypatch) -> Iterator[object]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright is not installed (pip install -e '.[test]')")
    require(Path(CHROMIUM).exists(), f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test
    # body are still synchronous and safe here. Scoped to the test (monkeypatch) so it never
    # leaks into other tests or their subprocesses.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


@pytest.fixture
def page(request, chromium_browser, live_server) -> Iterator[object]:
    context = chromium_browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


def login(page, username: str, password: str) -> None:  # type: ignore[no-untyped-def]
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
