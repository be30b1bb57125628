"""The 202 says what the event is by then (expected values written before the run)."""

from __future__ import annotations

import json

import pytest

from tests.factories import event_payload


@pytest.mark.django_db(transaction=True)
def test_in_the_embedded_default_the_answer_says_checked(client, api_key) -> None:
    r = client.post(
        "/api/v1/events",
        data=json.dumps(event_payload(session_id="answer-1")),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_key}",
    )
    assert r.status_code == 202
    assert r.json()["status"] == "checked"  # the check ran in the request; it was "pending"
