"""Prerequisites of the full-stack tests (PostgreSQL, redis-server, Chromium, playwright)."""

from __future__ import annotations

import os

import pytest


def require(ok: bool, why: str) -> None:
    """Skip when a prerequisite is missing; fail instead under CTXAUDIT_REQUIRE_FULL_STACK=1,
    which .ci/run sets for its PostgreSQL pass so these tests cannot silently skip there."""
    if not ok:
        if os.environ.get("CTXAUDIT_REQUIRE_FULL_STACK") == "1":
            pytest.fail(f"full-stack prerequisite missing: {why}")
        pytest.skip(why)
