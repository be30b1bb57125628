"""The garbage collector waits during API writes (the body and the check make short-lived objects
only) and runs as usual elsewhere; a process freezes what it loaded at start-up."""

from __future__ import annotations

import gc

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from ctxaudit.core.collector import CollectorPauseMiddleware
from ctxaudit.engine.gcpause import freeze_startup_objects


def _seen(method: str, path: str) -> bool:
    seen: list[bool] = []

    def view(request):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return HttpResponse("ok")

    request = getattr(RequestFactory(), method)(path)
    assert CollectorPauseMiddleware(view)(request).status_code == 200
    assert gc.isenabled()  # restored after the request
    return seen[0]


def test_api_writes_run_with_the_collector_paused_and_pages_without() -> None:
    assert _seen("post", "/api/v1/events") is False
    assert _seen("post", "/v1/traces") is False
    assert _seen("get", "/api/v1/events") is True
    assert _seen("post", "/alerts/1/comment/") is True
    assert _seen("get", "/") is True


def test_a_failing_write_still_restores_the_collector() -> None:
    def view(request):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        CollectorPauseMiddleware(view)(RequestFactory().post("/api/v1/events"))
    assert gc.isenabled()


def test_start_up_objects_are_frozen_out_of_full_collections() -> None:
    before = gc.get_freeze_count()
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > before
        assert gc.isenabled()
    finally:
        gc.unfreeze()
