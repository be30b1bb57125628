from __future__ import annotations

import pytest

from ctxaudit.alerts.models import Alert
from ctxaudit.alerts.services import alert_acknowledge, alerts_for_event
from tests.alerts.conftest import checked_event
from tests.factories import api_key_for

pytestmark = pytest.mark.django_db


def get(client, key: str, query: str = ""):
    return client.get(f"/api/v1/alerts{query}", HTTP_AUTHORIZATION=f"Bearer {key}")


@pytest.fixture
def alerts(alice, charlie) -> dict[str, Alert]:
    e1 = checked_event(findings=[("rule_missing", "high", "R1", "R1 gone")], session_id="a", sequence=1)
    e2 = checked_event(findings=[("rule_missing", "high", "R1", "R1 gone")], session_id="b", sequence=1)
    e3 = checked_event(
        findings=[("claim_promoted", "medium", None, "claim as fact")], session_id="a", sequence=2
    )
    e4 = checked_event("other", findings=[("rule_missing", "high", "R1", "R1 gone")])
    for e in (e1, e2, e3, e4):
        alerts_for_event(e.pk)
    alert_acknowledge(alert=Alert.objects.get(project__name="acme", kind="claim_promoted"), user=alice)
    return {
        "missing": Alert.objects.get(project__name="acme", kind="rule_missing"),
        "other": Alert.objects.get(project__name="other"),
    }


def test_it_lists_open_alerts_of_the_keys_project(client, alerts) -> None:
    key = api_key_for("acme", scopes=("read",))
    r = get(client, key, "?status=open")
    assert r.status_code == 200
    (a,) = r.json()
    assert set(a) == {
        "id",
        "status",
        "severity",
        "kind",
        "rule_id",
        "count",
        "first_seen",
        "last_seen",
        "events",
    }
    missing = alerts["missing"]
    assert (a["id"], a["status"], a["severity"], a["kind"], a["rule_id"], a["count"]) == (
        missing.pk,
        "open",
        "high",
        "rule_missing",
        "R1",
        2,
    )
    assert sorted(a["events"]) == sorted(missing.events.values_list("pk", flat=True))
    assert a["first_seen"].startswith(str(missing.first_seen.year))


def test_it_lists_every_status_without_a_filter(client, alerts) -> None:
    rows = get(client, api_key_for("acme", scopes=("read",))).json()
    assert sorted((x["kind"], x["status"], x["rule_id"]) for x in rows) == [
        ("claim_promoted", "acknowledged", None),
        ("rule_missing", "open", "R1"),
    ]


def test_it_scopes_alerts_to_the_keys_project(client, alerts) -> None:
    rows = get(client, api_key_for("other", scopes=("read",)), "?status=open").json()
    assert [x["id"] for x in rows] == [alerts["other"].pk]


def test_it_needs_a_read_key(client, alerts) -> None:
    assert get(client, "cta_nope_nope").status_code == 401
    assert client.get("/api/v1/alerts").status_code == 401
    assert get(client, api_key_for("acme", scopes=("ingest",))).status_code == 403


def test_it_rejects_an_unknown_status(client, alerts) -> None:
    r = get(client, api_key_for("acme", scopes=("read",)), "?status=snoozed")
    assert r.status_code == 400
    assert "status" in r.json()["error"]


def test_it_is_in_the_openapi_schema(client) -> None:
    assert "/api/v1/alerts" in client.get("/api/v1/openapi.json").json()["paths"]
