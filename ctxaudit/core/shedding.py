"""Load shedding: under overload answer 503 + Retry-After at once instead of queueing work.

At ~10x its capacity a server that accepts everything answers nothing in time: requests queue,
clients time out and retry, and the server still does the work of every abandoned request
(issue 13: 3,200 events stored for failed requests, /login/ at 15 s for minutes after). This WSGI
middleware sits outside Django (ctxaudit/wsgi.py), so a shed request costs no Django request
object, no session, no database query:

- Per process and per class (`api`: /api/ and /v1/; `ui`: every page, /login/ included, so an
  API flood never takes the dashboard's slots), at most CTXAUDIT_SHED_MAX_ACTIVE requests run;
  up to CTXAUDIT_SHED_MAX_WAITING more wait for a slot, each at most CTXAUDIT_SHED_MAX_WAIT_MS
  (pages: the CTXAUDIT_SHED_UI_* values). Newest first (`Gate`): a freed slot goes to the
  request that arrived last, and a newcomer that finds the waiting places taken takes the oldest
  waiter's place, that one being answered 503 at once. So under overload an accepted request has
  waited about one inter-arrival gap, not a whole check (FIFO: accepted p95 1.5-3x unloaded),
  while at low load the one waiter still gets the slot a moment later instead of a 503.
  Anything refused is answered `503` with `Retry-After: CTXAUDIT_SHED_RETRY_AFTER` seconds (JSON
  `{"error", "field": null}` under /api/, plain text elsewhere).
- The wait counts from when the server queued the connection for a thread, not from when the
  request reached the gate: gunicorn's gthread worker queues every accepted connection for its
  pool, and under heavy overload that queue is where requests wait. Our worker
  (ctxaudit/core/gunicorn_worker.py) reports that wait (`note_queue_wait`); a request that has
  already waited its CTXAUDIT_SHED_MAX_WAIT_MS there is answered 503 without taking a slot, and
  one that waited part of it may wait only the rest at the gate. Without that worker (runserver,
  tests) the wait counts from the gate.
- A request whose client already closed its connection (it timed out while the request sat in
  gunicorn's queue) is dropped before any work: the body is read first, then the socket is
  peeked (`MSG_PEEK`: an empty read means the client sent FIN). Checked on arrival and again
  after waiting for a slot. Dropped requests get no response (nobody is listening).
- Static files (/static/) are never shed: they are cheap and the 503 page needs none.

Needs a threaded server (gunicorn gthread with --threads N, see ctxaudit/gunicorn_conf.py):
with one thread per process there is never a second request to shed, and overload queues in the
kernel's listen backlog instead. Counters: `stats()`.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

logger = logging.getLogger(__name__)

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_stats_lock = threading.Lock()
_stats: dict[str, int] = {"admitted": 0, "waited": 0, "shed": 0, "late": 0, "abandoned": 0}


def stats() -> dict[str, int]:
    """Counts since this process started: admitted, waited (admitted after a wait), shed (503),
    late (of those shed: had waited out their budget in the server's queue before reaching the
    gate), abandoned (client gone before the work started)."""
    with _stats_lock:
        return dict(_stats)


def _count(name: str) -> None:
    with _stats_lock:
        _stats[name] += 1


_queue_wait = threading.local()


def note_queue_wait(seconds: float) -> None:
    """Record how long the request this thread is about to serve waited for a thread (seconds);
    called by the server's worker (ctxaudit/core/gunicorn_worker.py) and used up by the next
    request this thread passes through the middleware."""
    _queue_wait.seconds = seconds


def _take_queue_wait() -> float:
    seconds = getattr(_queue_wait, "seconds", 0.0)
    _queue_wait.seconds = 0.0
    return float(seconds)


class _Waiter:
    __slots__ = ("event", "outcome")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.outcome: bool | None = None  # True: handed a slot; False: displaced; None: still waiting


class Gate:
    """At most `active` holders; up to `waiting` more wait at most `max_wait` seconds.

    Newest first: a freed slot goes to the request that arrived last, and a newcomer that finds
    every waiting place taken takes the oldest waiter's place (that one is refused at once). Under
    overload this admits the request that has waited least, so an accepted request takes about its
    unloaded time instead of its time plus a whole queue turn (FIFO handed the slot to a request
    that had already waited most of a check: accepted p95 1.5-3x unloaded, README "gunicorn and
    load"); at low load there is at most one waiter and the order does not matter. The same rule
    as adaptive LIFO / CoDel admission (Maurer, "Fail at Scale", ACM Queue 13(8), 2015).
    """

    def __init__(self, active: int, waiting: int, max_wait: float) -> None:
        self.max_active, self.max_waiting, self.max_wait = max(1, active), max(0, waiting), max_wait
        self.active = 0
        self._waiters: deque[_Waiter] = deque()  # oldest first
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def enter(self, max_wait: float | None = None) -> bool | None:
        """True: admitted at once; None: admitted after waiting; False: shed (at once, displaced
        by a newer request, or after waiting `max_wait` seconds, default the gate's)."""
        wait = self.max_wait if max_wait is None else max_wait
        with self._lock:
            if self.active < self.max_active:
                self.active += 1
                return True
            if self.max_waiting == 0 or wait <= 0:
                return False
            if len(self._waiters) >= self.max_waiting:
                oldest = self._waiters.popleft()
                oldest.outcome = False
                oldest.event.set()
            me = _Waiter()
            self._waiters.append(me)
        me.event.wait(wait)
        with self._lock:
            if me.outcome is None:  # timed out; a slot handed over meanwhile would have set it
                self._waiters.remove(me)
                return False
            return None if me.outcome else False

    def leave(self) -> None:
        with self._lock:
            if self._waiters:
                newest = self._waiters.pop()
                newest.outcome = True  # the slot passes on: `active` stays the same
                newest.event.set()
            else:
                self.active -= 1


def client_gone(environ: dict[str, Any]) -> bool:
    """True when the client closed its side of the connection (gunicorn hands us the socket).

    Only meaningful once the request body has been read: unread body bytes look like a live peer.
    """
    sock = environ.get("gunicorn.socket")
    if sock is None:
        return False
    try:
        return bool(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"")
    except BlockingIOError:
        return False  # nothing to read: the client is waiting for us
    except OSError:
        return True  # reset by peer


def _read_body(environ: dict[str, Any], limit: int) -> None:
    """Read a declared body of at most `limit` bytes now, so `client_gone` can see a FIN behind it;
    the app reads the same bytes from memory."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return
    if 0 < length <= limit:
        body = environ["wsgi.input"].read(length)
        environ["wsgi.input"] = io.BytesIO(body)


class _Released:
    """The app's response body, releasing the gate once the server has sent it (or given up)."""

    def __init__(self, body: Iterable[bytes], release: Callable[[], None]) -> None:
        self._body, self._release, self._done = body, release, False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            if not self._done:
                self._done = True
                self._release()


class LoadShedMiddleware:
    """WSGI middleware; see the module docstring. Settings are read once, from django.conf."""

    def __init__(self, app: WSGIApp) -> None:
        from django.conf import settings

        self.app = app
        s = settings
        self.enabled = s.CTXAUDIT_SHED_MAX_ACTIVE > 0
        self.gates = {
            "api": Gate(
                s.CTXAUDIT_SHED_MAX_ACTIVE, s.CTXAUDIT_SHED_MAX_WAITING, s.CTXAUDIT_SHED_MAX_WAIT_MS / 1000
            ),
            "ui": Gate(
                s.CTXAUDIT_SHED_UI_MAX_ACTIVE,
                s.CTXAUDIT_SHED_UI_MAX_WAITING,
                s.CTXAUDIT_SHED_UI_MAX_WAIT_MS / 1000,
            ),
        }
        self.retry_after = str(settings.CTXAUDIT_SHED_RETRY_AFTER)
        self.body_limit = settings.CTXAUDIT_MAX_BODY_BYTES

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        queued = _take_queue_wait()
        path = environ.get("PATH_INFO", "")
        if not self.enabled or path.startswith("/static/"):
            return self.app(environ, start_response)
        kind = "api" if path.startswith(("/api/", "/v1/")) else "ui"
        _read_body(environ, self.body_limit)
        if client_gone(environ):
            return self._abandoned(start_response)
        gate = self.gates[kind]
        budget = gate.max_wait - queued  # the server's queue and the gate share one wait
        if budget <= 0:
            _count("late")
            _count("shed")
            return self._busy(kind, start_response)
        entered = gate.enter(budget)
        if entered is False:
            _count("shed")
            return self._busy(kind, start_response)
        if entered is None:
            _count("waited")
            if client_gone(environ):  # it gave up while we waited for a slot
                gate.leave()
                return self._abandoned(start_response)
        _count("admitted")
        try:
            body = self.app(environ, start_response)
        except BaseException:
            gate.leave()
            raise
        if isinstance(body, list | tuple):  # built already (every non-streaming Django response)
            gate.leave()  # free the slot now: the client may send its next request before close()
            return body
        return _Released(body, gate.leave)

    def _busy(self, kind: str, start_response: StartResponse) -> list[bytes]:
        message = f"the server is at capacity; retry after {self.retry_after}s"
        if kind == "api":
            payload = json.dumps({"error": message, "field": None}).encode()
            ctype = "application/json"
        else:
            payload = f"503 Service Unavailable: {message}.\n".encode()
            ctype = "text/plain; charset=utf-8"
        start_response(
            "503 Service Unavailable",
            [
                ("Content-Type", ctype),
                ("Content-Length", str(len(payload))),
                ("Retry-After", self.retry_after),
                ("Cache-Control", "no-store"),
            ],
        )
        return [payload]

    def _abandoned(self, start_response: StartResponse) -> list[bytes]:
        _count("abandoned")
        start_response("499 Client Closed Request", [("Content-Length", "0"), ("Connection", "close")])
        return []
