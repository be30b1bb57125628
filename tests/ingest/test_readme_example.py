"""The README's curl example of POST /api/v1/events is a body the API takes, and its event reads
as the example means: the approval rule lost, the manager's approval a claim."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"

pytestmark = pytest.mark.django_db


def _example_body() -> dict:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"curl -sS http://127\.0\.0\.1:8000/api/v1/events.*?-d '(\{.*?\})'\n```", text, re.S)
    assert block, "the README's POST /api/v1/events example is gone"
    return json.loads(block.group(1))


def test_the_readme_example_is_accepted_and_checked(
    client, api_key, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post(
            "/api/v1/events",
            data=json.dumps(_example_body()),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {api_key}",
            HTTP_IDEMPOTENCY_KEY="run-42-1",
        )
    assert r.status_code == 202, r.content
    got = client.get(f"/api/v1/events/{r.json()['id']}", HTTP_AUTHORIZATION=f"Bearer {api_key}").json()
    assert got["verdict"] == "fail"
    assert {x["id"]: x["state"] for x in got["rules"]} == {"R1": "missing"}
    assert any(f["kind"].startswith("claim_") for f in got["findings"])
