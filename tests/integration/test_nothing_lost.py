"""An event acknowledged with 2xx reaches its check exactly once, even when the worker is
killed mid-check or Redis dies while events are posted (issue "Security and reliability")."""

from __future__ import annotations

import json
import time

import pytest

from ctxaudit.audits.models import Finding, RuleOutcome
from ctxaudit.ingest.models import Event
from ctxaudit.ingest.services import events_requeue_pending
from tests.factories import api_key_for, event_payload

pytestmark = [pytest.mark.integration]

RULES = [{"id": "R1", "text": "禁止删除任何订单。"}, {"id": "R2", "text": "Never reveal card numbers."}]


def _post(client, key: str, i: int):
    body = event_payload(session_id=f"s-{i // 5}", sequence=i % 5, rules=RULES)
    return client.post(
        "/api/v1/events",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _assert_checked_exactly_once(ids: list[int]) -> dict[str, int]:
    events = {e.pk: e for e in Event.objects.filter(pk__in=ids)}
    assert sorted(events) == sorted(ids)
    for pk in ids:
        e = events[pk]
        assert e.status == "checked", (pk, e.status, e.error)
        assert e.verdict in ("pass", "fail")
        # One result set: duplicates would show as extra outcome/finding rows.
        assert RuleOutcome.objects.filter(event_id=pk).count() == len(e.report["rules"]) == len(RULES)
        assert Finding.objects.filter(event_id=pk).count() == len(e.report["findings"])
    return {
        "events": len(ids),
        "checked": sum(1 for e in events.values() if e.status == "checked"),
        "redelivered": sum(1 for e in events.values() if e.attempts > 1),
    }


def test_it_checks_every_event_once_when_a_worker_is_killed_mid_check(client, workers, capsys) -> None:
    key = api_key_for("acme")
    ids = []
    for i in range(12):
        r = _post(client, key, i)
        assert r.status_code == 202
        ids.append(r.json()["id"])

    slow = workers.start(delay=2.0, visibility_timeout=3)
    # Mid-check: the worker has claimed an event (attempts 1) but not written its result.
    _wait(
        lambda: Event.objects.filter(pk__in=ids, attempts__gte=1, status="pending").exists(),
        60,
        "a check in progress",
    )
    workers.kill9(slow)
    killed_during = list(
        Event.objects.filter(pk__in=ids, attempts__gte=1, status="pending").values_list("pk", flat=True)
    )
    assert killed_during

    workers.start(delay=0.0, visibility_timeout=3)
    _wait(
        lambda: not Event.objects.filter(pk__in=ids).exclude(status="checked").exists(),
        120,
        "all events checked",
    )
    counts = _assert_checked_exactly_once(ids)
    assert all(Event.objects.get(pk=pk).attempts >= 2 for pk in killed_during)
    with capsys.disabled():
        print(
            f"\n[nothing-lost] worker kill -9 mid-check: {counts}, killed during check: {len(killed_during)}"
        )


def test_it_checks_every_acknowledged_event_when_redis_dies(client, workers, broker, capsys) -> None:
    key = api_key_for("acme")
    workers.start(delay=0.0, visibility_timeout=3)
    ids = []
    for i in range(5):
        r = _post(client, key, i)
        assert r.status_code == 202
        ids.append(r.json()["id"])
    _wait(
        lambda: not Event.objects.filter(pk__in=ids).exclude(status="checked").exists(),
        60,
        "the first events checked",
    )

    broker.stop()
    slowest = 0.0
    down_ids = []
    for i in range(5, 15):
        t0 = time.monotonic()
        r = _post(client, key, i)
        slowest = max(slowest, time.monotonic() - t0)
        # The event is committed before the enqueue is tried: the API still acknowledges it.
        assert r.status_code == 202
        down_ids.append(r.json()["id"])
    assert slowest < 10
    assert Event.objects.filter(pk__in=down_ids, status="pending").count() == len(down_ids)

    broker.start()  # same port, empty: whatever was queued is gone
    # What celery beat's ingest.requeue_pending does every minute (here without the age cut-off).
    requeued = events_requeue_pending(older_than_seconds=0)
    ids += down_ids
    _wait(
        lambda: not Event.objects.filter(pk__in=ids).exclude(status="checked").exists(),
        120,
        "all events checked",
    )
    counts = _assert_checked_exactly_once(ids)
    with capsys.disabled():
        print(
            f"\n[nothing-lost] Redis down while posting: {counts}, acknowledged while down: {len(down_ids)}, "
            f"requeued by the sweep: {requeued}, slowest request while down: {slowest:.2f}s"
        )
