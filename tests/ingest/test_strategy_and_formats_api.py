"""`strategy` is kept as the agent names it and grouped by family; `format` takes the Responses API."""

from __future__ import annotations

import json

import pytest

from tests.factories import event_payload

pytestmark = pytest.mark.django_db


def _post(client, key, body, capture):
    with capture(execute=True):
        return client.post(
            "/api/v1/events",
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )


def _get(client, key, path):
    return client.get(path, HTTP_AUTHORIZATION=f"Bearer {key}").json()


@pytest.mark.parametrize(
    ("strategy", "family"),
    [
        ("auto-compact", "summary"),
        ("condensation", "summary"),
        ("role-separated", "role_separated"),
        ("sliding_window", "truncation"),
        ("my-own-thing", "other"),
    ],
)
def test_any_strategy_name_is_accepted_kept_and_mapped_to_a_family(
    client, api_key, django_capture_on_commit_callbacks, strategy, family
) -> None:
    r = _post(client, api_key, event_payload(strategy=strategy), django_capture_on_commit_callbacks)
    assert r.status_code == 202
    got = _get(client, api_key, f"/api/v1/events/{r.json()['id']}")
    assert (got["strategy"], got["strategy_family"]) == (strategy, family)
    listed = _get(client, api_key, "/api/v1/events")["events"][0]
    assert (listed["strategy"], listed["strategy_family"]) == (strategy, family)


def test_a_strategy_name_shows_its_bidi_controls_and_is_escaped_on_the_page(
    client, api_key, django_capture_on_commit_callbacks, admin_client
) -> None:
    name = "<b>auto</b>-compact\u202etxt"
    r = _post(client, api_key, event_payload(strategy=name), django_capture_on_commit_callbacks)
    got = _get(client, api_key, f"/api/v1/events/{r.json()['id']}")
    assert got["strategy"] == "<b>auto</b>-compact⟦U+202E⟧txt"
    assert got["strategy_family"] == "summary"
    page = admin_client.get(f"/events/{r.json()['id']}/").content.decode()
    assert "&lt;b&gt;auto&lt;/b&gt;-compact⟦U+202E⟧txt" in page
    assert "<b>auto</b>" not in page


def test_the_event_list_filters_by_strategy_family(
    client, api_key, django_capture_on_commit_callbacks, admin_client
) -> None:
    a = _post(
        client,
        api_key,
        event_payload(session_id="a", strategy="auto-compact"),
        django_capture_on_commit_callbacks,
    )
    b = _post(
        client,
        api_key,
        event_payload(session_id="b", strategy="sliding_window"),
        django_capture_on_commit_callbacks,
    )
    page = admin_client.get("/?strategy=summary").content.decode()
    assert f"/events/{a.json()['id']}/" in page
    assert f"/events/{b.json()['id']}/" not in page


def test_a_responses_api_history_is_checked_and_its_encrypted_compaction_counted(
    client, api_key, django_capture_on_commit_callbacks
) -> None:
    rule = "Never refund more than $100 without a manager's approval."
    body = event_payload(
        format="openai-responses",
        strategy="responses-compact",
        rules=[{"id": "R1", "text": rule}],
        before={
            "instructions": rule,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "Refund 250."}]}],
        },
        after={"instructions": rule, "input": [{"type": "compaction", "encrypted_content": "gAAAA-opaque"}]},
    )
    r = _post(client, api_key, body, django_capture_on_commit_callbacks)
    assert r.status_code == 202
    got = _get(client, api_key, f"/api/v1/events/{r.json()['id']}")
    assert [x["state"] for x in got["rules"]] == ["retained"]
    assert "unauditable_compaction" in {f["kind"] for f in got["findings"]}


def test_the_seed_case_with_strategy_role_separated_is_accepted(
    client, api_key, django_capture_on_commit_callbacks, shared_dir
) -> None:
    cases = [
        json.loads(line)
        for line in (shared_dir / "samples" / "seed_cases.jsonl").read_text().splitlines()
        if line.strip()
    ]
    case = next(c for c in cases if c.get("strategy") == "role-separated")
    body = {
        "session_id": case["id"],
        "strategy": case["strategy"],
        "before": case["before"],
        "after": case["after"],
        "rules": case["rules"],
    }
    r = _post(client, api_key, body, django_capture_on_commit_callbacks)
    assert r.status_code == 202, r.content
    assert _get(client, api_key, f"/api/v1/events/{r.json()['id']}")["strategy_family"] == "role_separated"
