"""The per-key rate limit: one count for every process on the host without CACHE_URL (a file
counter), and fail-open when its store is down (issue 13 "Faults")."""

from __future__ import annotations

import json
import multiprocessing

import pytest
from django.core.cache import cache

from ctxaudit.ingest.models import Event
from ctxaudit.projects import ratelimit
from ctxaudit.projects.services import api_key_create
from tests.factories import event_payload

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _isolated(tmp_path, settings):
    settings.CTXAUDIT_RATE_LIMIT_DIR = str(tmp_path / "rl")
    ratelimit.reset()
    cache.clear()
    yield
    ratelimit.reset()


def _post(client, raw: str):
    return client.post(
        "/api/v1/events",
        data=json.dumps(event_payload()),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )


def _hammer(directory: str, n: int) -> None:
    from pathlib import Path

    for _ in range(n):
        ratelimit._file_incr(Path(directory), "k1", 7)  # noqa: SLF001


def test_the_default_store_is_a_file_shared_by_processes(settings, tmp_path) -> None:
    assert ratelimit.counter_store() == "file"
    directory = str(tmp_path / "rl")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_hammer, args=(directory, 150)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    # 3 processes × 150 increments, none lost to a race: the next one is number 451.
    assert ratelimit.counter_incr("k1", 7) == 451


def test_a_cache_url_makes_the_cache_the_store(settings) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://x"}
    }
    assert ratelimit.counter_store() == "cache"


def test_old_minutes_are_swept(tmp_path) -> None:
    d = tmp_path / "rl"
    for w in (100, 101, 102):
        ratelimit.counter_incr("k2", w)
    assert sorted(p.name for p in d.iterdir()) == ["101-k2", "102-k2"]


def test_it_lets_requests_through_when_the_store_fails(client, project, settings, tmp_path, caplog) -> None:
    settings.CTXAUDIT_RATE_LIMIT_PER_MINUTE = 1
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the counter directory should be")
    settings.CTXAUDIT_RATE_LIMIT_DIR = str(blocker)
    _, raw = api_key_create(project_name=project.name)
    codes = [_post(client, raw).status_code for _ in range(3)]
    assert codes == [202, 202, 202]  # over the limit of 1, but nothing is counted: fail open
    assert Event.objects.count() == 3
    assert ratelimit.failures() == {"failures": 1, "skipped": 2}  # the breaker skipped the store after
    assert "rate-limit store file failed" in caplog.text


def test_the_store_is_tried_again_after_the_breaker_interval(
    client, project, settings, tmp_path, monkeypatch
) -> None:
    settings.CTXAUDIT_RATE_LIMIT_PER_MINUTE = 1
    monkeypatch.setattr(ratelimit, "BREAKER_SECONDS", 0.0)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    settings.CTXAUDIT_RATE_LIMIT_DIR = str(blocker)
    _, raw = api_key_create(project_name=project.name)
    assert _post(client, raw).status_code == 202
    settings.CTXAUDIT_RATE_LIMIT_DIR = str(tmp_path / "rl")  # the store is back
    assert [_post(client, raw).status_code for _ in range(2)] == [202, 429]
