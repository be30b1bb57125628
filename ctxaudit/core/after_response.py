"""Work that follows a request's answer: run once the response has been sent.

In the embedded default (no broker) Celery runs every task in the process that sends it, so the
alert evaluation that follows a check ran inside the POST that stored the event, and the agent
waited ~20 ms for alerts of a 200k-token event before it got its 202 (issue 13: POST → checked).
With a broker that evaluation is a worker's job and the request never waits for it; here it
runs right after the answer, in the same thread: a WSGI server calls the response's close()
once the body is written (PEP 3333), and the response runs the request's work from there.

Outside a request (a Celery worker, a management command, a test that calls a service) the work
runs at once. Work lost to a process that dies between the answer and its run is what
alerts.services.evaluations_requeue finds (events checked without an alert evaluation): the
beat sweep with a broker, `manage.py demo` at start in the embedded default.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)
_local = threading.local()


def in_request_after_response(fn: Callable[[], object]) -> bool:
    """Queue `fn` to run once the current request's response has been sent; outside a request do
    nothing. True when it was queued. An exception `fn` raises then is logged, not raised (the
    client has its answer)."""
    pending: list[Callable[[], object]] | None = getattr(_local, "pending", None)
    if pending is None:
        return False
    pending.append(fn)
    return True


def run_after_response(fn: Callable[[], object]) -> None:
    """Run `fn` once the current request's response has been sent (in_request_after_response),
    or now outside a request."""
    if not in_request_after_response(fn):
        fn()


def _run(pending: list[Callable[[], object]]) -> None:
    for fn in pending:
        try:
            fn()
        except Exception:
            logger.exception("work after the response failed: %r", fn)


class AfterResponseMiddleware:
    """Opens the request's list of work for after the answer (run_after_response) and hands it
    to the response, which runs it when the server closes it. The list belongs to the response,
    not to the thread: under ASGI one thread runs the views of requests whose answers are still
    being sent."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not settings.CTXAUDIT_WORK_AFTER_RESPONSE:
            return self.get_response(request)
        outer = getattr(_local, "pending", None)
        pending: list[Callable[[], object]] = []
        _local.pending = pending
        try:
            response = self.get_response(request)
        except BaseException:
            _run(pending)  # no response will be closed: the work runs now
            raise
        finally:
            _local.pending = outer
        if pending:
            # HttpResponseBase.close() calls these (FileResponse closes its file this way), then
            # sends request_finished; a WSGI server calls close() once the body is written.
            response._resource_closers.append(lambda: _run(pending))  # type: ignore[attr-defined]
        return response
