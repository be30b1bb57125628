from __future__ import annotations

import pytest

from tests.factories import event, member


@pytest.fixture
def checked(django_capture_on_commit_callbacks):
    """Ingest an event and run its check (what the eager embedded default does on commit)."""

    def _make(project_name: str = "acme", **overrides):
        with django_capture_on_commit_callbacks(execute=True):
            ev = event(project_name, **overrides)
        ev.refresh_from_db()
        return ev

    return _make


@pytest.fixture
def dave(db, alice):
    """An ops member of "acme": reads incidents, does not review them."""
    return member("dave", "acme", "ops")
