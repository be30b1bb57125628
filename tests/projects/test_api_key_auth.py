"""API keys on the machine API: revocation, last use, scopes, rate limit (429 + Retry-After), 413."""

from __future__ import annotations

import json

import pytest
import time_machine
from django.core.cache import cache
from django.utils import timezone

from ctxaudit.projects.models import ApiKey
from ctxaudit.projects.services import api_key_create
from tests.factories import event_payload

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def _get(client, key, path="/api/v1/events/999999"):
    return client.get(path, HTTP_AUTHORIZATION=f"Bearer {key}")


def test_it_stores_only_a_hash_and_a_visible_prefix(project) -> None:
    key, raw = api_key_create(project_name=project.name, scopes=("read",))
    assert raw.startswith(f"cta_{key.prefix}_")
    assert raw not in json.dumps(list(ApiKey.objects.values()), default=str)
    assert key.key_hash == ApiKey.hash_key(raw)


def test_it_rejects_a_revoked_key_with_401(client, project) -> None:
    key, raw = api_key_create(project_name=project.name)
    assert _get(client, raw).status_code == 404  # authenticated: the event just does not exist
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    r = _get(client, raw)
    assert r.status_code == 401
    assert r.json()["error"] == "missing or invalid API key"


def test_it_rejects_a_key_with_a_wrong_secret(client, project) -> None:
    key, raw = api_key_create(project_name=project.name)
    assert _get(client, raw[:-4] + "AAAA").status_code == 401


def test_it_records_the_last_use(client, project) -> None:
    key, raw = api_key_create(project_name=project.name)
    assert key.last_used_at is None
    _get(client, raw)
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_it_answers_429_with_retry_after_over_the_rate_limit(client, project, settings) -> None:
    settings.CTXAUDIT_RATE_LIMIT_PER_MINUTE = 3
    _, raw = api_key_create(project_name=project.name)
    _, other = api_key_create(project_name=project.name)
    with time_machine.travel("2026-03-01 10:00:15Z", tick=False):
        assert [_get(client, raw).status_code for _ in range(3)] == [404, 404, 404]
        r = _get(client, raw)
        assert r.status_code == 429
        assert r["Retry-After"] == "45"
        assert "rate limit" in r.json()["error"]
        # the limit is per key
        assert _get(client, other).status_code == 404
    with time_machine.travel("2026-03-01 10:01:00Z", tick=False):
        assert _get(client, raw).status_code == 404


def test_it_rate_limits_ingestion_too(client, project, settings) -> None:
    settings.CTXAUDIT_RATE_LIMIT_PER_MINUTE = 1
    _, raw = api_key_create(project_name=project.name)
    with time_machine.travel("2026-03-01 10:00:59Z", tick=False):
        codes = [
            client.post(
                "/api/v1/events",
                data=json.dumps(event_payload()),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {raw}",
            ).status_code
            for _ in range(2)
        ]
    assert codes == [202, 429]


def test_it_can_turn_the_rate_limit_off(client, project, settings) -> None:
    settings.CTXAUDIT_RATE_LIMIT_PER_MINUTE = 0
    _, raw = api_key_create(project_name=project.name)
    assert {_get(client, raw).status_code for _ in range(5)} == {404}


def test_it_answers_413_for_a_declared_length_over_the_limit(client, api_key, settings) -> None:
    settings.CTXAUDIT_MAX_BODY_BYTES = 1000
    body = json.dumps(event_payload(after="x" * 2000))
    r = client.post(
        "/api/v1/events", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {api_key}"
    )
    assert r.status_code == 413
    assert r.json() == {"error": "request body is larger than the limit of 1000 bytes", "field": "body"}


def test_it_documents_the_default_body_limit(settings) -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert f"`CTXAUDIT_MAX_BODY_BYTES` | `{settings.CTXAUDIT_MAX_BODY_BYTES}`" in readme
    assert "`CTXAUDIT_RATE_LIMIT_PER_MINUTE` | `600`" in readme


def test_the_lookup_returns_the_key_with_its_project_as_stored(project) -> None:
    from ctxaudit.projects.auth import api_key_lookup
    from ctxaudit.projects.models import Project, ProjectRule

    other = Project.objects.create(name="quiet ‮ tenant", redact_pii=False, decay_compressions=4)
    key_row, raw = api_key_create(project_name=other.name, scopes=("ingest",))
    found = api_key_lookup(raw)
    assert found is not None and found.pk == key_row.pk and found.scopes == ["ingest"]
    assert (found.project.pk, found.project.name) == (other.pk, "quiet ‮ tenant")
    assert found.project.redact_pii is False and found.project.decay_compressions == 4
    assert found.project.created_at == other.created_at and timezone.is_aware(found.project.created_at)
    assert found.project.has_rule_set is False
    ProjectRule.objects.create(project=other, rule_id="R1", text="Never share keys.")
    assert api_key_lookup(raw).project.has_rule_set is True  # type: ignore[union-attr]
    assert api_key_lookup(raw[:-1] + ("x" if raw[-1] != "x" else "y")) is None  # a wrong secret
    ApiKey.objects.filter(pk=key_row.pk).update(revoked_at=timezone.now())
    assert api_key_lookup(raw) is None
