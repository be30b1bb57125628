"""GET /api/v1/sessions/<session_id>/timeline."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from ctxaudit.projects.models import Project
from ctxaudit.timelines.api import TimelineOut
from tests.factories import api_key_for
from tests.timelines.build import build_session

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><div hx-get="/x">'


def _get(client, key, session_id):
    return client.get(
        f"/api/v1/sessions/{quote(session_id, safe='')}/timeline", HTTP_AUTHORIZATION=f"Bearer {key}"
    )


def test_it_works(client, project, api_key) -> None:
    session, events = build_session(
        project, {"R1": [1.0, 0.6, 0.0], "R2": [1.0, 1.0, 1.0]}, external_id="run-42"
    )
    r = _get(client, api_key, "run-42")
    assert r.status_code == 200
    body = r.json()
    assert body["session_id"] == "run-42"
    assert body["events"] == [{"id": e.id, "sequence": i + 1} for i, e in enumerate(events)]
    r1 = body["rules"][0]
    assert r1["id"] == "R1"
    assert r1["text"] == "Rule R1: never delete data."
    assert r1["points"] == [
        {"sequence": 1, "event_id": events[0].id, "state": "retained", "strength": 1.0, "demoted": False},
        {"sequence": 2, "event_id": events[1].id, "state": "weakened", "strength": 0.6, "demoted": False},
        {"sequence": 3, "event_id": events[2].id, "state": "missing", "strength": 0.0, "demoted": False},
    ]
    assert r1["first_weakened"] == {"sequence": 2, "event_id": events[1].id}
    assert r1["first_missing"] == {"sequence": 3, "event_id": events[2].id}
    assert r1["decays"] == [{"sequence": 3, "event_id": events[2].id, "strengths": [1.0, 0.6, 0.0]}]
    assert body["rules"][1]["first_missing"] is None
    assert TimelineOut.model_validate(body).model_dump() == body  # the documented schema is the body


def test_it_takes_hostile_session_ids_and_slashes(client, project, api_key) -> None:
    build_session(project, {"R1": [1.0]}, external_id=HOSTILE)
    build_session(project, {"R1": [1.0]}, external_id="team/a/run 7")
    assert _get(client, api_key, HOSTILE).json()["session_id"] == HOSTILE
    assert _get(client, api_key, "team/a/run 7").json()["session_id"] == "team/a/run 7"
    assert r_ct(_get(client, api_key, HOSTILE)) == "application/json"


def r_ct(r) -> str:
    return r["Content-Type"].split(";")[0]


def test_it_is_scoped_to_the_keys_project(client, project, api_key, other_api_key) -> None:
    build_session(project, {"R1": [1.0]}, external_id="acme-run")
    build_session(Project.objects.get(name="other"), {"R9": [0.5]}, external_id="acme-run-other")
    assert _get(client, other_api_key, "acme-run").status_code == 404
    assert _get(client, api_key, "acme-run-other").status_code == 404
    assert _get(client, api_key, "nope").status_code == 404


def test_it_sees_its_own_same_named_session_only(client, project, api_key, other_api_key) -> None:
    build_session(project, {"R1": [1.0]}, external_id="shared-name")
    build_session(Project.objects.get(name="other"), {"R9": [0.5]}, external_id="shared-name")
    assert [r["id"] for r in _get(client, api_key, "shared-name").json()["rules"]] == ["R1"]
    assert [r["id"] for r in _get(client, other_api_key, "shared-name").json()["rules"]] == ["R9"]


def test_it_requires_a_read_key(client, project) -> None:
    build_session(project, {"R1": [1.0]}, external_id="s")
    ingest_only = api_key_for(project.name, scopes=("ingest",))
    assert _get(client, ingest_only, "s").status_code == 403
    assert _get(client, "cta_nope_nope", "s").status_code == 401
    assert client.get("/api/v1/sessions/s/timeline").status_code == 401


def test_it_is_in_the_openapi_schema(client) -> None:
    assert "/api/v1/sessions/{session_id}/timeline" in client.get("/api/v1/openapi.json").json()["paths"]
