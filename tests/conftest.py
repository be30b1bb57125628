"""Shared fixtures: alice (admin of project "acme"), bob (reviewer of "acme"), charlie (outsider,
admin of "other"); API keys for both projects."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.factories import api_key_for, member

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CTXAUDIT_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture
def shared_dir() -> Path:
    """../shared; skips with a message when absent, but fails under CI=true (CI always has it)."""
    if not SHARED.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHARED} is missing, and CI always has it")
        pytest.skip(f"{SHARED} is not present (it sits beside the repo in the team's workspace)")
    return SHARED


@pytest.fixture
def alice(db):
    return member("alice", "acme", "admin")


@pytest.fixture
def bob(db, alice):
    return member("bob", "acme", "reviewer")


@pytest.fixture
def charlie(db):
    return member("charlie", "other", "admin")


@pytest.fixture
def project(alice):
    return alice.memberships.get().project


@pytest.fixture
def api_key(project) -> str:
    return api_key_for(project.name)


@pytest.fixture
def other_api_key(charlie) -> str:
    return api_key_for("other")


@pytest.fixture(autouse=True)
def _work_before_the_answer_with_live_server(request):
    """live_server shares the test's SQLite connection with its server thread: work after the
    answer (core/after_response.py) would run on it beside the test's next query."""
    if "live_server" not in request.fixturenames:
        yield
        return
    settings = request.getfixturevalue("settings")
    settings.CTXAUDIT_WORK_AFTER_RESPONSE = False
    yield
