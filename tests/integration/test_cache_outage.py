"""The shared cache is not a single point of failure (issue 13 "Faults"), with a real
redis-server that the test stops and starts again.

- CACHE_URL=redis://… and Redis stopped: POST /api/v1/events answers 202 and stores every event
  (the rate limiter fails open: logged, counted); once Redis is back the limit counts again.
- A worker checking an event while Redis (the broker) dies links the event to its alert at once,
  not when the 5-minute alerts.requeue_evaluations sweep finds it.
"""

from __future__ import annotations

import json
import time

import pytest
from django.core.cache import cache

from ctxaudit.alerts.models import AlertEvent
from ctxaudit.ingest.models import Event
from ctxaudit.projects import ratelimit
from tests.factories import api_key_for, event_payload

pytestmark = [pytest.mark.integration]

ORDER_RULE = {"id": "R1", "text": "只能查询订单，禁止新增、修改、删除订单。", "severity": "critical"}


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _post(client, key: str, i: int):
    return client.post(
        "/api/v1/events",
        data=json.dumps(event_payload(session_id=f"outage-{i}")),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )


@pytest.fixture
def redis_cache(redis_server, settings, monkeypatch):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_server.url.replace("/0", "/1"),
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    monkeypatch.setattr(ratelimit, "BREAKER_SECONDS", 0.5)
    ratelimit.reset()
    yield redis_server
    ratelimit.reset()


def test_events_are_accepted_and_kept_while_the_cache_is_down(db, client, redis_cache, capsys) -> None:
    assert ratelimit.counter_store() == "cache"
    key = api_key_for("acme")
    assert _post(client, key, 0).status_code == 202
    assert any(k.startswith(b":1:ctxaudit:rl:") for k in cache._cache.get_client().keys("*"))  # noqa: SLF001

    redis_cache.stop()
    t0 = time.monotonic()
    codes = [_post(client, key, i).status_code for i in range(1, 23)]
    slowest = time.monotonic() - t0
    assert codes == [202] * 22
    assert Event.objects.count() == 23  # 22 of 22 kept while Redis is down
    assert ratelimit.failures()["failures"] >= 1
    assert slowest < 22 * 1.0  # no request waits long on the dead cache

    redis_cache.start()  # same port, empty
    time.sleep(0.6)  # the breaker interval
    with pytest.MonkeyPatch.context() as mp:
        from django.conf import settings

        mp.setattr(settings, "CTXAUDIT_RATE_LIMIT_PER_MINUTE", 2)
        assert [_post(client, key, 30 + i).status_code for i in range(3)] == [202, 202, 429]
    with capsys.disabled():
        print(
            f"\n[cache outage] 22/22 accepted while Redis was down in {slowest:.2f}s, {ratelimit.failures()}"
        )


def test_an_event_checked_during_a_broker_outage_is_linked_to_its_alert_at_once(
    client, workers, broker, capsys
) -> None:
    key = api_key_for("acme")
    workers.start(delay=3.0, visibility_timeout=3)
    r = client.post(
        "/api/v1/events",
        data=json.dumps(event_payload(rules=[ORDER_RULE])),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert r.status_code == 202
    pk = r.json()["id"]
    # The worker has claimed it (attempts 1) and sleeps inside the check: now Redis dies.
    _wait(lambda: Event.objects.filter(pk=pk, attempts__gte=1).exists(), 60, "the worker to claim the event")
    broker.stop()
    t0 = time.monotonic()
    _wait(lambda: Event.objects.filter(pk=pk, status="checked").exists(), 60, "the check to finish")
    _wait(
        lambda: AlertEvent.objects.filter(
            event_id=pk, alert__kind="rule_missing", alert__rule_id="R1"
        ).exists(),
        30,
        "the event linked to its alert without the broker",
    )
    linked_after = time.monotonic() - t0
    assert linked_after < 60  # the sweep would take 5-10 minutes
    with capsys.disabled():
        print(
            f"\n[broker outage] event checked during the outage linked to its alert {linked_after:.1f}s after Redis died"
        )
