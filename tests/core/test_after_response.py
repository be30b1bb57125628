"""Work that follows the answer (core/after_response.py). Expected values written before the run."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.http import HttpResponse
from django.test import override_settings
from django.urls import path

from ctxaudit.alerts.models import Alert, AlertEvaluation
from ctxaudit.core.after_response import run_after_response
from ctxaudit.ingest.models import Event
from tests.factories import api_key_for, event_payload

ran: list[str] = []


def _view(request: Any) -> HttpResponse:
    run_after_response(lambda: ran.append("first"))
    run_after_response(lambda: 1 / 0)
    run_after_response(lambda: ran.append("third"))
    return HttpResponse(b"answer")


def _named(request: Any, name: str) -> HttpResponse:
    run_after_response(lambda: ran.append(name))
    return HttpResponse(name.encode())


urlpatterns = [path("after/", _view), path("named/<str:name>/", _named)]


def _wsgi(
    method: str, path_: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[Any, list]:
    """Call the WSGI app as a server does; returns (the body iterable, [status]) before close()."""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path_,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/json",
        **{f"HTTP_{k.upper().replace('-', '_')}": v for k, v in (headers or {}).items()},
    }
    status: list[str] = []
    result = WSGIHandler()(environ, lambda s, h, exc_info=None: status.append(s))
    return result, status


def test_outside_a_request_the_work_runs_at_once() -> None:
    seen = []
    run_after_response(lambda: seen.append(1))
    assert seen == [1]


@pytest.mark.django_db(transaction=True)  # a WSGI request closes old connections when it starts
@override_settings(ROOT_URLCONF=__name__)
def test_in_a_request_the_work_runs_when_the_server_closes_the_response(caplog) -> None:
    ran.clear()
    result, status = _wsgi("GET", "/after/")
    assert status == ["200 OK"] and b"".join(result) == b"answer"
    assert ran == []  # the answer is out; nothing ran yet
    with caplog.at_level(logging.ERROR, logger="ctxaudit.core.after_response"):
        result.close()
    assert ran == ["first", "third"]  # one failing piece of work does not stop the others
    assert "work after the response failed" in caplog.text


@pytest.mark.django_db(transaction=True)
@override_settings(ROOT_URLCONF=__name__)
def test_each_response_runs_its_own_work_when_answers_interleave() -> None:
    # ASGI runs the views of several requests in one thread while their answers are being sent
    ran.clear()
    first, _ = _wsgi("GET", "/named/a/")
    second, _ = _wsgi("GET", "/named/b/")
    assert ran == []
    second.close()
    assert ran == ["b"]
    first.close()
    assert ran == ["b", "a"]


@pytest.mark.django_db(transaction=True)
def test_a_post_answers_checked_and_its_alerts_follow_the_answer() -> None:
    key = api_key_for("acme")
    body = json.dumps(event_payload()).encode()
    result, status = _wsgi("POST", "/api/v1/events", body, {"Authorization": f"Bearer {key}"})
    answer = json.loads(b"".join(result))
    assert status == ["202 Accepted"]
    ev = Event.objects.get(pk=answer["id"])
    assert ev.status == "checked" and ev.verdict == "fail"
    assert not AlertEvaluation.objects.filter(event=ev).exists()  # alerts come after the answer
    result.close()
    assert AlertEvaluation.objects.filter(event=ev).exists()
    assert Alert.objects.filter(events=ev).exists()


@pytest.mark.django_db
def test_demo_evaluates_the_alerts_of_events_a_dead_process_left_unevaluated(
    django_capture_on_commit_callbacks,
) -> None:
    from tests.factories import event

    with django_capture_on_commit_callbacks(execute=True):
        ev = event()
    AlertEvaluation.objects.filter(event=ev).delete()  # as if the process died after the answer
    Alert.objects.all().delete()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", "--no-serve", stdout=io.StringIO())
    assert AlertEvaluation.objects.filter(event=ev).exists()
    assert Alert.objects.filter(events=ev).exists()


@pytest.mark.django_db(transaction=True)
def test_on_sqlite_the_wal_checkpoint_follows_the_answer_of_a_post() -> None:
    from django.db import connection

    key = api_key_for("acme")
    body = json.dumps(event_payload(session_id="wal-1")).encode()
    seen: list[str] = []

    def spy(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        result, status = _wsgi("POST", "/api/v1/events", body, {"Authorization": f"Bearer {key}"})
        b"".join(result)
        before_close = list(seen)
        result.close()
    checkpoint = "PRAGMA wal_checkpoint(PASSIVE)"
    assert status == ["202 Accepted"]
    assert checkpoint not in before_close  # no commit of the request waits for it
    assert seen.count(checkpoint) == (1 if connection.vendor == "sqlite" else 0)
