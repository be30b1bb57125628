"""Load shedding (ctxaudit/core/shedding.py): beyond its slots a process answers 503 with
Retry-After at once, keeps the dashboard's slots apart from the API's, and does no work for a
client that has already gone."""

from __future__ import annotations

import io
import json
import socket
import threading
import time

import pytest

from ctxaudit.core import shedding
from ctxaudit.core.shedding import Gate, LoadShedMiddleware


def _environ(path: str = "/api/v1/events", body: bytes = b"", sock=None) -> dict:
    env = {
        "PATH_INFO": path,
        "REQUEST_METHOD": "POST" if body else "GET",
        "CONTENT_LENGTH": str(len(body)) if body else "",
        "wsgi.input": io.BytesIO(body),
    }
    if sock is not None:
        env["gunicorn.socket"] = sock
    return env


class _Slow:
    """A WSGI app that blocks until released, counting the requests it did work for."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = 0
        self.bodies: list[bytes] = []

    def __call__(self, environ, start_response):
        self.started += 1
        self.bodies.append(environ["wsgi.input"].read())
        self.release.wait(10)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]


def _call(mw, environ) -> tuple[str, dict[str, str], bytes]:
    out: dict = {}

    def start_response(status, headers):
        out["status"], out["headers"] = status, dict(headers)

    body = mw(environ, start_response)
    data = b"".join(body)
    getattr(body, "close", lambda: None)()
    return out.get("status", ""), out.get("headers", {}), data


@pytest.fixture
def shed_settings(settings):
    settings.CTXAUDIT_SHED_MAX_ACTIVE = 1
    settings.CTXAUDIT_SHED_MAX_WAITING = 1
    settings.CTXAUDIT_SHED_MAX_WAIT_MS = 200
    settings.CTXAUDIT_SHED_UI_MAX_ACTIVE = 1
    settings.CTXAUDIT_SHED_UI_MAX_WAITING = 1
    settings.CTXAUDIT_SHED_UI_MAX_WAIT_MS = 200
    settings.CTXAUDIT_SHED_RETRY_AFTER = 2
    return settings


def test_a_gate_admits_waits_then_sheds() -> None:
    gate = Gate(active=1, waiting=1, max_wait=0.2)
    assert gate.enter() is True
    results: list[bool | None] = []
    waiter = threading.Thread(target=lambda: results.append(gate.enter()))
    waiter.start()
    time.sleep(0.05)
    gate.leave()
    waiter.join(2)
    assert results == [None]  # admitted after waiting
    t0 = time.monotonic()
    assert gate.enter() is False  # slot taken by the waiter; waits 0.2 s then gives up
    assert 0.15 < time.monotonic() - t0 < 1.0


def _enter_in_thread(gate: Gate, name: str, log: list[tuple[str, bool | None, float]]) -> threading.Thread:
    def go() -> None:
        t0 = time.monotonic()
        log.append((name, gate.enter(), time.monotonic() - t0))

    thread = threading.Thread(target=go)
    thread.start()
    time.sleep(0.05)  # arrivals in a known order
    return thread


def test_a_newcomer_takes_the_oldest_waiters_place_and_that_one_is_refused_at_once() -> None:
    gate = Gate(active=1, waiting=1, max_wait=5)
    assert gate.enter() is True
    log: list[tuple[str, bool | None, float]] = []
    older = _enter_in_thread(gate, "older", log)
    newer = _enter_in_thread(gate, "newer", log)
    older.join(1)
    assert [(name, result) for name, result, _ in log] == [("older", False)]
    assert log[0][2] < 0.5  # refused when the newer one arrived, not after its 5 s
    gate.leave()
    newer.join(1)
    assert [(name, result) for name, result, _ in log] == [("older", False), ("newer", None)]


def test_a_freed_slot_goes_to_the_newest_waiter() -> None:
    gate = Gate(active=1, waiting=3, max_wait=5)
    assert gate.enter() is True
    log: list[tuple[str, bool | None, float]] = []
    threads = [_enter_in_thread(gate, name, log) for name in ("a", "b", "c")]
    for expected in (["c"], ["c", "b"], ["c", "b", "a"]):
        gate.leave()
        time.sleep(0.1)
        assert [name for name, result, _ in log if result is None] == expected
    for t in threads:
        t.join(1)
    gate.leave()
    assert gate.enter() is True  # every slot handed back: free again


def test_beyond_its_slots_the_api_answers_503_with_retry_after(shed_settings) -> None:
    shed_settings.CTXAUDIT_SHED_MAX_WAIT_MS = 3000  # the waiting requests would wait that long
    app = _Slow()
    mw = LoadShedMiddleware(app)
    first = threading.Thread(target=_call, args=(mw, _environ()))
    first.start()
    time.sleep(0.05)
    answers: dict[str, tuple[str, dict[str, str], bytes, float]] = {}

    def timed(name: str) -> None:
        t0 = time.monotonic()
        answers[name] = (*_call(mw, _environ(body=name.encode())), time.monotonic() - t0)

    second = threading.Thread(target=timed, args=("second",))
    second.start()
    time.sleep(0.05)
    third = threading.Thread(target=timed, args=("third",))
    third.start()
    second.join(1)
    # The one running and the newest waiting: the second is answered at once, not after 3 s.
    status, headers, body, took = answers["second"]
    assert took < 0.5
    assert status.startswith("503")
    assert headers["Retry-After"] == "2"
    assert json.loads(body) == {"error": "the server is at capacity; retry after 2s", "field": None}
    # The dashboard has slots of its own: /login/ still runs while the API is full.
    login = threading.Thread(target=_call, args=(mw, _environ("/login/")))
    login.start()
    time.sleep(0.05)
    assert app.started == 2  # the first API request and the login page
    app.release.set()
    for t in (first, third, login):
        t.join(5)
    assert answers["third"][0] == "200 OK"
    assert app.started == 3  # the third ran once a slot was free; the refused second never did
    assert b"second" not in app.bodies


def test_a_page_beyond_its_slots_gets_a_plain_503(shed_settings) -> None:
    shed_settings.CTXAUDIT_SHED_UI_MAX_WAITING = 0
    app = _Slow()
    mw = LoadShedMiddleware(app)
    t = threading.Thread(target=_call, args=(mw, _environ("/")))
    t.start()
    time.sleep(0.05)
    status, headers, body = _call(mw, _environ("/alerts/"))
    app.release.set()
    t.join(5)
    assert status.startswith("503") and headers["Retry-After"] == "2"
    assert body.decode().startswith("503 Service Unavailable: the server is at capacity")


def test_no_work_is_done_for_a_client_that_has_gone(shed_settings) -> None:
    app = _Slow()
    app.release.set()
    mw = LoadShedMiddleware(app)
    server, client = socket.socketpair()
    client.sendall(b'{"session_id": "x"}')
    client.close()  # it gave up (timed out) while the request was queued
    env = _environ(body=b'{"session_id": "x"}', sock=server)
    env["wsgi.input"] = server.makefile("rb")  # as gunicorn: the body is read from the socket
    status, _, _ = _call(mw, env)
    assert status.startswith("499")
    assert app.started == 0
    server.close()


def test_a_live_client_with_a_body_is_served_and_the_app_reads_the_body(shed_settings) -> None:
    app = _Slow()
    app.release.set()
    mw = LoadShedMiddleware(app)
    server, client = socket.socketpair()
    client.sendall(b'{"a": 1}')  # body sent, connection still open: waiting for the answer
    env = _environ(body=b'{"a": 1}', sock=server)
    env["wsgi.input"] = server.makefile("rb")
    status, _, body = _call(mw, env)
    assert status == "200 OK" and body == b"ok"
    assert app.bodies == [b'{"a": 1}']
    server.close()
    client.close()


def test_static_files_are_never_shed(shed_settings) -> None:
    shed_settings.CTXAUDIT_SHED_UI_MAX_WAITING = 0
    app = _Slow()
    mw = LoadShedMiddleware(app)
    t = threading.Thread(target=_call, args=(mw, _environ("/")))
    t.start()
    time.sleep(0.05)
    app.release.set()
    status, _, _ = _call(mw, _environ("/static/ctxaudit.css"))
    t.join(5)
    assert status == "200 OK"


def test_stats_count_what_happened(shed_settings) -> None:
    before = shedding.stats()
    app = _Slow()
    app.release.set()
    _call(LoadShedMiddleware(app), _environ("/"))
    assert shedding.stats()["admitted"] == before["admitted"] + 1


def test_a_request_that_waited_its_budget_in_the_servers_queue_gets_503_without_a_slot(
    shed_settings,
) -> None:
    app = _Slow()
    app.release.set()
    mw = LoadShedMiddleware(app)
    shedding.note_queue_wait(0.25)  # the worker: 250 ms waiting for a thread, budget 200 ms
    status, headers, body = _call(mw, _environ())
    assert status.startswith("503") and headers["Retry-After"] == "2"
    assert json.loads(body)["error"] == "the server is at capacity; retry after 2s"
    assert app.started == 0
    # The wait belongs to that one request: the next one on this thread is served.
    status, _, _ = _call(mw, _environ())
    assert status == "200 OK" and app.started == 1


def test_the_servers_queue_and_the_gate_share_one_wait(shed_settings) -> None:
    shed_settings.CTXAUDIT_SHED_MAX_WAIT_MS = 600
    app = _Slow()
    mw = LoadShedMiddleware(app)
    first = threading.Thread(target=_call, args=(mw, _environ()))
    first.start()
    time.sleep(0.05)
    shedding.note_queue_wait(0.5)  # 500 of its 600 ms spent before the gate: 100 ms left there
    t0 = time.monotonic()
    status, headers, _ = _call(mw, _environ())
    took = time.monotonic() - t0
    app.release.set()
    first.join(5)
    assert status.startswith("503") and headers["Retry-After"] == "2"
    assert 0.05 < took < 0.4  # waited the rest of its budget, not the whole 600 ms
